"""The runs that span sessions (issue 22): each folder of checkpoints/ holds one exact
checkpoint (its SB3 zip and its state file), at most ~3 MB (~8 MB for a run at a table, with
its pool of past selves), with the run's config, metadata and evaluations, and the state
file says the same step count as the checkpoint's name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from yahtzee_agents.config import config_from_dict

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted(p for p in (ROOT / "checkpoints").iterdir() if p.is_dir())


def test_there_is_a_readme_row_per_run() -> None:
    readme = (ROOT / "checkpoints" / "README.md").read_text()
    for run in RUNS:
        assert f"| `{run.name}` |" in readme, run.name


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_one_small_exact_checkpoint(run: Path) -> None:
    import yaml

    zips = sorted((run / "checkpoints").glob("ckpt_*.zip"))
    assert len(zips) == 1, "one checkpoint per run: replace it, never add"
    steps = int(zips[0].stem.removeprefix("ckpt_"))
    state = zips[0].with_name(zips[0].stem + ".state.npz")
    size = sum(p.stat().st_size for p in run.rglob("*") if p.is_file())
    cfg = config_from_dict(yaml.safe_load((run / "config.yaml").read_text()))
    # a run at a table (configs/win.yaml) carries its pool of past selves in the state file:
    # up to 8 networks beside its own
    limit = 8_000_000 if cfg.versus is not None else 3_200_000
    assert size < limit, f"{run.name}: {size:,} bytes (at most {limit:,} for this run)"
    with np.load(state, allow_pickle=False) as data:
        facts = json.loads(str(data["facts"]))
    assert facts["timesteps"] == steps
    assert cfg.name == run.name and cfg.teacher == "none"
    assert steps < cfg.train.total_timesteps  # not finished (else the folder goes)
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    assert evals and evals[-1]["timesteps"] <= steps
    meta = json.loads((run / "meta.json").read_text())
    assert meta["environment"]["cpu"] and meta["sessions"]


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_the_checkpoint_loads_as_a_resume_loads_it(run: Path) -> None:
    """The SB3 engine loads each checkpoint with nothing left unread: one written before
    `StepSchedule` moved to `yahtzee_agents.run.schedule` names it in its old module."""
    pytest.importorskip("sb3_contrib")
    import warnings

    from yahtzee_agents.run.folder import RunPaths, load_run_config
    from yahtzee_agents.sb3.train import load_checkpoint, make_env

    cfg = load_run_config(run)
    ckpt = RunPaths(run).latest_checkpoint()
    env = make_env(cfg, seed=cfg.train.seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "Could not deserialize object ..."
            model = load_checkpoint(cfg, ckpt, env)
    finally:
        env.close()
    assert model.num_timesteps == int(ckpt.stem.removeprefix("ckpt_"))
    assert model.learning_rate(0.5) == pytest.approx(model.lr_schedule(0.5))
