"""``yahtzee configs [NAME]``: list the shipped training configs, or print one to copy and edit.

yahtzee configs                   # names and descriptions
yahtzee configs ppo > my.yaml     # then: yahtzee train my.yaml
"""

from __future__ import annotations

import argparse
import sys

HELP = "list the shipped training configs (yahtzee train NAME), or print one to copy and edit"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="a shipped config's name: print its YAML")


def run(args: argparse.Namespace) -> int:
    from yahtzee_agents.shipped import describe, shipped_configs

    shipped = shipped_configs()
    if args.name is None:
        if not shipped:
            print("yahtzee configs: error: no shipped configs found", file=sys.stderr)
            return 2
        width = max(len(n) for n in shipped)
        for name, path in shipped.items():
            print(f"{name:<{width}}  {describe(path)}".rstrip())
        return 0
    name = args.name.removesuffix(".yaml")
    if name not in shipped:
        print(
            f"yahtzee configs: error: no shipped config {args.name!r} (shipped: "
            f"{', '.join(shipped)})",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(shipped[name].read_text(encoding="utf-8"))
    return 0
