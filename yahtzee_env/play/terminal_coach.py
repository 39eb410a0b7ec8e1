"""The coach in the terminal game: ``yahtzee play --coach``.

`CoachedTerminalGame` is a `yahtzee_env.play.terminal.TerminalGame` whose ``hint`` command lists
the best moves with their expected final score (`yahtzee_env.solver.coach.Coach`), which says after
each of the human's decisions how many expected points it gave up, and which ends each game
with the human's total regret against optimal play and the three costliest decisions.
"""

from __future__ import annotations

from typing import Any

from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import box_action, hold_action
from yahtzee_env.play.terminal import Command, TerminalGame
from yahtzee_env.solver.coach import Coach, Decision, review


class CoachedTerminalGame(TerminalGame):
    """A terminal game with the solver's coach for the human seats."""

    def __init__(self, *args: Any, coach: Coach | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.coach = coach if coach is not None else Coach(self.rules)
        self.decisions: dict[int, list[Decision]] = {}

    def hint(self, seat: int) -> None:
        self.say("  Coach (expected final score of each move, best first):")
        for i, option in enumerate(self.coach.hint(self.game, seat), start=1):
            self.say(f"   {i}. {option.label:<34} {option.expected_total:7.1f}")

    def action_of(self, command: Command) -> int | None:
        """The engine action a roll or score command will take, None if it is not a move
        the rules allow now (the game then explains why)."""
        game = self.game
        if command.verb == "score":
            action = box_action(command.box)
        elif command.verb == "roll" and game.rolls_left > 0:
            held = self.held
            if command.values:
                held = set(range(NUM_DICE)) - set(command.values)
            if len(held) == NUM_DICE:
                return None
            action = hold_action(sorted(held))
        else:
            return None
        return action if game.legal_action_mask()[action] else None

    def apply(self, seat: int, command: Command) -> bool:
        action = self.action_of(command)
        if action is not None:  # a legal move: graded before the dice change
            decision = self.coach.grade(self.game, seat, action)
            self.decisions.setdefault(seat, []).append(decision)
            if decision.regret > 0.005:
                self.say(self.style.paint(f"  coach: {decision.text}", "yellow"))
            else:
                self.say(self.style.paint("  coach: the best move", "green"))
        return super().apply(seat, command)

    def play_game(self, first: int | None = None, title: str = "") -> list[int]:
        self.decisions = {}
        totals = super().play_game(first, title)
        for seat, decisions in sorted(self.decisions.items()):
            summary = review(decisions)
            self.say(
                f"Coach: {self.names[seat]} gave up {summary['total_regret']:.2f} expected points "
                f"against optimal play over {summary['decisions']} decisions."
            )
            for i, d in enumerate(summary["costliest"], start=1):
                self.say(f"  {i}. {d['text']}")
        return totals


__all__ = ["CoachedTerminalGame"]
