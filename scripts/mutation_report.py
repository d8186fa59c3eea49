"""Write `reports/test-quality.md` from a finished `make mutants` run.

mutmut keeps its verdicts in one `.meta` JSON file per mutated module (under `mutants/` of its
working copy). A surviving mutant is either a hole in the tests or a change that no test should
catch (an error message's wording, a speed-only branch, code equivalent to the original). The
second kind is written down, with the reason, in `tests/mutation_verdicts.toml`; this script
joins the two and exits 1 while any survivor has no reason, or a reason written for a line that
has since changed (mutant names are positional, so a verdict records the mutated line it was
written for and goes stale when the code moves).

    uv run python scripts/mutation_report.py               # after `make mutants`
    uv run python scripts/mutation_report.py --todo        # print TOML stubs for unexplained survivors
    uv run python scripts/mutation_report.py --prune       # drop reasons for mutants no longer alive
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKDIR = ROOT / "build" / "mutmut"
VERDICTS = ROOT / "tests" / "mutation_verdicts.toml"
REPORT = ROOT / "reports" / "test-quality.md"

KILLED = {1: "killed", 3: "killed"}
TIMEOUT = {36, -24, 24, 152, 255}
SURVIVED = 0
NO_TESTS = {5, 33}


@dataclass(frozen=True)
class Mutant:
    name: str
    module: str
    exit_code: int | None
    path: str

    @property
    def status(self) -> str:
        if self.exit_code in KILLED:
            return "killed"
        if self.exit_code in TIMEOUT:
            return "timeout"
        if self.exit_code == SURVIVED:
            return "survived"
        if self.exit_code in NO_TESTS:
            return "no tests"
        if self.exit_code is None:
            return "not checked"
        return "suspicious"


def load_mutants(workdir: Path) -> list[Mutant]:
    mutants = []
    for meta in sorted((workdir / "mutants").rglob("*.py.meta")):
        source = meta.relative_to(workdir / "mutants").as_posix().removesuffix(".meta")
        module = source.removesuffix(".py").replace("/", ".")
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        mutants += [Mutant(name, module, code, source) for name, code in sorted(codes.items())]
    return mutants


def mutated_line(mutant: Mutant) -> str:
    """The first line the mutant adds, as mutmut's diff shows it (stripped)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diff = get_diff_for_mutant(mutant.name, path=mutant.path)
    added = [
        line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    return added[0] if added else "(line removed)"


def load_verdicts(path: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    data = tomllib.loads(path.read_text())
    categories = data.get("categories", {})
    verdicts = data.get("verdicts", {})
    for name, verdict in verdicts.items():
        if verdict.get("why") not in categories:
            raise SystemExit(f"{path}: verdicts.{name}: why = {verdict.get('why')!r} is not a category")
        if "line" not in verdict:
            raise SystemExit(f"{path}: verdicts.{name}: no line")
    return categories, verdicts


def prune(path: Path, alive: set[str]) -> int:
    """Remove the verdict lines of mutants that are no longer survivors (killed since, or
    gone with the code they mutated); comments and categories are kept. Returns how many."""
    kept, dropped, in_verdicts = [], 0, False
    for line in path.read_text().splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            in_verdicts = stripped == "[verdicts]"
        elif in_verdicts and stripped.startswith('"'):
            name = json.loads(stripped[: stripped.index('" = ') + 1])
            if name not in alive:
                dropped += 1
                continue
        kept.append(line)
    path.write_text("".join(kept))
    return dropped


def git_commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() or "unknown"


def table(rows: list[list[str]], header: list[str]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def code(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


COLUMNS = ["killed", "timeout", "survived, explained", "survived", "no tests, explained", "no tests"]
"""The statuses counted per module, in the table's order."""
HEADER = [
    "# Test quality: mutation testing of the scoring code",
    "",
    "Produced by `make mutants` (mutmut, pinned in the dev group; run outside `make test`, it takes",
    "about an hour on 2 cores) and `scripts/mutation_report.py`, at commit `{commit}`. mutmut changes one",
    "operator, constant, string or argument at a time in each environment's reading, scoring and",
    "report modules and in `medhal/reports/metrics.py`, `medhal/kit/replies.py` and",
    "`medhal/reports/report.py`, then",
    "runs the tests that call the changed function. A mutant is *killed* when a test fails,",
    "*timeout* when the tests hang (also a catch). A survivor is either a hole the tests must",
    "close or a change no test should catch; every one of the latter is listed below with its",
    "reason (kept in `tests/mutation_verdicts.toml`, checked against the mutated line).",
    "",
    "Score = (killed + timeout) / (total - explained). Tests left out of the mutation runs, and",
    "why: `[tool.mutmut]` in `pyproject.toml`.",
    "",
]


@dataclass
class Sorted:
    """Mutants by what the report says of them."""

    by_module: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    explained: dict[str, list[Mutant]] = field(default_factory=lambda: defaultdict(list))
    unexplained: list[Mutant] = field(default_factory=list)
    stale: list[Mutant] = field(default_factory=list)


def sort_mutants(mutants: list[Mutant], lines: dict[str, str], verdicts) -> Sorted:
    """Count each module's statuses; a survivor with a verdict for its mutated line is
    explained, one whose verdict was written for another line is stale."""
    found = Sorted()
    for m in mutants:
        status = m.status
        if status in ("survived", "no tests"):
            verdict = verdicts.get(m.name)
            if verdict is None:
                found.unexplained.append(m)
            elif verdict["line"] != lines[m.name]:
                found.stale.append(m)
            else:
                found.explained[verdict["why"]].append(m)
                status += ", explained"
        found.by_module[m.module][status] += 1
    return found


def explained_lines(found: Sorted, lines: dict[str, str], categories: dict[str, str], verdicts) -> list[str]:
    """The survivors that change no reported number, by reason, largest group first."""
    out = ["## Survivors that change no reported number", ""]
    for why, members in sorted(found.explained.items(), key=lambda kv: -len(kv[1])):
        out += [f"### {why} ({len(members)})", "", categories[why], ""]
        rows = [
            [m.name.removeprefix(m.module + "."), code(lines[m.name]), verdicts[m.name].get("note", "")]
            for m in members
        ]
        out += table(
            rows,
            [
                f"mutant ({members[0].module}...)" if len({x.module for x in members}) == 1 else "mutant",
                "mutated line",
                "note",
            ],
        )
        out.append("")
    return out


def render(
    mutants: list[Mutant], lines: dict[str, str], categories: dict[str, str], verdicts
) -> tuple[str, int]:
    found = sort_mutants(mutants, lines, verdicts)
    rows = []
    total = Counter[str]()
    for module, counts in sorted(found.by_module.items()):
        total.update(counts)
        rows.append(_row(module, counts, COLUMNS))
    rows.append(_row("**all**", total, COLUMNS))
    not_done = total["not checked"] + total["suspicious"]
    out = [line.replace("{commit}", git_commit()) for line in HEADER]
    out += [*table(rows, ["module", *COLUMNS, "not run", "total", "score"]), ""]
    n_all = sum(total.values())
    caught = total["killed"] + total["timeout"]
    out += [
        f"Of all {n_all} mutants, {caught} are caught ({caught / n_all:.1%}, counting explained survivors "
        "as alive).",
        "",
    ]
    if not_done:
        out += [f"**{not_done} mutants were not run to the end** (run interrupted or suspicious).", ""]
    if found.unexplained or found.stale:
        out += ["## Survivors without a reason", ""]
        out += table(
            [
                [m.name, code(lines[m.name]), "stale verdict" if m in found.stale else ""]
                for m in found.unexplained + found.stale
            ],
            ["mutant", "mutated line", ""],
        )
        out.append("")
    out += explained_lines(found, lines, categories, verdicts)
    return "\n".join(out), len(found.unexplained) + len(found.stale) + not_done


def _row(module: str, counts: Counter[str], columns: list[str]) -> list[str]:
    n = sum(counts.values())
    explained = counts["survived, explained"] + counts["no tests, explained"]
    caught = counts["killed"] + counts["timeout"]
    score = f"{caught / (n - explained):.1%}" if n > explained else "n/a"
    not_run = counts["not checked"] + counts["suspicious"]
    return [module, *(str(counts[c]) for c in columns), str(not_run), str(n), score]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=WORKDIR)
    parser.add_argument("--verdicts", type=Path, default=VERDICTS)
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--todo", action="store_true", help="print stubs for unexplained survivors")
    parser.add_argument("--module", help="with --todo: only this module")
    parser.add_argument("--prune", action="store_true", help="drop verdicts of mutants no longer alive")
    args = parser.parse_args(argv)

    workdir, out = args.workdir.resolve(), args.out.resolve()
    mutants = load_mutants(workdir)
    if not mutants:
        print(f"{workdir}: no mutmut results (run `make mutants` first)", file=sys.stderr)
        return 2
    verdicts_path = args.verdicts.resolve()
    if args.prune:
        alive = {m.name for m in mutants if m.status in ("survived", "no tests")}
        print(f"{verdicts_path}: dropped {prune(verdicts_path, alive)} verdicts of mutants no longer alive")
    categories, verdicts = load_verdicts(verdicts_path)
    os.chdir(workdir)  # mutmut reads its mutated files relative to its working copy
    open_ = [m for m in mutants if m.status in ("survived", "no tests")]
    lines = {m.name: mutated_line(m) for m in open_}
    if args.todo:
        for m in open_:
            if args.module and m.module != args.module:
                continue
            verdict = verdicts.get(m.name)
            if verdict is None or verdict["line"] != lines[m.name]:
                key = json.dumps(m.name, ensure_ascii=False)
                line = json.dumps(lines[m.name], ensure_ascii=False)
                print(f'{key} = {{ why = "", line = {line}, note = "" }}')
        return 0
    text, problems = render(mutants, lines, categories, verdicts)
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(out)
    print(f"wrote {out}; {problems} survivors without a reason or mutants not run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
