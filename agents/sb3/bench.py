"""Training throughput: env steps per second of MaskablePPO on the native vector env, end to
end (rollout collection + gradient updates), for a config and a network size."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

from ..config import RunConfig, apply_overrides, config_from_dict, load_config

DISTRIBUTIONS = ("lean", "sb3")  # the training's own (agents/sb3/distribution.py), sb3-contrib's


def bench_config(cfg: RunConfig, timesteps: int, distribution: str = "lean") -> dict[str, Any]:
    """Time ``timesteps`` env steps of PPO (no warm start, evaluation or checkpoints), with the
    lean masked distribution that training uses or (``"sb3"``) sb3-contrib's own, as before.
    The start (the env and the model built, one rollout and its update as a warm-up: SB3
    compiles nothing) is timed apart, as ``start_s``."""
    import torch
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

    from .train import build_model, make_env

    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, not {distribution!r}")
    torch.set_num_threads(cfg.train.torch_threads)
    t0 = time.perf_counter()
    env = make_env(cfg, seed=cfg.train.seed)
    model = build_model(cfg, env, tb_dir=None)
    if distribution == "sb3":
        dim = model.policy.action_dist.action_dim
        model.policy.action_dist = MaskableCategoricalDistribution(dim)
    rollout = cfg.ppo.n_steps * cfg.env.num_envs
    model.learn(total_timesteps=rollout)  # warm-up: first rollout, allocations
    start_s = time.perf_counter() - t0
    start_steps, t0 = model.num_timesteps, time.perf_counter()
    model.learn(total_timesteps=timesteps, reset_num_timesteps=False)
    seconds = time.perf_counter() - t0
    steps = model.num_timesteps - start_steps
    env.close()
    return {
        "config": cfg.name,
        "net_arch": cfg.policy.net_arch,
        "num_envs": cfg.env.num_envs,
        "n_steps": cfg.ppo.n_steps,
        "batch_size": cfg.ppo.batch_size,
        "n_epochs": cfg.ppo.n_epochs,
        "torch_threads": cfg.train.torch_threads,
        "distribution": distribution,
        "steps": steps,
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "start_s": start_s,
    }


REFERENCE_256 = {
    "name": "bench-256x256",
    "env": {"num_envs": 512, "canonical_holds": True},
    "policy": {"net_arch": [256, 256]},
    "ppo": {"n_steps": 32, "batch_size": 4096, "n_epochs": 2},
}


def run_bench(
    configs: list[Path],
    timesteps: int,
    overrides: list[str],
    threads: list[int] | None = None,
    repeats: int = 1,
    reference: bool = True,
    setups: list[tuple[int | None, str]] | None = None,
) -> list[dict[str, Any]]:
    """Measure the reference setup (unless ``reference`` is False) and each config.

    With ``threads`` (e.g. ``[1, 2]``), each config is measured at each torch thread count,
    ``repeats`` times, the counts interleaved (1, 2, 1, 2, ...) so that a change in the
    machine's load falls on both sides of the A/B; every measurement is one result row.
    ``setups`` (``[(threads, distribution), ...]``, threads None for the config's) does the
    same for any list of thread counts and distributions, e.g. ``[(1, "sb3"), (2, "lean")]``:
    before and after."""
    # A deep copy: overrides write into nested sections, which must not be the constant's.
    cfgs = [config_from_dict(apply_overrides(copy.deepcopy(REFERENCE_256), overrides))]
    cfgs = (cfgs if reference else []) + [load_config(path, overrides) for path in configs]
    if setups and threads:
        raise ValueError("give threads or setups, not both")
    results = []
    for cfg in cfgs:
        own = cfg.train.torch_threads
        plan = setups or [(n, "lean") for n in threads or [own]]
        for _ in range(repeats):
            for n, distribution in plan:
                cfg.train.torch_threads = own if n is None else n
                results.append(bench_config(cfg, timesteps, distribution))
    return results
