"""HTTP GETs from a server we do not trust (a Hub mirror, an asset mirror): an overall
deadline, a byte limit, the bytes as sent.

A read timeout alone never ends a download from a server that sends one byte every 20 s:
each read succeeds in time. So each GET is read by a thread of its own and the caller waits
for each piece with what is left of its deadline: whatever the server does (stall before the
headers, drip, redirect in circles), the caller has the next piece or an error by the
deadline. The abandoned thread ends at its next read, within the read timeout, which is
never longer than the deadline; it only hands pieces over and touches no file.

Memory stays bounded: the thread hands over at most `QUEUED` pieces (a read's worth each)
and waits while they are taken. Bytes are taken as sent (`Accept-Encoding: identity`, no
decompression), so a small compressed answer cannot grow into gigabytes, and what is hashed
is what is stored.

Library code: every failure is a `TransferError` whose message is one line giving the reason,
without the URL (the caller names what it was fetching)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

READ_TIMEOUT_S = 60.0
"""Longest wait for one read (or the connection), capped by the deadline."""
QUEUED = 4


class TransferError(Exception):
    """The GET failed; the message is one line giving the reason."""


class Expired(TransferError):
    """The deadline passed before the answer was complete."""


class TooLong(TransferError):
    """The answer is longer than the caller reads."""


@dataclass(frozen=True)
class Head:
    """What the server answered before the body."""

    status: int
    headers: Mapping[str, str]
    links: dict[str, dict[str, str]]
    """The `Link` header by relation (`rel="next"` -> {"url": ...}), as httpx reads it."""
    url: str
    """The URL that answered, after redirects."""


class Transfer:
    """One GET of `url`, read by its own thread until `close`; `head` and `chunks` wait at
    most until `deadline` (a `time.monotonic()` value)."""

    def __init__(self, client: Any, url: str, headers: Mapping[str, str], deadline: float) -> None:
        import httpx

        self.deadline = deadline
        self._pieces: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=QUEUED)
        self._stopped = threading.Event()
        left = max(0.001, deadline - time.monotonic())
        timeout = httpx.Timeout(min(READ_TIMEOUT_S, left))
        sent = {**headers, "Accept-Encoding": "identity"}
        threading.Thread(
            target=self._read, args=(client, url, sent, timeout), name="medhal-transfer", daemon=True
        ).start()

    def __enter__(self) -> Transfer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading (the thread ends at its next piece)."""
        self._stopped.set()
        while not self._pieces.empty():
            self._pieces.get_nowait()

    def _read(self, client: Any, url: str, headers: dict[str, str], timeout: Any) -> None:
        try:
            with client.stream("GET", url, headers=headers, timeout=timeout) as response:
                head = Head(response.status_code, response.headers, response.links, str(response.url))
                if not self._hand_over("head", head):
                    return
                for chunk in response.iter_raw():
                    if not self._hand_over("chunk", chunk):
                        return
            self._hand_over("end", None)
        except Exception as e:  # httpx's errors, and whatever a broken answer makes its parser raise
            self._hand_over("error", e)

    def _hand_over(self, kind: str, value: Any) -> bool:
        while not self._stopped.is_set():
            try:
                self._pieces.put((kind, value), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _take(self) -> tuple[str, Any]:
        left = self.deadline - time.monotonic()
        try:
            if left <= 0:
                raise queue.Empty
            kind, value = self._pieces.get(timeout=left)
        except queue.Empty:
            self.close()
            raise Expired("no complete answer before the deadline") from None
        if kind == "error":
            self.close()
            raise TransferError(reason(value))
        return kind, value

    def head(self) -> Head:
        """The status, headers and links (wait for them until the deadline)."""
        kind, value = self._take()
        if kind != "head":
            raise TransferError(f"an answer without a status line ({kind})")
        return value  # type: ignore[no-any-return]

    def chunks(self) -> Iterator[bytes]:
        """The body, piece by piece as it arrives (after `head`)."""
        while True:
            kind, value = self._take()
            if kind == "end":
                return
            yield value


def reason(error: BaseException) -> str:
    """An exception as a short reason: its first line, or its type when it has no text."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def read_body(transfer: Transfer, limit: int) -> bytes:
    """The whole body, at most `limit` bytes (more is a `TransferError`)."""
    body = bytearray()
    for chunk in transfer.chunks():
        body += chunk
        if len(body) > limit:
            transfer.close()
            raise TooLong(f"the answer is longer than the {limit:,} bytes read")
    return bytes(body)
