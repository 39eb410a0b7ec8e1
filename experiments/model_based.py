"""The model-based reward-only baseline (`yahtzee_agents.model_based`): learn the value of
turn-start states from played games, play each turn by exact expectimax through the rules.

    OPENBLAS_NUM_THREADS=1 python experiments/model_based.py --games 100000 --seed 0 \
        --run-dir runs/model-based-s0

Writes ``curve.jsonl`` (one row per evaluation: games, env-steps, learning seconds, eval mean,
regret), ``config.json`` and ``value.npz`` (+ ``.json``) to the run folder. The solver only
grades the evaluations. ``--grade VALUE.npz [--json ROW.json]`` grades a learned agent by the
benchmark protocol instead (`yahtzee_env.benchmark`: 10,000 games, seed 0):

    python experiments/model_based.py --grade docs/model_based/value-s0.npz
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import fields
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from yahtzee_agents.model_based import ModelBasedConfig, learn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(ModelBasedConfig):
        if f.name == "hidden":
            parser.add_argument("--hidden", type=lambda s: [int(x) for x in s.split(",")])
            continue
        kind = type(f.default)
        parser.add_argument("--" + f.name.replace("_", "-"), type=kind)
    parser.add_argument("--run-dir", type=Path)
    parser.add_argument("--grade", type=Path, metavar="VALUE.npz")
    parser.add_argument("--json", type=Path, help="with --grade: write the leaderboard row")
    args = vars(parser.parse_args())
    run_dir, grade, out = args.pop("run_dir"), args.pop("grade"), args.pop("json")
    if grade is not None:
        import yahtzee_env
        from yahtzee_agents.model_based import load_policy

        row = yahtzee_env.benchmark(load_policy(grade), name="model-based")
        row.pop("evaluation")
        print(json.dumps(row, indent=2))
        if out is not None:
            out.write_text(json.dumps(row, indent=2) + "\n")
        return
    if run_dir is None:
        parser.error("--run-dir is required to learn (or --grade VALUE.npz to grade)")
    try:
        cfg = ModelBasedConfig(**{k: v for k, v in args.items() if v is not None})
    except ValueError as err:
        parser.error(str(err))
    learn(cfg, run_dir)


if __name__ == "__main__":
    main()
