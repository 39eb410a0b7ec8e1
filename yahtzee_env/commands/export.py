"""``yahtzee export``: turn a run's model into numpy weights (+ manifest) or ONNX."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = (
    "export a shipped level, a trained run (runs/<name>) or an SB3 zip to .npz + manifest "
    "(numpy-only play) or ONNX"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run",
        type=Path,
        help="a shipped level's name (easy, medium, hard, ...), a run folder (runs/<name>), an "
        "SB3 MaskablePPO .zip (a run's, or any script's on Yahtzee-v0), a model-based agent's "
        "VALUE.npz (experiments/model_based.py; npz only), or a level's manifest NAME.json",
    )
    parser.add_argument(
        "--format",
        choices=("npz", "onnx", "web"),
        default="npz",
        help="npz (+ manifest: numpy-only play), onnx, or web (a shipped level as the page "
        "loads it offline: LEVEL.json + LEVEL.f32, raw float32 weights with their sha256)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("."), help="output folder (default: the current folder)"
    )
    parser.add_argument(
        "--model",
        type=_model_choice,
        default="best",
        help="which model of the run: best (by evaluation; the default), final, latest, or "
        "STEPS, the checkpoint saved at that many env-steps (checkpoints/ckpt_STEPS.zip)",
    )
    parser.add_argument("--name", default=None, help="file name stem (default: run name)")
    parser.add_argument(
        "--holds",
        choices=("all", "canonical"),
        default=None,
        help="an SB3 zip saved without a run folder: its holds mode (default all, Yahtzee-v0's)",
    )
    parser.add_argument(
        "--rules",
        default=None,
        help="an SB3 zip saved without a run folder: the rules preset it learned (default "
        "official)",
    )
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
    from yahtzee_env.policies.models import (
        LEVELS,
        MLPPolicy,
        ModelFormatError,
        read_manifest,
        save_policy,
    )

    if not args.run.exists() and str(args.run) in LEVELS:
        return _export_level(args)
    if args.format == "web":
        print(
            f"yahtzee export: error: --format web exports a shipped level ({', '.join(LEVELS)}), "
            f"not {str(args.run)[:80]!r}",
            file=sys.stderr,
        )
        return 2
    if (args.holds or args.rules) and args.run.suffix != ".zip":
        print(
            "yahtzee export: error: --holds and --rules are for an SB3 .zip saved without a run "
            "folder (a run's config and a manifest say them)",
            file=sys.stderr,
        )
        return 2
    if args.run.suffix == ".npz":
        return _export_model_based(args)
    try:
        from sb3_contrib import MaskablePPO

        from yahtzee_agents.config import ConfigError
        from yahtzee_agents.export import (
            check_input_version,
            export_onnx,
            policy_weights,
        )
        from yahtzee_agents.run.folder import RunPaths, load_run_config, model_facts, run_digest

        if args.format == "onnx":
            import onnx  # noqa: F401
    except ImportError as err:
        print(f"yahtzee export: error: {missing_extra_hint(err, 'export')}", file=sys.stderr)
        return 2
    if args.run.suffix == ".json":
        return _export_manifest(args)
    if args.run.suffix == ".zip":
        return _export_zip(args)
    try:
        cfg = load_run_config(args.run)
        name = check_plain_name(args.name or cfg.name, "--name")
        check_output_dir(args.out, "--out")
        model_path = RunPaths(args.run).model(args.model)
        if model_path is None or not model_path.exists():
            raise FileNotFoundError(f"{args.run} has no {args.model} model")
        if model_path.suffix == ".zip":
            check_sb3_zip(model_path)
        else:  # a JAX run's (train.engine: jax): the numpy model format
            from yahtzee_env.policies.models import load_opponent

            player = load_opponent(model_path, cfg.env.rules)
    except (FileNotFoundError, ConfigError, OutputPathError, ModelFormatError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    if model_path.suffix == ".zip":
        try:
            # the schedules are training's, not the policy's: older checkpoints name them in
            # modules that have moved, and an export needs none of them
            unused = {"learning_rate": 0.0, "lr_schedule": lambda _: 0.0}
            model = MaskablePPO.load(model_path, device="cpu", custom_objects=unused)
        except Exception as err:  # torch/SB3 raise many types on a damaged file
            print(
                f"yahtzee export: error: {model_path}: cannot load the model "
                f"({type(err).__name__}: {str(err)[:200]})",
                file=sys.stderr,
            )
            return 2
        weights, activation = policy_weights(model)
        steps = int(model.num_timesteps)
    else:
        weights, activation = player.weights, player.activation
        steps = int(read_manifest(model_path).env_steps or 0)
    if args.format == "npz":
        import json

        eval_file = model_path.parent / "eval.json"
        digest, digest_version = run_digest(args.run, cfg)
        extra = {
            "source": f"{cfg.name}/{args.model}",
            "timesteps": steps,
            "config_digest_version": digest_version,
        }
        extra.update(model_facts(cfg, steps))
        if args.model.isdigit():  # a checkpoint: the evaluation the run logged at its step
            from yahtzee_agents.curves import evaluation_at

            try:
                found = evaluation_at(args.run, steps)
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
        path = save_policy(
            args.out,
            name,
            weights,
            activation,
            rules=cfg.env.rules,
            config_sha256=digest,
            input_version=check_input_version(weights, cfg.env.observation_version),
            level=args.level,
            canonical_holds=cfg.env.canonical_holds,
            extra=extra,
        )
    else:
        path = export_onnx(
            MLPPolicy(
                weights,
                activation,
                name=name,
                canonical_holds=cfg.env.canonical_holds,
                input_version=check_input_version(weights, cfg.env.observation_version),
                threshold=RuleSet.from_spec(cfg.env.rules).upper_bonus_threshold,
            ),
            args.out / f"{name}.onnx",
            rules=cfg.env.rules,
            level=args.level,
            knew=model_facts(cfg, steps)["knew"],
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
            from yahtzee_env.policies.models import ARCHITECTURE_OUTPUTS

            raise ValueError(
                f"{args.run} is a {manifest.kind} model ({ARCHITECTURE_OUTPUTS[manifest.kind]}): "
                "it has no ONNX graph; play it with numpy (load_opponent)"
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


def _export_level(args: argparse.Namespace) -> int:
    """A shipped level by name: ``--format npz`` copies its files byte for byte (renamed with
    ``--name``); ``--format onnx`` exports its manifest (an mlp level), named as the level;
    ``--format web`` writes what the page loads offline (`policies.web_levels`)."""
    import json

    from yahtzee_env.commands import OutputPathError, check_output_dir, check_plain_name
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.policies.models import LEVELS_DIR, ModelFormatError, read_manifest

    level = str(args.run)
    manifest_path = LEVELS_DIR / f"{level}.json"
    if args.model != "best":
        print("yahtzee export: error: --model is for run folders, not a level", file=sys.stderr)
        return 2
    if args.format == "onnx":
        args.run = manifest_path
        args.level = args.level or level
        try:
            import onnx  # noqa: F401

            import yahtzee_agents.export  # noqa: F401
        except ImportError as err:
            from yahtzee_env.commands import missing_extra_hint

            print(f"yahtzee export: error: {missing_extra_hint(err, 'export')}", file=sys.stderr)
            return 2
        return _export_manifest(args)
    if args.format == "web":
        from yahtzee_env.policies.web_levels import export_web

        try:
            if args.name is not None:
                raise ValueError("--name: a web level keeps its level's name")
            check_output_dir(args.out, "--out")
            written = export_web(level, args.out)
        except (ValueError, ModelFormatError, OutputPathError, OSError) as err:
            print(f"yahtzee export: error: {err}", file=sys.stderr)
            return 2
        print(f"wrote {written[0]} and {written[1].name}")
        return 0
    try:
        name = check_plain_name(args.name or level, "--name")
        check_output_dir(args.out, "--out")
        manifest = read_manifest(manifest_path)  # checks the manifest and names its weights
        raw = json.loads(manifest_path.read_text(encoding="utf-8"))
        raw["weights_file"] = f"{name}.npz"
        atomic_write(args.out / f"{name}.npz", manifest.weights_path.read_bytes())
        if manifest.table is not None:  # a level of two networks: the table's file too
            raw["table"]["weights_file"] = f"{name}-table.npz"
            atomic_write(args.out / f"{name}-table.npz", manifest.table.weights_path.read_bytes())
        atomic_write(args.out / f"{name}.json", json.dumps(raw, indent=2) + "\n")
    except (ModelFormatError, OutputPathError, OSError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out / f'{name}.json'}")
    return 0


def _export_zip(args: argparse.Namespace) -> int:
    """An SB3 zip as a numpy model or ONNX: a run's zip with its run's facts, any other
    script's with what `yahtzee_agents.sources.load_sb3_policy` assumed (printed, and written
    into the manifest or the ONNX metadata's rules and holds)."""
    from yahtzee_agents.export import export_onnx
    from yahtzee_agents.sources import describe_assumed, load_sb3_policy
    from yahtzee_env.commands import OutputPathError, check_output_dir, check_plain_name
    from yahtzee_env.game.rules import PRESETS
    from yahtzee_env.policies.models import ModelFormatError, save_policy

    if args.model != "best":
        print("yahtzee export: error: --model is for run folders, not a zip", file=sys.stderr)
        return 2
    try:
        if args.rules is not None and args.rules not in PRESETS:
            raise ValueError(
                f"--rules: unknown preset {args.rules!r} (known: {', '.join(PRESETS)})"
            )
        name = check_plain_name(args.name or args.run.stem, "--name")
        check_output_dir(args.out, "--out")
        policy = load_sb3_policy(args.run, args.rules, holds=args.holds)
        assumed = policy.assumed
        if assumed:
            print(f"{args.run}: {describe_assumed(assumed)}", file=sys.stderr)
        rules = policy.trained_rules
        if args.format == "onnx":
            path = export_onnx(policy, args.out / f"{name}.onnx", rules=rules, level=args.level)
        else:
            digest = assumed.get("source_sha256")
            if digest is None:
                from yahtzee_agents.run.folder import load_run_config
                from yahtzee_agents.sources import _run_folder_of

                digest = load_run_config(_run_folder_of(args.run)).digest()
            extra = {"source": args.run.name, "assumed": assumed} if assumed else {}
            if getattr(policy, "knew", None) is not None:  # a run's zip: its config's facts
                extra["knew"] = policy.knew
            if policy.timesteps is not None:
                extra["timesteps"] = policy.timesteps
            path = save_policy(
                args.out, name, policy.weights, policy.activation, rules=rules,
                config_sha256=digest, level=args.level, canonical_holds=policy.canonical_holds,
                input_version=policy.input_version, extra=extra,
            )  # fmt: skip
    except (ValueError, ModelFormatError, OutputPathError, FileNotFoundError) as err:
        print(f"yahtzee export: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
