"""The model-based reward-only baseline (`yahtzee_agents.model_based`): learn the value of
turn-start states from played games, play each turn by exact expectimax through the rules.

    OPENBLAS_NUM_THREADS=1 python experiments/model_based.py --games 100000 --seed 0 \
        --run-dir runs/model-based-s0

Writes ``curve.jsonl`` (one row per evaluation: games, env-steps, learning seconds, eval mean,
regret), ``config.json`` and ``value.npz`` (+ ``.json``) to the run folder. The solver only
grades the evaluations.
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--run-dir", type=Path, required=True)
    args = vars(parser.parse_args())
    run_dir = args.pop("run_dir")
    cfg = ModelBasedConfig(**{k: v for k, v in args.items() if v is not None})
    learn(cfg, run_dir)


if __name__ == "__main__":
    main()
