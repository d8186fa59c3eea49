"""A local stand-in for the Hugging Face Hub and an asset mirror, on 127.0.0.1 (stdlib
`http.server`): the tree listing (`/api/datasets/<id>/tree/<revision>`), file downloads
(`/datasets/<id>/resolve/<revision>/<path>`, with HTTP range requests) and assets
(`/assets/<name>`). Faults a download meets: a connection cut after some bytes, wrong bytes,
a missing file, a server that ignores range requests. A hostile mirror's ways: a listing
given as raw bytes, `Link: rel=next` pages (to itself, to another host, without end), a file
streamed without end, one byte at a time with pauses, silence before the answer, a
redirect elsewhere. Every request is
logged with its Range header and Authorization header."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


@dataclass
class Repo:
    files: dict[str, bytes]
    lfs: set[str] = field(default_factory=set)
    """Paths stored in LFS (listed with their sha256); the others with their git blob id."""

    def tree(self) -> list[dict]:
        entries = []
        for path, data in sorted(self.files.items()):
            entry = {"type": "file", "path": path, "size": len(data), "oid": git_blob_id(data)}
            if path in self.lfs:
                entry["lfs"] = {
                    "oid": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "pointerSize": 134,
                }
            entries.append(entry)
        folders = sorted({p.rsplit("/", 1)[0] for p in self.files if "/" in p})
        return [{"type": "directory", "path": f, "oid": "0" * 40, "size": 0} for f in folders] + entries


class QuietServer(ThreadingHTTPServer):
    """A client that hangs up (as fetch does on a hostile answer) is no error to report."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@dataclass
class FakeHub:
    repos: dict[tuple[str, str], Repo] = field(default_factory=dict)
    """(dataset id, revision) -> its files."""
    assets: dict[str, bytes] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)
    """URL path -> bytes sent before the connection is closed (once, then the fault is gone)."""
    wrong: set[str] = field(default_factory=set)
    """URL paths answered with other bytes than the file's."""
    ignore_range: set[str] = field(default_factory=set)
    listing: dict[tuple[str, str], bytes] = field(default_factory=dict)
    """(dataset id, revision) -> the bytes answered for its file listing, instead of the repo's."""
    next_link: dict[str, Callable[[str], str | None]] = field(default_factory=dict)
    """URL path -> (the request's path and query -> the `Link: rel=next` URL to answer, or None)."""
    endless: set[str] = field(default_factory=set)
    """URL paths answered with the file and then zeros without end (no Content-Length)."""
    drip: dict[str, float] = field(default_factory=dict)
    """URL path -> seconds between the bytes of the answer, sent one at a time."""
    stall: dict[str, float] = field(default_factory=dict)
    """URL path -> seconds the server waits, silent, before it answers at all."""
    redirect: dict[str, str] = field(default_factory=dict)
    """URL path -> the URL a 302 sends the client to."""
    log: list[tuple[str, str | None]] = field(default_factory=list)
    """(URL path, Range header) of every request."""
    authorization: dict[str, str | None] = field(default_factory=dict)
    """URL path -> the Authorization header of its last request."""
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def body(self, path: str) -> bytes | None:
        if path.startswith("/assets/"):
            return self.assets.get(path[len("/assets/") :])
        for (repo_id, revision), repo in self.repos.items():
            prefix = f"/datasets/{repo_id}/resolve/{revision}/"
            if path.startswith(prefix):
                return repo.files.get(path[len(prefix) :])
            if path == f"/api/datasets/{repo_id}/tree/{revision}":
                return self.listing.get((repo_id, revision)) or json.dumps(repo.tree()).encode()
        return None

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path = unquote(urlsplit(self.path).path)
                wanted = self.headers.get("Range")
                hub.log.append((path, wanted))
                hub.authorization[path] = self.headers.get("Authorization")
                time.sleep(hub.stall.get(path, 0))
                if path in hub.redirect:
                    self.send_response(302)
                    self.send_header("Location", hub.redirect[path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = hub.body(path)
                if path in hub.endless or path in hub.drip:
                    self.send_slowly(path, data or b"")
                    return
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if path in hub.wrong:
                    data = bytes(b ^ 0x55 for b in data)  # as long as the file, other bytes
                start = 0
                if wanted and path not in hub.ignore_range and wanted.startswith("bytes="):
                    start = int(wanted[len("bytes=") :].split("-")[0])
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                nxt = hub.next_link[path](self.path) if path in hub.next_link else None
                if nxt is not None:
                    self.send_header("Link", f'<{nxt}>; rel="next"')
                self.end_headers()
                limit = hub.cut.pop(path, None)
                if limit is not None:
                    self.wfile.write(body[:limit])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def send_slowly(self, path: str, data: bytes) -> None:
                """`data` then zeros without end (`endless`), or `data` a byte at a time (`drip`),
                until the client goes away."""
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                pause = hub.drip.get(path)
                try:
                    if pause is None:
                        self.wfile.write(data)
                        while True:
                            self.wfile.write(bytes(1 << 16))
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(pause)
                except OSError:  # the client hung up, as it should
                    return

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def gets(self, suffix: str) -> list[str | None]:
        """Range headers of the requests for paths ending in `suffix`."""
        return [r for p, r in self.log if p.endswith(suffix)]
