"""``yahtzee train``: train a MaskablePPO agent from a YAML config (needs the train extra)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "train a MaskablePPO agent from a YAML config into runs/<name> (or --resume a run)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", nargs="?", type=Path, help="YAML run config (configs/*.yaml)")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue runs/<name> from its newest checkpoint, same config",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set ppo.learning_rate=1e-4",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        default=Path("runs"),
        help="parent folder of run folders (default: runs)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--seeds",
        default=None,
        metavar="S1,S2,...",
        help="train one run per seed (runs/<name>-seed<S>) in parallel as Ray tasks and report "
        "the mean and spread across seeds (needs the ray extra)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster for --seeds (default: $RAY_ADDRESS, else Ray in-process here)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        from yahtzee_agents.config import ConfigError, load_config
        from yahtzee_agents.train import load_run_config, train
    except ImportError as err:
        print(
            f"yahtzee train: error: training needs the train extra "
            f"(pip install 'yahtzee-rl[train]'): {err}",
            file=sys.stderr,
        )
        return 2
    if (args.config is None) == (args.resume is None):
        print(
            "yahtzee train: error: give a CONFIG file or --resume RUN_DIR (not both)",
            file=sys.stderr,
        )
        return 2
    try:
        if args.resume is not None:
            if args.seeds is not None:
                raise ConfigError("--seeds cannot be combined with --resume")
            if args.set:
                raise ConfigError("--set cannot be combined with --resume (same config)")
            cfg = load_run_config(args.resume)
            run_dir = args.resume
        else:
            cfg = load_config(args.config, args.set)
            run_dir = args.runs_dir / cfg.name
    except (ConfigError, FileNotFoundError) as err:
        print(f"yahtzee train: error: {err}", file=sys.stderr)
        return 2
    if args.seeds is not None or args.address is not None:
        return _run_seeds(args, cfg)
    try:
        run_dir = train(
            cfg,
            run_dir,
            resume=args.resume is not None,
            progress=not args.no_progress,
            argv=sys.argv,
        )
    except FileExistsError as err:
        print(f"yahtzee train: error: {err}", file=sys.stderr)
        return 2
    print(f"run folder: {run_dir}")
    return 0


def _run_seeds(args: argparse.Namespace, cfg) -> int:
    from yahtzee_agents.config import ConfigError
    from yahtzee_env.ray_backend import RayMissingError, require_ray

    try:
        if args.seeds is None:
            raise ConfigError("--address needs --seeds (a single run trains here)")
        from yahtzee_agents.seeds import format_seeds, parse_seeds, train_seeds

        seeds = parse_seeds(args.seeds)
        require_ray()
        summary = train_seeds(cfg, seeds, args.runs_dir, address=args.address, argv=sys.argv)
    except (ConfigError, RayMissingError, FileExistsError) as err:
        print(f"yahtzee train: error: {err}", file=sys.stderr)
        return 2
    print(format_seeds(summary))
    print(f"wrote {args.runs_dir / (cfg.name + '-seeds.json')}")
    return 0
