"""The review of a finished game (``/games/<code>-<idx>``): every decision of every seat,
graded by the exact solver.

The game is rebuilt from the table's seed and its action log (`deal.new_game`), the same
way a restart resumes it, so a review works whether the coach was on or not, for CPU seats
as for humans, and under any rules preset (`coach.Coach` solves or loads that preset's
table). For each decision, before it is applied:

- ``loss``: the expected points the action gave up against the solver's best move; this is
  `coach.Coach.grade`'s regret (the same values and the same tie-break: boxes first, then
  holds in id order), so a coached game's logged regrets equal these losses;
- ``expected``: the expected final total after the action (score so far + its value), and
  ``best_expected`` the same for the best move.

Each decision also gets a ``label`` by the expected points it gave up, as chess sites grade
moves: `LABELS` holds the upper bound of each (``best`` is the solver's own move, up to
rounding; above the last bound a decision is a ``blunder``), the review states them
(``thresholds``) and counts them per seat (``labels``); ``n`` numbers the decisions of the
game in the order they were made (the page's ``review-label-<n>``, ``review-best-<n>``).
A ``mistake`` or a ``blunder`` is an error (`ERROR_LABELS`): a game whose seat made none is
a clean game (`people.achievements`).

``timeline[seat]`` is the expected final total at the start and after each of the seat's
turns (the last point is the seat's final total); ``costliest[seat]`` its three costliest
decisions. The computation is CPU-bound (one solver look-up per decision): the route runs it
in a thread (`starlette.concurrency.run_in_threadpool`) and caches it per game.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS
from yahtzee_env.game.rules import BOX_NAMES, RuleSet
from yahtzee_env.web.tables.deal import new_game

WORST = 3  # costliest decisions listed per seat
TIE_ORDER = [*range(BOX_ACTION_OFFSET, NUM_ACTIONS), *range(BOX_ACTION_OFFSET)]
# (label, the most expected points a decision with it gives up); more: "blunder"
LABELS = (("best", 0.005), ("good", 1.0), ("inaccuracy", 3.0), ("mistake", 8.0))
WORST_LABEL = "blunder"
LABEL_NAMES = (*(name for name, _ in LABELS), WORST_LABEL)
# an error: a decision that gave up more than an inaccuracy's bound (3 expected points), a
# mistake or a blunder (the achievement "a clean game" is a game without one)
ERROR_LABELS = ("mistake", WORST_LABEL)


def errors_of(review: dict[str, Any], seat: int) -> int:
    """How many of ``seat``'s decisions the ``review`` (`review_game`) labels an error."""
    return sum(review["labels"][str(seat)][name] for name in ERROR_LABELS)


def label_of(loss: float) -> str:
    """The label of a decision that gave up ``loss`` expected points."""
    return next((name for name, bound in LABELS if loss <= bound), WORST_LABEL)


def best_action(values: np.ndarray) -> int:
    """The solver's move for ``values`` (-inf where illegal): the highest value, boxes
    before holds and lower ids first on ties, as `coach.Coach.hint` orders them."""
    return min(TIE_ORDER, key=lambda a: (-values[a], TIE_ORDER.index(a)))


def review_game(
    coach,
    rules: RuleSet,
    seed: int,
    idx: int,
    first: int,
    seats: list[dict[str, Any]],
    actions: list[tuple[int, int, float | None]],
    *,
    secret: bytes | None = None,
    duplicate: bool = False,
    **deal: Any,
) -> dict[str, Any]:
    """The review of game ``idx`` of a table: ``seats`` as the page shows them, ``actions``
    the logged ``(seat, action, regret)`` rows of that game, ``coach`` a `Coach` of
    ``rules``; ``secret`` the table's dice secret (None: the table predates the commitment),
    ``duplicate`` whether every seat drew the same dice, ``deal`` `deal.new_game`'s rest."""
    n = len(seats)
    game, _ = new_game(rules, seed, idx, n, first, secret=secret, duplicate=duplicate, **deal)
    turns: list[dict[str, Any]] = []
    open_turn: dict[int, dict[str, Any]] = {}
    rounds = [0] * n
    decided: list[dict[str, Any]] = []  # every decision, in order
    for seat, action, _regret in (a for a in actions if a[1] >= 0):  # (-1: a first roll)
        if game.over or game.current != seat:
            raise ValueError(f"action log out of order at seat {seat}")
        values = coach.action_values(game, seat)
        best = best_action(values)
        total = game.players[seat].total
        loss = float(values[best] - values[action]) if np.isfinite(values[action]) else np.inf
        loss = round(max(loss, 0.0), 4)
        decision = {
            "n": len(decided),
            "label": label_of(loss),
            "dice": list(game.dice),
            "rolls_left": game.rolls_left,
            "action": int(action),
            "best_action": int(best),
            "loss": loss,
            "expected": round(float(total + values[action]), 2),
            "best_expected": round(float(total + values[best]), 2),
        }
        turn = open_turn.get(seat)
        if turn is None:
            rounds[seat] += 1
            turn = {"seat": seat, "round": rounds[seat], "decisions": []}
            open_turn[seat] = turn
            turns.append(turn)
        turn["decisions"].append(decision)
        decided.append(decision)
        card = game.players[seat]
        bonus_before = card.upper_bonus + card.yahtzee_bonus
        game.step(action)
        if action >= BOX_ACTION_OFFSET:
            box = action - BOX_ACTION_OFFSET
            turn.update(
                box=BOX_NAMES[box],
                points=int(card.scores[box]),
                bonus=int(card.upper_bonus + card.yahtzee_bonus - bonus_before),
                total=int(card.total),
            )
            del open_turn[seat]
    if not game.over:
        raise ValueError("the game is not finished")
    timeline, costliest, total_loss, labels = summaries(turns, n)
    return {
        "rules": rules.name,
        "seats": seats,
        "totals": game.totals(),
        "turns": turns,
        "timeline": timeline,
        "costliest": costliest,
        "total_loss": total_loss,
        "labels": labels,
        "thresholds": [{"label": name, "max": bound} for name, bound in LABELS],
        # the dice's record with the game's seed, which anyone can check (`fair_dice`)
        "dice": game.seeded.record() if game.seeded is not None else {"predates": True},
        "duplicate": duplicate,
        "parted": parted_choices(turns, n) if duplicate else [],
    }


def summaries(turns: list[dict[str, Any]], n: int) -> tuple[dict, dict, dict, dict]:
    """Each seat's summaries of a game's graded ``turns``: its expected-score timeline, its
    costliest decisions, its total loss and how many decisions got each label."""
    timeline: dict[str, list[float]] = {}
    costliest: dict[str, list[dict[str, Any]]] = {}
    total_loss: dict[str, float] = {}
    labels: dict[str, dict[str, int]] = {}
    for seat in range(n):
        mine = [t for t in turns if t["seat"] == seat]
        points = [mine[0]["decisions"][0]["best_expected"]] if mine else []
        points += [t["decisions"][-1]["expected"] for t in mine]
        timeline[str(seat)] = points
        graded = [(d, t["round"]) for t in mine for d in t["decisions"]]
        total_loss[str(seat)] = round(sum(d["loss"] for d, _ in graded), 4)
        labels[str(seat)] = {
            name: sum(d["label"] == name for d, _ in graded) for name in LABEL_NAMES
        }
        costly = sorted((x for x in graded if x[0]["loss"] > 1e-6), key=lambda x: -x[0]["loss"])
        costliest[str(seat)] = [{**d, "round": r} for d, r in costly[:WORST]]
    return timeline, costliest, total_loss, labels


def parted_choices(turns: list[dict[str, Any]], seats: int) -> list[dict[str, Any]]:
    """A duplicate game's turns where the seats' choices parted: per round where not every
    seat made the same decisions, the first decision that differs, with the dice each seat
    had then and, per seat, its choice, its expected final total and the expected points it
    gave up against the solver's best move."""
    by_round: dict[int, dict[int, dict[str, Any]]] = {}
    for turn in turns:
        by_round.setdefault(turn["round"], {})[turn["seat"]] = turn
    parted = []
    for rnd in sorted(by_round):
        mine = by_round[rnd]
        if len(mine) < seats:
            continue
        steps = [mine[s]["decisions"] for s in range(seats)]
        for k in range(max(len(d) for d in steps)):
            at = [d[k] if k < len(d) else None for d in steps]
            if any(x is None for x in at) or len({(x["action"], tuple(x["dice"])) for x in at}) > 1:
                parted.append(
                    {
                        "round": rnd,
                        "step": k,
                        "choices": [
                            None if x is None else {
                                "seat": s, "dice": x["dice"], "action": x["action"],
                                "expected": x["expected"], "loss": x["loss"],
                                "best_action": x["best_action"],
                            }
                            for s, x in enumerate(at)
                        ],
                    }
                )  # fmt: skip
                break
    return parted


__all__ = [
    "ERROR_LABELS",
    "LABELS",
    "best_action",
    "errors_of",
    "label_of",
    "parted_choices",
    "review_game",
]
