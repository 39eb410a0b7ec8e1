"""Throughput of the JAX env and of PPO in JAX (issue 51), beside the numpy vector env and SB3,
in one run on this machine:

    python experiments/bench_jax.py --json out/bench_jax.json

* JAX env: `yahtzee_env.jax.random_rollout` (random legal actions, autoreset, vmapped over
  the batch and scanned over the steps: one compiled program), at batch sizes 1 .. 65,536.
* numpy vector env: `yahtzee_env.analysis.bench.bench_vector` (random legal actions + step),
  the same batch sizes.
* PPO in JAX: `yahtzee_agents.jax.ppo.throughput` with configs/ppo.yaml's recipe at each
  batch (games played at once); n_steps 32, or fewer where one update would exceed
  --max-update-steps (the table says which).
* SB3: `yahtzee_agents.sb3.bench.bench_config` (MaskablePPO on the numpy vector env, the same
  recipe, 512 games as configs/ppo.yaml).

Compile time (tracing + XLA) is reported apart from the env-steps a second. Every figure is
one timed run after compilation; the machine may be shared (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

DEFAULT_BATCHES = [1, 16, 256, 4096, 65536]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=DEFAULT_BATCHES)
    parser.add_argument("--env-steps", type=int, default=2_000_000,
                        help="env-steps timed per JAX/numpy env batch size (at least 100 steps "
                        "of the batch)")  # fmt: skip
    parser.add_argument(
        "--ppo-steps",
        type=int,
        default=200_000,
        help="env-steps timed per PPO batch size (at least one update)",
    )
    parser.add_argument(
        "--max-update-steps",
        type=int,
        default=262_144,
        help="cap on one PPO update's env-steps (n_steps is lowered to fit)",
    )
    parser.add_argument("--sb3-steps", type=int, default=131_072)
    parser.add_argument("--config", default="configs/ppo.yaml")
    parser.add_argument("--skip", nargs="*", default=[], choices=["numpy", "ppo", "sb3"])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    import jax

    from yahtzee_env.analysis.bench import bench_vector
    from yahtzee_env.jax import Yahtzee, random_rollout

    rows = []
    machine = {
        "backend": jax.default_backend(),
        "device": jax.devices()[0].device_kind,
        "jax": jax.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }
    print(f"# {machine}", flush=True)
    env = Yahtzee("official")
    rollout = jax.jit(random_rollout, static_argnums=(0, 2, 3))
    for n in args.batches:
        steps = max(100, -(-args.env_steps // n))
        key = jax.random.key(0)
        t0 = time.perf_counter()
        compiled = rollout.lower(env, key, n, steps).compile()
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(key))
        seconds = time.perf_counter() - t0
        rows.append({"what": "JAX env (random rollout)", "batch": n, "steps": n * steps,
                     "steps_per_s": n * steps / seconds, "compile_s": compile_s})  # fmt: skip
        print(rows[-1], flush=True)
        if "numpy" not in args.skip:
            sampled, _, timed = bench_vector(n, min(args.env_steps, 2000 * n), seed=0, repeats=1)
            rows.append({"what": "numpy vector env (random)", "batch": n, "steps": timed,
                         "steps_per_s": sampled, "compile_s": None})  # fmt: skip
            print(rows[-1], flush=True)
    if "ppo" not in args.skip:
        from yahtzee_agents.config import load_config
        from yahtzee_agents.jax.ppo import throughput

        for n in args.batches:
            n_steps = max(1, min(32, args.max_update_steps // n))
            batch = n * n_steps
            overrides = [f"env.num_envs={n}", f"ppo.n_steps={n_steps}",
                         f"ppo.batch_size={min(4096, batch)}"]  # fmt: skip
            cfg = load_config(args.config, overrides)
            result = throughput(cfg, args.ppo_steps)
            rows.append({"what": "PPO in JAX (ppo.yaml recipe)", "batch": n, "n_steps": n_steps,
                         "steps": result["steps"], "steps_per_s": result["steps_per_s"],
                         "compile_s": result["compile_s"]})  # fmt: skip
            print(rows[-1], flush=True)
    if "sb3" not in args.skip:
        from yahtzee_agents.config import load_config
        from yahtzee_agents.sb3.bench import bench_config

        cfg = load_config(args.config)
        result = bench_config(cfg, args.sb3_steps)
        rows.append({"what": "SB3 MaskablePPO (ppo.yaml recipe)", "batch": cfg.env.num_envs,
                     "n_steps": cfg.ppo.n_steps, "steps": result["steps"],
                     "steps_per_s": result["steps_per_second"], "compile_s": None})  # fmt: skip
        print(rows[-1], flush=True)
    machine["load_average_at_end"] = os.getloadavg()
    print()
    print("| what | batch | env-steps/s | compile (s) | env-steps timed |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        what = r["what"] + (f", n_steps {r['n_steps']}" if r.get("n_steps") not in (None, 32)
                            else "")  # fmt: skip
        compile_s = "" if r["compile_s"] is None else f"{r['compile_s']:.1f}"
        print(f"| {what} | {r['batch']:,} | {r['steps_per_s']:,.0f} | {compile_s} | "
              f"{r['steps']:,} |")  # fmt: skip
    print(f"\nload average: start {machine['load_average_at_start']}, "
          f"end {machine['load_average_at_end']}")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
