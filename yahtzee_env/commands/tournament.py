"""``yahtzee tournament``: round-robin of policies at 2- or 4-player tables."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from yahtzee_env.commands import add_backend_arguments, non_negative_int, positive_int
from yahtzee_env.rules import PRESETS

HELP = (
    "round-robin of policies (easy, medium, hard, heuristic, optimal, greedy, random, model "
    ".json) in 2- or 4-player games: head-to-head scores and win rates with Wilson 95 percent CIs"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policies",
        required=True,
        help="comma-separated entrants (a name may repeat: it then plays itself)",
    )
    parser.add_argument("--players", type=int, choices=(2, 4), default=2, help="seats per table")
    parser.add_argument(
        "--games",
        type=positive_int,
        default=5000,
        help="games per pairing (2 players) or per table of 4; rounded up so every seat "
        "arrangement plays equally often (default 5000)",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the games and policies"
    )
    parser.add_argument("--rules", default="official", choices=list(PRESETS))
    parser.add_argument("--batch-size", type=positive_int, default=None, help="games per batch")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    parser.add_argument("--no-progress", action="store_true")
    add_backend_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from yahtzee_env.commands import backend_runner, check_backend, progress_bar
    from yahtzee_env.match import (
        DEFAULT_BATCH,
        Entrant,
        format_tournament,
        plot_tournament,
        run_tournament,
    )
    from yahtzee_env.opponents import ModelFormatError
    from yahtzee_env.policies import resolve_policy
    from yahtzee_env.ray_backend import RayMissingError

    try:
        check_backend(args)
    except (ValueError, RayMissingError) as err:
        print(f"yahtzee tournament: error: {err}", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    if len(names) < args.players:
        print(
            f"yahtzee tournament: error: {args.players}-player tables need at least "
            f"{args.players} entrants, got {len(names)} (repeat a name to seat it twice)",
            file=sys.stderr,
        )
        return 2
    seeds = np.random.SeedSequence(args.seed).spawn(len(names))
    entrants = []
    for name, seq in zip(names, seeds, strict=True):
        try:
            policy = resolve_policy(name, args.rules, int(seq.generate_state(1)[0]))
        except (ValueError, ModelFormatError) as err:
            print(f"yahtzee tournament: error: {err}", file=sys.stderr)
            return 2
        entrants.append(Entrant(name, policy))
    with backend_runner(args) as runner:
        result = run_tournament(
            entrants,
            players=args.players,
            games=args.games,
            seed=args.seed,
            rules=args.rules,
            batch_size=args.batch_size or DEFAULT_BATCH,
            progress=progress_bar("tournament", "games", not args.no_progress),
            runner=runner,
        )
    print(format_tournament(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(args.json)
        print(f"wrote {args.json}")
    if args.plot:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot_tournament(result, args.plot)
        print(f"wrote {args.plot}")
    return 0
