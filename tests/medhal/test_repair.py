"""`medhal repair`: a trace file whose last line was cut short by a killed eval is made
resumable again, without losing a byte; an intact file is left alone; a corrupt line
anywhere but at the end is named and not touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medhal.reports.repair import RepairError, repair_run
from tests.conftest import BIN, run_eval
from tests.medfact_bench.fixtures import LABELS
from tests.medfact_bench.fixtures import rows as medfact_rows
from tests.running import clean_exit_2, medhal_main
from tests.tables import write_jsonl

SCORE_FOR = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}


def rows_text(n: int, width: int = 40) -> list[bytes]:
    return [
        json.dumps({"task": {"data": {"idx": i}}, "nodes": [], "pad": "x" * width}).encode() + b"\n"
        for i in range(n)
    ]


def run_dir(tmp_path: Path, content: bytes, name: str = "traces.jsonl", age: float = 60.0) -> Path:
    """A run directory whose trace file holds `content`, last modified `age` seconds ago (a
    killed eval's file is still; repair waits `QUIET_SECONDS` after the last change)."""
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / name).write_bytes(content)
    then = time.time() - age
    os.utime(run / name, (then, then))
    return run


def test_truncated_last_line_is_moved_aside(tmp_path):
    lines = rows_text(5)
    partial = lines[4][: len(lines[4]) // 2]
    run = run_dir(tmp_path, b"".join(lines[:4]) + partial)
    [repair] = repair_run(run)
    assert (run / "traces.jsonl").read_bytes() == b"".join(lines[:4])
    assert (run / "traces.jsonl.partial").read_bytes() == partial
    assert repair.describe() == (
        f"{run / 'traces.jsonl'}: moved the partial line 5 ({len(partial):,} bytes, no newline, "
        "not valid JSON) to traces.jsonl.partial; the file now ends after line 4"
    )
    # Repairing again finds an intact file and changes nothing.
    [again] = repair_run(run)
    assert again.describe() == f"{run / 'traces.jsonl'}: intact (4 lines), nothing to do"
    assert (run / "traces.jsonl.partial").read_bytes() == partial


def test_partial_file_is_appended_never_overwritten(tmp_path):
    lines = rows_text(3)
    run = run_dir(tmp_path, b"".join(lines[:2]) + b'{"task": {"da')
    (run / "traces.jsonl.partial").write_bytes(b"earlier partial")
    repair_run(run)
    assert (run / "traces.jsonl.partial").read_bytes() == b'earlier partial{"task": {"da'


def test_partial_line_larger_than_the_read_chunk(tmp_path):
    """The real case was a 23 MB partial line; 3 MB crosses the 1 MiB backwards-read chunk."""
    lines = rows_text(3)
    partial = b'{"task": {"data": {"idx": 3}}, "nodes": [{"content": "' + b"y" * (3 << 20)
    run = run_dir(tmp_path, b"".join(lines) + partial)
    [repair] = repair_run(run)
    assert repair.moved == len(partial) and repair.lines == 3
    assert (run / "traces.jsonl").read_bytes() == b"".join(lines)
    assert (run / "traces.jsonl.partial").read_bytes() == partial


def test_only_line_truncated(tmp_path):
    run = run_dir(tmp_path, b'{"task": ')
    [repair] = repair_run(run)
    assert repair.lines == 0 and (run / "traces.jsonl").read_bytes() == b""


def test_complete_last_line_without_newline_gets_one(tmp_path):
    """A resumed run appends to the file: without the newline its first new trace would
    be glued onto the last old one."""
    lines = rows_text(2)
    run = run_dir(tmp_path, lines[0] + lines[1].rstrip(b"\n"))
    [repair] = repair_run(run)
    assert (
        repair.describe()
        == f"{run / 'traces.jsonl'}: the last line (2) was complete but lacked its newline; added it"
    )
    assert (run / "traces.jsonl").read_bytes() == b"".join(lines)
    assert not (run / "traces.jsonl.partial").exists()


def test_intact_file_is_unchanged(tmp_path):
    content = b"".join(rows_text(3)) + b"\n"  # a trailing blank line is fine
    run = run_dir(tmp_path, content)
    [repair] = repair_run(run)
    assert repair.moved == 0 and not repair.added_newline
    assert (run / "traces.jsonl").read_bytes() == content


def test_corrupt_middle_line_is_not_repaired(tmp_path):
    lines = rows_text(4)
    lines[1] = lines[1][:10] + b"\n"
    content = b"".join(lines) + b'{"cut'
    run = run_dir(tmp_path, content)
    with pytest.raises(RepairError) as e:
        repair_run(run)
    assert str(e.value).startswith(f"{run / 'traces.jsonl'}:2: not valid JSON")
    assert "not the last line" in str(e.value)
    assert (run / "traces.jsonl").read_bytes() == content
    assert not (run / "traces.jsonl.partial").exists()


def test_results_jsonl_is_repaired_too(tmp_path):
    lines = rows_text(2)
    run = run_dir(tmp_path, lines[0] + lines[1][:7], name="results.jsonl")
    [repair] = repair_run(run)
    assert repair.path.name == "results.jsonl" and repair.moved == 7
    assert (run / "results.jsonl.partial").read_bytes() == lines[1][:7]


def test_cli(tmp_path):
    lines = rows_text(3)
    run = run_dir(tmp_path, b"".join(lines[:2]) + lines[2][:20])
    proc = medhal_main("repair", str(run))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        (
            f"{run / 'traces.jsonl'}: moved the partial line 3 (20 bytes, no newline, not valid JSON) to "
            "traces.jsonl.partial; the file now ends after line 2"
        )
    ]
    clean_exit_2(medhal_main("repair", str(tmp_path / "nowhere")), str(tmp_path / "nowhere"), "no such file")
    (tmp_path / "empty").mkdir()
    clean_exit_2(medhal_main("repair", str(tmp_path / "empty")), "no traces.jsonl or results.jsonl")
    run_dir(tmp_path, b"{not json\n" + lines[0])
    clean_exit_2(medhal_main("repair", str(run)), f"{run / 'traces.jsonl'}:1:", "not repaired")


# ---------------------------------------------------------------------------- with eval --resume


def script(body: dict, number: int) -> str:
    text = body["messages"][-1]["content"]
    i = int(text.split("[item ", 1)[1].split("]", 1)[0])
    return f"<think>item {i}</think><score>{SCORE_FOR[LABELS[i % 3]]}</score>"


def resume(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "eval"), "--resume", str(out)], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow(reason="eval --resume as an executable, before and after the repair")
def test_resume_after_a_killed_write(tmp_path, endpoint):
    """A run's last trace cut in half (what kill -9 mid-write leaves): `eval --resume`
    dies inside verifiers until `medhal repair` moves the partial line aside; then it
    re-runs exactly that item and the run has one trace per task."""
    n = 6
    dataset = write_jsonl(tmp_path / "medfact.jsonl", medfact_rows(n))
    ep = endpoint(script)
    out = tmp_path / "run"
    rows = run_eval("medfact-bench", ep.base_url, out, "-c", "3", "--taskset.dataset-path", str(dataset))
    assert sorted(r["task"]["data"]["idx"] for r in rows) == list(range(n))
    traces = out / "traces.jsonl"
    lines = traces.read_bytes().splitlines(keepends=True)
    cut_idx = json.loads(lines[-1])["task"]["data"]["idx"]
    partial = lines[-1][: len(lines[-1]) // 2]
    traces.write_bytes(b"".join(lines[:-1]) + partial)

    before = resume(out)
    # verifiers 0.2.1 re-reads every line (verifiers/v1/cli/eval/resume.py:82-85) and the
    # json.loads fallback raises on the partial line, uncaught: a traceback, exit 1.
    assert before.returncode != 0
    assert "json.decoder.JSONDecodeError" in before.stderr, before.stderr[-3000:]

    # Repair waits for a file to be still (modified a moment ago here), unless told it is.
    os.utime(traces)
    clean_exit_2(medhal_main("repair", str(out)), "modified", "--force")
    repaired = medhal_main("repair", "--force", str(out))
    assert repaired.returncode == 0, repaired.stderr
    assert f"moved the partial line {n} ({len(partial):,} bytes" in repaired.stdout
    assert (out / "traces.jsonl.partial").read_bytes() == partial

    requests_before = len(ep.requests)
    after = resume(out)
    assert after.returncode == 0, after.stderr[-3000:]
    assert len(ep.requests) == requests_before + 1  # only the cut item was sent again
    final = [json.loads(x) for x in traces.read_text().splitlines() if x.strip()]
    assert sorted(r["task"]["data"]["idx"] for r in final) == list(range(n))
    assert not any(r["errors"] for r in final)
    assert [r["task"]["data"]["idx"] for r in final][-1] == cut_idx


# ------------------------------------------------------------------ a file that changes, a file that cannot


def test_a_file_still_being_appended_is_refused_and_loses_nothing(tmp_path, monkeypatch):
    """An eval appends a whole trace while repair reads the file: repair must not cut it off."""
    from medhal.reports import repair

    lines = rows_text(6)
    run = run_dir(tmp_path, b"".join(lines[:4]) + lines[4][:30])
    traces = run / "traces.jsonl"
    real = repair._tail_start

    def tail_start_then_the_writer_appends(path, size):
        start = real(path, size)
        with open(path, "ab") as f:
            f.write(lines[4][30:] + lines[5])
        return start

    monkeypatch.setattr(repair, "_tail_start", tail_start_then_the_writer_appends)
    with pytest.raises(RepairError, match="changed while it was being repaired"):
        repair_run(run)
    assert traces.read_bytes() == b"".join(lines[:6])
    assert not (run / "traces.jsonl.partial").exists()


def test_a_read_only_file_is_refused_before_anything_is_copied(tmp_path, monkeypatch):
    """As the OS refuses a read-only file to a user who may not write it (the tests may run
    as root, who may): every write to the trace file fails."""
    import builtins
    import os

    from medhal.reports import repair

    lines = rows_text(3)
    run = run_dir(tmp_path, b"".join(lines[:2]) + lines[2][:25])
    traces = run / "traces.jsonl"
    real_open = builtins.open

    def read_only_open(file, mode="r", *args, **kwargs):
        if Path(file) == traces and any(m in mode for m in "wa+"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *args, **kwargs)

    def read_only_truncate(path, length):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(builtins, "open", read_only_open)
    monkeypatch.setattr(os, "truncate", read_only_truncate)
    for _ in range(3):  # every retry
        with pytest.raises(PermissionError):
            repair.repair_run(run)
    monkeypatch.undo()
    assert not (run / "traces.jsonl.partial").exists()
    assert traces.read_bytes() == b"".join(lines[:2]) + lines[2][:25]


@pytest.mark.parametrize(("tail", "kind"), [(b"[1, 2]", "list"), (b"12345", "int"), (b'"text"', "str")])
def test_a_valid_json_last_line_that_is_no_object_is_described_as_such(tmp_path, tail, kind):
    lines = rows_text(2)
    run = run_dir(tmp_path, b"".join(lines) + tail)
    [repair] = repair_run(run)
    assert f"no newline, valid JSON but not an object (a {kind})" in repair.describe()
    assert (run / "traces.jsonl.partial").read_bytes() == tail


def test_intact_only_for_what_report_accepts(tmp_path):
    """A byte-order mark at the start of line 11 (two files concatenated) is refused by
    `medhal report`; repair must not call the file intact."""
    lines = rows_text(12)
    lines[10] = b"\xef\xbb\xbf" + lines[10]
    run = run_dir(tmp_path, b"".join(lines))
    with pytest.raises(RepairError, match=r"traces.jsonl:11: .*not repaired"):
        repair_run(run)
    assert (run / "traces.jsonl").read_bytes() == b"".join(lines)


def test_a_complete_last_line_that_report_refuses_is_not_given_a_newline(tmp_path):
    lines = rows_text(2)
    run = run_dir(tmp_path, lines[0] + b'{"task": {"data": {"idx": "one"}}, "nodes": []}')
    with pytest.raises(RepairError, match=r"traces.jsonl:2: field 'task.data.idx'"):
        repair_run(run)


# ------------------------------------------------------------------ a writer still writing (issue 33 item 10)

WRITER = """
import sys
with open(sys.argv[1], "ab") as f:
    line = sys.argv[2].encode()
    f.write(line[: len(line) // 2])
    f.flush()
    print("paused", flush=True)
    sys.stdin.readline()  # paused inside the line until the test says go on
    f.write(line[len(line) // 2 :] + b"\\n")
"""


def test_a_writer_paused_inside_a_line_is_seen_and_its_line_stays_whole(tmp_path):
    # Round 2's repair cut the half line the writer had written, then the writer wrote the
    # other half: two halves, and a file later repairs refused. A file some process holds
    # open for writing is not repaired, whatever --force says.
    lines = rows_text(4)
    run = run_dir(tmp_path, b"".join(lines[:3]))
    traces = run / "traces.jsonl"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(traces), lines[3].decode().rstrip("\n")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "paused\n"
        for force in (False, True):
            with pytest.raises(RepairError, match=f"process {writer.pid} has it open for writing"):
                repair_run(run, force=force)
        assert traces.read_bytes() == b"".join(lines[:3]) + lines[3][: (len(lines[3]) - 1) // 2]
        assert not (run / "traces.jsonl.partial").exists()
    finally:
        writer.communicate("go on\n", timeout=60)
    assert writer.returncode == 0
    assert traces.read_bytes() == b"".join(lines)
    [repair] = repair_run(run)
    assert repair.describe() == f"{traces}: intact (4 lines), nothing to do"


def test_a_file_modified_within_the_quiet_window_waits_for_force(tmp_path):
    from medhal.reports.repair import QUIET_SECONDS

    lines = rows_text(3)
    cut = b"".join(lines[:2]) + lines[2][:20]
    run = run_dir(tmp_path, cut, age=1.0)
    with pytest.raises(RepairError, match=f"modified 1 s ago, within {QUIET_SECONDS} s"):
        repair_run(run)
    assert (run / "traces.jsonl").read_bytes() == cut
    line = clean_exit_2(medhal_main("repair", str(run)), "traces.jsonl", "--force")
    assert "nothing was changed" in line
    proc = medhal_main("repair", "--force", str(run))
    assert proc.returncode == 0, proc.stderr
    assert (run / "traces.jsonl").read_bytes() == b"".join(lines[:2])
    # Still for longer than the window: repaired without --force.
    (tmp_path / "still").mkdir()
    run = run_dir(tmp_path / "still", cut, age=QUIET_SECONDS + 1)
    [repair] = repair_run(run)
    assert repair.moved == 20
