"""Load benchmark of ``yahtzee serve`` over the real protocol on loopback (issue 11).

N simulated players, each playing whole games against CPU seats: a table is created over
HTTP, then every move goes over the table's WebSocket (``act`` -> ``ack``). Reports games
per second and the p50/p99 round-trip of an action (send -> ack, which the server sends
only after the action and the CPU moves after it are committed to SQLite).

Hostile cases beside the honest players (issue 17):

- ``--slow-sockets N``: N clients (each from its own address) open a socket on each of the
  first ``--slow-tables`` players' tables and never read a byte (their receive buffer is
  4 KiB); with ``--slow-ask R`` they also ask for the table's full state R times a second
  (and still never read), so the server's buffers to them fill within seconds, not hours.
  The server closes them (4008) once their send queue is full; the honest players' round
  trips on the attacked tables are reported apart.
- ``--fresh-connections``: ``--attackers`` clients from one address send requests as fast as
  they can, each on a new connection (code guesses, table creations, config reads), which
  a per-connection limit would not stop; the limits by address refuse them (429), and the
  report counts their answers by status.

Every simulated client has its own address (the server runs with ``--trust-proxy`` and the
clients send ``X-Forwarded-For``), as real players behind their own connections would.

Then the crash check: the server is killed with SIGKILL in the middle of the load and
restarted on the same database; every table must be at the last action its player saw
acknowledged (or one past it, if that player had an action in flight when the server died:
committed, never acknowledged), never behind.

Several servers on one PostgreSQL database (issue 20): ``--db postgresql://USER@HOST:PORT/DB``
(or ``--db local-postgres``: a private PostgreSQL cluster in a temporary folder, Debian's
initdb and pg_ctl) and ``--servers N``: N ``yahtzee serve`` processes, player i on server
i mod N. With N > 1, ``--watchers W`` of the players (50 by default) have a second socket on
their table at the next server, and the report gives the fan-out: from a move's send on one
server to its state arriving at the other server's socket. With one server, ``--watchers W``
watches on the same server (issue 60: a move's fan-out to its table's other sockets). The
crash check then kills server 0 and reads every table from server 1, without a restart.

The server alone (issue 33): ``--server-cpus 0 --client-cpus 1`` pins the servers (and a
``--db local-postgres`` cluster) and this load generator to separate CPUs; the report's
``server`` part gives, over the measured window, the servers' CPU time per acknowledged move
(by the kernel's accounting of the server processes, ``/proc/PID/stat``, and by the
server's own ``getrusage`` through ``GET /api/bench-stats``, which ``yahtzee serve
--bench-stats`` turns on), moves a second, the database round trips, statements and
transactions per move (counted by the storage layer, `storage.Trips`), and the bytes of the
server's messages per move (as text, and on the wire: the loopback interface's bytes, both
ways, frames and compression included); p50/p99/p99.9 of the round trips. ``--profile FILE`` samples
server 0 with py-spy (the thread holding the GIL; with ``--profile-threads``, every thread
on a CPU, without stopping the server) over the window and reports its top frames;
``--perf FILE`` samples it with Linux perf (CPU time of every thread, the kernel and the C
libraries included) and reports its top objects and symbols, each also in milliseconds per
move; ``server.server0_threads`` splits server 0's CPU time per move between its event loop
and its other threads. ``server.beside_the_slow_moves`` sets the window's slowest moves
(at or above its p99) beside what stalled them: server 0's collector pauses by generation,
SQLite's checkpoint holding the storage's lock, this load generator's own collector
pauses, its event loop waking late (``client_loop``) and the CPU time the hypervisor took
from the servers' CPUs (``steal``); ``server.client_cpu_share`` is this load generator's
share of its CPU (a busy one's own queue is in the round trips it measures);
``server.server0_rss_mb`` is server 0's memory at the window's start and end and its peak
(``/proc/PID/status``). The load
generator's own collector is frozen and off during the load unless ``--client-gc``: its
pauses would stop every simulated player at once (real players are on machines of their
own) and be counted as the server's.
``--no-crash`` skips the ``kill -9`` check.

A run others can compare (issue 60): the report names the Python, the CPU model and the
cores (``machine``), gives every ``--every`` seconds server 0's RSS, the CPU time per move
and each CPU's busy share from ``/proc/stat`` (``curve``; ``other_cores_busy``: the CPUs
the servers were not pinned to), ``--sockets N`` idle watchers beside the players, and
ends with one line, the verdict against the targets: p99 <= 50 ms, p99.9 <= 150 ms, no
error, server 0's RSS growing under 10% after the first minute. ``--instances`` is
``--servers``, ``--window`` is ``--seconds``. ``server.moves_by_kind`` counts the players'
moves by kind (a turn's tap, its re-rolls, its score) and ``server_cpu_ms_per_turn`` is the
CPU per player turn (the CPU seats' turns run in its score's answer): it compares servers
whose turns differ (before issue 58 a turn had no tap, a third of today's moves).

    nice -n 15 python experiments/bench_web.py --players 1000 --think 1.0 --ramp 5 \
        --seconds 600 --every 60 --sockets 1000 --server-cpus 0 --client-cpus 1 --no-crash

    python experiments/bench_web.py --players 1000 --think 1.0 --ramp 5 \
        --server-cpus 0 --client-cpus 1
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20
    nice -n 15 python experiments/bench_web.py --players 200 --db local-postgres --servers 2
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20 --slow-sockets 10
    nice -n 15 python experiments/bench_web.py --players 200 --seconds 20 --fresh-connections

Everything runs on 127.0.0.1 with a temporary database; it stops by itself. Each server
listens on a free port unless ``--port P`` names the first (the next servers take P+1, ...),
so two runs can share a machine. The logic is in
``experiments/webload/`` (clients, measures, report, run); this script parses the options.
"""

from __future__ import annotations

import argparse
import os
import sys

from webload.measures import cpu_list
from webload.run import run


def port_number(text: str) -> int:
    """A ``--port``: 0 (a free one) or 1..65535."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 (a free one) or 1..65535, not {port}")
    return port


def options() -> argparse.ArgumentParser:
    """The command's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument(
        "--seconds",
        "--window",
        type=float,
        default=20.0,
        help="the measured window's length (after the ramp)",
    )
    parser.add_argument(
        "--every",
        type=float,
        default=60.0,
        metavar="S",
        help="the curve's interval: server 0's RSS and the CPU time per move every S seconds",
    )
    parser.add_argument(
        "--sockets",
        type=int,
        default=0,
        metavar="N",
        help="N more sockets that watch and stay idle (30 to a table, each from its own "
        "address), opened before the players arrive: the 5,000-connected run (the server "
        "takes 2,000 sockets by default)",
    )
    parser.add_argument("--opponents", default="medium", help="CPU seats, comma-separated")
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean think time between a player's moves (s)"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=2.0,
        help="players arrive evenly over this many seconds; round-trips are measured after it",
    )
    parser.add_argument(
        "--slow-sockets",
        type=int,
        default=0,
        metavar="N",
        help="N never-reading sockets on each of the first --slow-tables players' tables",
    )
    parser.add_argument("--slow-tables", type=int, default=10)
    parser.add_argument(
        "--slow-ask",
        type=float,
        default=0.0,
        metavar="R",
        help="the slow sockets also ask for the state R times a second (never reading it)",
    )
    parser.add_argument(
        "--fresh-connections",
        action="store_true",
        help="--attackers clients from one address, a new connection per request",
    )
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument(
        "--db",
        default=None,
        help="a postgresql:// URL (a database the benchmark may fill), or 'local-postgres' for "
        "a private PostgreSQL cluster in a temporary folder (default: a temporary SQLite file)",
    )
    parser.add_argument(
        "--servers",
        "--instances",
        type=int,
        default=1,
        help="yahtzee serve processes on the database (above 1: --db postgresql://... or "
        "--db local-postgres)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=0,
        help="the first server's port on 127.0.0.1 (the next servers take the ports after "
        "it); 0 (the default): each server a free port, so that two runs share a machine",
    )
    parser.add_argument(
        "--watchers",
        type=int,
        default=None,
        help="players whose table is also watched by a second socket, from the next server "
        "(on the same one where there is one server): the report's fan-out; default 50 with "
        "--servers above 1, else 0",
    )
    parser.add_argument(
        "--server-cpus",
        type=cpu_list,
        default=None,
        metavar="CPUS",
        help="pin the servers (and a --db local-postgres cluster) to these CPUs (0 or 0,1)",
    )
    parser.add_argument(
        "--client-cpus",
        type=cpu_list,
        default=None,
        metavar="CPUS",
        help="pin this load generator to these CPUs",
    )
    parser.add_argument(
        "--no-crash", action="store_true", help="skip the kill -9 check after the load"
    )
    parser.add_argument(
        "--batch-moves", action="store_true", help="run the servers with --batch-moves"
    )
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more `yahtzee serve` option for the servers (repeatable), such as "
        "--serve-arg=--ws-deflate or --serve-arg=--moves-in-threads",
    )
    parser.add_argument(
        "--profile",
        default=None,
        metavar="FILE",
        help="sample server 0 with py-spy (pip install py-spy) over the metered window "
        "(collapsed stacks to FILE; "
        "the top frames go in the report)",
    )
    parser.add_argument(
        "--profile-threads",
        action="store_true",
        help="with --profile: sample every thread of server 0 while it runs on a CPU "
        "(py-spy without --gil, idle threads left out: each sample is a thread on a CPU, so "
        "the shares are of CPU time, worker threads included), not only the GIL's holder",
    )
    parser.add_argument(
        "--perf",
        default=None,
        metavar="FILE",
        help="sample server 0 with Linux perf (cpu-clock, every thread, the kernel and the "
        "C code included: sqlite3, uvloop, orjson, numpy) over the metered window; the "
        "top shared objects and symbols by CPU go in the report",
    )
    parser.add_argument(
        "--profile-rate", type=int, default=250, help="py-spy's samples a second per thread"
    )
    parser.add_argument(
        "--client-gc",
        action="store_true",
        help="leave this load generator's own garbage collector on during the load (by "
        "default it is frozen and off then: its pauses, tens of ms for a thousand players in "
        "one process, would stop every simulated player at once and be counted as the "
        "server's round trips)",
    )
    parser.add_argument("--json", default=None, help="write the numbers here")
    return parser


def main() -> int:
    parser = options()
    args = parser.parse_args()
    if args.servers > 1 and args.db is None:
        parser.error("--servers above 1 needs --db postgresql://... or --db local-postgres")
    return run(args)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
