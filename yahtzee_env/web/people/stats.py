"""'My statistics': a player's finished games summed up (overall, by opponents, by mode).

Only the games the server dealt count in the headline figures (overall, the fair-dice test,
by opponents, solo and online). A game played in the page (issue 50: ``results.offline``
1 or 2) was dealt by the page: the server replays its moves but cannot know its dice were
fair, so such games count only in their own rows (``by_mode.offline``, ``by_mode.in_page``),
marked unverified, and in the history, each tagged (issue 57: a forged record of thirteen
Yatzys must not become the player's best score)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yahtzee_env.game.fair_dice import chi_square_uniform

HISTORY = 50  # scores in the chart


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Games, wins, draws, losses, mean and best score, Yahtzees and upper-bonus rate."""
    n = len(rows)
    scores = [r["score"] for r in rows]
    return {
        "games": n,
        "wins": sum(r["outcome"] == "win" for r in rows),
        "draws": sum(r["outcome"] == "draw" for r in rows),
        "losses": sum(r["outcome"] == "loss" for r in rows),
        "win_rate": round(sum(r["outcome"] == "win" for r in rows) / n, 4) if n else None,
        "mean_score": round(sum(scores) / n, 2) if n else None,
        "best_score": max(scores) if n else None,
        "yahtzees": sum(r["yahtzees"] for r in rows),
        "upper_bonus_rate": round(sum(r["upper_bonus"] for r in rows) / n, 4) if n else None,
    }


def in_level_order(opponents: str, levels: Sequence[str] = ()) -> str:
    """An ``opponents`` key ("easy+hard+medium", as stored: sorted by name) with its levels
    in level order ("easy+medium+hard"); levels not in ``levels`` go last, by name."""
    rank = {level: i for i, level in enumerate(levels)}
    parts = opponents.split("+")
    return "+".join(sorted(parts, key=lambda lv: (rank.get(lv, len(rank)), lv)))


def roll_statistics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The player's dice against fair dice (issue 49), over the games whose rolls were
    recorded: each face's count of the freshly rolled dice and the count fair dice expect,
    Pearson's chi-square and its p-value, and the rolls that showed a Yatzy against the
    number fair dice give for the same holds."""
    counted = [r for r in rows if r.get("faces")]
    faces = [0] * 6
    for r in counted:
        for i, c in enumerate(r["faces"].split(",")):
            faces[i] += int(c)
    dice = sum(faces)
    statistic, p_value = chi_square_uniform(faces)
    return {
        "games": len(counted),
        "dice": dice,
        "faces": faces,
        "expected_each": round(dice / 6, 2),
        "rolls": sum(r["rolls"] or 0 for r in counted),
        "yatzy_rolls": sum(r["yatzy_rolls"] or 0 for r in counted),
        "yatzy_expected": round(sum(r["yatzy_expected"] or 0.0 for r in counted), 3),
        "chi_square": None if dice == 0 else round(statistic, 3),
        "p_value": None if dice == 0 else round(p_value, 4),
    }


def player_statistics(rows: list[dict[str, Any]], levels: Sequence[str] = ()) -> dict[str, Any]:
    """The statistics page's data from the player's result rows (oldest first); the groups
    by opponents name their levels in the order of ``levels`` (the lobby's), easiest first."""
    dealt = [r for r in rows if not r.get("offline")]  # the server's dice: checkable
    by_opponents: dict[str, list] = {}
    for r in dealt:
        by_opponents.setdefault(in_level_order(r["opponents"], levels), []).append(r)
    rank = {level: i for i, level in enumerate(levels)}

    def group_order(key: str) -> tuple:
        return (key == "humans", [rank.get(lv, len(rank)) for lv in key.split("+")], key)

    return {
        "overall": summarize(dealt),
        "rolls": roll_statistics(dealt),
        "by_opponents": {
            k: summarize(by_opponents[k]) for k in sorted(by_opponents, key=group_order)
        },
        "by_mode": {
            "solo": summarize([r for r in dealt if not r["online"]]),
            "online": summarize([r for r in dealt if r["online"]]),
            # played in the page (issue 50), unverified (issue 57): only in these rows, never
            # rated; with the network off (results.offline 1), or online by choice (2)
            "offline": summarize([r for r in rows if r.get("offline") == 1]),
            "in_page": summarize([r for r in rows if r.get("offline") == 2]),
        },
        "history": [
            {
                "score": r["score"],
                "outcome": r["outcome"],
                "opponents": in_level_order(r["opponents"], levels),
                "game_id": f"{r['code']}-{r['idx']}",
                "online": bool(r["online"]),
                "offline": r.get("offline") == 1,
                "in_page": r.get("offline") == 2,
                "verified": not r.get("offline"),  # the server dealt it (the chart's games)
            }
            for r in rows[-HISTORY:]
        ],
    }
