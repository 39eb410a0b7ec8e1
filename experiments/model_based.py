"""The model-based baseline (`yahtzee_agents.model_based`; it uses the exact rules model, so it
is not reward-only): fitted value iteration that learns the value of turn-start states from
played games and plays each turn by exact expectimax through the rules.

    OPENBLAS_NUM_THREADS=1 python experiments/model_based.py --games 100000 --seed 0 \
        --run-dir runs/model-based-s0

Writes ``curve.jsonl`` (one row per evaluation: games, env-steps, learning seconds, eval mean,
regret), ``config.json`` and ``value.npz`` (+ ``.json``) to the run folder. The solver only
grades the evaluations. ``--grade VALUE.npz [--json ROW.json]`` grades a learned agent by the
benchmark protocol instead (`yahtzee_env.benchmark`: 10,000 games, seed 0):

    python experiments/model_based.py --grade data/model_based/value-s0.npz

``--export VALUE.npz --out DIR [--name NAME]`` ships it as a numpy CPU level (``NAME.json`` +
``NAME.npz``, `yahtzee_agents.model_based.export_level`; evaluated on the levels' 4,000 games
from seed 12345 for the manifest). The shipped ``master`` level is:

    python experiments/model_based.py --export data/model_based/value-s0.npz \
        --out yahtzee_env/policies/levels --name master
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
    parser.add_argument("--export", type=Path, metavar="VALUE.npz")
    parser.add_argument("--out", type=Path, help="with --export: the level's folder")
    parser.add_argument("--name", default="master", help="with --export: the level's name")
    args = vars(parser.parse_args())
    run_dir, grade, out = args.pop("run_dir"), args.pop("grade"), args.pop("json")
    export, out_dir, name = args.pop("export"), args.pop("out"), args.pop("name")
    if export is not None:
        from yahtzee_agents.model_based import export_level

        if out_dir is None:
            parser.error("--export needs --out DIR")
        print(f"wrote {export_level(export, out_dir, name, level=name)}")
        return
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
