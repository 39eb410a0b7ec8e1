"""``yahtzee export``: turn a run's model into numpy weights (+ manifest) or ONNX."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "export a trained run (runs/<name>) to .npz + manifest (numpy-only play) or ONNX"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run",
        type=Path,
        help="run folder (runs/<name>), a model-based agent's VALUE.npz (experiments/"
        "model_based.py; npz only), or a level's manifest NAME.json (with --format onnx)",
    )
    parser.add_argument("--format", choices=("npz", "onnx"), default="npz")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--model",
        type=_model_choice,
        default="best",
        help="which model of the run: best (by evaluation; the default), final, latest, or "
        "STEPS, the checkpoint saved at that many env-steps (checkpoints/ckpt_STEPS.zip)",
    )
    parser.add_argument("--name", default=None, help="file name stem (default: run name)")
    parser.add_argument(
        "--level",
        default=None,
        help="export as this level: record its name in the manifest or ONNX metadata (without "
        "it, no level is named, whatever the config trains)",
    )


def _model_choice(value: str) -> str:
    if value in ("best", "final", "latest") or (value.isdigit() and len(value) <= 12):
        return value
    raise argparse.ArgumentTypeError(
        f"{value[:40]!r} is not best, final, latest or a checkpoint's env-steps"
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.commands import (
        OutputPathError,
        check_output_dir,
        check_plain_name,
        missing_extra_hint,
    )
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.policies.checkpoints import check_sb3_zip
    from yahtzee_env.policies.models import ModelFormatError

    if args.run.suffix == ".npz":
        return _export_model_based(args)
    try:
        from sb3_contrib import MaskablePPO

        from yahtzee_agents.config import ConfigError
        from yahtzee_agents.export import export_npz, export_onnx, level_facts, numpy_policy
        from yahtzee_agents.train import RunPaths, load_run_config

        if args.format == "onnx":
            import onnx  # noqa: F401
    except ImportError as err:
        print(f"yahtzee export: error: {missing_extra_hint(err, 'export')}", file=sys.stderr)
        return 2
    if args.run.suffix == ".json":
        return _export_manifest(args)
    try:
        cfg = load_run_config(args.run)
        name = check_plain_name(args.name or cfg.name, "--name")
        check_output_dir(args.out, "--out")
        paths = RunPaths(args.run)
        if args.model.isdigit():
            model_path = paths.checkpoints / f"ckpt_{int(args.model)}.zip"
        else:
            model_path = {
                "best": paths.best / "model.zip",
                "final": paths.final / "model.zip",
                "latest": paths.latest_checkpoint(),
            }[args.model]
        if model_path is None or not model_path.exists():
            raise FileNotFoundError(f"{args.run} has no {args.model} model")
        check_sb3_zip(model_path)
    except (FileNotFoundError, ConfigError, OutputPathError, ModelFormatError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    try:
        model = MaskablePPO.load(model_path, device="cpu")
    except Exception as err:  # torch/SB3 raise many types on a damaged file
        print(
            f"yahtzee export: error: {model_path}: cannot load the model "
            f"({type(err).__name__}: {str(err)[:200]})",
            file=sys.stderr,
        )
        return 2
    if args.format == "npz":
        import json

        eval_file = model_path.parent / "eval.json"
        extra = {"source": f"{cfg.name}/{args.model}", "timesteps": int(model.num_timesteps)}
        extra.update(level_facts(cfg, int(model.num_timesteps)))
        if args.model.isdigit():  # a checkpoint: the evaluation the run logged at its step
            from yahtzee_agents.curves import evaluation_at

            try:
                found = evaluation_at(args.run, int(model.num_timesteps))
            except (OSError, ValueError, KeyError) as err:
                print(
                    f"yahtzee export: error: {args.run}: logs unreadable ({err})", file=sys.stderr
                )
                return 2
            if found is not None:
                games = {"games": cfg.train.eval_games, "seed": cfg.train.eval_seed}
                extra["evaluation"] = {**games, **found}
        elif eval_file.exists():
            try:
                extra["evaluation"] = json.loads(eval_file.read_text())
            except (OSError, ValueError) as err:
                print(f"yahtzee export: error: {eval_file}: corrupt ({err})", file=sys.stderr)
                return 2
        path = export_npz(
            model,
            args.out,
            name,
            rules=cfg.env.rules,
            config_sha256=cfg.digest(),
            input_version=cfg.env.observation_version,
            level=args.level,
            canonical_holds=cfg.env.canonical_holds,
            extra=extra,
        )
    else:
        path = export_onnx(
            numpy_policy(
                model,
                name,
                cfg.env.canonical_holds,
                RuleSet.from_spec(cfg.env.rules).upper_bonus_threshold,
                input_version=cfg.env.observation_version,
            ),
            args.out / f"{name}.onnx",
            rules=cfg.env.rules,
            level=args.level,
        )
    print(f"wrote {path}")
    return 0


def _export_model_based(args: argparse.Namespace) -> int:
    """A model-based agent's learned turn values (``VALUE.npz`` + ``VALUE.json``, written by
    `yahtzee_agents.model_based`) as a numpy level, evaluated by the levels' protocol."""
    from yahtzee_env.commands import OutputPathError, check_output_dir, check_plain_name

    if args.format != "npz":
        print(
            "yahtzee export: error: a model-based agent plans through the rules at every move "
            "and has no ONNX form: use --format npz",
            file=sys.stderr,
        )
        return 2
    if args.model != "best":
        print("yahtzee export: error: --model is for run folders, not VALUE.npz", file=sys.stderr)
        return 2
    try:
        from yahtzee_agents.model_based import export_level
    except ImportError as err:
        from yahtzee_env.commands import missing_extra_hint

        print(f"yahtzee export: error: {missing_extra_hint(err, 'export')}", file=sys.stderr)
        return 2
    try:
        name = check_plain_name(args.name or args.run.stem, "--name")
        check_output_dir(args.out, "--out")
        if not args.run.exists() or not args.run.with_suffix(".json").exists():
            raise FileNotFoundError(
                f"{args.run}: a model-based agent is VALUE.npz with its VALUE.json beside it"
            )
        written = export_level(args.run, args.out, name, level=args.level)
    except (FileNotFoundError, OutputPathError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError) as err:
        print(
            f"yahtzee export: error: {args.run}: not a model-based agent's file "
            f"({type(err).__name__}: {str(err)[:200]})",
            file=sys.stderr,
        )
        return 2
    print(f"wrote {written}")
    return 0


def _export_manifest(args: argparse.Namespace) -> int:
    """A numpy model (a level's ``NAME.json`` + ``NAME.npz``) to a standalone ONNX file."""
    from yahtzee_agents.export import export_onnx
    from yahtzee_env.commands import OutputPathError, check_output_dir, check_plain_name
    from yahtzee_env.policies.models import ModelFormatError, load_opponent, read_manifest

    try:
        if args.format != "onnx":
            raise ValueError(f"{args.run} is a numpy model already: export it with --format onnx")
        manifest = read_manifest(args.run)
        if manifest.kind != "mlp":
            raise ValueError(
                f"{args.run} is a {manifest.kind} model (expectimax through the rules at play "
                "time): it has no ONNX graph; play it with numpy (load_opponent)"
            )
        policy = load_opponent(args.run)
        rules = manifest.rules
        name = check_plain_name(args.name or args.run.stem, "--name")
        check_output_dir(args.out, "--out")
        path = export_onnx(policy, args.out / f"{name}.onnx", rules=rules, level=args.level)
    except (ValueError, ModelFormatError, OutputPathError, FileNotFoundError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
