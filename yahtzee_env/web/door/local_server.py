"""``yahtzee serve`` as a child process on 127.0.0.1, for tests, benchmarks and notebooks.

`LocalServer` picks a free loopback port, starts the server on a given database (a SQLite
file, or a ``postgresql://`` URL that several servers may share), waits until it answers,
and kills it with SIGKILL (as a crash would: the tests and the load benchmark check that every
table resumes after it). Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``yahtzee serve --port PORT --db DB [ARGS]`` as a subprocess on 127.0.0.1; ``url`` is its
    address. `start` waits up to 30 s for ``/readyz`` to answer; `kill` is a SIGKILL.
    The server's stderr goes to ``log`` (default ``DB.log`` next to a SQLite file; a file, not
    a pipe that a long run could fill). ``args``: more ``yahtzee serve`` options; ``env``: the
    child's environment (for example a ``PYTHONPATH`` that runs another checkout's server);
    ``port``: the port to listen on (0: a free one)."""

    def __init__(
        self,
        db: Path | str,
        args: list[str] | tuple[str, ...] = (),
        *,
        log: Path | None = None,
        cpus: set[int] | None = None,
        env: dict[str, str] | None = None,
        port: int = 0,
    ) -> None:
        self.db, self.port, self.proc = db, port or free_port(), None  # 0: a free one
        self.cpus = cpus  # pin the server to these CPUs (os.sched_setaffinity), if given
        self.args = list(args)  # more `yahtzee serve` flags
        self.env = env  # the child's environment (None: this process's)
        self.url = f"http://127.0.0.1:{self.port}"
        if log is None:
            if str(db).startswith(("postgresql://", "postgres://")):
                raise ValueError("a LocalServer on a PostgreSQL URL needs a log path")
            path = Path(db)
            log = path.with_name(path.name + ".log")
        self.log = Path(log)

    def start(self) -> None:
        cmd = [sys.executable, "-m", "yahtzee_env", "serve", "--port", str(self.port)]
        with open(self.log, "ab") as log:
            cpus = self.cpus
            self.proc = subprocess.Popen(
                [*cmd, "--db", str(self.db), *self.args],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=self.env,
                preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_bytes()[-2000:].decode(errors="replace")
                raise RuntimeError(f"server exited: {tail}")
            try:
                urllib.request.urlopen(f"{self.url}/readyz", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start in 30 s")

    def cpu_seconds(self) -> float:
        """The CPU time (user + system) the server process has used so far, by the kernel's
        accounting of it (``/proc/PID/stat``; its workers' too, while they run)."""
        total = 0.0
        for pid in [self.proc.pid, *self.children()] if self.proc is not None else []:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def children(self) -> list[int]:
        """The ids of the server's child processes (``--workers N``: the workers)."""
        if self.proc is None:
            return []
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                found.append(int(stat.parent.name))
        return found

    def kill(self) -> None:
        """SIGKILL to the server (and first to its workers, which would outlive it)."""
        if self.proc and self.proc.poll() is None:
            for pid in self.children():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
