"""Several seeds of one training config in parallel, as Ray tasks, and their spread.

    yahtzee train configs/easy.yaml --seeds 0,1,2 [--address ADDR]

Seed ``s`` is the normal run ``runs/<name>-seed<s>`` (the config with ``train.seed: s``).
Each is one Ray task asking for ``train.torch_threads`` CPUs; a task whose worker dies is
retried by Ray and continues the run from its newest checkpoint. The summary (mean, standard
deviation, min and max across seeds of the final and best evaluations) is printed and written
to ``runs/<name>-seeds.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import atomic_write

from .config import ConfigError, RunConfig, config_from_dict


def seed_config(cfg: RunConfig, seed: int) -> RunConfig:
    """``cfg`` with ``train.seed = seed``, named ``<name>-seed<seed>``."""
    data = cfg.to_dict()
    data["name"] = f"{cfg.name}-seed{seed}"
    data["train"]["seed"] = seed
    return config_from_dict(data)


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``: distinct non-negative integers, at least one."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--seeds: expected integers like 0,1,2, got {text!r}") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds: expected distinct non-negative integers, got {text!r}")
    return seeds


def train_one_seed(cfg: RunConfig, run_dir: str, argv: list[str]) -> dict[str, Any]:
    """A Ray task: train (or, when a retry finds the run folder, continue) one seed's run;
    its final and best evaluations."""
    from .run.folder import RunPaths
    from .train import train

    paths = RunPaths(Path(run_dir))
    # Ray owns a worker's signals; a retried task resumes from the newest (exact) checkpoint.
    train(
        cfg,
        paths.root,
        resume=paths.config.exists(),
        progress=False,
        argv=argv,
        handle_signals=False,
    )
    return {
        "seed": cfg.train.seed,
        "run_dir": str(paths.root),
        "final": json.loads(paths.eval_record(paths.final).read_text()),
        "best": json.loads(paths.eval_record(paths.best).read_text()),
    }


def _spread(values: Sequence[float]) -> dict[str, float]:
    x = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(x.mean()),
        "std": float(x.std(ddof=1)) if x.size > 1 else math.nan,
        "min": float(x.min()),
        "max": float(x.max()),
    }


def summarize_seeds(name: str, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean and spread across seeds of the final and best evaluation scores (and regret)."""
    summary: dict[str, Any] = {"name": name, "seeds": [r["seed"] for r in runs], "runs": runs}
    for which in ("final", "best"):
        summary[f"{which}_mean"] = _spread([r[which]["mean"] for r in runs])
        regrets = [r[which].get("regret_per_game") for r in runs]
        if all(v is not None for v in regrets):
            summary[f"{which}_regret"] = _spread(regrets)
    return summary


def format_seeds(summary: dict[str, Any]) -> str:
    lines = [f"{summary['name']}: {len(summary['seeds'])} seeds"]
    for r in summary["runs"]:
        lines.append(
            f"  seed {r['seed']:>4}: final {r['final']['mean']:7.2f}  best {r['best']['mean']:7.2f}"
            f"  ({r['run_dir']})"
        )
    for key in ("final_mean", "best_mean", "final_regret", "best_regret"):
        if key in summary:
            s = summary[key]
            lines.append(
                f"  {key.replace('_', ' '):<12} {s['mean']:7.2f} ± {s['std']:.2f} (std across "
                f"seeds), min {s['min']:.2f}, max {s['max']:.2f}"
            )
    return "\n".join(lines)


def train_seeds(
    cfg: RunConfig,
    seeds: Sequence[int],
    runs_dir: str | Path,
    *,
    address: str | None = None,
    argv: list[str] | None = None,
    max_retries: int = 2,
) -> dict[str, Any]:
    """Train ``cfg`` once per seed, in parallel as Ray tasks (see the module docstring).
    Refuses before starting anything if a seed's run folder already exists."""
    from yahtzee_env.analysis.ray_backend import ray_session

    from .run.folder import RunPaths

    runs_dir = Path(runs_dir).resolve()
    configs = [seed_config(cfg, s) for s in seeds]
    for c in configs:
        if RunPaths(runs_dir / c.name).config.exists():
            raise FileExistsError(f"{runs_dir / c.name} already exists: choose other seeds")
    with ray_session(address) as ray:
        task = ray.remote(train_one_seed).options(
            num_cpus=cfg.train.torch_threads, max_retries=max_retries, retry_exceptions=False
        )
        refs = [task.remote(c, str(runs_dir / c.name), argv or []) for c in configs]
        runs = []
        for ref in refs:
            runs.append(ray.get(ref))
            print(f"seed {runs[-1]['seed']} done: final {runs[-1]['final']['mean']:.2f}")
    summary = summarize_seeds(cfg.name, runs)
    atomic_write(runs_dir / f"{cfg.name}-seeds.json", json.dumps(summary, indent=2) + "\n")
    return summary
