"""Training throughput of both engines side by side, on one recipe, in one run on this machine.

    OPENBLAS_NUM_THREADS=1 python experiments/bench_train.py --json out/bench_train.json

Each engine (``--engines``: sb3, jax) at each core count (``--cores``: 1, 2) is one
measurement in a fresh process pinned to that many CPUs (the first of ``--cpus``, by default
every CPU this process may use; a count above them is reported as not measured):
`yahtzee_agents.train.throughput`, PPO end to end (rollouts and updates; no evaluation,
checkpoint or warm start) on the recipe of ``--config`` (default ``ppo-strict``: the strict
track, at configs/ppo.yaml's batch: 512 games x 32 steps, minibatches of 4,096, 3 epochs),
torch with as many threads as cores (sb3), XLA's threads on the CPUs it is pinned to (jax).

Reported: env-steps a second, the start apart (jax: tracing and XLA compilation; sb3: the
model built and one warm-up rollout, nothing compiled), and the hours 120 M env-steps take at
that rate, the strict recipe's run to 250 (the target: within one hour on a 2-core machine).
The load average before and after is printed: a core busy with other work slows what is
pinned to it.

SB3 alone, in this process, as before (the reference setup, then each config; issue 22.5):

    python experiments/bench_train.py --threads 1,2 --repeats 4 --config configs/ppo.yaml
    python experiments/bench_train.py --setups 1:sb3,2:lean --no-reference --config ...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

TARGET_STEPS = 120_000_000  # the strict recipe's run to 250 (docs/learning.md)
TARGET_HOURS = 1.0
RESULT = "bench_train result: "  # the line a measuring process answers with


def parse_setups(text: str) -> list[tuple[int, str]]:
    from yahtzee_agents.sb3.bench import DISTRIBUTIONS

    setups = []
    for item in text.split(","):
        threads, _, distribution = item.partition(":")
        if not threads.isdigit() or int(threads) < 1 or distribution not in DISTRIBUTIONS:
            raise argparse.ArgumentTypeError(
                f"{item!r}: expected THREADS:DISTRIBUTION, threads a positive number and "
                f"distribution one of {', '.join(DISTRIBUTIONS)}"
            )
        setups.append((int(threads), distribution))
    return setups


def _numbers(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,2, got {text!r}") from None


# ------------------------------------------------------------------ one measurement
def measure_here(engine: str, cpus: list[int], config: str, steps: int, sets: list[str]):
    """One measurement in this process, pinned to ``cpus`` first (before torch or XLA start
    their threads)."""
    os.sched_setaffinity(0, cpus)
    from yahtzee_agents.config import ConfigError, load_config
    from yahtzee_agents.shipped import resolve_config
    from yahtzee_agents.train import missing_engine_module, throughput

    missing = missing_engine_module(engine)
    if missing is not None:
        return {"not_measured": f"{missing} is not installed"}
    overrides = [*sets, f"train.engine={engine}", f"train.torch_threads={len(cpus)}"]
    try:
        cfg = load_config(resolve_config(config), overrides)
    except ConfigError as err:  # e.g. a teacher, which the JAX engine does not train
        return {"not_measured": f"refused: {err}"}
    return {**throughput(cfg, steps), "batch": cfg.env.num_envs * cfg.ppo.n_steps}


def measure(engine: str, cpus: list[int], args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in a fresh process (its compilation and caches its own)."""
    command = [sys.executable, __file__, "--measure", engine, "--cpus", ",".join(map(str, cpus)),
               "--config", str(args.config[0]), "--timesteps", str(args.timesteps)]  # fmt: skip
    for override in args.set:
        command += ["--set", override]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    answer = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not answer:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"not_measured": f"failed (exit {done.returncode}): {' / '.join(tail)}"}
    return json.loads(answer[-1].removeprefix(RESULT))


def side_by_side(args: argparse.Namespace) -> dict[str, Any]:
    cpus = args.cpus or sorted(os.sched_getaffinity(0))
    machine = {
        "cpu": platform.processor() or platform.machine(),
        "cpus_given": cpus,
        "cores_on_the_machine": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }
    print(f"# {machine}", flush=True)
    rows = []
    for engine in args.engines:
        for cores in args.cores:
            row = {"engine": engine, "cores": cores, "cpus": cpus[:cores]}
            if cores > len(cpus):
                row.update(cpus=[], not_measured=f"only {len(cpus)} CPU(s) given (--cpus)")
            else:
                row.update(measure(engine, cpus[:cores], args))
            if "steps_per_s" in row:
                row["target_hours"] = TARGET_STEPS / row["steps_per_s"] / 3600
            rows.append(row)
            print(rows[-1], flush=True)
    machine["load_average_at_end"] = os.getloadavg()
    return {"config": str(args.config[0]), "timesteps": args.timesteps, "machine": machine,
            "rows": rows}  # fmt: skip


def table(result: dict[str, Any]) -> str:
    lines = [
        f"recipe: {result['config']}; 120 M env-steps: the strict run to 250 (target "
        f"{TARGET_HOURS:g} h)",
        "",
        "| engine | cores (CPUs) | env-steps/s | start (s) | 120 M env-steps | steps timed |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        where = f"{r['cores']} ({','.join(map(str, r['cpus'])) or '-'})"
        if "not_measured" in r:
            lines.append(f"| {r['engine']} | {where} | not measured: {r['not_measured']} | | | |")
            continue
        lines.append(
            f"| {r['engine']} | {where} | {r['steps_per_s']:,.0f} | {r['start_s']:.1f} | "
            f"{r['target_hours']:.2f} h | {r['steps']:,} |"
        )
    machine = result["machine"]
    lines.append(
        f"\nload average: start {machine['load_average_at_start']}, "
        f"end {machine['load_average_at_end']}"
    )
    return "\n".join(lines)


# ------------------------------------------------------------------ SB3 alone, A/B
def sb3_ab(args: argparse.Namespace) -> list[dict[str, Any]]:
    from yahtzee_agents.sb3.bench import run_bench

    configs = [Path(c) for c in args.config]
    results = run_bench(configs, args.timesteps, args.set, args.threads, args.repeats,
                        not args.no_reference, args.setups)  # fmt: skip
    for r in results:
        print(
            f"{r['config']:<16} net {r['net_arch']} envs {r['num_envs']} n_steps {r['n_steps']} "
            f"batch {r['batch_size']} epochs {r['n_epochs']} threads {r['torch_threads']} "
            f"{r['distribution']}: "
            f"{r['steps_per_second']:,.0f} env-steps/s ({r['steps']:,} steps, "
            f"{r['seconds']:.1f} s)"
        )
    return results


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", default=[],
                        help="the recipe (a shipped config's name or a path; default "
                        "ppo-strict); the SB3 A/B takes several")  # fmt: skip
    parser.add_argument("--timesteps", type=int, default=200_000,
                        help="env-steps timed per measurement (at least one update)")  # fmt: skip
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override applied to every config measured")  # fmt: skip
    parser.add_argument("--engines", type=lambda s: s.split(","), default=["sb3", "jax"])
    parser.add_argument("--cores", type=_numbers, default=[1, 2],
                        help="core counts to measure each engine at (default 1,2)")  # fmt: skip
    parser.add_argument("--cpus", type=_numbers, default=None,
                        help="the CPUs to pin to, in order (default: all this process may "
                        "use); N cores are the first N")  # fmt: skip
    parser.add_argument("--json", type=Path)
    ab = parser.add_argument_group("SB3 alone, in this process (an A/B of its settings)")
    ab.add_argument("--threads", type=_numbers,
                    help="torch thread counts to compare, e.g. 1,2 (interleaved)")  # fmt: skip
    ab.add_argument("--setups", type=parse_setups,
                    help="THREADS:DISTRIBUTION settings to compare, interleaved, e.g. "
                    "1:sb3,2:lean (sb3: sb3-contrib's masked distribution)")  # fmt: skip
    ab.add_argument("--repeats", type=int, default=1, help="measurements per setting")
    ab.add_argument("--no-reference", action="store_true", help="skip the reference setup")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # one measurement, in a child
    args = parser.parse_args(argv)
    if args.repeats < 1 or any(n < 1 for n in [*(args.threads or []), *args.cores]):
        parser.error("--repeats, --threads and --cores must be positive")
    if args.threads and args.setups:
        parser.error("give --threads or --setups, not both")
    if unknown := set(args.engines) - {"sb3", "jax"}:
        parser.error(f"--engines: unknown {', '.join(sorted(unknown))} (sb3, jax)")
    if args.measure is not None:
        result = measure_here(args.measure, args.cpus, args.config[0], args.timesteps, args.set)
        print(RESULT + json.dumps(result), flush=True)
        return result
    if args.threads or args.setups:
        result: Any = sb3_ab(args)
    else:
        if len(args.config) > 1:
            parser.error("give one --config: the engines are measured on one recipe")
        args.config = args.config or ["ppo-strict"]
        result = side_by_side(args)
        print()
        print(table(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
