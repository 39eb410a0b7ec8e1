"""The model-based reward-only baseline: learns from its own games without the solver's table,
plans by exact expectimax through the rules, and reproduces itself from a seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

import yahtzee_env.solver.exact as exact
from yahtzee_agents.model_based import (
    ModelBasedConfig,
    ValueNet,
    all_states,
    backup_targets,
    learn,
    load_policy,
    state_features,
)
from yahtzee_env.game.rules import ALL_FILLED, RuleSet

TINY = {
    "games": 400,
    "games_per_iteration": 200,
    "eval_every": 200,
    "buffer_states": 5_000,
    "hidden": [16, 16],
}


def no_grading(policy, cfg):
    return {}


def test_backup_of_the_exact_table_is_the_table():
    """The one-turn expectimax target, applied to the solver's own values, gives them back
    (the optimal values are its fixed point): the backup is the rules' turn, exactly."""
    rules = RuleSet.from_spec("official")
    solved = exact.load_or_solve(rules)
    f, u, y = all_states(rules)
    rng = np.random.default_rng(0)
    pick = rng.choice(f.size, 300, replace=False)
    got = backup_targets(rules, solved.table, f[pick], u[pick], y[pick])
    np.testing.assert_allclose(got, solved.table[f[pick], u[pick], y[pick]], atol=2e-3)


def test_all_states_are_the_reachable_turn_starts():
    rules = RuleSet.from_spec("official")
    solved = exact.load_or_solve(rules)
    f, u, y = all_states(rules)
    assert not (f == ALL_FILLED).any()
    assert np.isfinite(solved.table[f, u, y]).all()  # the solver solved every one of them
    reachable = np.isfinite(solved.table[:ALL_FILLED]).sum()
    assert f.size == reachable
    feats = state_features(f[:10], u[:10], y[:10], rules.upper_bonus_threshold)
    assert feats.shape == (10, 13 + 1 + 63 + 3) and feats.dtype == np.float32


def test_table_is_the_network_at_every_state():
    rules = RuleSet.from_spec("official")
    net = ValueNet(rules, [16, 16], 1e-3, seed=0)
    table = net.table()
    f, u, y = net.states
    pick = np.random.default_rng(1).choice(f.size, 2_000, replace=False)
    direct = net.predict(state_features(f[pick], u[pick], y[pick], rules.upper_bonus_threshold))
    np.testing.assert_allclose(table[f[pick], u[pick], y[pick]], direct, rtol=1e-5, atol=1e-4)
    assert (table[ALL_FILLED] == 0).all()


def test_learns_without_the_solver_table_and_is_reproducible(monkeypatch, tmp_path):
    def refuse(*args, **kwargs):
        raise AssertionError("the model-based learner read the solver's table")

    monkeypatch.setattr(exact, "load_or_solve", refuse)
    monkeypatch.setattr(exact, "solve", refuse)
    cfg = ModelBasedConfig(seed=3, **TINY)
    first = learn(cfg, tmp_path / "a", evaluate=no_grading, log=lambda s: None)
    again = learn(cfg, tmp_path / "b", evaluate=no_grading, log=lambda s: None)
    other = learn(ModelBasedConfig(seed=4, **TINY), None, evaluate=no_grading, log=lambda s: None)
    assert first["games"] == 400 and first["env_steps"] > 400 * 13
    np.testing.assert_array_equal(first["table"], again["table"])  # same seed, same agent
    assert not np.array_equal(first["table"], other["table"], equal_nan=True)
    rows = [json.loads(line) for line in (tmp_path / "a" / "curve.jsonl").read_text().splitlines()]
    assert [r["games"] for r in rows] == [200, 400]
    # the value of the empty card grows as the backups propagate from the end of the game
    assert rows[1]["v_start"] > rows[0]["v_start"] > 0


def test_saved_agent_loads_as_a_policy_and_refuses_a_pickle(tmp_path):
    cfg = ModelBasedConfig(seed=1, games=200, games_per_iteration=200, eval_every=200, hidden=[16])
    out = learn(cfg, tmp_path, evaluate=no_grading, log=lambda s: None)
    policy = load_policy(tmp_path / "value.npz")
    np.testing.assert_array_equal(policy.oracle.table.table, out["table"])
    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    env = YahtzeeVectorEnv(num_envs=4)
    obs, _ = env.reset(seed=0)
    actions = policy.act_batch(obs, env.action_masks())
    assert env.action_masks()[np.arange(4), actions].all()
    hostile = tmp_path / "hostile.npz"
    np.savez(hostile, p0=np.array([object()], dtype=object))
    (tmp_path / "hostile.json").write_text((tmp_path / "value.json").read_text())
    with pytest.raises(ValueError):
        load_policy(hostile)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("games", 0, "games must be a positive integer"),
        ("explore", 1.0, "explore must be in"),
        ("rules", "nonsense", "nonsense"),
        ("hidden", [], "hidden must be"),
    ],
)
def test_bad_config_names_the_problem(field, value, message):
    with pytest.raises(ValueError, match=message):
        ModelBasedConfig(**{field: value})


def test_curves_read_a_model_based_run(tmp_path):
    """`experiments/learning_curves.py` reads the baseline's run folder on the PPO runs' axes
    and says when it first reached an expected score."""
    from yahtzee_agents import curves

    def fixed(policy, cfg):
        return {
            "mean": 240.0,
            "ci95": 2.0,
            "regret_per_game": 3.0,
            "upper_bonus_rate": 0.5,
            "yahtzee_rate": 0.3,
        }

    learn(ModelBasedConfig(**TINY), tmp_path / "model-based-s0", evaluate=fixed, log=print)
    rows = curves.collect(tmp_path / "model-based-s0")
    assert [r["games"] for r in rows] == [200, 400]
    assert all(r["steps"] > 13 * r["games"] for r in rows)
    hits = curves.first_reaching(rows, 254.5877, [250, 252])
    assert hits["model-based-s0"][250]["games"] == 200  # 254.59 - 3 >= 250 at once
    assert hits["model-based-s0"][252] is None
    table = curves.markdown_table(curves.summarize(rows, [rows[1]["steps"]]), "model-based")
    assert "| model-based |" in table and "240.0 ± 2.0" in table


def test_yahtzee_export_ships_a_model_based_agent(tmp_path):
    """``yahtzee export VALUE.npz`` makes the level that experiments/model_based.py --export
    makes (master's own weights, bit for bit), and refuses what it cannot do, by name."""
    import subprocess
    import sys
    from pathlib import Path

    from yahtzee_env.policies.models import load_opponent

    root = Path(__file__).resolve().parents[1]
    value = root / "data" / "model_based" / "value-s0.npz"

    def cli(*args):
        cmd = [sys.executable, "-m", "yahtzee_env", "export", *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    out = cli(value, "--out", tmp_path / "lv", "--name", "mb", "--level", "master")
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "lv" / "mb.json").read_text())
    shipped = json.loads((root / "yahtzee_env/policies/levels/master.json").read_text())
    assert manifest["weights_sha256"] == shipped["weights_sha256"]
    assert manifest["method"] == "model-based" and manifest["level"] == "master"
    assert manifest["objective"] == "score"
    load_opponent(tmp_path / "lv" / "mb.json")
    onnx = cli(value, "--out", tmp_path / "o", "--format", "onnx")
    assert onnx.returncode == 2 and "no ONNX form" in onnx.stderr
    hostile = tmp_path / "hostile.npz"
    np.savez(hostile, p0=np.array([object()], dtype=object))
    (tmp_path / "hostile.json").write_text(value.with_suffix(".json").read_text())
    bad = cli(hostile, "--out", tmp_path / "h")
    assert bad.returncode == 2 and "not a model-based agent's file" in bad.stderr
    assert not (tmp_path / "h" / "hostile.json").exists()  # nothing half-written
    alone = tmp_path / "alone.npz"
    alone.write_bytes(value.read_bytes())
    missing = cli(alone, "--out", tmp_path / "a")
    assert missing.returncode == 2 and "VALUE.json beside it" in missing.stderr
