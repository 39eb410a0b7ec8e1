"""Schedules mean what they say (issue 21.2): a schedule's length is written in env-steps,
so changing train.total_timesteps never rescales it, and extending a run continues it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from yahtzee_agents.config import (
    ConfigError,
    Schedule,
    apply_overrides,
    config_from_dict,
    load_config,
)
from yahtzee_agents.run.schedule import StepSchedule

ROOT = Path(__file__).resolve().parents[1]
PPO = ROOT / "configs" / "ppo.yaml"


def _sb3_progress(step: int, total: int) -> float:
    """What SB3 passes a schedule (`BaseAlgorithm._update_current_progress_remaining`)."""
    return 1.0 - float(step) / float(total)


def _lr_at(cfg, step: int) -> float:
    total = cfg.train.total_timesteps
    return StepSchedule(cfg.ppo.learning_rate, total)(_sb3_progress(step, total))


def test_ppo_yaml_keeps_its_meaning() -> None:
    """configs/ppo.yaml: the same rate at every step as before schedules had a length
    (1e-3 -> 1e-5 linear over its own 40 M steps: end + (start - end) * progress)."""
    cfg = load_config(PPO)
    total = cfg.train.total_timesteps
    assert cfg.ppo.learning_rate == Schedule(1e-3, 1e-5, 40_000_000)
    for step in [*np.linspace(0, total, 101).astype(int).tolist(), 1_000_000, 16_384]:
        before = 1e-5 + (1e-3 - 1e-5) * _sb3_progress(step, total)
        assert _lr_at(cfg, step) == pytest.approx(before, rel=1e-9, abs=1e-15)


def test_changing_total_timesteps_does_not_rescale() -> None:
    """The issue's example: --set train.total_timesteps=2000000 gave lr 5.05e-4 at 1 M (the
    schedule squeezed into 2 M steps); now 9.7525e-4, the same as the 40 M run's."""
    short = load_config(PPO, ["train.total_timesteps=2000000"])
    full = load_config(PPO)
    assert _lr_at(short, 1_000_000) == pytest.approx(9.7525e-4, rel=1e-9)
    for step in (0, 1, 500_000, 1_000_000, 2_000_000):
        assert _lr_at(short, step) == pytest.approx(_lr_at(full, step), rel=1e-9)


def test_extending_a_run_continues_without_a_jump() -> None:
    """Extending a finished 40 M run to 60 M: the rate at 40 M is the same as where the run
    stopped (1e-5; it used to jump to 4.22e-5), and stays at the end value after."""
    done = load_config(PPO)
    longer = load_config(PPO, ["train.total_timesteps=60000000"])
    assert _lr_at(longer, 40_000_000) == pytest.approx(_lr_at(done, 40_000_000), rel=1e-9)
    assert _lr_at(longer, 40_000_000) == pytest.approx(1e-5, rel=1e-9)
    assert _lr_at(longer, 55_000_000) == pytest.approx(1e-5, rel=1e-9)


def test_following_total_timesteps_is_explicit_and_cannot_be_extended() -> None:
    from yahtzee_agents.run.folder import check_extension

    stretch = ["ppo.learning_rate={start: 1.0e-3, end: 0.0, steps: total_timesteps}"]
    a = config_from_dict(apply_overrides({"name": "x"}, [*stretch, "train.total_timesteps=1000"]))
    b = config_from_dict(apply_overrides({"name": "x"}, [*stretch, "train.total_timesteps=2000"]))
    assert _lr_at(a, 500) == pytest.approx(5e-4) and _lr_at(b, 1000) == pytest.approx(5e-4)
    with pytest.raises(ConfigError, match=r"ppo\.learning_rate\.steps: the schedule follows"):
        check_extension(a, b)
    check_extension(a, a)  # resuming at the same length is fine
    fixed = load_config(PPO)
    check_extension(fixed, load_config(PPO, ["train.total_timesteps=60000000"]))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{start: 1.0e-3, end: 1.0e-5}", r"ppo\.learning_rate\.steps: missing required key"),
        ("{start: 1.0e-3, end: 1.0e-5, steps: 0}", r"ppo\.learning_rate\.steps: must be > 0"),
        ("{start: 1.0e-3, end: 1.0e-5, steps: all}", r"ppo\.learning_rate\.steps: expected"),
        ("{start: 1.0e-3, end: 1.0e-5, steps: 10, shape: cos}", r"ppo\.learning_rate\.shape"),
        ("{start: -1.0, end: 1.0e-5, steps: 10}", r"ppo\.learning_rate\.start: must be >= 0"),
    ],
)
def test_schedule_errors_name_the_key(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_dict(apply_overrides({"name": "x"}, [f"ppo.learning_rate={value}"]))


def test_a_shorter_run_trains_the_same_first_steps(tmp_path: Path) -> None:
    """End to end through SB3: a 1,024-step and a 2,048-step run of the same config, schedule
    over 4,096 steps, have the same optimizer rate and the same weights at step 1,024 (with a
    schedule that follows total_timesteps they would differ: checked too)."""
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.sb3.train import weights_sha256
    from yahtzee_agents.train import train

    torch.set_num_threads(1)
    tiny = ROOT / "configs" / "tiny.yaml"

    def at_1024(total: int, steps: str) -> tuple[float, str]:
        cfg = load_config(
            tiny,
            [
                f"ppo.learning_rate={{start: 1.0e-3, end: 1.0e-5, steps: {steps}}}",
                f"train.total_timesteps={total}",
                "train.eval_interval=0",
                "warm_start.teacher=none",
            ],
        )
        cfg.name = f"t{total}-{steps}"
        run = train(cfg, tmp_path / cfg.name, progress=False, argv=["test"])
        model = MaskablePPO.load(run / "checkpoints" / "ckpt_1024.zip", device="cpu")
        return model.policy.optimizer.param_groups[0]["lr"], weights_sha256(model)

    short, long = at_1024(1024, "4096"), at_1024(2048, "4096")
    assert short == long
    # the last update before step 1,024 ran at step 1,024: lr = 1e-3 - (1e-3 - 1e-5) / 4
    assert short[0] == pytest.approx(1e-3 - (1e-3 - 1e-5) * 1024 / 4096, rel=1e-6)
    assert at_1024(1024, "total_timesteps")[0] != at_1024(2048, "total_timesteps")[0]


def test_entropy_coefficient_follows_its_schedule(tmp_path: Path) -> None:
    """`ppo.ent_coef` may be a schedule over env-steps (a late-phase lever of issue 22): the
    update after the rollout ending at step n uses its value at n, and it is saved with the
    checkpoint (so a resumed run carries on from there)."""
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.train import train

    torch.set_num_threads(1)
    cfg = load_config(
        ROOT / "configs" / "tiny.yaml",
        [
            "ppo.ent_coef={start: 0.1, end: 0.0, steps: 2048}",
            "train.eval_interval=0",
            "warm_start.teacher=none",
        ],
    )
    assert cfg.ppo.ent_coef == Schedule(0.1, 0.0, 2048)
    run = train(cfg, tmp_path / "ent", progress=False, argv=["test"])
    model = MaskablePPO.load(run / "checkpoints" / "ckpt_1024.zip", device="cpu")
    assert model.ent_coef == pytest.approx(0.05)
    final = MaskablePPO.load(run / "checkpoints" / "ckpt_2048.zip", device="cpu")
    assert final.ent_coef == pytest.approx(0.0)
    with pytest.raises(ConfigError, match=r"ppo\.ent_coef\.start"):
        load_config(ROOT / "configs" / "tiny.yaml", ["ppo.ent_coef={start: -1, end: 0, steps: 5}"])
