"""Write the project's own rows of results/: every shipped level and built-in policy by the
solitaire protocol, the levels by the 2-player protocol against the standard opponents, and
the published numbers (reported, not re-run), then rewrite the tables generated from them.

    python experiments/results_rows.py                   # all of it (about 5 minutes on 2 cores)
    python experiments/results_rows.py --only hard,random --no-versus

A row is what ``yahtzee benchmark NAME --description ... --json results/NAME.json`` writes;
this script only fixes the descriptions. Run it from a clean checkout (the rows record the
commit and whether tracked files were modified).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yahtzee_env.analysis.leaderboard import ROW_FORMAT, ROW_VERSION, benchmark
from yahtzee_env.analysis.multiplayer import VERSUS_PROTOCOL, benchmark_versus
from yahtzee_env.analysis.results import check_row, load_rows, schema_text, update_text
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.knowledge import knowledge, knowledge_of_training, track

ROOT = Path(__file__).resolve().parents[1]

SOLITAIRE = {
    "optimal": "optimal (the exact solver)",
    "master": "master (learned turn values + expectimax through the rules model, 40,000 "
    "games, seed 0)",
    "expert": "expert (the solver distilled into a 256×256×256 MLP)",
    "hard": "hard (PPO, `configs/ppo-long.yaml` with λ 0.9, 120 M env-steps, seed 0)",
    "duelist": "duelist (plays to win at 2 seats: the solver's moves and an exact win-probability "
    "search over the last turns; alone and at 3-4 seats it plays hard's network)",
    "heuristic": "heuristic (built-in baseline)",
    "medium": "medium (PPO, a `configs/ppo.yaml` checkpoint at 1.26 M env-steps)",
    "easy": "easy (PPO, a `configs/ppo.yaml` checkpoint at 262,144 env-steps)",
    "greedy": "greedy (best immediate score)",
    "random": "random (uniform legal action)",
}
VERSUS = ("easy", "medium", "hard", "expert", "master", "duelist")

_PPO_LONG = knowledge_of_training(
    observation_version=2, shaping="upper-bonus", canonical_holds=True, teacher="none"
)
REPORTED = {
    "ppo-long-s1": (
        "PPO, `configs/ppo-long.yaml`, seed 1 (118 M env-steps; checkpoint not shipped)",
        _PPO_LONG,
        "the agent",
        (250.56663299707472, "expected score", 10_000,
         "our run, graded by 0.1.0 (docs/ppo_long/ppo-long-s1/benchmark-118013952.json)"),
    ),
    "ppo-long-s2": (
        "PPO, `configs/ppo-long.yaml`, seed 2 (120 M env-steps; checkpoint not shipped)",
        _PPO_LONG,
        "the agent",
        (250.52214449462144, "expected score", 10_000,
         "our run, graded by 0.1.0 (docs/ppo_long/ppo-long-s2/benchmark-120012800.json)"),
    ),
    "ppo-long-lam09-s0": (
        "PPO, `configs/ppo-long.yaml` with λ 0.9 (`ppo.gae_lambda=0.9`), seed 0 (120 M env-steps; "
        "checkpoint not shipped)",
        _PPO_LONG,
        "the agent",
        (251.21277018894853, "expected score", 10_000,
         "our run, graded by 0.2.0 (docs/ppo_long/ppo-long-lam09-s0/benchmark-120012800.json)"),
    ),
    "ppo-long-lam09-s1": (
        "PPO, `configs/ppo-long.yaml` with λ 0.9 (`ppo.gae_lambda=0.9`), seed 1 (120 M env-steps; "
        "checkpoint not shipped)",
        _PPO_LONG,
        "the agent",
        (250.97761744887234, "expected score", 10_000,
         "our run, graded by 0.2.0 (docs/ppo_long/ppo-long-lam09-s1/benchmark-120012800.json)"),
    ),
    "ppo-long-lam09-s2": (
        "PPO, `configs/ppo-long.yaml` with λ 0.9 (`ppo.gae_lambda=0.9`), seed 2 (120 M env-steps; "
        "checkpoint not shipped)",
        _PPO_LONG,
        "the agent",
        (251.184884619309, "expected score", 10_000,
         "our run, graded by 0.2.0 (docs/ppo_long/ppo-long-lam09-s2/benchmark-120012800.json)"),
    ),
    "glenn-heuristic": (
        "Glenn's best hand-made heuristic",
        knowledge(reward="none (hand-made heuristic)", teacher="none"),
        "its paper",
        (244.87, "mean", None,
         "J. Glenn's heuristic strategies for solitaire Yahtzee, as the docs quoted it"),
    ),
    "a2c-arxiv-2601.00007": (
        "A2C (arXiv:2601.00007, Pape 2025)",
        knowledge(
            observation="not stated (the paper ablates feature encodings)",
            actions="not stated (the paper ablates action encodings)",
            model="none (policy-gradient methods: REINFORCE, A2C, PPO)",
        ),
        "its paper",
        (241.78, "median", 100_000, "arXiv:2601.00007, abstract"),
    ),
    "yahtzotron": (
        "Yahtzotron (A2C)",
        knowledge(
            observation="raw state (roll number, die counts, both scorecards and scores: "
            "its model.py)",
            model="exact rules model (a precomputed table of each keep's expected points "
            "per box: its strategy.py)",
            teacher="none (A2C through self-play: its README)",
        ),
        "its paper",
        (240.0, "mean", None, "its README: 'around 240' (dionhaefner/yahtzotron)"),
    ),
}  # fmt: skip


def reported_row(agent: str, description: str, knew, knew_from: str, reported) -> dict:
    value, statistic, games, source = reported
    return check_row(
        {
            "row_format": ROW_FORMAT,
            "row_version": ROW_VERSION,
            "kind": "reported",
            "agent": agent,
            "description": description,
            "knew": knew,
            "knew_from": knew_from,
            "track": track(knew),
            "rules": "official",
            "reported": {"value": value, "statistic": statistic, "games": games, "source": source},
        }
    )


def write(path: Path, row: dict) -> None:
    atomic_write(path, json.dumps(row, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated names (default all)")
    parser.add_argument("--no-versus", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    for name, description in SOLITAIRE.items():
        if only is None or name in only:
            row = benchmark(name, workers=args.workers)
            row["description"] = description
            write(out / f"{name}.json", check_row(row))
    for name, (description, knew, knew_from, reported) in REPORTED.items():
        if only is None or name in only:
            write(out / f"{name}.json", reported_row(name, description, knew, knew_from, reported))
    if not args.no_versus:
        for name in VERSUS:
            if only is None or name in only:
                row = benchmark_versus(name, players=2, vs=VERSUS_PROTOCOL.standard_opponents)
                row["description"] = SOLITAIRE[name]
                write(out / f"versus-2p-{name}.json", check_row(row))
    rows = load_rows(out)
    atomic_write(out / "schema.json", schema_text())
    for doc in (ROOT / "README.md", ROOT / "docs" / "benchmark.md"):
        atomic_write(doc, update_text(doc.read_text(encoding="utf-8"), rows))
        print(f"updated {doc.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
