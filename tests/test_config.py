"""Training config validation: bad configs fail before training, naming the key."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from yahtzee_agents.config import (
    ConfigError,
    Schedule,
    apply_overrides,
    config_from_dict,
    load_config,
)
from yahtzee_agents.run.schedule import scheduled

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_load(path: Path) -> None:
    cfg = load_config(path)
    assert cfg.name == path.stem
    assert len(cfg.digest()) == 64


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"name": "x", "ppo": {"learning_rte": 1e-3}}, "ppo.learning_rte: unknown key"),
        ({"name": "x", "bogus": 1}, "bogus: unknown key"),
        ({"name": "x", "ppo": {"n_steps": "many"}}, "ppo.n_steps: expected int"),
        ({"name": "x", "ppo": {"n_steps": 1.5}}, "ppo.n_steps: expected int"),
        ({"name": "x", "env": {"canonical_holds": "yes"}}, "env.canonical_holds: expected bool"),
        ({"name": "x", "policy": {"net_arch": [64, "wide"]}}, "policy.net_arch[1]"),
        ({"name": "x", "policy": {"activation": "gelu"}}, "policy.activation: expected one of"),
        ({"name": "x", "ppo": {"batch_size": 1000}}, "ppo.batch_size: n_steps * env.num_envs"),
        ({"name": "x", "ppo": {"gamma": 1.5}}, "ppo.gamma"),
        ({"name": "x", "ppo": {"learning_rate": -1.0}}, "ppo.learning_rate"),
        ({"name": "x", "ppo": {"learning_rate": {"start": 1e-3}}}, "ppo.learning_rate"),
        ({"name": "x", "env": {"rules": "yatzy"}}, "env.rules: unknown preset"),
        ({"name": "x", "env": {"num_envs": 0}}, "env.num_envs: must be > 0"),
        ({"name": "x", "warm_start": {"teacher": "optimal", "games": 0}}, "warm_start.games"),
        ({"name": "x", "warm_start": {"explore": 1.0}}, "warm_start.explore"),
        ({"name": "x", "train": {"keep_checkpoints": 0}}, "train.keep_checkpoints"),
        ({"name": "x", "train": {"seed": -1}}, "train.seed: must be in 0..2**32-1"),
        # issue 8.13: values that crashed later or trained nothing
        ({"name": "x", "train": {"seed": 2**32}}, "train.seed: must be in 0..2**32-1"),
        ({"name": "x", "train": {"eval_seed": 10**30}}, "train.eval_seed: must be in"),
        ({"name": "x", "ppo": {"learning_rate": float("nan")}}, "ppo.learning_rate"),
        (
            {"name": "x", "ppo": {"learning_rate": {"start": math.inf, "end": 0.0, "steps": 9}}},
            "ppo.",
        ),
        (
            {"name": "x", "env": {"reward_scale": float("nan")}},
            "env.reward_scale: must be a finite",
        ),
        ({"name": "x", "ppo": {"max_grad_norm": float("inf")}}, "ppo.max_grad_norm: must be a fin"),
        ({"name": "x", "ppo": {"ent_coef": float("nan")}}, "ppo.ent_coef: must be a finite"),
        ({"name": "x", "ppo": {"vf_coef": "1e999"}}, "ppo.vf_coef: must be a finite"),
        ({"name": "x", "ppo": {"vf_coef": 10**400}}, "ppo.vf_coef: must be a finite"),
        ({"name": "x", "warm_start": {"temperature": float("nan")}}, "warm_start.temperature"),
        ({"name": "x", "ppo": {"target_kl": -0.01}}, "ppo.target_kl: must be > 0"),
        ({"name": "x", "ppo": {"clip_range_vf": -0.2}}, "ppo.clip_range_vf: must be > 0"),
        ({"name": "x", "ppo": {"clip_range_vf": float("nan")}}, "ppo.clip_range_vf"),
        ({"name": "a\0b"}, "name: must be a plain folder name"),
        ({"name": "a\\b"}, "name: must be a plain folder name"),
        ({"name": "a/b"}, "name: must be a plain folder name"),
        ({"name": ".."}, "name: must be a plain folder name"),
        ({"name": "x" * 101}, "name: at most 100 characters"),
        ({"name": "x", "ppo": {"learning_rate": "fast"}}, "ppo.learning_rate: expected"),
        ({"name": "../escape"}, "name:"),
        ({"env": {}}, "name: missing required key"),
    ],
)
def test_bad_values_name_the_key(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(data)
    assert str(err.value).startswith(key.split(":")[0])
    assert key in str(err.value)


def test_finite_message_names_the_problem() -> None:
    with pytest.raises(ConfigError, match=r"env\.reward_scale: must be a finite number"):
        config_from_dict({"name": "x", "env": {"reward_scale": float("nan")}})


def test_unreadable_config_files_name_the_problem(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(latin1)
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r"deep\.yaml"):
        load_config(deep)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path)  # a folder


def test_schedule_and_overrides() -> None:
    data = apply_overrides(
        {"name": "x"},
        [
            "ppo.learning_rate={start: 1.0e-3, end: 0.0, steps: 1000}",
            "env.num_envs=32",
            "train.seed=7",
        ],
    )
    cfg = config_from_dict(data)
    assert isinstance(cfg.ppo.learning_rate, Schedule)
    assert scheduled(cfg.ppo.learning_rate, 0, 10**6) == pytest.approx(1e-3)
    assert scheduled(cfg.ppo.learning_rate, 1000, 10**6) == 0.0
    assert cfg.env.num_envs == 32 and cfg.train.seed == 7
    # YAML 1.1 reads 1e-5 (no dot) as a string; float fields take it as the number it is.
    cfg = config_from_dict(apply_overrides({"name": "x"}, ["ppo.learning_rate=1e-5"]))
    assert cfg.ppo.learning_rate == 1e-5


def test_override_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        apply_overrides({}, ["ppo.learning_rate"])
    path = tmp_path / "c.yaml"
    path.write_text("name: x\n")
    with pytest.raises(ConfigError, match=r"ppo\.n_epochs: expected int"):
        load_config(path, ["ppo.n_epochs=abc"])
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")


def test_bench_overrides_do_not_touch_the_reference_config(monkeypatch) -> None:
    """Issue 9.6: `run_bench` applied --set overrides to a shallow copy of REFERENCE_256,
    writing into the module constant's nested sections."""
    import copy

    from yahtzee_agents.sb3 import bench

    before = copy.deepcopy(bench.REFERENCE_256)
    seen = []
    monkeypatch.setattr(
        bench, "bench_config", lambda cfg, steps, distribution="lean": seen.append(cfg) or {}
    )
    bench.run_bench([], 1, ["env.num_envs=8", "ppo.n_steps=4", "ppo.batch_size=32"])
    assert seen[0].env.num_envs == 8
    assert before == bench.REFERENCE_256
    bench.run_bench([], 1, [])
    assert seen[1].env.num_envs == before["env"]["num_envs"]


def test_train_engine_defaults_to_sb3_and_changes_no_digest():
    """``train.engine`` (issue 59) is left out of the canonical form and of config.yaml while
    ``sb3``: every config hashes as before; ``jax`` is a different recipe's digest."""
    for path in sorted(CONFIGS.glob("*.yaml")):
        cfg = load_config(path)
        if cfg.train.engine == "sb3":
            assert "engine" not in cfg.to_dict()["train"], path.name
            said = load_config(path, ["train.engine=sb3"])
            assert said.digest() == cfg.digest(), path.name
    ppo = load_config(CONFIGS / "ppo.yaml")
    jax = load_config(CONFIGS / "ppo.yaml", ["train.engine=jax"])
    assert jax.to_dict()["train"]["engine"] == "jax" and jax.digest() != ppo.digest()


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("warm_start.teacher=heuristic", "warm_start.teacher"),
        ("ppo.target_kl=0.02", "ppo.target_kl"),
        ("ppo.ent_coef={start: 0.1, end: 0.0, steps: 100}", "ppo.ent_coef"),
        ("engine=torch", "train.engine"),
    ],
)
def test_the_jax_engine_refuses_what_it_does_not_train_by_key(override, key):
    if override.startswith("engine"):
        overrides = [f"train.{override}"]
    else:
        overrides = ["train.engine=jax", override]
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(CONFIGS / "ppo.yaml", overrides)
