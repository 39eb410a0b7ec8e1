"""experiments/bench_solo.py (issue 50): a tiny run plays both ways against a server on
loopback and reports the server's CPU per game of each (its shape, not its figures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

BENCH = Path(__file__).parents[2] / "experiments" / "bench_solo.py"


def test_a_tiny_run_plays_both_ways_and_reports_the_servers_cpu(tmp_path):
    out = tmp_path / "solo.json"
    cli = [sys.executable, str(BENCH), "--games", "2", "--warmup", "1", "--rounds", "1"]
    done = subprocess.run(
        [*cli, "--idle", "0.2", "--level", "easy", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    server, in_page = report["summary"]["server"], report["summary"]["in_page"]
    assert server["games"] == in_page["games"] == 2
    assert in_page["requests_per_game"] == 1  # one POST of the finished game
    assert server["requests_per_game"] >= 15  # create, read, and at least one move a turn
    assert in_page["db_per_game"]["transactions"] == 1
    assert server["cpu_ms_per_game"] > 0 and in_page["cpu_ms_per_game"] >= 0
    assert [b["mode"] for b in report["blocks"]] == ["server", "in_page"]
