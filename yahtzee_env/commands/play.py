"""``yahtzee play``: play Yahtzee in the terminal against one to three CPU players."""

from __future__ import annotations

import argparse
import sys

from yahtzee_env.commands import MODEL_FILES, non_negative_int, shipped_levels
from yahtzee_env.game.rules import PRESETS

HELP = "play Yahtzee in the terminal against 1-3 CPU opponents (a game or a best-of-five match)"

DEFAULT_OPPONENTS = "medium"  # a shipped trained level (yahtzee_env/policies/levels/medium.json)
CPU_CHOICES = (
    f"{', '.join(shipped_levels())} (trained levels), heuristic, greedy, random, optimal, or "
    f"{MODEL_FILES}"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--opponents",
        default=DEFAULT_OPPONENTS,
        help=f"comma-separated CPU players, 1 to 3: {CPU_CHOICES} (default {DEFAULT_OPPONENTS})",
    )
    parser.add_argument("--name", default="You", help="your name at the table (default You)")
    parser.add_argument(
        "--seed", type=non_negative_int, default=None, help="seed of the dice (default: random)"
    )
    parser.add_argument("--rules", default="official", choices=list(PRESETS))
    parser.add_argument(
        "--match", action="store_true", help="play a best-of-five match (first to 3 game wins)"
    )
    parser.add_argument(
        "--first",
        type=int,
        default=None,
        metavar="N",
        help="seat that starts (1 = you, 2.. = the CPUs in --opponents order); "
        "default: a roll of the dice decides",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours")
    parser.add_argument(
        "--coach",
        action="store_true",
        help="the exact solver coaches you: a hint command, the expected points each decision "
        "gives up, and a review at the end of each game",
    )


def _cpu_names(specs: list[str]) -> list[str]:
    from pathlib import Path

    from yahtzee_env.analysis.tournament import unique_names

    model_file = (".json", ".npz", ".onnx", ".zip")
    return unique_names(
        [Path(s).stem if s.endswith(model_file) else Path(s).name or s for s in specs]
    )


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.commands import missing_extra_hint, policy_names
    from yahtzee_env.game.render import Style, color_enabled
    from yahtzee_env.play.terminal import Player, TerminalGame, line_reader
    from yahtzee_env.policies.models import LEVELS, ModelFormatError
    from yahtzee_env.policies.resolve import policy_label, resolve_policy

    specs = policy_names(args.opponents)
    if not 1 <= len(specs) <= 3:
        print(
            f"yahtzee play: error: --opponents needs 1 to 3 CPU players, got {len(specs)}",
            file=sys.stderr,
        )
        return 2
    seats = 1 + len(specs)
    if args.first is not None and not 1 <= args.first <= seats:
        print(
            f"yahtzee play: error: --first must be 1..{seats} (1 = you), got {args.first}",
            file=sys.stderr,
        )
        return 2
    if "optimal" in specs:
        from yahtzee_env.solver.exact import cache_path

        if not cache_path(args.rules).exists():
            print(
                "solving the optimal strategy for these rules (once; it is cached afterwards)...",
                file=sys.stderr,
            )
    cpus = []
    for i, spec in enumerate(specs):
        try:
            policy = resolve_policy(spec, args.rules, None if args.seed is None else args.seed + i)
        except ModelFormatError as err:
            if spec in LEVELS:
                hint = (
                    "the level's files in yahtzee_env/policies/levels/ are missing or damaged: "
                    "reinstall the package, or play against heuristic, greedy, random or optimal "
                    "instead"
                )
            else:
                hint = "check the model path"
            print(
                f"yahtzee play: error: CPU {spec!r} is not available: {err}. ({hint})",
                file=sys.stderr,
            )
            return 2
        except ValueError as err:
            print(f"yahtzee play: error: {err}", file=sys.stderr)
            return 2
        except ImportError as err:
            print(f"yahtzee play: error: {missing_extra_hint(err, spec)}", file=sys.stderr)
            return 2
        cpus.append(policy)
    players = [Player(args.name)] + [
        Player(policy_label(name, policy, args.rules), policy)
        for name, policy in zip(_cpu_names(specs), cpus, strict=True)
    ]
    out = sys.stdout
    style = Style(color_enabled(out) and not args.no_color)
    game_class = TerminalGame
    if args.coach:
        from yahtzee_env.play.terminal_coach import CoachedTerminalGame as game_class
    game = game_class(
        players, args.rules, args.seed, input_fn=line_reader(sys.stdin, out), out=out, style=style
    )
    first = None if args.first is None else args.first - 1
    return game.run(match=args.match, first=first)
