"""``yahtzee sweep``: a hyper-parameter sweep on Ray Tune (Optuna search, ASHA early stopping);
see `yahtzee_agents.sweep` for the sweep file. Needs the train and ray extras."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = (
    "hyper-parameter sweep of a training config on Ray Tune (Optuna search, ASHA stopping): "
    "a results table and plot, and the best config as YAML"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sweep",
        help="a sweep file's path, or a shipped one's name (sweeps/tiny: `yahtzee configs`)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="sweep folder (default: sweeps/<name>); trials write their runs in <out>/runs",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to use (default: $RAY_ADDRESS, else Ray started in-process here)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted sweep in its folder"
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.ray_backend import RayMissingError, require_ray

    try:
        require_ray("ray.tune", "optuna")
        from yahtzee_agents.config import ConfigError
        from yahtzee_agents.sweep import format_summary, load_sweep, run_sweep
    except RayMissingError as err:
        print(f"yahtzee sweep: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(
            f"yahtzee sweep: error: sweeps need the train extra "
            f"(pip install 'yahtzee-rl[train,ray]'): {err}",
            file=sys.stderr,
        )
        return 2
    try:
        from yahtzee_agents.shipped import resolve_config

        sweep = load_sweep(resolve_config(args.sweep))
        out = args.out or Path("sweeps") / sweep.file.name
        summary = run_sweep(sweep, out, address=args.address, resume=args.resume)
    except (ConfigError, FileExistsError, FileNotFoundError) as err:
        print(f"yahtzee sweep: error: {err}", file=sys.stderr)
        return 2
    print(format_summary(summary))
    print(f"wrote {out / 'results.csv'}, {out / 'results.json'}, {out / 'results.png'}")
    if summary["best"]:
        print(f"best config: {out / 'best.yaml'} (yahtzee train {out / 'best.yaml'})")
    return 0
