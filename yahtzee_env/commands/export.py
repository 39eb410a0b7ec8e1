"""``yahtzee export``: turn a run's model into numpy weights (+ manifest) or ONNX."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "export a trained run (runs/<name>) to .npz + manifest (numpy-only play) or ONNX"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", type=Path, help="run folder (runs/<name>)")
    parser.add_argument("--format", choices=("npz", "onnx"), default="npz")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--model",
        choices=("best", "final", "latest"),
        default="best",
        help="which model of the run (default: best by evaluation)",
    )
    parser.add_argument("--name", default=None, help="file name stem (default: run name)")
    parser.add_argument("--level", default=None, help="record this level name in the manifest")


def run(args: argparse.Namespace) -> int:
    try:
        from sb3_contrib import MaskablePPO

        from yahtzee_agents.export import export_npz, export_onnx, numpy_policy
        from yahtzee_agents.train import RunPaths, load_run_config
    except ImportError as err:
        print(f"yahtzee export: error: needs the train extra: {err}", file=sys.stderr)
        return 2
    try:
        cfg = load_run_config(args.run)
    except (FileNotFoundError, ValueError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    paths = RunPaths(args.run)
    model_path = {
        "best": paths.best / "model.zip",
        "final": paths.final / "model.zip",
        "latest": paths.latest_checkpoint(),
    }[args.model]
    if model_path is None or not model_path.exists():
        print(f"yahtzee export: error: {args.run} has no {args.model} model", file=sys.stderr)
        return 2
    model = MaskablePPO.load(model_path, device="cpu")
    name = args.name or cfg.name
    if args.format == "npz":
        import json

        eval_file = model_path.parent / "eval.json"
        extra = {"source": f"{cfg.name}/{args.model}", "timesteps": int(model.num_timesteps)}
        if eval_file.exists():
            extra["evaluation"] = json.loads(eval_file.read_text())
        path = export_npz(
            model,
            args.out,
            name,
            rules=cfg.env.rules,
            config_sha256=cfg.digest(),
            level=args.level or cfg.level,
            canonical_holds=cfg.env.canonical_holds,
            extra=extra,
        )
    else:
        path = export_onnx(
            numpy_policy(model, name, cfg.env.canonical_holds), args.out / f"{name}.onnx"
        )
    print(f"wrote {path}")
    return 0
