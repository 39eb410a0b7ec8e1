"""Loading SB3 MaskablePPO checkpoints as numpy policies: the training package's side of
`yahtzee_env.policies.resolve.resolve_policy`. The core finds `load_sb3_policy` through the
``yahtzee_env.model_loaders`` entry point (pyproject.toml), never by importing this package.

    from yahtzee_agents.sources import load_sb3_policy

    policy = load_sb3_policy("runs/hard")  # a run folder (its best model) or a model.zip
"""

from __future__ import annotations

import os
from pathlib import Path

from yahtzee_env.game.rules import RuleSet
from yahtzee_env.policies.checkpoints import check_sb3_zip
from yahtzee_env.policies.models import MLPPolicy, ModelFormatError, RulesMismatchError


def _run_folder_of(path: Path) -> Path | None:
    """The run folder holding ``path`` (a model.zip in best/, final/ or checkpoints/)."""
    for folder in (path, path.parent, path.parent.parent):
        if (folder / "config.yaml").is_file():
            return folder
    return None


def load_sb3_policy(path: str | os.PathLike, rules: RuleSet | str | None = None) -> MLPPolicy:
    """The numpy policy of an SB3 MaskablePPO checkpoint: a ``.zip``, or a run folder (its
    best model). The run's config (when the zip lies in a run folder) gives the rules, which
    are checked against ``rules``, and the holds mode. The zip is checked before torch reads
    a byte of it (`yahtzee_env.policies.checkpoints.check_sb3_zip`)."""
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.export import numpy_policy
    from yahtzee_agents.train import load_run_config

    path = Path(path)
    run = _run_folder_of(path) if path.is_dir() or path.suffix == ".zip" else None
    if path.is_dir():
        if run is None:
            raise ModelFormatError(f"{path}: not a run folder (no config.yaml)")
        zip_path = run / "best" / "model.zip"
        if not zip_path.exists():
            zip_path = run / "final" / "model.zip"
    else:
        zip_path = path
    check_sb3_zip(zip_path)
    if run is None:  # issue 16.2: the input version comes from the config, never the width
        raise ModelFormatError(
            f"{path}: no run folder (config.yaml) around it: its rules, holds mode and "
            "network-input version are unknown; give the run folder or a zip inside it"
        )
    cfg = load_run_config(run)
    canonical, name, trained_rules = cfg.env.canonical_holds, cfg.name, cfg.env.rules
    threshold = RuleSet.from_spec(cfg.env.rules).upper_bonus_threshold
    if rules is not None and RuleSet.from_spec(rules) != RuleSet.from_spec(cfg.env.rules):
        raise RulesMismatchError(
            f"{path}: model trained for rules {cfg.env.rules!r}, asked to play "
            f"{RuleSet.from_spec(rules).name!r}"
        )
    try:
        model = MaskablePPO.load(zip_path, device="cpu")
    except Exception as err:  # torch/SB3 raise many types on a damaged file
        raise ModelFormatError(
            f"{zip_path}: cannot load the model ({type(err).__name__}: {str(err)[:200]})"
        ) from None
    policy = numpy_policy(
        model, name, canonical, threshold, input_version=cfg.env.observation_version
    )
    policy.trained_rules = trained_rules
    return policy


__all__ = ["load_sb3_policy"]
