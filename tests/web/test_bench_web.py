"""experiments/bench_web.py's ``--port`` (issue 57): the servers listen where asked (the
next servers on the ports after it), or each on a free port (0, the default), so that two
runs share a machine."""

from __future__ import annotations

import contextlib
import json
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

EXPERIMENTS = Path(__file__).parents[2] / "experiments"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(EXPERIMENTS))
    import bench_web

    return bench_web


def test_port_is_0_for_a_free_one_or_a_port_number(bench, capsys):
    parser = bench.options()
    assert parser.parse_args([]).port == 0
    assert parser.parse_args(["--port", "8123"]).port == 8123
    with pytest.raises(SystemExit):
        parser.parse_args(["--port", "70000"])
    assert "0 (a free one) or 1..65535" in capsys.readouterr().err


def test_the_servers_listen_on_the_port_asked_or_each_on_a_free_one(bench, tmp_path):
    from webload.run import start_servers

    from yahtzee_env.web.door.local_server import free_port

    def ready(srv) -> dict:
        with urllib.request.urlopen(f"{srv.url}/readyz", timeout=10) as reply:
            return json.loads(reply.read())

    asked = free_port()
    args = bench.options().parse_args(["--port", str(asked)])
    with contextlib.ExitStack() as stack:
        (srv,) = start_servers(args, stack, str(tmp_path), tmp_path / "a.sqlite3")
        assert srv.port == asked and srv.url.endswith(f":{asked}")
        assert ready(srv)["ready"] is True
        # a second run beside it, with the default: a free port of its own
        other = bench.options().parse_args([])
        (beside,) = start_servers(other, stack, str(tmp_path), tmp_path / "b.sqlite3")
        assert beside.port not in (0, asked) and ready(beside)["ready"] is True


def test_a_tiny_run_reports_the_machine_the_curve_and_a_verdict(tmp_path):
    """Issue 60: a run others can compare names its Python and machine, gives the curve
    (server 0's RSS, the CPU per move, each CPU's load) every ``--every`` seconds, opens the
    ``--sockets`` idle watchers, and ends with the verdict line (its values not checked)."""
    import subprocess
    import sys

    out = tmp_path / "run.json"
    command = [
        sys.executable, str(EXPERIMENTS / "bench_web.py"), "--players", "4", "--think", "0.2",
        "--ramp", "0.5", "--seconds", "3", "--every", "1", "--sockets", "5", "--instances", "1",
        "--watchers", "2", "--no-crash", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("verdict: ")
    result = json.loads(out.read_text())
    assert {"python", "cpu_model", "cores"} <= set(result["machine"])
    assert result["curve"] and {"at_s", "rss_mb", "cpu_ms_per_move", "cpu_busy"} <= set(
        result["curve"][0]
    )
    assert "other_cores_busy" in result and "rss_growth_after_first_minute" in result
    assert result["idle_sockets"]["asked"] == 5
    assert result["verdict"].startswith("verdict: ")
    # two players' tables watched on the one server: a move's fan-out to the watcher
    assert result["fanout"]["watched_players"] == 2 and result["fanout"]["arrived"] > 0
    # what the slow moves stood beside includes this load generator's late loop and the
    # CPU time the machine's hypervisor took (issue 60, fifth round)
    beside = result["server"]["beside_the_slow_moves"]
    assert {"client_loop", "steal", "gc_young", "wal_checkpoint_lock"} <= set(beside)
    # the simulated players play as the page does (the first roll of a turn a tap): every
    # move of theirs is acknowledged
    assert result["actions"] > 0 and result["errors"] == 0, (result["actions"], result["errors"])
    # each acknowledged move's kind (a turn: a tap, its re-rolls, a score), so that servers
    # whose turns have different moves compare by the CPU per turn
    server = result["server"]
    kinds = server["moves_by_kind"]
    assert set(kinds) <= {"tap", "reroll", "score"} and kinds.get("tap", 0) > 0, kinds
    assert sum(kinds.values()) == server["moves"]
    if kinds.get("score"):
        per_turn = server["server_cpu_s"] * 1000 / kinds["score"]
        assert server["server_cpu_ms_per_turn"] == pytest.approx(per_turn, abs=1e-3)


def test_a_move_is_counted_as_the_tap_a_re_roll_or_the_score(bench):
    """`clients.move_kind`: the dice in the cup make any move the turn's tap; otherwise a
    roll is a re-roll and the rest the turn's score."""
    from webload.clients import move_kind

    assert move_kind({"cup": True}, {"type": "roll", "hold": []}) == "tap"
    assert move_kind({"cup": False, "rolls_left": 2}, {"type": "roll", "hold": [0]}) == "reroll"
    assert move_kind({"cup": False}, {"type": "score", "box": "chance"}) == "score"
    assert move_kind({}, {"type": "roll", "hold": [1]}) == "reroll"  # a server before the cup


def test_the_fanout_takes_the_first_state_at_or_past_each_move(bench):
    """A move's fan-out is the time from its send to the first state at the watcher whose
    seq is at least the move's (pushes coalesce: a later state carries it too), for the moves
    sent once the watcher had its first state."""
    import argparse

    from webload.report import fanout

    class P:
        watch_errors = 0

    p = P()
    p.sent = {("A", 1): 10.0, ("A", 2): 11.0, ("A", 5): 12.0, ("B", 2): 20.0, ("C", 1): 30.0}
    p.seen = {("A", 0): 9.0, ("A", 1): 10.5, ("A", 3): 11.2, ("A", 2): 11.4, ("B", 2): 20.9}
    p.seen[("C", 0)] = 29.0
    out = fanout(argparse.Namespace(watchers=1, players=1), [p])
    # A1 -> 0.5 s; A2 -> A3's 11.2 (before A2's own 11.4); A5 and C1: nothing past them;
    # B2 was sent before B's watcher had its first state: its opening, not a push
    assert out["arrived"] == 2 and out["moves"] == 5 and out["max_ms"] == 500.0
    assert out["before_watching"] == 1


def test_a_player_posts_on_its_event_loop_and_a_refusal_is_an_error(bench):
    """The simulated players make their tables with no worker thread (`post_async`): the
    request as sent, the JSON answer, and a 4xx raised as OSError (a player's error)."""
    import asyncio

    from webload.clients import post_async

    seen = []

    async def main():
        async def answer(reader, writer):
            request = await reader.readuntil(b"\r\n\r\n")
            length = int(request.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
            seen.append((request, body))
            if b"X-Forwarded-For: 10.0.0.9" in request:
                writer.write(b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}")
            else:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"code": "A"}')
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            url = f"http://127.0.0.1:{port}/api/tables"
            assert await post_async(url, {"seats": ["human"]}, "10.0.0.8") == {"code": "A"}
            with pytest.raises(OSError, match="429"):
                await post_async(url, {"seats": []}, "10.0.0.9")

    asyncio.run(main())
    request, body = seen[0]
    assert request.startswith(b"POST /api/tables HTTP/1.1\r\n")
    assert json.loads(body) == {"seats": ["human"]}


def test_the_verdict_reads_each_target_from_the_report(bench):
    """The verdict's p99.9 is the report's ``p999_ms`` (it read a key no report has, so every
    run failed on "p99.9 None")."""
    from webload.curve import verdict

    report = {"p99_ms": 40.0, "p999_ms": 120.0, "errors": 0}
    assert verdict(report, 0.05).startswith("verdict: PASS: p99 40.0 ms <= 50; p99.9 120.0 ms")
    failed = verdict({**report, "p999_ms": 200.0}, 0.05)
    assert failed.startswith("verdict: FAIL") and "p99.9 200.0 ms <= 150 (no)" in failed
    assert "(no)" in verdict(report, 0.2) and "(no)" in verdict({**report, "p99_ms": None}, 0.0)


def test_a_run_past_the_default_socket_cap_raises_it_on_its_servers(bench, tmp_path):
    """Issue 60's 5,000-connected run: the servers take every socket the run opens
    (`yahtzee serve --max-sockets`), and the flag sets the limit the server enforces."""
    import argparse

    from webload import run

    from yahtzee_env.commands import serve
    from yahtzee_env.web.limits import Limits

    seen = []

    class Spy:
        def __init__(self, db, flags, **_):
            seen.append(flags)
            raise RuntimeError("stop here")

    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    assert serve.limits_of(parser.parse_args([]))["sockets_total"] == Limits().sockets_total
    assert (
        Limits(**serve.limits_of(parser.parse_args(["--max-sockets", "6000"]))).sockets_total
        == 6000
    )
    # uvicorn's cap on connections (503 past it) makes room for every socket the app takes
    assert serve.connections_for(Limits().sockets_total) == 4096
    assert serve.connections_for(6000) > 6000
    for argv, cap in (
        (["--players", "1000"], None),
        (["--players", "1000", "--sockets", "4000"], 5000),
    ):
        args = bench.options().parse_args(argv)
        with contextlib.ExitStack() as stack, pytest.raises(RuntimeError):
            run.LocalServer, saved = Spy, run.LocalServer
            stack.callback(setattr, run, "LocalServer", saved)
            run.start_servers(args, stack, str(tmp_path), tmp_path / "c.sqlite3")
        flags = seen[-1]
        if cap is None:
            assert "--max-sockets" not in flags
        else:
            assert int(flags[flags.index("--max-sockets") + 1]) >= cap
