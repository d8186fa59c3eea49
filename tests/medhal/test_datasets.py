"""Hostile dataset files: every loader (jsonl, json, csv, parquet, Hub rows) stops on what
would break a run later, with one line naming file, line or row, and field; and accepts
what is merely unusual (a byte-order mark, a long CSV cell), warning once about what it
ignores (duplicate JSON keys, columns the benchmark does not read).

Rows are written by us here; the CLI cases score MedFact-Bench rows from
tests/medfact_fixtures.py."""

from __future__ import annotations

import json
import logging
import sys
import types
from pathlib import Path

import pytest

from medhal.kit.datasets import (
    CSV_FIELD_LIMIT,
    DatasetError,
    HubDataset,
    check_cells,
    load_rows,
    require_columns,
    require_rows,
)
from tests.medfact_bench.fixtures import rows as medfact_rows
from tests.running import clean_exit_2, medhal_main, one_line
from tests.tables import write_csv, write_jsonl, write_parquet

HUB = HubDataset("org/data", "0123abc")


@pytest.fixture
def warnings_logged():
    """Messages the loader logs (its logger may not propagate once verifiers set up logging)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("medhal.kit.datasets")
    logger.addHandler(handler)
    yield lambda: [r.getMessage() for r in records]
    logger.removeHandler(handler)


def load(path: Path, **kwargs) -> list[dict]:
    return load_rows(HUB, path, **kwargs).rows


def fails(path: Path, *fragments: str, **kwargs) -> str:
    with pytest.raises(DatasetError) as e:
        load(path, **kwargs)
    return one_line(str(e.value), str(path), *fragments)


# ---------------------------------------------------------------------------- text cells


def test_lone_surrogate_in_jsonl_cell(tmp_path):
    path = tmp_path / "d.jsonl"
    # Valid JSON: "\ud800" is an escape for a lone surrogate, which no UTF-8 writer accepts.
    path.write_text('{"claim": "fine", "source": "ok"}\n{"claim": "bad \\ud800 cell", "source": "ok"}\n')
    fails(path, f"{path}:2:", "row 2", "field 'claim'", "lone surrogate U+D800", "character 5")


def test_lone_surrogate_nested_in_a_list_names_the_path(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"Question": "q", "Knowledge": ["one", "two \\udfff"]}\n')
    fails(path, "row 1", "field 'Knowledge[1]'", "lone surrogate U+DFFF")


def test_lone_surrogate_nested_in_an_object(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[{"a": "x"}, {"a": "y", "meta": {"notes": ["ok", {"t": "\\ud83d"}]}}]')
    fails(path, "row 2", "field 'meta.notes[1].t'", "lone surrogate U+D83D")


def test_lone_surrogate_in_a_column_name(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"claim": "x", "\\ud800": "y"}\n')
    fails(path, "row 1", "a column name", "lone surrogate")


def test_surrogate_bytes_in_csv_are_not_utf8(tmp_path):
    """UTF-8 cannot encode a surrogate; the bytes CESU/WTF-8 would use are invalid UTF-8."""
    path = tmp_path / "d.csv"
    head = b"claim,source\nok,fine\n"
    path.write_bytes(head + b"bad \xed\xa0\x80,x\n")
    # byte offset of 0xed: len("claim,source\nok,fine\n") = 21, + len("bad ") = 25
    fails(path, "not UTF-8 text", "byte 0xed at byte offset 25", "(line 3)", "expected UTF-8")


def test_invalid_utf8_in_parquet_string_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    claims = pa.array([b"ok", b"also ok", b"\xff\xfe"], pa.binary()).view(pa.string())
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"claim": claims, "n": [1, 2, 3]}), path)
    fails(path, "row 3", "field 'claim'", "not valid UTF-8")


def test_hub_rows_are_checked_too(monkeypatch):
    """Rows from the Hub go through the same checks (a fake `datasets` module stands in
    for the network)."""

    class Rows:
        def to_list(self):
            return [{"claim": "ok"}, {"claim": "x\ud800"}]

    fake = types.ModuleType("datasets")
    fake.load_dataset = lambda *args, **kwargs: Rows()
    monkeypatch.setitem(sys.modules, "datasets", fake)
    with pytest.raises(DatasetError) as e:
        load_rows(HUB)
    one_line(str(e.value), "org/data@0123abc: row 2 field 'claim'", "lone surrogate")


def test_check_cells_accepts_ordinary_rows():
    rows = [{"a": "ünïcödé ✓ 🙂", "b": ["x", {"c": 1.5, "d": None, "e": True}], "n": 10**30}]
    check_cells(rows, "here")  # no error: every text is valid, the integer has 31 digits


# ---------------------------------------------------------------------------- encodings


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_utf16_file(tmp_path, suffix):
    path = tmp_path / f"d{suffix}"
    text = "claim,source\na,b\n" if suffix == ".csv" else '{"claim": "a"}\n'
    path.write_text(text, encoding="utf-16")
    fails(path, "UTF-16", "byte-order mark", "expected UTF-8")


def test_utf16_without_bom(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes('{"claim": "a"}\n'.encode("utf-16-le"))
    fails(path, "UTF-16", "NUL bytes", "expected UTF-8")


def test_latin1_byte_names_offset_and_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"claim": "a"}\n{"claim": "caf\xe9"}\n')
    # offset: 15 bytes on line 1, then '{"claim": "caf' is 14 bytes -> 29
    fails(path, "byte 0xe9 at byte offset 29 (line 2)", "expected UTF-8")


def test_csv_with_utf8_bom_loads(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfdataset,claim\nscifact,x\n")
    assert load(path) == [{"dataset": "scifact", "claim": "x"}]
    require_columns(load(path), ("dataset", "claim"), str(path))


def test_jsonl_with_utf8_bom_loads(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"claim": "x"}\n')
    assert load(path) == [{"claim": "x"}]


# ---------------------------------------------------------------------------- csv


def test_csv_cell_over_the_default_field_limit_loads(tmp_path):
    cell = "x" * 200_000  # over csv's default limit of 131,072 characters
    path = write_csv(tmp_path / "d.csv", [{"claim": cell, "source": "s"}])
    rows = load(path)
    assert rows == [{"claim": cell, "source": "s"}]
    assert CSV_FIELD_LIMIT >= 1 << 20


def test_csv_row_with_more_cells_than_the_header(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('claim,source\na,b\n"multi\nline",c\nx,y,z\n')
    # row 3 starts on line 5: the quoted cell of row 2 spans lines 3-4
    fails(path, f"{path}:5:", "row 3 has 3 cells but the header has 2 columns")


def test_csv_short_row_keeps_its_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("claim,source\na\n")
    assert load(path) == [{"claim": "a", "source": None}]


def test_csv_duplicate_header_warns_once(tmp_path, warnings_logged):
    path = tmp_path / "d.csv"
    path.write_text("claim,claim,source\na,b,c\nd,e,f\n")
    rows = load(path)
    assert rows[0] == {"claim": "b", "source": "c"}
    warnings = warnings_logged()
    assert len(warnings) == 1 and str(path) in warnings[0] and "'claim'" in warnings[0]


# ---------------------------------------------------------------------------- json


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_deeply_nested_json(tmp_path, suffix):
    path = tmp_path / f"d{suffix}"
    path.write_text(
        '{"claim": "a"}\n' + "[" * 100_000 + "\n" if suffix == ".jsonl" else "[\n" + "[" * 100_000
    )
    fails(path, f"{path}:2", "nested too deeply")


def test_cell_nested_deeper_than_the_bound(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps(
            {
                "claim": "a",
                "deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
            }
        )
        + "\n"
    )
    fails(path, "row 1", "field 'deep", "nested more than 32 levels deep")


def test_broken_json_array_names_line_and_column(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[{"claim": "a"},\n {"claim": "b')  # cut off inside a string
    fails(path, f"{path}:2:12:", "not valid JSON", "Unterminated string starting at line 2 column 12")


def test_broken_jsonl_line_names_line_and_column(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"claim": "a"}\n{"claim": "b", }\n')
    fails(path, f"{path}:2:16:", "not valid JSON")


def test_integer_of_5001_digits(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"claim": "a", "n": ' + "7" * 5001 + "}\n")
    fails(path, "row 1", "field 'n'", "a number with 5001 digits")


def test_duplicate_json_keys_warn_once_per_file(tmp_path, warnings_logged):
    path = tmp_path / "d.jsonl"
    path.write_text('{"claim": "a", "claim": "b"}\n{"claim": "c", "claim": "d"}\n{"x": 1, "x": 2}\n')
    rows = load(path)
    assert [r.get("claim") for r in rows] == ["b", "d", None]
    warnings = warnings_logged()
    assert len(warnings) == 1, warnings
    assert str(path) in warnings[0] and "'claim', 'x'" in warnings[0] and "last value" in warnings[0]


def test_extra_columns_warn_once_per_file(tmp_path, warnings_logged):
    jsonl = write_jsonl(tmp_path / "d.jsonl", [{"claim": "a", "note": 1}, {"claim": "b", "extra": 2}])
    csv_file = write_csv(tmp_path / "d.csv", [{"claim": "a", "source": "s", "unused": "u"}])
    load(jsonl, columns=("claim",))
    load(csv_file, columns=("claim", "source"))
    load(jsonl)  # without `columns`: nothing to compare with, no warning
    warnings = warnings_logged()
    assert warnings == [
        f"{jsonl}: column(s) 'note', 'extra' are not read by this benchmark (ignored)",
        f"{csv_file}: column(s) 'unused' are not read by this benchmark (ignored)",
    ]


def test_non_object_row_keeps_its_message(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"claim": "a"}\n[1, 2]\n')
    fails(path, "row 2 is a list, not an object")


# ---------------------------------------------------------------------------- empty data


@pytest.mark.parametrize(
    "suffix, text", [(".jsonl", ""), (".jsonl", "\n\n"), (".json", "[]"), (".csv", "claim,source\n")]
)
def test_empty_file_is_an_error(tmp_path, suffix, text):
    path = tmp_path / f"d{suffix}"
    path.write_text(text)
    fails(path, "no rows")


def test_empty_parquet_is_an_error(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"claim": pa.array([], pa.string())}), path)
    fails(path, "no rows")


def test_require_rows():
    assert require_rows([{"a": 1}], "data.jsonl", "match subset 'x'") == [{"a": 1}]
    with pytest.raises(DatasetError) as e:
        require_rows([], "data.jsonl", "match subset 'medqa'")
    assert str(e.value) == "data.jsonl: no rows match subset 'medqa'; nothing to evaluate"


def test_parquet_round_trip_still_loads(tmp_path):
    rows = [{"claim": "a", "Knowledge": ["k1", "k2"]}, {"claim": "b", "Knowledge": ["k3"]}]
    assert load(write_parquet(tmp_path / "d.parquet", rows)) == rows


# ---------------------------------------------------------------------------- through the CLI


def score(tmp_path: Path, dataset: Path, run=medhal_main):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"idx": 0, "reply": "<score>2</score>"}\n')
    return run(
        "score",
        "medfact-bench",
        "--predictions",
        str(predictions),
        "--dataset-path",
        str(dataset),
        "-o",
        str(tmp_path / "out"),
    )


def test_score_with_a_surrogate_cell_exits_2_before_writing_anything(tmp_path):
    rows = medfact_rows(6)
    rows[3]["source"] = "Trial 3 found \ud800 an effect."
    path = tmp_path / "medfact.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # ensure_ascii: the surrogate as \ud800
    proc = score(tmp_path, path)
    clean_exit_2(proc, f"{path}:4:", "row 4 field 'source'", "lone surrogate")
    assert not (tmp_path / "out" / "traces.jsonl").exists()


def test_score_with_a_utf16_dataset_exits_2(tmp_path):
    path = tmp_path / "medfact.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in medfact_rows(3)), encoding="utf-16")
    clean_exit_2(score(tmp_path, path), str(path), "UTF-16", "expected UTF-8")


def test_score_with_a_bom_csv_loads(tmp_path):
    rows = medfact_rows(3)
    path = tmp_path / "medfact.csv"
    write_csv(path, rows)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    proc = score(tmp_path, path)
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "out" / "traces.jsonl").read_text().splitlines()) == 3
