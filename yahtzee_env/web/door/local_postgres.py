"""A private PostgreSQL server in a temporary folder, for the tests and the load benchmark.

`LocalPostgres` runs Debian's ``initdb`` and ``pg_ctl`` (the ``postgresql`` package:
``/usr/lib/postgresql/<version>/bin``, or ``$YAHTZEE_PG_BIN``) on a fresh cluster that
listens on 127.0.0.1 (a free port) and on a Unix socket in its folder, with trust
authentication (nothing else can reach it), and removes the folder when it stops.
``initdb`` refuses to run as root: as root, the cluster belongs to ``nobody``.
Standard library only, but for `create_database` (psycopg).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from yahtzee_env.web.door.local_server import free_port

NOBODY = 65534
MISSING = (
    "PostgreSQL's server programs (initdb, pg_ctl) were not found in "
    "/usr/lib/postgresql/*/bin or $YAHTZEE_PG_BIN: install them (Debian: "
    "apt-get install postgresql) to run the PostgreSQL tests"
)


def find_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (the newest version), or None."""
    env = os.environ.get("YAHTZEE_PG_BIN")
    candidates = [env] if env else []
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) for x in Path(p).parent.name.split(".") if x.isdigit()],
        reverse=True,
    )
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


class LocalPostgres:
    """``start``: a new cluster; ``url(name)``: a database's URL; `create_database`;
    `stop`. ``durable=False`` turns fsync off (tests: a crash of the machine is not what
    they test); the benchmark keeps fsync on with ``synchronous_commit=off``, the
    durability of SQLite in WAL mode with ``synchronous=NORMAL`` (a commit survives the
    server process's death, not the machine's)."""

    def __init__(self, *, durable: bool = True, max_connections: int = 200) -> None:
        self.bin = find_bin()
        if self.bin is None:
            raise FileNotFoundError(MISSING)
        self.durable, self.max_connections = durable, max_connections
        self.port = free_port()
        self.dir: Path | None = None

    def _run(self, *cmd: str) -> subprocess.CompletedProcess:
        prefix: list[str] = []
        if os.geteuid() == 0:
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        return subprocess.run(
            [*prefix, *cmd], check=True, capture_output=True, text=True, env=env, timeout=120
        )

    def start(self) -> LocalPostgres:
        self.dir = Path(tempfile.mkdtemp(prefix="yahtzee-pg-"))
        if os.geteuid() == 0:
            os.chown(self.dir, NOBODY, NOBODY)
        data = self.dir / "data"
        try:
            self._run(
                str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                "-E", "UTF8", "--no-sync",
            )  # fmt: skip
            settings = [
                "-h 127.0.0.1",
                f"-p {self.port}",
                f"-k {self.dir}",
                f"-c max_connections={self.max_connections}",
            ]
            if self.durable:
                settings.append("-c synchronous_commit=off")
            else:
                settings += ["-c fsync=off", "-c full_page_writes=off"]
            self._run(
                str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "server.log"),
                "-o", " ".join(settings), "-w", "-t", "60", "start",
            )  # fmt: skip
        except subprocess.CalledProcessError as err:
            log = self.dir / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            self.stop()
            raise RuntimeError(f"PostgreSQL did not start: {err.stderr}\n{tail}") from None
        return self

    def url(self, name: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.dir is None:
            return
        data = self.dir / "data"
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
