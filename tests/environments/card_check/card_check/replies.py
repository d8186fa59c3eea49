"""Reading a Card-Check reply: `yes`, `no`, or no reading (None), under every convention.

The prompt asks for one line, `Answer: yes` or `Answer: no`.

- `strict`: exactly that line (spaces around it allowed).
- `authors`: the first `yes` or `no` word anywhere, any case: the rule of the made-up
  benchmark's made-up scoring script, which reads "No doubt: yes" as no.
- `medhal`: what a careful reader takes without guessing: after any reasoning block and
  without decoration, the reply must be one yes or no, alone or after one `Answer:` (or
  `Final answer:`) label, with nothing but punctuation around it. A reply that says more
  (a second answer, a retraction, an explanation) has no reading: which part is the answer
  would be a guess, and a reward paid on a guess can be farmed.

Each reader scans the reply a bounded number of times: linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from medhal.kit.replies import answer_text

YES, NO = "yes", "no"
LABELS = (YES, NO)
_STRICT = re.compile(r"\s*Answer: (yes|no)\s*")
_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_ONE_ANSWER = re.compile(r"\W*(?:(?:final[ \t]+)?answer[ \t]*[:：]\W*)?(yes|no)\W*", re.IGNORECASE)
"""One yes or no, alone or after one label; the two runs of `\\W*` are separated by the label's
letters, so a long run of punctuation is scanned once (no backtracking between them)."""

Reader = Callable[[str | None], str | None]


def read_strict(reply: str | None) -> str | None:
    match = _STRICT.fullmatch(reply or "")
    return match.group(1) if match else None


def read_authors(reply: str | None) -> str | None:
    match = _WORD.search(reply or "")
    return match.group(1).lower() if match else None


def read_medhal(reply: str | None) -> str | None:
    text = answer_text(reply)
    match = None if text is None else _ONE_ANSWER.fullmatch(text)
    return match.group(1).lower() if match else None


READERS: dict[str, Reader] = {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}


def read_all(reply: str | None) -> dict[str, str | None]:
    return {name: reader(reply) for name, reader in READERS.items()}
