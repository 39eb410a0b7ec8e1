"""Experiment tracking as CleanRL does it (``yahtzee train CONFIG --track``): a Weights &
Biases run that mirrors the run's TensorBoard scalars (``sync_tensorboard``), with the
resolved config and the run folder's name. Needs the ``track`` extra.

The default mode is ``offline``: the run is written under ``RUN_DIR/wandb/`` and uploaded
later with ``wandb sync RUN_DIR/wandb/offline-run-*`` (nothing leaves the machine during
training); ``online`` needs ``wandb login`` first.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def wandb_run(
    cfg: Any, run_dir: str | Path, *, project: str = "yahtzee-rl", mode: str = "offline"
) -> Iterator[Any]:
    """A W&B run for the block, syncing the TensorBoard scalars written inside it."""
    import wandb

    if mode not in ("offline", "online"):
        raise ValueError(f"--track-mode must be offline or online, got {mode!r}")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = wandb.init(
        project=project,
        name=cfg.name,
        dir=str(run_dir),
        config=dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) else dict(cfg),
        sync_tensorboard=True,
        mode=mode,
        save_code=False,
    )
    try:
        yield run
    finally:
        run.finish()
