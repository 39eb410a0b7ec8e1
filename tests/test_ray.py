"""The Ray backend on a two-node cluster on this machine (`ray.cluster_utils.Cluster`, head +
worker node, loopback only): game chunks run on both nodes with exactly the local backend's
numbers, a worker killed mid-evaluation is retried with the results unchanged, and two seeds of
the tiny config train in parallel. Missing Ray gives the one-line install hint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

# Keep Ray on loopback: without this, Ray rewrites 127.0.0.1 to the machine's network address.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
ray = pytest.importorskip("ray", reason="needs the ray extra")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from yahtzee_env.analysis.evaluation import play_games  # noqa: E402
from yahtzee_env.analysis.ray_backend import RayRunner, ray_session  # noqa: E402
from yahtzee_env.analysis.tournament import Entrant, run_tournament  # noqa: E402
from yahtzee_env.policies.resolve import resolve_policy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STORE = 80 * 2**20  # a small object store per node
LOOPBACK = {"node_ip_address": "127.0.0.1", "object_store_memory": STORE, "num_cpus": 1}


@pytest.fixture(scope="module")
def cluster():
    """A head and a worker node of one CPU each, started and stopped here."""
    if ray.is_initialized():
        pytest.skip("another Ray session is connected in this process")
    c = cluster_utils.Cluster(
        initialize_head=True, head_node_args={**LOOPBACK, "include_dashboard": False}
    )
    c.add_node(**LOOPBACK)
    c.wait_for_nodes()
    ray.init(address=c.address, logging_level="ERROR", _node_ip_address="127.0.0.1")
    try:
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def _same_records(a, b) -> None:
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.box_scores, b.box_scores)
    np.testing.assert_array_equal(a.upper_bonus, b.upper_bonus)
    np.testing.assert_array_equal(a.yahtzee_bonus, b.yahtzee_bonus)
    np.testing.assert_array_equal(a.regret, b.regret)
    assert a.decisions == b.decisions


@pytest.mark.parametrize("name", ["hard", "random"])
def test_chunks_run_on_both_nodes_with_the_local_numbers(cluster, name: str) -> None:
    policy = resolve_policy(name, "official", 7)
    local = play_games(policy, 1200, seed=7, chunk_size=300, workers=1)
    runner = RayRunner()
    seen = []
    with ray_session():  # the test's cluster is connected: used as is
        remote = play_games(
            policy,
            1200,
            seed=7,
            chunk_size=300,
            runner=runner,
            progress=lambda d, t: seen.append(d),
        )
    _same_records(local, remote)
    assert len(runner.nodes) == 2, f"tasks ran on {dict(runner.nodes)}"
    assert sum(runner.nodes.values()) == 4
    assert seen == [300, 600, 900, 1200]  # the progress bar's callback


def test_tournament_on_the_cluster_equals_local(cluster) -> None:
    entrants = [
        Entrant(n, resolve_policy(n, "official", i))
        for i, n in enumerate(["greedy", "random", "heuristic"])
    ]
    kwargs = {"players": 2, "games": 200, "seed": 3, "batch_size": 64}
    local = run_tournament(entrants, **kwargs)
    runner = RayRunner()
    remote = run_tournament(entrants, **kwargs, runner=runner)
    for result in (local, remote):
        result.pop("speed")
    assert local == remote
    assert len(runner.nodes) == 2


class _SlowStart:
    """A chunk function (shipped to the workers by value) that leaves its pid in a folder and
    waits a moment before playing, so that a test can kill the worker mid-task."""

    def __init__(self, fn, folder: str) -> None:
        self.fn, self.folder = fn, folder

    def __call__(self, *args):
        seed = args[2]
        Path(self.folder, f"{seed.spawn_key[-1]}-{os.getpid()}").touch()
        time.sleep(1.0)
        return self.fn(*args)


def test_a_killed_worker_is_retried_and_the_results_are_unchanged(cluster, tmp_path) -> None:
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    policy = resolve_policy("heuristic", "official", 0)
    local = play_games(policy, 1200, seed=11, chunk_size=300, workers=1, regret="no")
    runner = RayRunner(max_retries=3)

    def slow_runner(fn, jobs):
        return runner(_SlowStart(fn, str(tmp_path)), jobs)

    out = {}
    thread = threading.Thread(
        target=lambda: out.update(
            records=play_games(
                policy, 1200, seed=11, chunk_size=300, runner=slow_runner, regret="no"
            )
        )
    )
    thread.start()
    deadline = time.monotonic() + 60
    while not list(tmp_path.iterdir()):
        assert time.monotonic() < deadline, "no chunk started"
        time.sleep(0.02)
    first = next(iter(tmp_path.iterdir())).name
    chunk, pid = (int(x) for x in first.split("-"))
    os.kill(pid, signal.SIGKILL)  # a worker of this test's cluster, mid-task
    thread.join(timeout=120)
    assert not thread.is_alive()
    _same_records(local, out["records"])
    attempts = [p.name for p in tmp_path.iterdir() if p.name.startswith(f"{chunk}-")]
    assert len(attempts) >= 2, f"chunk {chunk} was not retried: {attempts}"


def test_two_seeds_of_tiny_train_in_parallel(cluster, tmp_path) -> None:
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from yahtzee_agents.config import load_config
    from yahtzee_agents.seeds import train_seeds

    summary = train_seeds(load_config(ROOT / "configs" / "tiny.yaml"), [0, 1], tmp_path)
    assert summary["seeds"] == [0, 1]
    finals = [r["final"]["mean"] for r in summary["runs"]]
    assert summary["final_mean"]["mean"] == pytest.approx(np.mean(finals))
    assert summary["final_mean"]["std"] == pytest.approx(np.std(finals, ddof=1))
    for seed in (0, 1):
        run = tmp_path / f"tiny-seed{seed}"
        assert (run / "final" / "eval.json").exists()
        assert "seed: " + str(seed) in (run / "config.yaml").read_text()
    assert (tmp_path / "tiny-seeds.json").exists()


HIDE_RAY = "import sys; sys.modules['ray'] = None; from yahtzee_env.commands.cli import main; "


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--policy", "greedy", "--games", "10", "--backend", "ray"],
        ["tournament", "--policies", "greedy,random", "--games", "10", "--backend", "ray"],
        ["sweep", "configs/sweeps/tiny.yaml"],
        ["train", "configs/tiny.yaml", "--seeds", "0,1"],
    ],
)
def test_missing_ray_gives_the_install_hint(argv: list[str]) -> None:
    code = HIDE_RAY + f"sys.exit(main({argv!r}))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert "pip install 'yahtzee-rl[ray]'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
