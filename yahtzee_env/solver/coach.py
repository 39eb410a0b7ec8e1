"""A coach backed by the exact solver: hints, per-decision regret and an end-of-game review.

Used by the terminal game (``yahtzee play --coach``, the ``hint`` command) and by the web
tables (``yahtzee serve``). Every number comes from `yahtzee_env.solver.oracle.OptimalOracle` over
the solver table of the game's rules: the *value* of an action is the expected score still
to come after taking it under optimal play (this turn's points included), so

- a hint lists the best distinct options (holds that keep the same dice count once) with
  the expected final total each leads to (score so far + value);
- the regret of a decision is the best value minus the value of the action taken (0 for an
  optimal one), the same quantity `yahtzee_env.solver.exact.regret_of` grades policies with.

    coach = Coach("official")           # loads (or solves once, ~5 s) the solver table
    options = coach.hint(game, seat)    # [Option(action, label, value, expected_total)]
    decision = coach.grade(game, seat, action)  # before game.step(action)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS, Game
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import RuleSet
from yahtzee_env.game.words import describe_move, format_dice

TOP_OPTIONS = 4


@dataclass(frozen=True)
class Option:
    """One candidate move: its action id, a label, its value (expected points to come) and
    the expected final total it leads to."""

    action: int
    label: str
    value: float
    expected_total: float

    def to_dict(self) -> dict:
        return {
            "action": self.action,
            "label": self.label,
            "value": round(self.value, 2),
            "expected_total": round(self.expected_total, 2),
        }


@dataclass(frozen=True)
class Decision:
    """A graded decision: what was done, the best move, and the expected points given up."""

    dice: tuple[int, ...]
    rolls_left: int
    action: int
    best_action: int
    regret: float

    @property
    def text(self) -> str:
        roll = 3 - self.rolls_left
        taken = describe_move(self.dice, self.action)
        if self.regret <= 1e-6:
            return f"dice {format_dice(self.dice)} (roll {roll}): {taken} (best)"
        best = describe_move(self.dice, self.best_action)
        return (
            f"dice {format_dice(self.dice)} (roll {roll}): {taken}, gave up "
            f"{self.regret:.2f} expected points; best was {best}"
        )

    def to_dict(self) -> dict:
        return {
            "dice": list(self.dice),
            "rolls_left": self.rolls_left,
            "action": self.action,
            "best_action": self.best_action,
            "regret": round(self.regret, 4),
            "text": self.text,
        }


class Coach:
    """Hints and grades for any seat of an `engine.Game` under ``rules``."""

    def __init__(self, rules: RuleSet | str | None = "official", table=None) -> None:
        from yahtzee_env.solver.exact import load_or_solve
        from yahtzee_env.solver.oracle import OptimalOracle

        self.rules = RuleSet.from_spec(rules)
        self.oracle = OptimalOracle(table if table is not None else load_or_solve(self.rules))

    def action_values(self, game: Game, seat: int) -> np.ndarray:
        """float64[45]: value of each action of ``seat`` (the mover) now; -inf if illegal."""
        values = self.oracle.action_values(encode_seat(game, seat)[None])[0].astype(np.float64)
        mask = game.legal_action_mask()
        return np.where(mask & np.isfinite(values), values, -np.inf)

    def hint(self, game: Game, seat: int, top: int = TOP_OPTIONS) -> list[Option]:
        """The ``top`` best distinct moves, best first (holds that keep the same dice count
        once, as the lowest hold id)."""
        values = self.action_values(game, seat)
        dice = game.dice
        total = game.players[seat].total
        seen: set[tuple[int, ...]] = set()
        options: list[Option] = []
        # boxes first on ties (as `exact.best_of`), then holds in id order
        order = [*range(BOX_ACTION_OFFSET, NUM_ACTIONS), *range(BOX_ACTION_OFFSET)]
        for action in sorted(order, key=lambda a: -values[a]):
            if not np.isfinite(values[action]):
                break
            if action < BOX_ACTION_OFFSET:
                kept = tuple(d for i, d in enumerate(dice) if action >> i & 1)
                if kept in seen:
                    continue
                seen.add(kept)
            options.append(
                Option(action, describe_move(dice, action), values[action], total + values[action])
            )
            if len(options) == top:
                break
        return options

    def grade(self, game: Game, seat: int, action: int) -> Decision:
        """Grade ``action`` of the mover *before* it is applied."""
        values = self.action_values(game, seat)
        best = self.hint(game, seat, top=1)[0].action
        regret = float(values[best] - values[action]) if np.isfinite(values[action]) else np.inf
        return Decision(game.dice, game.rolls_left, int(action), int(best), max(regret, 0.0))


def review(decisions: list[Decision], worst: int = 3) -> dict:
    """End-of-game summary: total regret and the ``worst`` costliest decisions."""
    costly = sorted((d for d in decisions if d.regret > 1e-6), key=lambda d: -d.regret)
    return {
        "decisions": len(decisions),
        "total_regret": round(sum(d.regret for d in decisions), 4),
        "costliest": [d.to_dict() for d in costly[:worst]],
    }


__all__ = ["Coach", "Decision", "Option", "review"]
