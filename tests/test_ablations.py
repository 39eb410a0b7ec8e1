"""experiments/ablations.sh: one run per variant and seed, each with its lever set, and a
second call continues (a finished run is left as it is)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "ablations.sh"


def run(tmp_path: Path, *variants: str, **extra: str) -> subprocess.CompletedProcess:
    yahtzee = shutil.which("yahtzee", path=str(Path(sys.executable).parent)) or "yahtzee"
    env = {
        **os.environ,
        "CONFIG": "configs/tiny.yaml",
        "STEPS": "1024",
        "SEEDS": "3",
        "JOBS": "2",
        "RUNS": str(tmp_path / "abl"),
        "YAHTZEE": yahtzee,
        **extra,
    }
    return subprocess.run(
        ["bash", str(SCRIPT), *variants], env=env, capture_output=True, text=True, timeout=600
    )


def test_each_variant_sets_its_lever_and_continues(tmp_path):
    import yaml

    out = run(tmp_path, "lambda-0.9", "holds-32")
    assert out.returncode == 0, out.stdout + out.stderr
    lam = yaml.safe_load((tmp_path / "abl" / "abl-lambda-0.9-s3" / "config.yaml").read_text())
    holds = yaml.safe_load((tmp_path / "abl" / "abl-holds-32-s3" / "config.yaml").read_text())
    assert lam["ppo"]["gae_lambda"] == 0.9 and lam["env"]["canonical_holds"] is True
    assert holds["env"]["canonical_holds"] is False and holds["ppo"]["gae_lambda"] == 0.95
    assert lam["train"]["seed"] == 3 and lam["train"]["total_timesteps"] == 1024
    final = tmp_path / "abl" / "abl-lambda-0.9-s3" / "final" / "eval.json"
    before = final.read_bytes()
    again = run(tmp_path, "lambda-0.9")
    assert again.returncode == 0, again.stdout + again.stderr
    assert final.read_bytes() == before  # finished: left as it was
    unknown = run(tmp_path, "nonsense")
    assert unknown.returncode == 2 and "unknown variant 'nonsense'" in unknown.stderr


def test_base_overrides_come_before_the_lever(tmp_path):
    """Issue 52's stall levers run on the strict λ 0.9 schedule: BASE's overrides reach every
    run, and the variant's lever is set on top of them."""
    import yaml

    base = "ppo.gae_lambda=0.9 ppo.n_epochs=2"  # tiny.yaml's rate has no schedule
    out = run(tmp_path, "ent-0.06", "vf-clip", BASE=base)
    assert out.returncode == 0, out.stdout + out.stderr
    ent = yaml.safe_load((tmp_path / "abl" / "abl-ent-0.06-s3" / "config.yaml").read_text())
    clip = yaml.safe_load((tmp_path / "abl" / "abl-vf-clip-s3" / "config.yaml").read_text())
    for cfg in (ent, clip):
        assert cfg["ppo"]["gae_lambda"] == 0.9
        assert cfg["ppo"]["n_epochs"] == 2
    assert ent["ppo"]["ent_coef"] == 0.06 and ent["ppo"]["clip_range_vf"] is None
    assert clip["ppo"]["clip_range_vf"] == 0.2


def variants() -> dict[str, list[str]]:
    """The script's VARIANTS table: name -> its --set overrides."""
    import re

    body = SCRIPT.read_text().split("declare -A VARIANTS=(", 1)[1].split("\n)", 1)[0]
    return {m[1]: m[2].split() for m in re.finditer(r'\[([\w.+-]+)\]="([^"]*)"', body)}


@pytest.mark.parametrize("lever", ["features", "shaping", "canonical-holds"])
def test_each_strict_lever_is_one_aid_of_the_recipe(lever):
    """Issue 34's one-lever table: each lever, on configs/ppo-strict.yaml, changes exactly one
    field of the env, to the recipe's (configs/ppo.yaml) value of that field."""
    from dataclasses import asdict

    from yahtzee_agents.config import load_config

    strict = asdict(load_config(ROOT / "configs" / "ppo-strict.yaml").env)
    recipe = asdict(load_config(ROOT / "configs" / "ppo.yaml").env)
    levered = asdict(load_config(ROOT / "configs" / "ppo-strict.yaml", variants()[lever]).env)
    changed = {k for k in strict if strict[k] != levered[k]}
    assert len(changed) == 1, changed
    (key,) = changed
    assert levered[key] == recipe[key] != strict[key]
    # the three levers together are the recipe's env: nothing else separates the two tracks
    if lever == "features":
        sets = [s for x in ("features", "shaping", "canonical-holds") for s in variants()[x]]
        assert asdict(load_config(ROOT / "configs" / "ppo-strict.yaml", sets).env) == recipe
