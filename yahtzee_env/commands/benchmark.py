"""``yahtzee benchmark POLICY``: grade one agent by the fixed benchmark protocol
(`yahtzee_env.analysis.leaderboard`) and print its leaderboard row; ``--players N --vs
LEVEL[,LEVEL]`` plays the multi-player protocol (`yahtzee_env.analysis.multiplayer`);
``--check-protocol`` says whether this machine plays the standard protocol's games."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from yahtzee_env.commands import MODEL_FILES, int_in_range, shipped_levels
from yahtzee_env.game.rules import PRESETS

HELP = (
    "grade an agent by the benchmark protocol (10,000 games on fixed seeds, official rules, "
    "every decision graded by the exact solver): mean, expected score and regret, as a "
    "leaderboard row"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from yahtzee_env.analysis.evaluation import MAX_GAMES

    parser.add_argument(
        "policy",
        metavar="POLICY",
        nargs="?",
        help=f"a level ({', '.join(shipped_levels())}), a baseline (random, greedy, heuristic, "
        f"optimal), {MODEL_FILES}, or package.module:function taking (obs[N, 72] float32, "
        "mask[N, 45] bool) and returning actions[N] (or naming an object with act_batch)",
    )
    parser.add_argument(
        "--rules",
        default=None,
        choices=list(PRESETS),
        help="rules preset (default official; for an SB3 zip saved without a run folder, also "
        "the rules it was trained for)",
    )
    parser.add_argument(
        "--holds",
        choices=("all", "canonical"),
        default=None,
        help="an SB3 zip saved without a run folder: the holds mode it was trained with "
        "(default all, Yahtzee-v0's default)",
    )
    parser.add_argument(
        "--games",
        type=int_in_range(1, MAX_GAMES),
        default=10_000,
        help="games (default 10,000, the protocol's; another count marks the row non-standard)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the leaderboard row here")
    parser.add_argument("--name", default=None, help="the agent's name in the row")
    parser.add_argument(
        "--description",
        default=None,
        help="a line for the leaderboard (method, config, env-steps, seed, paper); the row's "
        "agent name otherwise",
    )
    parser.add_argument(
        "--workers",
        type=int_in_range(1, 256),
        default=min(2, os.cpu_count() or 1),
        help="worker processes (speed only: the numbers are the same for any count)",
    )
    parser.add_argument(
        "--knew",
        default=None,
        metavar="FIELD=VALUE;...",
        help="what the agent knew, for the row (a function cannot say): ';'-separated "
        'observation=, reward=, actions=, model=, teacher= (e.g. "observation=raw 72 floats;'
        'reward=game score only;actions=all 32 holds;model=none;teacher=none"); a field not '
        "given is 'not stated'",
    )
    parser.add_argument(
        "--players",
        type=int_in_range(1, 4),
        default=1,
        help="1 (default): the solitaire protocol; 2-4: the multi-player protocol (with --vs)",
    )
    parser.add_argument(
        "--vs",
        default=None,
        metavar="LEVEL[,LEVEL]",
        help="the opponents of the multi-player protocol, each its own match-up against "
        "players-1 copies (standard at 2 players: hard,optimal)",
    )
    parser.add_argument(
        "--deals",
        type=int_in_range(1, 1_000_000),
        default=None,
        help="deals of the multi-player protocol (default 2,000, the protocol's)",
    )
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="multi-player protocol: every seat of a game gets the same dice for the same turn "
        "and roll (common random numbers: a narrower CI at the same games; not the standard "
        "protocol)",
    )
    parser.add_argument(
        "--deal-seed",
        type=int_in_range(0, 2**32 - 1),
        default=None,
        help="multi-player protocol: the seed of its deals (default 0, the protocol's; another "
        "one grades on deals the agent was never chosen on, and the row is not the standard "
        "protocol's)",
    )
    parser.add_argument(
        "--check-protocol",
        action="store_true",
        help="recompute the digest of the protocol's dice here and say whether this machine "
        "plays the standard protocol's games (no POLICY needed)",
    )
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.leaderboard import benchmark, format_benchmark, load_agent
    from yahtzee_env.commands import (
        OutputPathError,
        check_output_file,
        missing_extra_hint,
        progress_bar,
    )
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.policies.models import ModelFormatError

    if args.check_protocol:
        from yahtzee_env.analysis.leaderboard import PROTOCOL
        from yahtzee_env.analysis.protocol import check_protocol

        same, report = check_protocol(PROTOCOL)
        print(report)
        if args.policy is None:
            return 0 if same else 1
    if args.policy is None:
        print("yahtzee benchmark: error: give a POLICY (or --check-protocol)", file=sys.stderr)
        return 2
    if args.players > 1 or args.vs:
        return _run_versus(args)
    for flag, given in (
        ("--duplicate", args.duplicate),
        ("--deal-seed", args.deal_seed is not None),
    ):
        if given:
            print(f"yahtzee benchmark: error: {flag} is for --players 2-4 --vs", file=sys.stderr)
            return 2
    rules = args.rules or "official"
    try:
        check_output_file(args.json, "--json")
        knew = parse_knew(args.knew)
        source = _model_source(args)
        agent = load_agent(source if source is not None else args.policy, rules, args.name)
        assumed = getattr(source, "assumed", None) or {}
        if assumed:
            from yahtzee_agents.sources import describe_assumed

            print(f"{args.policy}: {describe_assumed(assumed)}", file=sys.stderr)
        row = benchmark(
            agent,
            rules=rules,
            games=args.games,
            workers=args.workers,
            progress=progress_bar(agent.name, "games", not args.no_progress),
            knew=knew,
            source=args.policy,
        )
    except (ValueError, ModelFormatError, OutputPathError) as err:  # AgentError included
        print(f"yahtzee benchmark: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"yahtzee benchmark: error: {missing_extra_hint(err)}", file=sys.stderr)
        return 2
    if assumed:
        row["assumed"] = assumed
    if args.description:
        row["description"] = args.description[:300]
    print(format_benchmark(row))
    if args.json:
        atomic_write(args.json, json.dumps(row, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def _model_source(args: argparse.Namespace):
    """An SB3 zip's policy, loaded here so that ``--holds``/``--rules`` reach it (None for any
    other POLICY, which `load_agent` resolves by name)."""
    from yahtzee_env.policies.resolve import policy_label
    from yahtzee_env.policies.sources import load_model_source

    if not args.policy.endswith(".zip"):
        if args.holds is not None:
            raise ValueError("--holds is for an SB3 .zip saved without a run folder")
        return None
    policy = load_model_source(args.policy, args.rules, holds=args.holds)
    policy.name = policy_label(args.name or policy.name, policy, args.rules or "official")
    return policy


def parse_knew(text: str | None) -> dict[str, str] | None:
    """``--knew "observation=raw 72 floats;reward=game score only"`` as the five facts (the
    fields not given are 'not stated'); ValueError naming a bad field."""
    if text is None:
        return None
    from yahtzee_env.policies.knowledge import FIELDS, knowledge

    facts: dict[str, str] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        field, sep, value = part.partition("=")
        field = field.strip()
        if not sep or field not in FIELDS:
            raise ValueError(f"--knew: {part[:40]!r} is not FIELD=VALUE with FIELD one of {FIELDS}")
        facts[field] = value.strip()
    return knowledge(**facts)


def _run_versus(args: argparse.Namespace) -> int:
    from yahtzee_env.analysis.multiplayer import VERSUS_PROTOCOL, benchmark_versus, format_versus
    from yahtzee_env.commands import OutputPathError, check_output_file, missing_extra_hint
    from yahtzee_env.fileio import atomic_write
    from yahtzee_env.policies.models import ModelFormatError

    try:
        if args.players < 2:
            raise ValueError("--vs needs --players 2, 3 or 4")
        if not args.vs:
            raise ValueError("--players needs --vs LEVEL[,LEVEL] (standard: hard,optimal)")
        check_output_file(args.json, "--json")
        row = benchmark_versus(
            args.policy,
            players=args.players,
            vs=[v.strip() for v in args.vs.split(",") if v.strip()],
            deals=args.deals or VERSUS_PROTOCOL.deals,
            rules=args.rules or "official",
            name=args.name,
            knew=parse_knew(args.knew),
            duplicate=args.duplicate,
            **({} if args.deal_seed is None else {"seed": args.deal_seed}),
        )
        if args.description:
            row["description"] = args.description[:300]
    except (ValueError, ModelFormatError, OutputPathError) as err:
        print(f"yahtzee benchmark: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"yahtzee benchmark: error: {missing_extra_hint(err)}", file=sys.stderr)
        return 2
    print(format_versus(row))
    if args.json:
        atomic_write(args.json, json.dumps(row, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
