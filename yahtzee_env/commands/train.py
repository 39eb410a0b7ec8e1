"""``yahtzee train``: train an agent from a YAML config into a run folder (needs the train extra).

The config's ``train.engine`` picks what trains it (`yahtzee_agents.train`): ``sb3``
(MaskablePPO in torch, the default) or ``jax`` (PPO in JAX); both write the run folder through
`yahtzee_agents.run`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

HELP = (
    "train an agent from a YAML config into runs/<name> (or --resume a run); the config's "
    "train.engine picks MaskablePPO in torch (sb3, the default) or PPO in JAX (jax)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config",
        nargs="?",
        help="a shipped config's name (tiny, ppo, ppo-long, ...: `yahtzee configs` lists them) "
        "or a YAML run config's path",
    )
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
        help="override a config value, e.g. --set ppo.learning_rate=1e-4; with --resume only "
        "train.total_timesteps=N (to extend a run)",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        default=Path("runs"),
        help="parent folder of run folders (default: runs)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--time-limit",
        type=_duration,
        default=None,
        metavar="T",
        help="wall-time budget of this session (seconds, or 90m, 12h): at the first PPO "
        "rollout boundary past it the run writes an exact checkpoint and stops (exit 75); "
        "SIGTERM and SIGINT do the same (exit 143, 130). --resume continues it bit for bit",
    )
    parser.add_argument(
        "--track",
        action="store_true",
        help="log the TensorBoard scalars to Weights & Biases too, as CleanRL does (needs the "
        "track extra; offline by default: `wandb sync` uploads later)",
    )
    parser.add_argument(
        "--track-mode",
        choices=("offline", "online"),
        default="offline",
        help="W&B mode of --track (default offline: written under RUN_DIR/wandb/)",
    )
    parser.add_argument(
        "--track-project", default="yahtzee-rl", help="W&B project of --track (yahtzee-rl)"
    )
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


def _duration(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds (or 90m, 12h), got {text!r}")
    return seconds


# Exit codes of a run stopped with a checkpoint: the shell's for signals, EX_TEMPFAIL for time.
STOPPED_EXIT = {"SIGINT": 130, "SIGTERM": 143, "time limit": 75}


def missing_train_module(engine: str = "sb3") -> str | None:
    """The first module of the train extra an engine needs that is not installed (or
    blocked), else None: checked up front, because torch, SB3 and JAX are imported lazily,
    deep inside training."""
    import importlib.util

    for name in ("yahtzee_agents", "yaml"):  # what reads the config
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ValueError:  # in sys.modules as None: import blocked
            return name
    from yahtzee_agents.train import missing_engine_module

    return missing_engine_module(engine)


def _missing(module: str) -> int:
    print(
        f"yahtzee train: error: training needs {module} (pip install 'yahtzee-rl[train]')",
        file=sys.stderr,
    )
    return 2


def run(args: argparse.Namespace) -> int:
    missing = missing_train_module()
    if missing is not None:
        return _missing(missing)
    try:
        from yahtzee_agents.config import ConfigError, load_config
        from yahtzee_agents.run.folder import (
            RunPaths,
            TrainingInterrupted,
            check_run_files,
            final_result,
            load_run_config,
        )
        from yahtzee_agents.train import train
    except ImportError as err:
        print(
            f"yahtzee train: error: training needs the train extra "
            f"(pip install 'yahtzee-rl[train]'): {err}",
            file=sys.stderr,
        )
        return 2
    from yahtzee_env.commands import OutputPathError, check_output_dir
    from yahtzee_env.policies.models import ModelFormatError

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
            other = [s for s in args.set if s.split("=", 1)[0].strip() != "train.total_timesteps"]
            if other:
                raise ConfigError(
                    f"--resume keeps the run's config; only --set train.total_timesteps=N (to "
                    f"extend the run) may be given, got {', '.join(other)}"
                )
            cfg = load_run_config(args.resume, args.set)
            run_dir = args.resume
            check_run_files(RunPaths(run_dir))
            check_output_dir(run_dir, "--resume")
        else:
            from yahtzee_agents.shipped import resolve_config

            cfg = load_config(resolve_config(args.config), args.set)
            check_output_dir(args.runs_dir, "--runs-dir")
            run_dir = args.runs_dir / cfg.name
    except (ConfigError, FileNotFoundError, OutputPathError, ModelFormatError) as err:
        print(f"yahtzee train: error: {err}", file=sys.stderr)
        return 2
    missing = missing_train_module(cfg.train.engine)
    if missing is not None:
        return _missing(missing)
    if args.seeds is not None or args.address is not None:
        return _run_seeds(args, cfg)
    tracking = contextlib.nullcontext()
    if args.track:
        try:
            import wandb  # noqa: F401
        except ImportError:
            print(
                "yahtzee train: error: --track needs wandb (pip install 'yahtzee-rl[track]')",
                file=sys.stderr,
            )
            return 2
        from yahtzee_agents.run.tracking import wandb_run

        tracking = wandb_run(cfg, run_dir, project=args.track_project, mode=args.track_mode)
    try:
        with tracking:
            run_dir = train(
                cfg,
                run_dir,
                resume=args.resume is not None,
                progress=not args.no_progress,
                argv=sys.argv,
                time_limit=args.time_limit,
            )
    except (FileExistsError, ConfigError) as err:
        print(f"yahtzee train: error: {err}", file=sys.stderr)
        return 2
    except TrainingInterrupted as stopped:
        print(f"yahtzee train: {stopped}", file=sys.stderr)
        return STOPPED_EXIT[stopped.reason]
    print(final_result(run_dir))
    print(f"run folder: {run_dir}")
    return 0


def _run_seeds(args: argparse.Namespace, cfg) -> int:
    from yahtzee_agents.config import ConfigError
    from yahtzee_env.analysis.ray_backend import RayMissingError, require_ray

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
