"""The role a run gives its data (evaluation or training), and the fingerprints that keep
evaluation items out of training loads.

A run states its role with the taskset option `role` (`BenchmarkConfig.role`): `eval` or
`train`. A run that states none is an evaluation, and its traces say the role was not
stated (`provenance.role`): a trainer that forgets to say `train` leaves that mark on every
rollout. A training load is refused when it selects a set the benchmark keeps for
evaluation only, and when its rows hold evaluation items: each environment ships the
fingerprints of its evaluation sets (`eval_fingerprints.json` beside its modules: hashes
of each item's normalised question and answer text, never the text), and a training load
whose items hash to any of them is refused in one line naming the file and the count.

The fingerprint of an item is the first 12 hex digits (48 bits) of the sha256 of its
normalised question, U+001F and its normalised answer; normalised is NFKC, case-folded,
every run of characters that are not letters or digits one space, stripped. So case,
punctuation and spacing do not hide an item; a paraphrase does. With 48 bits, checking a
training set of 100,000 items against 20,000 fingerprints matches a foreign item by chance
with probability below 1e-5.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from medhal.kit.datasets import DatasetError

Role = Literal["eval", "train"]
DEFAULT_ROLE: Role = "eval"
"""The role of a run that states none."""
FORMAT = "medhal evaluation fingerprints 1"
DIGITS = 12
"""Hex digits kept of each item's sha256."""
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Case-, punctuation- and spacing-insensitive form of a text (see the module)."""
    return " ".join(_NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def item_fingerprint(question: str, answer: str) -> str:
    key = f"{normalise(question)}\x1f{normalise(answer)}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:DIGITS]


def role_record(role: Role | None) -> dict[str, Any]:
    """What every trace records of the run's role: the role and whether it was stated."""
    return {"role": role or DEFAULT_ROLE, "stated": role is not None}


@dataclass(frozen=True)
class Fingerprints:
    """A benchmark's evaluation sets, each as the set of its items' fingerprints."""

    sets: Mapping[str, frozenset[str]]
    not_computed: Mapping[str, str]
    """Evaluation sets without fingerprints here, and why (their data was not available)."""

    def matches(self, fingerprint: str) -> list[str]:
        """The evaluation sets holding an item with this fingerprint."""
        return [name for name, hashes in self.sets.items() if fingerprint in hashes]


def load_fingerprints(path: Path) -> Fingerprints:
    """An environment's `eval_fingerprints.json` (package data; a malformed file is a
    broken install, named with the field)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if document.get("format") != FORMAT:
        raise ValueError(f"{path}: field 'format' is not {FORMAT!r}")
    sets = {}
    for name, entry in document["sets"].items():
        text = entry["hashes"]
        if len(text) % DIGITS or len(text) // DIGITS != entry["items"]:
            raise ValueError(
                f"{path}: field 'sets.{name}.hashes' does not hold {entry['items']} fingerprints"
            )
        sets[name] = frozenset(text[i : i + DIGITS] for i in range(0, len(text), DIGITS))
    return Fingerprints(sets, dict(document.get("not_computed", {})))


def fingerprint_document(
    sets: Mapping[str, tuple[Iterable[str], Mapping[str, Any]]], not_computed: Mapping[str, str]
) -> dict[str, Any]:
    """The file `load_fingerprints` reads: per set, its sorted distinct fingerprints and
    where they were computed from (`source`: file and sha256)."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "fingerprint": (
            f"sha256 of normalised question + U+001F + normalised answer, first {DIGITS} hex digits"
        ),
        "normalised": "NFKC, case-folded, every run of non-letters/digits one space, stripped",
        "sets": {},
        "not_computed": dict(not_computed),
    }
    for name, (fingerprints, source) in sets.items():
        distinct = sorted(set(fingerprints))
        out["sets"][name] = {"items": len(distinct), "source": dict(source), "hashes": "".join(distinct)}
    return out


def refuse_evaluation_items(
    fingerprints: Fingerprints,
    rows: Iterable[Iterable[tuple[str, str]]],
    origin: str,
    benchmark: str,
) -> None:
    """A training load's rows (each as its items' question and answer texts) against the
    benchmark's evaluation fingerprints: a DatasetError naming the file, how many rows hold
    an evaluation item and which sets they come from, when any does."""
    total, hits = 0, 0
    found: dict[str, int] = {}
    for items in rows:
        total += 1
        sets = {
            name
            for question, answer in items
            for name in fingerprints.matches(item_fingerprint(question, answer))
        }
        if sets:
            hits += 1
            for name in sets:
                found[name] = found.get(name, 0) + 1
    if hits:
        where = ", ".join(f"{name}: {count}" for name, count in sorted(found.items()))
        raise DatasetError(
            f"{origin}: {hits} of {total} rows hold {benchmark} evaluation items ({where}); "
            "a run with role 'train' may not load them"
        )
