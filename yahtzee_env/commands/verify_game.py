"""``yahtzee verify-game GAME.json``: recompute every roll of a game from its revealed seed
(and, in a ``hmac-sha256-v2`` record, the seats' client seeds, each against its mark) and the
recorded holds, check the seed against the commitment shown before the first roll, and say
whether the dice follow from the seed (`yahtzee_env.game.fair_dice`). Both derivations
check: ``sha256-ctr-v1`` (tables made before issue 58) and ``hmac-sha256-v2``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = (
    "check a game's dice (GAME.json, a game record with its revealed seed): the seed matches "
    "the commitment and every roll follows from it, or the first roll that does not"
)

MAX_RECORD_BYTES = 4 << 20  # a game of four seats is about 30 KB


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "game",
        metavar="GAME.json",
        type=Path,
        help="the game's record (format yahtzee-dice-v1 or yahtzee-dice-v2)",
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.fileio import read_regular_file
    from yahtzee_env.game.fair_dice import verify_record

    try:
        record = json.loads(read_regular_file(args.game, MAX_RECORD_BYTES))
    except (OSError, ValueError) as err:  # JSONDecodeError and UnicodeDecodeError included
        print(f"yahtzee verify-game: error: {args.game}: {err}", file=sys.stderr)
        return 2
    verdict = verify_record(record)
    print(f"{args.game}: {verdict.message}")
    return 0 if verdict.ok else 1
