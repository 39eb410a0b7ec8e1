"""`yahtzee_env.fileio`: atomic writes that clean up after killed writers (issue 8.15), and
the bounded read of user files (issue 8.9)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from yahtzee_env.fileio import (
    STALE_TMP_SECONDS,
    UnsafeFileError,
    atomic_write,
    clean_stale_tmp,
    read_regular_file,
)


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_write_removes_temp_files_of_killed_writers(tmp_path):
    target = tmp_path / "results.json"
    dead = tmp_path / f".results.json.{_dead_pid()}-abc123.tmp"  # a kill -9 left it
    alive = tmp_path / f".results.json.{os.getppid()}-def456.tmp"  # a live writer's
    old = tmp_path / ".results.json.zz9x_q1w.tmp"  # an old-style name, a day old
    other = tmp_path / f".other.json.{_dead_pid()}-abc123.tmp"  # another target's
    for p in (dead, alive, old, other):
        p.write_text("partial")
    day_ago = time.time() - STALE_TMP_SECONDS - 60
    os.utime(old, (day_ago, day_ago))
    atomic_write(target, "{}")
    assert target.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, alive.name, other.name]
    )


def test_clean_stale_tmp_ignores_what_is_not_a_regular_file(tmp_path):
    folder = tmp_path / f".x.{_dead_pid()}-a.tmp"
    folder.mkdir()
    assert clean_stale_tmp(tmp_path / "x") == []
    assert folder.is_dir()


def test_read_regular_file_bounds(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    assert read_regular_file(path, 100) == b"x" * 100
    with pytest.raises(UnsafeFileError, match="more than the 99"):
        read_regular_file(path, 99)
    with pytest.raises(UnsafeFileError, match="not a regular file"):
        read_regular_file(tmp_path, 10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero (POSIX)")
def test_read_regular_file_refuses_fifos_and_devices_without_blocking(tmp_path):
    fifo = tmp_path / "weights.npz"
    os.mkfifo(fifo)  # a plain open() for reading blocks until a writer comes: never here
    with pytest.raises(UnsafeFileError, match="not a regular file"):
        read_regular_file(fifo, 1 << 20)
    link = tmp_path / "zero.npz"
    link.symlink_to("/dev/zero")  # endless bytes
    with pytest.raises(UnsafeFileError, match="not a regular file"):
        read_regular_file(link, 1 << 20)
