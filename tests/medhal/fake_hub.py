"""A local stand-in for the Hugging Face Hub and an asset mirror, on 127.0.0.1 (stdlib
`http.server`): the tree listing (`/api/datasets/<id>/tree/<revision>`), file downloads
(`/datasets/<id>/resolve/<revision>/<path>`, with HTTP range requests) and assets
(`/assets/<name>`). Faults a download meets: a connection cut after some bytes, wrong bytes,
a missing file, a server that ignores range requests. Every request is logged with its
Range header."""

from __future__ import annotations

import hashlib
import json
import threading
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
                return json.dumps(repo.tree()).encode()
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
                data = hub.body(path)
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if path in hub.wrong:
                    data = b"not the pinned bytes " + data[::-1]
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
                self.end_headers()
                limit = hub.cut.pop(path, None)
                if limit is not None:
                    self.wfile.write(body[:limit])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def gets(self, suffix: str) -> list[str | None]:
        """Range headers of the requests for paths ending in `suffix`."""
        return [r for p, r in self.log if p.endswith(suffix)]
