"""``yahtzee verify ROW.json [MODEL]``: re-run a submitted row's protocol with its model and say
whether the row holds (`yahtzee_env.analysis.verify`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yahtzee_env.commands import MODEL_FILES

HELP = (
    "re-run a benchmark row (results/*.json) with its model and say whether the row holds: "
    "exactly for a reproducible agent on the same dice, else within its CI"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("row", metavar="ROW.json", type=Path, help="the row to check")
    parser.add_argument(
        "model",
        metavar="MODEL",
        nargs="?",
        default=None,
        help=f"the agent that made it: a level, a baseline, {MODEL_FILES}, or "
        "package.module:function (as `yahtzee benchmark` takes); default: the model the row "
        "names (a level, a built-in, or its model.path beside the row)",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (speed only)")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="accepted as `yahtzee benchmark` takes it (verify draws no progress bar)",
    )
    parser.add_argument(
        "--digests",
        action="store_true",
        help="check the model's digest, the dice digest on this machine and the row's own "
        "arithmetic, without replaying its games (for long rows)",
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.results import RowError, read_row
    from yahtzee_env.analysis.verify import model_of_row, verify_digests, verify_row
    from yahtzee_env.commands import missing_extra_hint
    from yahtzee_env.policies.models import ModelFormatError

    try:
        row = read_row(args.row)
        model = args.model if args.model is not None else model_of_row(row, args.row)
        if args.digests:
            verdict = verify_digests(row, model)
        else:
            verdict = verify_row(row, model, workers=args.workers)
    except RowError as err:
        print(f"yahtzee verify: error: {args.row}: {err}", file=sys.stderr)
        return 2
    except (ValueError, ModelFormatError) as err:  # AgentError included
        print(f"yahtzee verify: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"yahtzee verify: error: {missing_extra_hint(err)}", file=sys.stderr)
        return 2
    for line in verdict.lines:
        print(f"{args.row}: {line}")
    return 0 if verdict.holds else 1
