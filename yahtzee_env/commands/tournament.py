"""``yahtzee tournament``: round-robin of policies at 2- or 4-player tables."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from yahtzee_env.commands import (
    MODEL_FILES,
    add_backend_arguments,
    int_in_range,
    non_negative_int,
    positive_int,
    shipped_levels,
)
from yahtzee_env.game.rules import PRESETS

HELP = (
    f"round-robin of policies ({', '.join(shipped_levels())}, 'levels' for all of them, "
    f"heuristic, optimal, greedy, random, {MODEL_FILES}) in 2- or 4-player games: head-to-head "
    "scores and win rates with Wilson 95 percent CIs"
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
    parser.add_argument(
        "--batch-size", type=int_in_range(1, 65_536), default=None, help="games per batch"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    parser.add_argument("--no-progress", action="store_true")
    add_backend_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from yahtzee_env.analysis.ray_backend import RayMissingError
    from yahtzee_env.analysis.tournament import (
        DEFAULT_BATCH,
        Entrant,
        check_tournament_size,
        format_tournament,
        plot_tournament,
        run_tournament,
    )
    from yahtzee_env.commands import (
        OutputPathError,
        backend_runner,
        check_backend,
        check_output_file,
        missing_extra_hint,
        policy_names,
        progress_bar,
    )
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.policies.models import ModelFormatError
    from yahtzee_env.policies.resolve import policy_label, resolve_policy

    try:
        check_backend(args)
    except (ValueError, RayMissingError) as err:
        print(f"yahtzee tournament: error: {err}", file=sys.stderr)
        return 2
    names = policy_names(args.policies)
    if len(names) < args.players:
        print(
            f"yahtzee tournament: error: {args.players}-player tables need at least "
            f"{args.players} entrants, got {len(names)} (repeat a name to seat it twice)",
            file=sys.stderr,
        )
        return 2
    try:  # everything that can be refused is refused before the games
        check_tournament_size(len(names), args.players, args.games)
        check_output_file(args.json, "--json")
        check_output_file(args.plot, "--plot")
        if args.plot is not None:
            import matplotlib  # noqa: F401
    except (ValueError, OutputPathError) as err:
        print(f"yahtzee tournament: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"yahtzee tournament: error: {missing_extra_hint(err, '--plot')}", file=sys.stderr)
        return 2
    seeds = np.random.SeedSequence(args.seed).spawn(len(names))
    entrants = []
    for name, seq in zip(names, seeds, strict=True):
        try:
            policy = resolve_policy(name, args.rules, int(seq.generate_state(1)[0]))
        except (ValueError, ModelFormatError) as err:
            print(f"yahtzee tournament: error: {err}", file=sys.stderr)
            return 2
        except ImportError as err:
            print(f"yahtzee tournament: error: {missing_extra_hint(err, name)}", file=sys.stderr)
            return 2
        entrants.append(Entrant(policy_label(name, policy, args.rules), policy))
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
        atomic_write(args.json, json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plot:
        plot_tournament(result, args.plot)
        print(f"wrote {args.plot}")
    return 0
