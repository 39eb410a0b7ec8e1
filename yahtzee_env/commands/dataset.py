"""``yahtzee dataset --policy optimal|LEVEL --games N --out DIR``: an offline-RL dataset of
optimal or level play in Minari's format (`yahtzee_env.analysis.dataset`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yahtzee_env.commands import int_in_range, non_negative_int
from yahtzee_env.game.rules import PRESETS

HELP = (
    "write a Minari dataset of optimal or level play (observations, masks, actions, "
    "rewards; the solver's value of every action for the optimal policy)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.analysis.dataset import MAX_GAMES

    parser.add_argument(
        "--policy", required=True, help="optimal, a level (easy ... master) or a baseline"
    )
    parser.add_argument("--games", type=int_in_range(1, MAX_GAMES), required=True)
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help="Minari's datasets folder (load with MINARI_DATASETS_PATH=DIR)",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="game i: seed + i")
    parser.add_argument("--rules", default="official", choices=list(PRESETS))


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.dataset import dataset_id, write_dataset
    from yahtzee_env.commands import OutputPathError, check_output_dir, missing_extra_hint
    from yahtzee_env.policies.models import ModelFormatError

    try:
        check_output_dir(args.out, "--out")
        path = write_dataset(args.policy, args.games, args.out, seed=args.seed, rules=args.rules)
    except (ValueError, ModelFormatError, OutputPathError) as err:
        print(f"yahtzee dataset: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        if (err.name or "").split(".")[0] in ("minari", "pyarrow"):
            print(
                f"yahtzee dataset: error: needs {err.name} (pip install 'yahtzee-rl[dataset]')",
                file=sys.stderr,
            )
        else:
            print(f"yahtzee dataset: error: {missing_extra_hint(err)}", file=sys.stderr)
        return 2
    print(f"wrote {path} (load: MINARI_DATASETS_PATH={args.out} and "
          f"minari.load_dataset({dataset_id(args.policy, args.rules)!r}))")  # fmt: skip
    return 0
