"""What a policy's regret is made of: the grader's per-decision data, split by kind of decision.

Plays ``--games`` games of `Yahtzee-v0` with POLICY (anything `yahtzee benchmark` takes: a level,
a model file, ``package.module:function``) and grades every decision with the exact solver, as
the benchmark does. Each decision's regret (the best action's value minus the value of the one
taken, in expected final points) is filed under

* its kind: a hold after the first roll, a hold after the second, a box scored with re-rolls
  left, or the box at the end of the turn;
* its round (1-13);
* for a box choice that was not the best one: which box was taken and which was best (the pairs
  that cost the most are listed);
* three themes the frontier issue asks about:
  - **upper bonus (box choices)**: boxes scored while the upper bonus is still open and within
    reach, where the box taken or the best one is an upper box (the holds that aim at the bonus
    are not separable from the others; the bonus rate against optimal's says the rest);
  - **Yahtzee chasing**: holds where the best or the taken hold keeps three or more of one face
    with the Yahtzee box open or holding 50;
  - **late game**: every decision of rounds 11-13.

A theme is a filter, not a partition (a decision may fall in two). Each line gives the regret per
game (mean over games, with a 95% CI from the per-game sums) and its share of the total. The
outcomes (upper bonus rate, Yahtzee rate) are compared with the optimal player's on the same
seeds.

    python experiments/regret_breakdown.py hard --games 4000 --seed 0 --json out/regret_hard.json
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from yahtzee_env.analysis.evaluation import FirstGames
from yahtzee_env.analysis.leaderboard import load_agent
from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.dice import DICE, NUM_DICE
from yahtzee_env.game.engine import BOX_ACTION_OFFSET
from yahtzee_env.game.rules import BOX_NAMES, NUM_UPPER
from yahtzee_env.policies.baselines import decode, reseeded
from yahtzee_env.solver.exact import load_or_solve
from yahtzee_env.solver.oracle import OptimalOracle

KINDS = ("hold after roll 1", "hold after roll 2", "box with re-rolls left", "box at turn end")
YAHTZEE_BOX = BOX_NAMES.index("yahtzee")
_BITS = (np.arange(32)[:, None] >> np.arange(NUM_DICE)) & 1  # hold mask -> kept positions


def _longest_of_a_kind(dice: np.ndarray, holds: np.ndarray) -> np.ndarray:
    """The most dice of one face kept by each hold (``dice`` [N, 5] sorted, ``holds`` [N])."""
    kept = np.where(_BITS[holds] == 1, dice, 0)  # [N, 5], 0 where rerolled
    counts = (kept[:, :, None] == np.arange(1, 7)).sum(axis=1)  # [N, 6]
    return counts.max(axis=1)


def _upper_in_reach(d, threshold: int) -> np.ndarray:
    """Upper bonus not yet earned and still reachable by scoring the open upper boxes with
    five of their face (a loose bound, as a filter)."""
    open_upper = d.open_boxes[:, :NUM_UPPER]
    best_left = (open_upper * (np.arange(1, 7) * NUM_DICE)).sum(axis=1)
    return ~d.upper_bonus & (d.upper_total + best_left >= threshold) & open_upper.any(axis=1)


def play(policy, games: int, seed: int, table) -> dict:
    oracle = OptimalOracle(table)
    # seeded as the grader's chunk (`play_chunk`): the same games and the same grades
    env_seed, policy_seed = np.random.SeedSequence(seed).generate_state(2)
    policy = reseeded(policy, int(policy_seed))
    env = YahtzeeVectorEnv(num_envs=games, rules=table.rules)
    first = FirstGames(env, int(env_seed))
    per_game = defaultdict(lambda: np.zeros(games))  # category -> regret summed per game
    count = defaultdict(int)  # category -> decisions in it (with regret > 0)
    decisions = 0
    totals = np.zeros(games)
    upper_bonus = np.zeros(games, bool)
    yahtzee = np.zeros(games, bool)
    for active, obs, masks in first:
        actions = policy.act_batch(obs, masks)
        av = oracle.action_values(obs)
        best = av.argmax(axis=1)
        regret = av.max(axis=1) - av[np.arange(active.size), actions]
        decisions += active.size
        d = decode(obs, table.rules)
        is_box = actions >= BOX_ACTION_OFFSET
        kind = np.where(is_box, np.where(d.rolls_left > 0, 2, 3), np.where(d.rolls_left == 2, 0, 1))
        rounds = d.boxes_filled + 1
        dice = DICE[d.roll]
        bad = regret > 1e-9
        # themes
        taken_box = np.where(is_box, actions - BOX_ACTION_OFFSET, -1)
        best_box = np.where(best >= BOX_ACTION_OFFSET, best - BOX_ACTION_OFFSET, -1)
        upper_touch = ((taken_box >= 0) & (taken_box < NUM_UPPER)) | (
            (best_box >= 0) & (best_box < NUM_UPPER)
        )
        holds = ~is_box & (best < BOX_ACTION_OFFSET)
        theme_upper = _upper_in_reach(d, table.rules.upper_bonus_threshold) & is_box & upper_touch
        yahtzee_live = d.yahtzee_state < 2  # open or holding 50
        chase = np.zeros(active.size, bool)
        if holds.any():
            h = np.flatnonzero(holds)
            k_taken = _longest_of_a_kind(dice[h], actions[h])
            k_best = _longest_of_a_kind(dice[h], best[h])
            chase[h] = yahtzee_live[h] & ((k_taken >= 3) | (k_best >= 3)) & (k_taken != k_best)
        themes = {
            "upper bonus (box choices)": theme_upper,
            "Yahtzee chasing": chase,
            "late game (rounds 11-13)": rounds >= 11,
        }
        for i in np.flatnonzero(bad):
            g = active[i]
            r = regret[i]
            for key in (
                ("kind", KINDS[kind[i]]),
                ("round", int(rounds[i])),
                *(("theme", name) for name, hit in themes.items() if hit[i]),
            ):
                per_game[key][g] += r
                count[key] += 1
            if is_box[i] and best_box[i] >= 0 and best_box[i] != taken_box[i]:
                key = ("box", f"{BOX_NAMES[taken_box[i]]} instead of {BOX_NAMES[best_box[i]]}")
                per_game[key][g] += r
                count[key] += 1
            totals[g] += r
        _, ended, final = first.step(actions)
        if ended.size:
            upper_bonus[ended] = final["upper_bonus"][ended] > 0
            yahtzee[ended] = final["scorecard"][ended, YAHTZEE_BOX] > 0
    env.close()
    return {
        "per_game": per_game,
        "count": count,
        "total": totals,
        "decisions": decisions,
        "upper_bonus_rate": float(upper_bonus.mean()),
        "yahtzee_rate": float(yahtzee.mean()),
    }


def _line(values: np.ndarray, total: float) -> dict:
    mean = float(values.mean())
    ci = float(1.96 * values.std(ddof=1) / np.sqrt(values.size))
    return {"per_game": mean, "ci95": ci, "share": mean / total if total else 0.0}


def summarise(played: dict, optimal: dict, name: str, games: int, seed: int) -> dict:
    total = float(played["total"].mean())
    groups: dict[str, dict] = defaultdict(dict)
    for (group, label), values in played["per_game"].items():
        entry = _line(values, total)
        entry["decisions"] = played["count"][(group, label)]
        groups[group][str(label)] = entry
    boxes = sorted(groups.get("box", {}).items(), key=lambda kv: -kv[1]["per_game"])
    return {
        "policy": name,
        "games": games,
        "seed": seed,
        "regret_per_game": _line(played["total"], total),
        "decisions": played["decisions"],
        "by_kind": {k: groups["kind"].get(k) for k in KINDS},
        "by_round": {str(r): groups["round"].get(str(r)) for r in range(1, 14)},
        "themes": groups["theme"],
        "box_swaps": dict(boxes[:10]),
        "outcomes": {
            "upper_bonus_rate": played["upper_bonus_rate"],
            "optimal_upper_bonus_rate": optimal["upper_bonus_rate"],
            "yahtzee_rate": played["yahtzee_rate"],
            "optimal_yahtzee_rate": optimal["yahtzee_rate"],
        },
    }


def markdown(summary: dict) -> str:
    def row(label, e):
        if e is None:
            return f"| {label} | 0 | 0% | 0 |"
        return (
            f"| {label} | {e['per_game']:.2f} ± {e['ci95']:.2f} | {100 * e['share']:.0f}% | "
            f"{e['decisions']:,} |"
        )

    t = summary["regret_per_game"]
    out = [
        f"Regret of {summary['policy']}: {t['per_game']:.2f} ± {t['ci95']:.2f} expected points "
        f"per game ({summary['games']:,} games, seed {summary['seed']}, "
        f"{summary['decisions']:,} decisions)",
        "",
        "| where | regret per game | share | decisions with regret |",
        "|---|---:|---:|---:|",
    ]
    out += [row(k, v) for k, v in summary["by_kind"].items()]
    out += [row(f"round {r}", v) for r, v in summary["by_round"].items()]
    out += [row(f"theme: {k}", v) for k, v in summary["themes"].items()]
    out += [row(f"box: {k}", v) for k, v in summary["box_swaps"].items()]
    o = summary["outcomes"]
    out += [
        "",
        f"upper bonus {100 * o['upper_bonus_rate']:.1f}% (optimal "
        f"{100 * o['optimal_upper_bonus_rate']:.1f}%), Yahtzee scored "
        f"{100 * o['yahtzee_rate']:.1f}% (optimal {100 * o['optimal_yahtzee_rate']:.1f}%), "
        "same seeds",
    ]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", help="a level, a model file or package.module:function")
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="official")
    parser.add_argument("--json", type=Path, help="write the summary here")
    args = parser.parse_args()
    table = load_or_solve(args.rules)
    agent = load_agent(args.policy, args.rules)
    played = play(agent, args.games, args.seed, table)
    optimal = play(load_agent("optimal", args.rules), args.games, args.seed, table)
    summary = summarise(played, optimal, args.policy, args.games, args.seed)
    print(markdown(summary))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
