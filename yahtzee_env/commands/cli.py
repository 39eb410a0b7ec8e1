"""The ``yahtzee`` command. Each subcommand lives in `yahtzee_env.commands.<name>`.

A command module defines ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) ->
int``, and keeps heavy imports (torch, matplotlib) inside ``run`` so that ``yahtzee --help``
stays fast and works on a core install.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# subcommand -> module in yahtzee_env.commands
COMMANDS: dict[str, str] = {
    "bench-env": "bench_env",
    "solve": "solve",
    "evaluate": "evaluate",
    "benchmark": "benchmark",
    "verify": "verify",
    "verify-game": "verify_game",
    "results": "results",
    "report": "report",
    "dataset": "dataset",
    "card": "card",
    "train": "train",
    "configs": "configs",
    "export": "export",
    "play": "play",
    "tournament": "tournament",
    "sweep": "sweep",
    "serve": "serve",
}


def build_parser() -> argparse.ArgumentParser:
    from yahtzee_env import __version__

    parser = argparse.ArgumentParser(
        prog="yahtzee",
        description="Yahtzee as a reinforcement-learning benchmark: benchmarks, the optimal "
        "solver, evaluation, training, export, and games against the CPU levels.",
    )
    parser.add_argument("--version", action="version", version=f"yahtzee-rl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(f"yahtzee_env.commands.{module_name}")
        except ModuleNotFoundError as err:
            if err.name != f"yahtzee_env.commands.{module_name}":
                raise
            continue  # command not shipped in this version
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `yahtzee evaluate ... | head`: the reader left
        sys.stderr.close()
        return 141


if __name__ == "__main__":
    sys.exit(main())
