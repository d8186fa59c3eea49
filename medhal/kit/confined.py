"""A directory whose contents are reached without following any link: what `medhal fetch`
reads and writes beneath its output directory.

The directory itself is the caller's choice (a symbolic link given as the directory is
followed, once, when it is opened). Beneath it nothing is followed: every folder is opened
relative to its parent's descriptor with O_NOFOLLOW, every file with O_NOFOLLOW | O_NONBLOCK
and then checked with fstat to be a regular file. So a symbolic link planted at a name the
caller writes (`<file>.part`, the final name, a subfolder such as `medhalt -> /etc`) is an
`Unsafe` error naming it instead of a write through it, and a FIFO or a device at a file name
is refused instead of blocking on it or writing to it. Working from descriptors (openat,
renameat, unlinkat) leaves no window between a check and the use: a folder swapped for a link
after it was opened is not followed.

An advisory lock (`flock`, released by the kernel when the process ends, even on kill -9)
keeps two processes from filling one directory at once; the lock file names its holder.

POSIX only (Linux, macOS): it needs O_NOFOLLOW and the `dir_fd` arguments of `os`."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import NoReturn

_FILE_MODE = 0o666  # less the umask, as open() gives
_READ, _WRITE, _APPEND, _UPDATE = "read", "write", "append", "update"
_FLAGS = {
    _READ: os.O_RDONLY,
    _WRITE: os.O_WRONLY | os.O_CREAT,  # truncated after the fstat check, not before
    _APPEND: os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    _UPDATE: os.O_RDWR | os.O_CREAT,
}
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class Unsafe(Exception):
    """A path beneath the directory is not what it must be (a link, a special file, a file
    where a folder must be, a name that leaves the directory); the message is one line
    naming it."""


class Busy(Exception):
    """Another process holds the directory's lock; the message is what the holder wrote
    (its pid, host and start time), or empty."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, words in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return words
    return "not a regular file"


class Confined:
    """The directory `root` (created when missing), open until `close`."""

    def __init__(self, root: Path) -> None:
        if not _NO_FOLLOW or os.open not in os.supports_dir_fd:
            raise Unsafe(f"{root}: writing without following links needs a POSIX system (Linux, macOS)")
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(root, _DIRECTORY)  # followed: the directory is the caller's choice

    def __enter__(self) -> Confined:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def shown(self, relative: str) -> Path:
        return self.root / relative

    def _names(self, relative: str) -> tuple[str, ...]:
        path = PurePosixPath(relative)
        names = path.parts
        if path.is_absolute() or not names or any(n in (".", "..") for n in names) or "\0" in relative:
            raise Unsafe(f"{self.root}: {relative!r} is not a path inside the directory")
        return names

    @contextlib.contextmanager
    def folder(self, relative: str, *, create: bool) -> Iterator[tuple[int, str]]:
        """(descriptor of the folder holding `relative`, its last name): each folder on the
        way opened without following a link (created first when `create`)."""
        names = self._names(relative)
        fd = os.dup(self.fd)
        try:
            for depth, name in enumerate(names[:-1]):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, dir_fd=fd)
                try:
                    child = os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as e:
                    self._refuse(fd, name, "/".join(names[: depth + 1]), e)
                os.close(fd)
                fd = child
            yield fd, names[-1]
        finally:
            os.close(fd)

    def _refuse(self, fd: int, name: str, relative: str, error: OSError) -> NoReturn:
        """Raise `Unsafe` when `name` (in folder `fd`) exists and is not what was asked for,
        else re-raise `error` (a missing folder, a full disk, no permission)."""
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except OSError:
            raise error from None
        wanted_folder = error.errno in (errno.ENOTDIR, errno.ELOOP) and not stat.S_ISREG(mode)
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) or wanted_folder:
            raise Unsafe(
                f"{self.shown(relative)} is {kind_of(mode)}: medhal fetch reads and writes only regular "
                "files and folders it reaches without a link (remove it and run again)"
            ) from None
        if stat.S_ISREG(mode) and error.errno == errno.ENOTDIR:
            raise Unsafe(f"{self.shown(relative)} is a file where a folder must be (remove it)") from None
        raise error

    def size(self, relative: str) -> int | None:
        """The size of the regular file at `relative`; None when there is none (nor its
        folder); `Unsafe` when something else is there."""
        try:
            with self.folder(relative, create=False) as (fd, name):
                try:
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    return None
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(mode.st_mode):
            raise Unsafe(
                f"{self.shown(relative)} is {kind_of(mode.st_mode)}, not a regular file: medhal fetch "
                "reads and writes only regular files it reaches without a link (remove it and run again)"
            )
        return mode.st_size

    @contextlib.contextmanager
    def open(self, relative: str, how: str) -> Iterator[int]:
        """A descriptor of the regular file `relative`, opened to `read`, `write` (emptied),
        `append` or `update` (read and write, kept), folders created for all but `read`."""
        self.size(relative)  # refuse a special file before opening it: opening a device can act
        with self.folder(relative, create=how != _READ) as (folder, name):
            try:
                fd = os.open(name, _FLAGS[how] | _NO_FOLLOW, _FILE_MODE, dir_fd=folder)
            except OSError as e:
                self._refuse(folder, name, relative, e)
            try:
                mode = os.fstat(fd).st_mode
                if not stat.S_ISREG(mode):  # swapped in since the check above
                    raise Unsafe(f"{self.shown(relative)} is {kind_of(mode)}, not a regular file")
                if how == _WRITE:
                    os.ftruncate(fd, 0)
                yield fd
            finally:
                os.close(fd)

    def replace(self, relative: str, new_name: str) -> None:
        """Rename `relative` to `new_name` in the same folder (atomic; a link at `new_name`
        is replaced, never followed)."""
        with self.folder(relative, create=False) as (fd, name):
            os.replace(name, new_name, src_dir_fd=fd, dst_dir_fd=fd)

    def remove(self, relative: str) -> None:
        """Remove the file `relative` (a link is removed, never followed); nothing when absent."""
        with contextlib.suppress(FileNotFoundError), self.folder(relative, create=False) as (fd, name):
            os.unlink(name, dir_fd=fd)

    @contextlib.contextmanager
    def reading(self, relative: str) -> Iterator[tuple[int, Iterator[bytes]]]:
        """(size, the blocks of the regular file `relative`), for hashing without a copy."""
        with self.open(relative, _READ) as fd:
            yield os.fstat(fd).st_size, blocks(fd)

    def read(self, relative: str, limit: int) -> bytes:
        """The bytes of the regular file `relative`, at most `limit` (more is `Unsafe`)."""
        with self.open(relative, _READ) as fd:
            data = bytearray()
            while len(data) <= limit and (block := os.read(fd, min(1 << 20, limit + 1 - len(data)))):
                data += block
            if len(data) > limit:
                raise Unsafe(f"{self.shown(relative)} holds more than {limit:,} bytes")
            return bytes(data)

    @contextlib.contextmanager
    def locked(self, relative: str, holder: str) -> Iterator[None]:
        """Hold the advisory lock of `relative` (created when missing) for the block, writing
        `holder` into it; `Busy` with the holder's text when another process holds it."""
        import fcntl

        with self.open(relative, _UPDATE) as fd:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy(os.pread(fd, 1000, 0).decode("utf-8", "replace").strip()) from None
            os.ftruncate(fd, 0)
            write_all(fd, holder.encode())
            yield  # the lock goes with the descriptor, closed by `open`


def blocks(fd: int, size: int = 1 << 20) -> Iterator[bytes]:
    """The rest of the file `fd`, block by block."""
    while block := os.read(fd, size):
        yield block


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` (os.write may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
