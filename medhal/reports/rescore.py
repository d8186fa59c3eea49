"""Two readings of one run's replies, compared (`medhal rescore`): traces in, a comparison out.

`medhal rescore` re-reads every reply of a run's traces under the environment installed now
and writes a new run. This module reads the old run's rollouts (`read_recorded`: each reply
exactly as the model sent it, not trimmed, since a strict reading may care about a leading
space), checks what rescoring needs to reproduce the run's tasks (`run_setting`,
`data_difference`), and compares the two readings rollout by rollout (`compare`): under each
reading convention, what was read and whether it was right before and after, the reward
before and after, each change named by its kind and counted, and the rollouts that changed
listed. Nothing here imports verifiers.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medhal.kit.outcomes import CONVENTIONS, READINGS, correct_key, parsed_key
from medhal.kit.untrusted import markdown_code, markdown_text
from medhal.reports.metrics import ERROR, INVALID
from medhal.reports.traces import (
    TraceFileError,
    TraceRecord,
    describe_silent_error,
    parse_trace_line,
    resolve_trace_file,
)

RUN_FIELDS = frozenset({"provenance", "selection", "parser"})
"""Task-data fields that say how a run was made, not what its task is (as report.py's
`content_digest` leaves them out)."""
KINDS = ("now read", "no longer read", "read differently", "judged differently")
"""How a rollout's outcome under one convention can change: a reply unreadable before and
read now, or the reverse; read as another answer; or read the same and judged otherwise (a
scoring rule changed)."""
REWARD_ONLY = "reward only"
"""The reward changed while every convention read and judged the reply as before."""
LISTED = 200
"""Changed rollouts listed in comparison.md (comparison.json lists them all)."""
SHOWN = 120
"""Characters of a reply or a reading shown in the comparison."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A rollout as one scoring left it: per convention (in `CONVENTIONS` order) the answer
    read (INVALID when nothing was read, ERROR when the rollout failed) and whether it was
    right; and its reward."""

    readings: tuple[str, ...]
    right: tuple[bool, ...]
    reward: float


@dataclass(frozen=True, slots=True)
class Recorded:
    """One rollout of the run being rescored: what rescoring and the comparison need."""

    idx: int
    rollout_id: str | None
    line: int
    reply: str | None
    """The final reply as recorded, untrimmed; None when the rollout produced none."""
    reasoning: str | None
    """The reasoning returned beside it, kept on the rescored trace (never read)."""
    finish_reason: str | None
    """Why its generation stopped, kept on the rescored trace (a reply the token limit cut
    stays labelled so)."""
    error: tuple[str, str] | None
    """(type, message) of the rollout's last error; None when it did not fail."""
    model: str | None
    sampling: dict[str, Any]
    outcome: Outcome


def outcome(record: TraceRecord) -> Outcome:
    """What a trace records of its reading under every convention, and its reward."""
    rewards = [v for v in record.rewards.values() if isinstance(v, (int, float))]
    reward = float(sum(rewards))
    if record.errored:
        return Outcome(tuple(ERROR for _ in CONVENTIONS), tuple(False for _ in CONVENTIONS), reward)
    readings = record.info.get(READINGS)
    readings = readings if isinstance(readings, dict) else {}
    shown, right = [], []
    for convention in CONVENTIONS:
        parsed = bool(record.metrics.get(parsed_key(convention)))
        label = readings.get(convention)
        shown.append(_short(label) if parsed and label is not None else INVALID)
        right.append(bool(record.metrics.get(correct_key(convention))))
    return Outcome(tuple(shown), tuple(right), reward)


def _short(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def recorded_reply(row: Mapping[str, Any]) -> str | None:
    """The final reply of a trace line (verifiers 0.2 trace, 0.4 episode or v0 results row)
    exactly as the model sent it: the same message the trace reader takes, not trimmed."""
    if "traces" in row and "nodes" not in row:
        traces = row.get("traces") or []
        row = traces[0] if traces else {"nodes": []}
    if "nodes" in row:
        for node in reversed(row.get("nodes") or []):
            message = node.get("message") or {}
            if node.get("sampled") and message.get("role") == "assistant":
                return _text(message.get("content"))
        return None
    completion = row.get("completion")
    if isinstance(completion, list):
        replies = [_text(m.get("content")) for m in completion if m.get("role") == "assistant"]
        return replies[-1] if replies else None
    return completion if isinstance(completion, str) else None


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text", ""), str))
    return content if isinstance(content, str) else ""


def read_recorded(path: str | Path) -> Iterator[tuple[TraceRecord, Recorded]]:
    """Each rollout of a trace file, in file order: the trace reader's record (every check of
    `medhal report`) and what rescoring needs of it."""
    file = resolve_trace_file(path)
    offset = 0
    with open(file, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.isspace():
                record = parse_trace_line(raw, str(file), number, offset)
                reply = recorded_reply(json.loads(raw))
                if (reply.strip() if reply is not None else None) != record.reply:
                    raise TraceFileError(f"{record.where}: the final reply cannot be read as recorded")
                yield record, recorded(record, reply)
            offset += len(raw)


def recorded(record: TraceRecord, reply: str | None) -> Recorded:
    last = record.errors[-1] if record.errors else None
    error = None
    if last is not None:
        kind = str(last.get("type") or "Error")
        error = (kind, str(last.get("message") or describe_silent_error(kind, last.get("status_code"))))
    return Recorded(
        idx=int(record.data["idx"]),
        rollout_id=record.rollout_id,
        line=record.line,
        reply=reply,
        reasoning=record.reasoning,
        finish_reason=record.finish_reason,
        error=error,
        model=record.model,
        sampling=dict(record.sampling),
        outcome=outcome(record),
    )


def run_setting(record: TraceRecord) -> tuple[dict[str, Any], dict[str, Any]]:
    """The taskset options and the task selection a trace records: what rescoring needs to
    select the run's tasks again. A trace without them (an older medhal's, another tool's) is
    an error naming it."""
    provenance = record.data.get("provenance")
    options = provenance.get("options") if isinstance(provenance, dict) else None
    if not isinstance(options, dict):
        raise TraceFileError(
            f"{record.where}: field 'task.data.provenance.options' is missing: the run does not record the "
            "options it ran with, so its tasks cannot be selected again"
        )
    selection = record.data.get("selection")
    if not isinstance(selection, dict) or not selection:
        raise TraceFileError(
            f"{record.where}: field 'task.data.selection' is missing: the run does not record which tasks it "
            "selected, so they cannot be selected again"
        )
    return dict(options), dict(selection)


TASK_CONTENT = ("prompt", "system_prompt")
"""The fields of verifiers' own task data that are what the model was asked; its others
(timeouts, resources, network rules) say how a rollout runs and differ between verifiers
lines."""


def data_difference(old: Mapping[str, Any], new: Mapping[str, Any], fields: Iterable[str]) -> str | None:
    """The first of `fields` (the task's content: its prompt and the benchmark's own fields)
    that both have and whose values differ, leaving out how the run was made (`RUN_FIELDS`):
    the installed environment builds another task than the one the reply answered. None when
    they agree."""
    for key in fields:
        if key in RUN_FIELDS or key not in old or key not in new:
            continue
        if json.dumps(old[key], sort_keys=True) != json.dumps(new[key], sort_keys=True):
            return key
    return None


# ------------------------------------------------------------------------------ comparing


@dataclass
class Changes:
    """What changed between two readings, counted as rollouts are added."""

    n: int = 0
    kinds: dict[str, Counter[str]] = field(default_factory=lambda: {c: Counter() for c in CONVENTIONS})
    transitions: dict[str, Counter[tuple[str, str, bool, bool]]] = field(
        default_factory=lambda: {c: Counter() for c in CONVENTIONS}
    )
    right: dict[str, list[int]] = field(default_factory=lambda: {c: [0, 0] for c in CONVENTIONS})
    reward: list[float] = field(default_factory=lambda: [0.0, 0.0])
    reward_changed: int = 0
    reward_only: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, old: Recorded, new: Outcome) -> None:
        self.n += 1
        changes = {}
        for i, convention in enumerate(CONVENTIONS):
            before, after = old.outcome.readings[i], new.readings[i]
            right = (old.outcome.right[i], new.right[i])
            self.right[convention][0] += right[0]
            self.right[convention][1] += right[1]
            kind = change_kind(before, after, *right)
            if kind is None:
                continue
            self.kinds[convention][kind] += 1
            self.transitions[convention][(before, after, *right)] += 1
            changes[convention] = {"kind": kind, "reading": [before, after], "right": list(right)}
        self.reward[0] += old.outcome.reward
        self.reward[1] += new.reward
        reward_moved = old.outcome.reward != new.reward
        self.reward_changed += reward_moved
        self.reward_only += reward_moved and not changes
        if changes or reward_moved:
            self.items.append(
                {
                    "idx": old.idx,
                    "rollout": old.rollout_id,
                    "line": old.line,
                    "reply": None if old.reply is None else _short(old.reply),
                    "reward": [old.outcome.reward, new.reward],
                    "changes": changes,
                }
            )


def change_kind(before: str, after: str, right_before: bool, right_after: bool) -> str | None:
    """The kind of change of one convention's outcome (`KINDS`), or None when it is the same."""
    if before == after:
        return None if right_before == right_after else "judged differently"
    if before == INVALID:
        return "now read"
    if after == INVALID:
        return "no longer read"
    return "read differently"


def compare(
    pairs: Iterable[tuple[Recorded, Outcome]],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
) -> dict[str, Any]:
    """comparison.json: the two runs (source, the code that scored each), their headlines,
    and what changed per convention (counts per kind, the most frequent changes of reading,
    right answers before and after), the rewards, and every rollout that changed."""
    changes = Changes()
    for recorded_rollout, outcome_now in pairs:
        changes.add(recorded_rollout, outcome_now)
    per_convention = {
        c: {
            "changed": sum(changes.kinds[c].values()),
            "kinds": {k: changes.kinds[c][k] for k in KINDS},
            "right": {"before": changes.right[c][0], "after": changes.right[c][1]},
            "transitions": [
                {"reading": [b, a], "right": [rb, ra], "count": n}
                for (b, a, rb, ra), n in changes.transitions[c].most_common(20)
            ],
        }
        for c in CONVENTIONS
    }
    return {
        "benchmark": new["benchmark"],
        "title": new["title"],
        "before": run_side(old),
        "after": run_side(new),
        "n": changes.n,
        "n_changed": len(changes.items),
        "conventions": per_convention,
        "reward": {
            "mean_before": changes.reward[0] / changes.n if changes.n else None,
            "mean_after": changes.reward[1] / changes.n if changes.n else None,
            "changed": changes.reward_changed,
            REWARD_ONLY: changes.reward_only,
        },
        "headline": headline_change(old, new),
        "items": changes.items,
    }


def run_side(report: Mapping[str, Any]) -> dict[str, Any]:
    """One side of the comparison: its traces, the code that scored them, its convention."""
    from medhal.reports.provenance import run_code

    return {"source": report["source"], "code": run_code(report), "convention": report["convention"]}


def headline_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The benchmark's headline before and after, row by row (a row per group for a
    per-group headline)."""
    from medhal.reports.headline import lead_rows

    before = {row["group"]: row for row in lead_rows(old)}
    rows = []
    for row in lead_rows(new):
        was = before.get(row["group"], {})
        rows.append({"label": row["label"], "group": row["group"], "before": was.get("value"), "after": row["value"]})
    return {"name": (new.get("lead") or {}).get("name"), "rows": rows}


# ------------------------------------------------------------------------------ markdown


def _cell(value: Any) -> str:
    from medhal.reports.markdown import fmt

    return fmt(value)


def comparison_markdown(comparison: Mapping[str, Any]) -> str:
    """comparison.md: the comparison for people."""
    from medhal.reports.markdown import table

    before, after = comparison["before"], comparison["after"]
    lines = [
        f"## Rescored: {markdown_text(comparison['title'])}",
        "",
        f"The replies of {markdown_code(before['source'], in_table=False)} (scored by {_code_text(before['code'])}), "
        f"read again under {_code_text(after['code'])} into {markdown_code(after['source'], in_table=False)}: "
        f"the replies as recorded, no model. {comparison['n_changed']} of {comparison['n']} rollouts changed.",
        "",
        "### The headline, before and after",
        "",
        *table(
            ["headline", "before", "after"],
            [[row["label"], row["before"], row["after"]] for row in comparison["headline"]["rows"]],
        ),
        "",
        "### What changed, by reading convention (rollouts)",
        "",
        *table(["change", *CONVENTIONS], _change_rows(comparison)),
        "",
        _reward_text(comparison["reward"]),
        "",
        *_transition_lines(comparison),
        *_item_lines(comparison["items"]),
    ]
    return "\n".join(lines)


def _code_text(code: Mapping[str, Any]) -> str:
    if not code:
        return "unknown code versions"
    return markdown_text(
        f"{code.get('environment', '?')} {code.get('environment_version', '?')} "
        f"(medhal {code.get('medhal', '?')}, verifiers {code.get('verifiers', '?')})"
    )


def _change_rows(comparison: Mapping[str, Any]) -> list[list[Any]]:
    per = comparison["conventions"]
    rows: list[list[Any]] = [[kind, *(per[c]["kinds"][kind] for c in CONVENTIONS)] for kind in KINDS]
    rows.append(["any change", *(per[c]["changed"] for c in CONVENTIONS)])
    rows.append(
        ["right, before → after", *(f"{per[c]['right']['before']} → {per[c]['right']['after']}" for c in CONVENTIONS)]
    )
    return rows


def _reward_text(reward: Mapping[str, Any]) -> str:
    return (
        f"Rewards: {reward['changed']} rollouts earn another reward ({reward[REWARD_ONLY]} of them read and "
        f"judged as before under every convention); mean reward {_cell(reward['mean_before'])} → "
        f"{_cell(reward['mean_after'])}."
    )


def _transition_lines(comparison: Mapping[str, Any]) -> list[str]:
    from medhal.reports.markdown import Md, table

    rows = [
        [c, Md(markdown_code(t["reading"][0])), Md(markdown_code(t["reading"][1])), _right(t["right"]), t["count"]]
        for c in CONVENTIONS
        for t in comparison["conventions"][c]["transitions"]
    ]
    if not rows:
        return []
    return [
        "### The most frequent changes (reading before → after)",
        "",
        *table(["convention", "before", "after", "right", "rollouts"], rows),
        "",
    ]


def _right(pair: Sequence[bool]) -> str:
    return f"{'right' if pair[0] else 'wrong'} → {'right' if pair[1] else 'wrong'}"


def _item_lines(items: Sequence[Mapping[str, Any]]) -> list[str]:
    if not items:
        return ["No rollout changed.", ""]
    from medhal.reports.markdown import Md, table

    rows = []
    for item in items[:LISTED]:
        what = "; ".join(
            f"{c}: {markdown_code(ch['reading'][0])} → {markdown_code(ch['reading'][1])} "
            f"({_right(ch['right'])}, {ch['kind']})"
            for c, ch in item["changes"].items()
        )
        reply = Md(markdown_code(item["reply"])) if item["reply"] is not None else "(no reply)"
        rows.append(
            [item["idx"], item["line"], reply, Md(what or "(readings unchanged)"), f"{item['reward'][0]:g} → {item['reward'][1]:g}"]
        )
    more = len(items) - LISTED
    return [
        f"### Changed rollouts ({'all' if more <= 0 else f'first {LISTED} of {len(items)}; all in comparison.json'})",
        "",
        *table(["idx", "line", "reply", "what changed", "reward"], rows),
        "",
    ]
