"""The clairvoyant ceiling at a table of two (issue 61): how often a player who knew the other
card's final total in advance would beat a score-optimal opponent.

    python experiments/clairvoyant.py --targets data/win/targets.npz \
        --json data/win/clairvoyant.json

1. `yahtzee_env.solver.targets.solve_targets`: W(b), the best chance of a final total above
   ``b`` (a total equal to ``b`` counts 1/2, the protocol's draw), exact for every ``b`` in
   ``0..--max-need`` (about an hour on one core at 450; ``--targets FILE`` keeps it, and a
   later run reads it back).
2. The score-optimal player's final totals ``B`` over ``--games`` seeded games
   (`yahtzee_env.analysis.evaluation.play_games`, the `optimal` policy).
3. The ceiling: the mean of W(B) over those games, ± a normal 95% interval over games (the
   sample of ``B`` is the only error); a ``B`` above ``--max-need`` counts between 0 and
   W(max_need), and the report gives both ends.

No policy facing a score-optimal opponent wins more often: seeing the end of the other card
is at least as good as watching it grow.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from yahtzee_env.analysis.evaluation import play_games
from yahtzee_env.fileio import atomic_write
from yahtzee_env.policies.baselines import make_policy
from yahtzee_env.solver.targets import solve_targets


def targets(rules: str, max_need: int, path: str | None) -> tuple[np.ndarray, float]:
    if path and Path(path).exists():
        with np.load(path) as saved:
            if int(saved["max_need"]) != max_need or str(saved["rules"]) != rules:
                raise SystemExit(
                    f"{path} holds another solve ({saved['rules']}, "
                    f"max_need {int(saved['max_need'])}); remove it or name another"
                )
            return saved["start"], float(saved["seconds"])
    t0 = time.perf_counter()
    start = solve_targets(
        rules, max_need, progress=lambda d, n: print(f"  layer {d}/{n}", flush=True)
    ).start
    seconds = time.perf_counter() - t0
    if path:
        np.savez(path, start=start, max_need=max_need, rules=rules, seconds=seconds)
    return start, seconds


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="official")
    parser.add_argument("--max-need", type=int, default=450)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", default=None, help="keep/read W(b) here (.npz)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    win, seconds = targets(args.rules, args.max_need, args.targets)
    t0 = time.perf_counter()
    scores = play_games(
        make_policy("optimal", args.rules),
        args.games,
        args.seed,
        args.rules,
        regret="no",
        workers=1,
    ).scores
    play_seconds = time.perf_counter() - t0
    over = scores > args.max_need
    w = win[np.minimum(scores, args.max_need)]
    low = np.where(over, 0.0, w)
    high = np.where(over, win[args.max_need], w)
    ci = 1.96 * float(low.std(ddof=1)) / np.sqrt(scores.size)
    row = {
        "what": "clairvoyant ceiling: P(A beats B) when A knows B's final total, B score-optimal",
        "rules": args.rules,
        "draw": "a shared total counts 1/2 (the multi-player protocol's draw)",
        "ceiling": float(low.mean()),
        "ceiling_if_over_max_need_counted_high": float(high.mean()),
        "ci95": ci,
        "interval": "normal over the sampled games of B (W is exact)",
        "games": int(scores.size),
        "seed": args.seed,
        "max_need": args.max_need,
        "b_over_max_need": int(over.sum()),
        "b_mean": float(scores.mean()),
        "w_at": {
            str(b): float(win[b]) for b in (150, 200, 250, 254, 300, 350, 400) if b <= args.max_need
        },
        "solve_seconds": round(seconds, 1),
        "play_seconds": round(play_seconds, 1),
        "command": "python experiments/clairvoyant.py " + " ".join(argv),
    }
    print(json.dumps(row, indent=2))
    if args.json:
        atomic_write(args.json, json.dumps(row, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
