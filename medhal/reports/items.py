"""Every rollout of a run as report.html's per-item view shows it, compressed as it is read.

A reader who doubts a figure wants the items behind it: the prompt, the reply, the gold
answer, how each reading convention read the reply, the reward and any error. A run can
hold 100,000 items and their texts run to gigabytes, so they are never held: each chunk
of `CHUNK` items is encoded as JSON when it is full, compressed by a worker thread (the
deflate lets go of the interpreter while it compresses, so this runs beside the reading of the
next traces) and written to an unnamed temporary file, from which the page is written
(`ItemData`). The page inflates each part with the browser's own DecompressionStream.

Each chunk has five parts, so that no single decoded string grows past what a browser
handles well and the page can show the first items before it has decoded the prompts:

- `m`: one row per item, `[idx, [group values], gold, [reading per convention],
  correct bits, parsed bits, {reward name: value}, error message or null,
  [prompt tokens, completion tokens] or null, seconds in model calls or null, where the
  token limit cut the reply or null]` (bit i stands for `CONVENTIONS[i]`; tokens and seconds
  summed over the rollout's model calls, null when its trace records none);
- `r`: the replies (null when the rollout gave none);
- `p`: the prompts (system prompt and messages, each headed by its role), each as a list
  of pieces to be joined with a blank line: a piece is a text, or the number of a shared
  text in `t`;
- `t`: the shared texts first met in this chunk, numbered on from the previous chunks';
- `c`: the reasoning returned beside each reply (`reasoning_content`; null without one),
  shown folded and never read.

Shared texts: a benchmark's instruction and few-shot examples repeat in every prompt
(Med-HALT's run to 2 KB of a 2.5 KB prompt), and the k rollouts of a task repeat its whole
prompt. A prompt is cut at its blank lines; a piece met a second time is stored once in
`t` and named by its number from then on (`SharedTexts`). What this remembers is bounded
(`SEEN`, `TABLE_CHARS`), so memory stays flat however many items a run has.

Texts are cleaned as everywhere in a page (`medhal.kit.untrusted.printable`); escaping is the
page's business (it only ever sets them as text). `withhold` keeps the figures of every
item but leaves out prompt, reply, reasoning, gold and readings (a published copy must not quote
upstream rows).
"""

from __future__ import annotations

import base64
import math
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any

import msgspec
from isal import isal_zlib

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import ItemView
from medhal.kit.untrusted import printable as clean
from medhal.reports import metrics as m

if TYPE_CHECKING:
    from medhal.reports.traces import TraceRecord

CHUNK = 2000
"""Items per chunk: about a megabyte of decoded text each for typical replies."""
PARTS = ("m", "r", "p", "t", "c")
WITHHELD = "(withheld)"
"""What a withheld copy shows for a reading that was made (INVALID and ERROR stay)."""
LEVEL = 2
"""Deflate level of ISA-L (`isal`, 0 to 3), which writes the same gzip format as zlib.
Compressing is most of the item view's cost, and a 100,000-item report pays it in full: on
MedFact-Bench's articles and replies ISA-L's level 2 runs about 3.6 times as fast as zlib's
level 1 (the fastest zlib has) for data 4% smaller. Why a dependency: with zlib, compression
was an eighth of a MedFact-Bench report's CPU time."""
AHEAD = 2
"""Chunks encoded but not yet written that the reader may run ahead of the writer by: the
memory the item view holds is about this many chunks' texts."""
SEPARATOR = "\n\n"
"""Where prompts are cut into pieces: the blank line between an instruction, each few-shot
example and the item."""
SHARED_MIN = 64
"""Pieces shorter than this stay where they are (a number would save little)."""
SEEN = 4096
"""Pieces met once that are remembered (by hash) in case they come again: the last few
thousand, enough for an instruction that heads every prompt of a set, or the rollouts of one
task that a run's concurrency scatters over a few hundred lines."""
VALUES = 10_000
"""Distinct group values and gold answers remembered cleaned (`ItemLog._value`)."""
TABLE_CHARS = 8 * 2**20
"""Characters of shared texts kept to be found again; past this the table starts afresh
(a text met again is then stored once more: a larger page, never a wrong one)."""


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
                        p.get("text", "")
                        for p in content
                        if isinstance(p, dict) and isinstance(p.get("text"), str)
                    )
                parts.append(f"[{message.get('role', '?')}]\n{content if isinstance(content, str) else ''}")
    return "\n\n".join(parts) if parts else None


_PLAIN_BYTES = bytes(c for c in range(256) if clean(chr(c)) == chr(c))
"""The Latin-1 characters `clean` leaves as they are (derived from it, so the two agree)."""


def cleaned(text: str) -> str:
    """`clean(text)`, found faster for the usual text: one whose characters are all Latin-1
    (most replies and prompts) is checked with two byte operations in C; any other, or one
    that holds something `clean` shows, goes through `clean` itself."""
    try:
        raw = text.encode("latin-1")
    except UnicodeEncodeError:
        return clean(text)
    return text if not raw.translate(None, _PLAIN_BYTES) else clean(text)


def _text(value: Any) -> str | None:
    return None if value is None else cleaned(str(value))


class SharedTexts:
    """Prompts cut into pieces at their blank lines, each piece met before stored once and
    named by its number (see the module docstring). `new` collects the texts stored since
    the caller last took them; `pieces` gives a prompt as the page rebuilds it."""

    def __init__(self) -> None:
        self.new: list[str] = []
        self._numbers: dict[str, int] = {}
        self._chars = 0
        self._seen: set[int] = set()
        self._count = 0

    def pieces(self, text: str) -> list[str | int]:
        """`text` as pieces that, joined with `SEPARATOR`, give it back cleaned (runs of
        pieces kept as text are joined already)."""
        out: list[str | int] = []
        literal: list[str] = []
        for piece in text.split(SEPARATOR):
            number = self._number(piece) if len(piece) >= SHARED_MIN else None
            if number is None:
                literal.append(piece)
                continue
            if literal:
                out.append(cleaned(SEPARATOR.join(literal)))
                literal = []
            out.append(number)
        if literal:
            out.append(cleaned(SEPARATOR.join(literal)))
        return out

    def _number(self, piece: str) -> int | None:
        """The number of a shared piece (stored now if this is its second sighting), or None
        for a piece not met before."""
        number = self._numbers.get(piece)
        if number is not None:
            return number
        key = hash(piece)
        if key not in self._seen:
            if len(self._seen) >= SEEN:
                self._seen.clear()
            self._seen.add(key)
            return None
        if self._chars + len(piece) > TABLE_CHARS:
            self._numbers.clear()
            self._chars = 0
        number = self._numbers[piece] = self._count
        self._count += 1
        self._chars += len(piece)
        self.new.append(cleaned(piece))
        return number


def _usage(record: TraceRecord) -> list[int] | None:
    usage = record.usage
    return None if usage is None else list(usage)


class ItemLog:
    """The per-item view's data, built one rollout at a time (see the module docstring)."""

    def __init__(self, fields: Sequence[str], *, withhold: bool = False) -> None:
        self.fields = tuple(fields)
        self.withhold = withhold
        self.n = 0
        self._rows: list[list[Any]] = []
        self._replies: list[str | None] = []
        self._prompts: list[list[str | int] | None] = []
        self._reasoning: list[str | None] = []
        self._shared = SharedTexts()
        self._names: dict[str, str] = {}
        self._values: dict[str, str] = {}
        self._group_rows: dict[tuple[str, ...], list[str]] = {}
        self._spool: ChunkSpool | None = None

    def add(
        self, record: TraceRecord, idx: int, groups: Sequence[str], views: Mapping[str, ItemView]
    ) -> None:
        """One rollout: `groups` are its values of `fields`, `views` its reading under every
        convention (as `Run.add` builds them)."""
        first = views[CONVENTIONS[0]]
        correct = parsed = 0
        readings = []
        for i, convention in enumerate(CONVENTIONS):
            view = views[convention]
            correct |= view.correct << i
            parsed |= view.parsed << i
            readings.append(self._reading(view.pred))
        rewards = {
            self._name(k): v
            for k, v in record.rewards.items()
            if isinstance(v, (int, float)) and math.isfinite(v)
        }
        gold = first.gold if first.gold is not None else first.data.get("gold")
        self._rows.append(
            [
                idx,
                self._groups(groups),
                None if self.withhold or gold is None else self._value(str(gold)),
                readings,
                correct,
                parsed,
                rewards,
                _text(record.error_message) if record.errored else None,
                _usage(record),
                record.latency,
                record.truncated,
            ]
        )
        if self.withhold:
            self._replies.append(None)
            self._prompts.append(None)
            self._reasoning.append(None)
        else:
            self._replies.append(_text(record.reply))
            self._reasoning.append(_text(record.reasoning))
            prompt = prompt_text(record.data)
            self._prompts.append(None if prompt is None else self._shared.pieces(prompt))
        self.n += 1
        if len(self._rows) == CHUNK:
            self._close()

    def _name(self, name: str) -> str:
        """A reward's name as shown (cleaned once per name, not once per item)."""
        shown = self._names.get(name)
        if shown is None:
            shown = self._names[name] = clean(str(name))
        return shown

    def _groups(self, groups: Sequence[str]) -> list[str]:
        """A rollout's group values as shown (found once per distinct combination)."""
        key = tuple(groups)
        shown = self._group_rows.get(key)
        if shown is None:
            if len(self._group_rows) >= VALUES:
                self._group_rows.clear()
            shown = self._group_rows[key] = [self._value(g) for g in groups]
        return shown

    def _value(self, value: str) -> str:
        """A group value or gold answer as shown: these repeat over a run's items, so each is
        cleaned once (the last `VALUES` distinct ones remembered)."""
        shown = self._values.get(value)
        if shown is None:
            if len(self._values) >= VALUES:
                self._values.clear()
            shown = self._values[value] = clean(value)
        return shown

    def _reading(self, pred: str) -> str:
        """A reading as shown: withheld (it can quote the reply) unless it is INVALID or ERROR."""
        return pred if not self.withhold or pred in (m.INVALID, m.ERROR) else WITHHELD

    def _close(self) -> None:
        """The open chunk encoded and handed to the spool (which compresses and writes it)."""
        if not self._rows:
            return
        encode = msgspec.json.encode
        parts = {
            "m": encode(self._rows),
            "r": encode(self._replies),
            "p": encode(self._prompts),
            "t": encode(self._shared.new),
            "c": encode(self._reasoning),
        }
        self._rows, self._replies, self._prompts, self._reasoning, self._shared.new = [], [], [], [], []
        if self._spool is None:
            self._spool = ChunkSpool()
        self._spool.put(parts)

    def finish(self) -> ItemData:
        """The compressed items, written out (closing the last chunk)."""
        self._close()
        if self._spool is None:
            self._spool = ChunkSpool()
        return ItemData(self.n, self.withhold, self._spool.close())


class ChunkSpool:
    """Chunks compressed and written, in order, by one worker thread to an unnamed temporary
    file (gone when closed, or when the process ends), each part as the page's inert data
    block: base64 (which no text of a run can break out of) in a script element the browser
    never runs. At most `AHEAD` chunks wait, so memory stays flat."""

    def __init__(self) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile()
        self.chunks = 0
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="medhal-items")
        self._waiting: deque[Future[None]] = deque()

    def put(self, parts: Mapping[str, bytes]) -> None:
        while len(self._waiting) >= AHEAD:
            self._waiting.popleft().result()
        self._waiting.append(self._worker.submit(self._write, self.chunks, parts))
        self.chunks += 1

    def _write(self, chunk: int, parts: Mapping[str, bytes]) -> None:
        for part, data in parts.items():
            self.file.write(
                b'<script type="application/octet-stream" data-items-part="%s" data-chunk="%d">'
                % (part.encode("ascii"), chunk)
            )
            self.file.write(base64.b64encode(isal_zlib.compress(data, LEVEL, 31)))  # 31: gzip framing
            self.file.write(b"</script>")

    def close(self) -> IO[bytes]:
        """The file, every chunk written (a failure while writing one is raised here)."""
        try:
            while self._waiting:
                self._waiting.popleft().result()
        finally:
            self._worker.shutdown()
        self.file.flush()
        return self.file


class ItemData:
    """A run's items as the page embeds them: `n` items, in the data blocks `ChunkSpool`
    wrote to `file`, read back a block at a time when the page is written."""

    BLOCK = 2**20

    def __init__(self, n: int, withheld: bool, file: IO[bytes]) -> None:
        self.n = n
        self.withheld = withheld
        self.file = file

    def blocks(self) -> Iterator[bytes]:
        self.file.seek(0)
        while block := self.file.read(self.BLOCK):
            yield block
