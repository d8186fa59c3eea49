"""The READMEs say what the code does.

Each environment README shows example replies and their readings under every convention,
between `<!-- readings:begin -->` and `<!-- readings:end -->`. Rows are
`| <reply> | <medhal> | <authors> | <strict> |` (Med-HALT: a test-set column first); the
reply is a code span (double backticks when it holds a backtick), `\\n` stands for a line
break, `\\|` for a pipe, `(empty)` for an empty reply, and INVALID for no reading. This test
runs the environment's own readers on every row and fails when a table says something
the code does not do. It also keeps the READMEs' shape: the same sections in the same
order in every environment README, every module and every taskset option documented, no
front matter (PyPI shows it as text), and no stale "unverified pin" notes.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from medhal.kit import contract
from medhal.kit.contract import headings, section
from medhal.kit.outcomes import CONVENTIONS

ROOT = Path(__file__).parents[1]
ENVIRONMENTS = {env.folder.name: env for env in contract.environments(ROOT, tests=True)}
"""Every environment folder (the collection's and the test environments'), by folder name."""
SECTIONS = list(contract.README_SECTIONS)
BEGIN, END = contract.READINGS_TABLE
EMPTY = "(empty)"
INVALID = "INVALID"
ISSUE_9_REPLIES = [
    # The replies issue 9 found misread (MedHallu, "not sure" offered); the table keeps them.
    r"\boxed{1}",
    r"Final answer: \boxed{0}",
    "Digit: 1",
    "No hallucination detected.",
    "The answer isn't hallucinated.",
    "Hallucination: No",
    "This answer does not contain hallucinations.",
    "1. The question asks ... 2. The answer matches the abstract. Therefore the answer is factual.",
    "0 or 1",
]
STALE = ("unverified", "could not be checked")


def readme(folder: str) -> str:
    return (ENVIRONMENTS[folder].folder / "README.md").read_text(encoding="utf-8")


def all_readmes() -> list[Path]:
    return [
        ROOT / "README.md",
        *(env.folder / "README.md" for env in ENVIRONMENTS.values()),
        *(env.package_dir / "demo" / "README.md" for env in ENVIRONMENTS.values()),
    ]


# ------------------------------------------------------------------------------ parsing


def cells(line: str) -> list[str]:
    """The cells of a table row, split at pipes that are not escaped."""
    assert line.startswith("|") and line.endswith("|"), f"not a table row: {line!r}"
    return [c.strip() for c in re.split(r"(?<!\\)\|", line[1:-1])]


def unescape(cell: str) -> str:
    """A table cell as text: a code span's content (`` `x` `` or ``` `` x `` ```), `\\n` a line
    break, `\\|` a pipe; `(empty)` the empty string."""
    if cell == EMPTY:
        return ""
    if cell.startswith("`` ") and cell.endswith(" ``"):
        cell = cell[3:-3]
    elif len(cell) >= 2 and cell.startswith("`") and cell.endswith("`"):
        cell = cell[1:-1]
        assert "`" not in cell, f"a reply holding a backtick needs a double-backtick code span: {cell!r}"
    return cell.replace("\\|", "|").replace("\\n", "\n")


@dataclass(frozen=True)
class Example:
    context: dict[str, str]
    """The columns before the reply (Med-HALT: `set`, the test set), by header."""
    reply: str
    readings: dict[str, str | None]
    """Convention -> the reading the README states (None: INVALID)."""

    @property
    def test_set(self) -> str | None:
        return self.context.get("set")


def examples(text: str) -> list[Example]:
    """The rows of the README's readings table: `| <context>... | <reply> | <medhal> |
    <authors> | <strict> |`, the context columns (what a reading depends on besides the reply,
    such as Med-HALT's test set) named by the header before `reply`."""
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "one readings table per README"
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    rows = [line.strip() for line in block.strip().splitlines()]
    header, rule, *body = rows
    names = cells(header)
    assert "reply" in names and names[names.index("reply") :] == ["reply", *CONVENTIONS], names
    context = names[: names.index("reply")]
    assert set(cells(rule)) == {"---"}
    found = []
    for line in body:
        row = cells(line)
        assert len(row) == len(names), f"row with {len(row)} cells: {line!r}"
        reply, *readings = row[len(context) :]
        found.append(
            Example(
                {name: unescape(value) for name, value in zip(context, row, strict=False)},
                unescape(reply),
                {
                    c: None if r == INVALID else unescape(r)
                    for c, r in zip(CONVENTIONS, readings, strict=True)
                },
            )
        )
    return found


# ----------------------------------------------------------------------------- the parser


def test_cells_split_at_unescaped_pipes_and_unescape():
    row = cells(r"| `a \| b` | `` x`y\nz `` | (empty) | INVALID |")
    assert row == [r"`a \| b`", r"`` x`y\nz ``", "(empty)", "INVALID"]
    assert [unescape(c) for c in row] == ["a | b", "x`y\nz", "", "INVALID"]


def test_headings_ignore_fenced_code():
    text = "# t\n## One\n```bash\n## not a heading\n```\n## Two\ntext\n"
    assert headings(text) == ["One", "Two"]
    assert section(text, "One") == ""
    assert section(text, "Two") == "text"


# ---------------------------------------------------------------------- example readings


def test_medhallu_examples_read_as_the_table_says():
    from medhallu.replies import READERS

    rows = examples(readme("medhallu"))
    assert 12 <= len(rows) <= 45  # issue 31 added a row per family of its reading round
    assert tuple(READERS) == CONVENTIONS
    for row in rows:
        actual = {c: READERS[c](row.reply, True) for c in CONVENTIONS}
        assert actual == row.readings, f"reply {row.reply!r}"


def test_medhallu_table_keeps_the_replies_issue_9_found_misread():
    replies = [row.reply for row in examples(readme("medhallu"))]
    missing = [r for r in ISSUE_9_REPLIES if r not in replies]
    assert not missing


def test_med_halt_examples_read_as_the_table_says():
    from med_halt.benchmark import SETS
    from med_halt.replies import READERS

    rows = examples(readme("med_halt"))
    assert 12 <= len(rows) <= 30
    assert tuple(READERS) == CONVENTIONS
    for row in rows:
        assert row.test_set in SETS, f"unknown test set {row.test_set!r}"
        keys = SETS[row.test_set].answer_keys
        actual = {c: READERS[c](row.reply, keys).answer for c in CONVENTIONS}
        assert actual == row.readings, f"{row.test_set}: reply {row.reply!r}"


def test_medfact_bench_examples_read_as_the_table_says():
    from medfact_bench.replies import READERS

    rows = examples(readme("medfact_bench"))
    assert 12 <= len(rows) <= 45  # issue 31 added a row per family of its reading round
    assert tuple(READERS) == CONVENTIONS
    for row in rows:
        actual = {c: READERS[c](row.reply) for c in CONVENTIONS}
        stated = {c: None if v is None else int(v) for c, v in row.readings.items()}
        assert actual == stated, f"reply {row.reply!r}"


@pytest.mark.parametrize("folder", ENVIRONMENTS)
def test_example_replies_are_distinct_and_show_every_convention_disagreeing(folder):
    """A table of examples that all read alike under every convention shows nothing: each
    convention must disagree with `medhal` somewhere, and no reply is listed twice."""
    rows = examples(readme(folder))
    keys = [(row.test_set, row.reply) for row in rows]
    assert len(keys) == len(set(keys))
    for convention in ("authors", "strict"):
        assert any(row.readings[convention] != row.readings["medhal"] for row in rows), convention


# ---------------------------------------------------------------------------- structure


@pytest.mark.parametrize("folder", ENVIRONMENTS)
def test_environment_readme_has_the_sections_in_order(folder):
    assert headings(readme(folder)) == SECTIONS


@pytest.mark.parametrize("folder", ENVIRONMENTS)
def test_layout_names_every_module(folder):
    """The Layout table answers "where is X?": every module of the package, its published
    figures and its demo folder have a row."""
    layout = section(readme(folder), "Layout")
    package = ENVIRONMENTS[folder].package_dir
    names = [p.name for p in package.glob("*.py")] + ["published.csv", "demo/"]
    missing = [n for n in names if f"| `{n}` |" not in layout]
    assert not missing


def root_layout() -> str:
    return section((ROOT / "README.md").read_text(encoding="utf-8"), "Layout")


def expanded(path: str) -> list[str]:
    """A README path with `<name>` standing for each folder of the collection."""
    folders = [env.folder.name for env in ENVIRONMENTS.values() if env.published]
    return [path.replace("<name>", folder) for folder in folders] if "<name>" in path else [path]


def test_root_layout_paths_exist():
    """Every path the root README's Layout gives (a code span with a slash) exists."""
    paths = re.findall(r"`([\w<>.-]+/[\w<>./-]*)`", root_layout())
    assert len(paths) > 20
    missing = [p for path in paths for p in expanded(path) if not (ROOT / p).exists()]
    assert missing == []


def test_root_layout_names_exist_where_it_says():
    """`path.py` (`name`, ...): every name is defined or used in that module, so the answer
    to "where is MedHallu's F1 computed" stays true."""
    mentions = re.findall(r"`([\w/]+\.py)` \(([^)]*)\)", root_layout())
    assert any(path == "environments/medhallu/medhallu/report.py" for path, _ in mentions)
    missing = []
    for path, names in mentions:
        text = (ROOT / path).read_text(encoding="utf-8")
        missing += [
            f"{path}: {name}" for name in re.findall(r"`(\w+)`", names) if not re.search(rf"\b{name}\b", text)
        ]
    assert missing == []


def test_root_layout_names_every_module_of_every_layer():
    """Each layer's row names exactly the modules the layer has."""
    rows = {
        cells(line)[0]: cells(line)[1] for line in root_layout().splitlines() if line.startswith("| `medhal/")
    }
    for layer in ("kit", "reports", "serving", "commands"):
        text = rows[f"`medhal/{layer}/`"]
        modules = {p.name for p in (ROOT / "medhal" / layer).glob("*.py") if p.name != "__init__.py"}
        assert set(re.findall(r"`(\w+\.py)`", text)) == modules, layer


def _documented_default(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@pytest.mark.parametrize("folder", ENVIRONMENTS)
def test_options_table_documents_every_option(folder):
    """Every taskset option (and task option) of the config class has a row naming its
    default and, for a choice, every allowed value."""
    import importlib

    import verifiers.v1 as vf

    taskset = importlib.import_module(f"{ENVIRONMENTS[folder].package}.taskset")
    config = next(
        v
        for v in vars(taskset).values()
        if isinstance(v, type) and issubclass(v, vf.TasksetConfig) and v.__module__ == taskset.__name__
    )
    fields = {name: f for name, f in config.model_fields.items() if name not in vf.TasksetConfig.model_fields}
    task_config = config.model_fields["task"].annotation
    fields |= {
        f"task.{name}": f
        for name, f in task_config.model_fields.items()
        if name not in vf.TaskConfig.model_fields
    }
    rows = {}
    for line in section(readme(folder), "Options").splitlines():
        if line.startswith("| `"):
            row = cells(line)
            rows[unescape(row[0])] = row
    assert set(rows) == set(fields)
    for name, field in fields.items():
        default, values = rows[name][1], rows[name][2]
        expected = _documented_default(field.default)
        if expected is not None:
            assert f"`{expected}`" in default, f"{name}: default {expected!r} not in {default!r}"
        choices = [a for a in typing.get_args(field.annotation) if a is not type(None)]
        literal = next((a for a in choices if typing.get_origin(a) is typing.Literal), None)
        if literal is None and typing.get_origin(field.annotation) is typing.Literal:
            literal = field.annotation
        if literal is not None:
            for value in typing.get_args(literal):
                assert f"`{value}`" in values, f"{name}: allowed value {value!r} not in {values!r}"


@pytest.mark.parametrize("path", all_readmes(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_front_matter_and_no_stale_pin_notes(path):
    text = path.read_text(encoding="utf-8")
    assert not text.startswith("---"), "YAML front matter shows as text on PyPI"
    lowered = text.lower()
    assert not [phrase for phrase in STALE if phrase in lowered]


def root_section_tables(title: str) -> dict[str, list[list[str]]]:
    """The tables of a root README section, by their header row, as rows of cells."""
    tables: dict[str, list[list[str]]] = {}
    header = None
    for line in section((ROOT / "README.md").read_text(encoding="utf-8"), title).splitlines():
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = line
            tables[header] = []
        elif set(cells(line)) != {"---"}:
            tables[header].append(cells(line))
    return tables


def test_adding_a_benchmark_lists_the_contract():
    """The README's "Adding a benchmark" names every file, module, declaration and export the
    contract asks of an environment, and its tables of what lies beside the folder and of the
    listings that name each environment are exactly the contract's."""
    text = section((ROOT / "README.md").read_text(encoding="utf-8"), "Adding a benchmark")
    spans = set(re.findall(r"`([^`]+)`", text))
    wanted = [
        *contract.FOLDER_FILES,
        *(f"{module}.py" for module in contract.MODULES),
        *contract.PACKAGE_FILES,
        *contract.DECLARATIONS,
        *contract.EXPORTS,
        *contract.SCORING,
        *contract.RECORDED,
    ]
    assert [name for name in wanted if name not in spans] == []
    tables = root_section_tables("Adding a benchmark")
    first_column = {header: {unescape(row[0]) for row in rows} for header, rows in tables.items() if rows}
    assert first_column["| file | what it holds |"] == {
        *contract.FOLDER_FILES,
        *(f"{module}.py" for module in contract.MODULES),
        *contract.PACKAGE_FILES,
    }
    assert first_column["| path | what it holds |"] == set(contract.BESIDE_THE_FOLDER)
    assert first_column["| file | why it names each environment |"] == set(contract.LISTINGS)
