"""experiments/bench_train.py (issue 59.6): both engines on one recipe, each core count in a
process of its own, at a tiny budget (its figures are not checked: the machine may be busy)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location(
        "bench_train", ROOT / "experiments" / "bench_train.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_both_engines_side_by_side_at_a_tiny_budget(tmp_path, capsys):
    script = _script()
    cpu = min(os.sched_getaffinity(0))
    out = tmp_path / "bench.json"
    args = ["--config", "tiny-jax", "--timesteps", "64", "--cpus", str(cpu), "--cores", "1,2"]
    result = script.main([*args, "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    rows = {(r["engine"], r["cores"]): r for r in result["rows"]}
    assert set(rows) == {("sb3", 1), ("sb3", 2), ("jax", 1), ("jax", 2)}
    for engine in ("sb3", "jax"):
        one, two = rows[engine, 1], rows[engine, 2]
        assert "only 1 CPU(s) given" in two["not_measured"]  # never more CPUs than given
        if "not_measured" in one:  # the jax extra is optional
            assert engine == "jax" and "not installed" in one["not_measured"]
            continue
        assert one["cpus"] == [cpu] and one["steps"] >= 64 and one["batch"] == 32
        assert one["steps_per_s"] > 0 and one["start_s"] >= 0 and one["target_hours"] > 0
    shown = capsys.readouterr().out
    assert "| engine | cores (CPUs) | env-steps/s | start (s) |" in shown
    assert "| sb3 | 2 (-) | not measured" in shown


def test_an_engine_that_cannot_train_the_recipe_is_not_measured():
    """The JAX engine trains PPO from scratch: a recipe with a teacher is refused, named."""
    script = _script()
    cpu = str(min(os.sched_getaffinity(0)))
    result = script.main(["--config", "tiny", "--engines", "jax", "--cores", "1", "--cpus", cpu])
    (row,) = result["rows"]
    assert row["not_measured"].startswith(("refused: ", "jax is not installed", "optax is"))


def test_the_options_are_checked(capsys):
    script = _script()
    for bad in (["--engines", "torch"], ["--cores", "0"], ["--config", "a", "--config", "b"]):
        with pytest.raises(SystemExit):
            script.main(bad)
    assert "--engines: unknown torch" in capsys.readouterr().err
