"""Every rollout of a run as report.html's per-item view shows it, compressed as it is read.

A reader who doubts a figure wants the items behind it: the prompt, the reply, the gold
answer, how each reading convention read the reply, the reward and any error. A run can
hold 60,000 items and their texts run to hundreds of megabytes, so they are never held
as Python objects: each item is written as JSON into gzip streams as it streams past
(`Run.add`), and the page inflates them with the browser's own DecompressionStream.

The items go in chunks of `CHUNK` items, each in three parts, so that no single decoded
string grows past what a browser handles well and the page can show the first items
before it has decoded the prompts:

- `m`: one row per item, `[idx, [group values], gold, [reading per convention],
  correct bits, parsed bits, {reward name: value}, error message or null, where the token
  limit cut the reply or null]` (bit i stands for `CONVENTIONS[i]`);
- `r`: the replies (null when the rollout gave none);
- `p`: the prompts (system prompt and messages, each headed by its role);
- `t`: the reasoning returned beside each reply (`reasoning_content`; null without one),
  shown folded and never read.

Texts are cleaned as everywhere in a page (`medhal.kit.untrusted.printable`); escaping is the
page's business (it only ever sets them as text). `withhold` keeps the figures of every
item but leaves out prompt, reply, reasoning, gold and readings (a published copy must not quote
upstream rows).
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import ItemView
from medhal.kit.untrusted import printable
from medhal.reports import metrics as m

if TYPE_CHECKING:
    from medhal.reports.traces import TraceRecord

CHUNK = 2000
"""Items per chunk: about a megabyte of decoded text each for typical replies."""
PARTS = ("m", "r", "p", "t")
WITHHELD = "(withheld)"
"""What a withheld copy shows for a reading that was made (INVALID and ERROR stay)."""
LEVEL = 3
"""zlib level: on real prompts and reasoning-length replies, level 6 makes the data 12% smaller
than level 3 and takes twice as long, which a 60,000-item report pays in full."""


def prompt_text(data: Mapping[str, Any]) -> str | None:
    """The prompt a task sent, as text: the system prompt, then each message headed by its
    role (`task.data.system_prompt` and `task.data.prompt`, a text or a list of messages)."""
    parts = []
    system = data.get("system_prompt")
    if isinstance(system, str) and system:
        parts.append(f"[system]\n{system}")
    prompt = data.get("prompt")
    if isinstance(prompt, str):
        parts.append(f"[user]\n{prompt}" if parts else prompt)
    elif isinstance(prompt, list):
        for message in prompt:
            if isinstance(message, dict):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(
                        p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
                    )
                parts.append(f"[{message.get('role', '?')}]\n{content if isinstance(content, str) else ''}")
    return "\n\n".join(parts) if parts else None


def _text(value: Any) -> str | None:
    return None if value is None else printable(str(value))


class ItemLog:
    """The per-item view's data, built one rollout at a time (see the module docstring)."""

    def __init__(self, fields: Sequence[str], *, withhold: bool = False) -> None:
        self.fields = tuple(fields)
        self.withhold = withhold
        self.n = 0
        self.chunks: list[dict[str, bytes]] = []
        self._open: dict[str, Any] = {}
        self._pieces: dict[str, list[bytes]] = {}
        self._in_chunk = 0

    def add(self, record: TraceRecord, idx: int, groups: Sequence[str], views: Mapping[str, ItemView]) -> None:
        """One rollout: `groups` are its values of `fields`, `views` its reading under every
        convention (as `Run.add` builds them)."""
        first = views[CONVENTIONS[0]]
        correct = sum(1 << i for i, c in enumerate(CONVENTIONS) if views[c].correct)
        parsed = sum(1 << i for i, c in enumerate(CONVENTIONS) if views[c].parsed)
        rewards = {
            printable(str(k)): v for k, v in record.rewards.items() if isinstance(v, (int, float)) and math.isfinite(v)
        }
        gold = first.gold if first.gold is not None else first.data.get("gold")
        row = [
            idx,
            [printable(g) for g in groups],
            None if self.withhold else _text(gold),
            [self._reading(views[c].pred) for c in CONVENTIONS],
            correct,
            parsed,
            rewards,
            _text(record.error_message) if record.errored else None,
            record.truncated,
        ]
        self._write("m", row)
        self._write("r", None if self.withhold else _text(record.reply))
        self._write("p", None if self.withhold else _text(prompt_text(record.data)))
        self._write("t", None if self.withhold else _text(record.reasoning))
        self.n += 1
        self._in_chunk += 1
        if self._in_chunk == CHUNK:
            self._close()

    def _reading(self, pred: str) -> str:
        """A reading as shown: withheld (it can quote the reply) unless it is INVALID or ERROR."""
        return pred if not self.withhold or pred in (m.INVALID, m.ERROR) else WITHHELD

    def _write(self, part: str, value: Any) -> None:
        if not self._open:
            self._open = {p: zlib.compressobj(LEVEL, zlib.DEFLATED, 31) for p in PARTS}  # 31: gzip framing
            self._pieces = {p: [] for p in PARTS}
        lead = b"[" if self._in_chunk == 0 else b","
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._pieces[part].append(self._open[part].compress(lead + text))

    def _close(self) -> None:
        if self._open:
            chunk = {}
            for part, compressor in self._open.items():
                self._pieces[part].append(compressor.compress(b"]") + compressor.flush())
                chunk[part] = b"".join(self._pieces[part])
            self.chunks.append(chunk)
        self._open = {}
        self._in_chunk = 0

    def finish(self) -> list[dict[str, bytes]]:
        """The gzip-compressed JSON of every chunk, part by part (closing the last chunk)."""
        self._close()
        return self.chunks
