"""Atomic file writes: a reader sees the old file or the complete new one, never a half.

    with atomic_path("out/results.json") as tmp:   # any writer that takes a path
        tmp.write_text(text)

The temporary file lives in the target's folder under a hidden name
(``.NAME.<pid>-<random>.tmp``), is flushed to disk, given ordinary permissions, and renamed
over the target; on an error it is removed and the target is left as it was. One that a
killed process left behind is removed by the next write of the same target.

`read_regular_file` is the bounded read of files that come from users (model weights,
manifests, caches): regular files only, never more than a given size.
"""

from __future__ import annotations

import glob
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


STALE_TMP_SECONDS = 24 * 3600  # a temporary file this old is left over, whoever wrote it


def _writer_is_gone(name: str) -> bool:
    """True when the temporary file ``name`` (``.TARGET.<pid>-<random>.tmp``) was made by a
    process that no longer runs (it was killed before it could rename or remove it)."""
    pid_text = name.rsplit(".", 2)[-2].split("-", 1)[0]
    if os.name != "posix" or not pid_text.isascii() or not pid_text.isdigit():
        return False  # os.kill(pid, 0) would terminate the process on Windows
    pid = int(pid_text[:10])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # alive but not ours, or not a pid at all
        return False
    return False


def clean_stale_tmp(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that earlier writes of ``path`` left behind when they were
    killed (``kill -9``, a power cut): those of a process that is gone, and any older than
    `STALE_TMP_SECONDS`. Returns what was removed; errors are ignored (it is housekeeping)."""
    path = Path(path)
    removed = []
    now = time.time()
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        try:
            info = tmp.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue
            if _writer_is_gone(tmp.name) or now - info.st_mtime > STALE_TMP_SECONDS:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            continue
    return removed


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` atomically.

    Temporary files that a killed earlier write of ``path`` left are removed first
    (`clean_stale_tmp`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(path)
    fd, name = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent
    )
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes files private; these are not
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` atomically; return the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode() if isinstance(data, str) else data)
    return Path(path)


class UnsafeFileError(OSError):
    """A file that is not a regular file (FIFO, device, directory) or is larger than allowed."""


def read_regular_file(path: str | os.PathLike, max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes`` bytes.

    Symlinks are followed, but what they lead to must be a regular file: ``/dev/zero``, a
    FIFO (which would block ``open`` forever: it is opened with ``O_NONBLOCK``) or a
    directory raises `UnsafeFileError`, as does a file over the limit, before any of it is
    read; at most ``max_bytes + 1`` bytes are read even if the file grows meanwhile.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(f"{os.fspath(path)}: not a regular file")
        if info.st_size > max_bytes:
            raise UnsafeFileError(
                f"{os.fspath(path)}: {info.st_size:,} bytes, more than the {max_bytes:,} allowed"
            )
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise UnsafeFileError(f"{os.fspath(path)}: grew past the {max_bytes:,} bytes allowed")
    return b"".join(chunks)
