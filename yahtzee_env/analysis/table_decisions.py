"""Where a table-reading agent leaves the solitaire optimum because of the other card.

    from yahtzee_env.analysis.table_decisions import find_table_decisions
    report = find_table_decisions(load_opponent("data/win/model/win.json"), games=2000, seed=0)

Plays ``games`` 2-seat games of ``agent`` against the solver (``optimal``), seats alternated
(game ``g``: the agent at seat ``g % 2``), on `engine.Game` with dice from ``seed``, and looks
at every move of the agent:

* **off the optimum**: its move is not the solver's (the solitaire-optimal move); the cost is
  what the solver's action values say it gives up, in expected final points;
* **because of the other card**: shown the same position with the other card replaced by a
  copy of its own (an even table: same boxes, same total), the agent plays another move. A
  move off the optimum that stays the same on the even table is a plain mistake, not a
  reaction to the score;
* **the duelist**: what the duelist (`yahtzee_env.policies.duel`, the solver's moves plus an
  exact win-probability search over the last three turns) plays there, and the probability
  of winning its search gives each move (None outside its window);
* **in that window** (`window_summary`): whether each such move raised or lowered the
  probability of winning against the solver's move, the sum of those changes (the wins a
  game the moves gained or lost, in expectation), and how many were made in a decided game
  (the solver's move wins with probability at least 0.99 or at most 0.01: there the result
  says nothing about the move).

Nothing here is trained: the agent and its opponent are fixed, the dice seeded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yahtzee_env.game.cpu import table_cards
from yahtzee_env.game.engine import Game, describe_action
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.game.rules import BOX_NAMES, NUM_BOXES, RuleSet


def _move(game: Game, action: int) -> str:
    """A move in words: the dice it keeps, or the box and its points."""
    dice = sorted(game.dice)
    if action < 32:
        kept = [dice[i] for i in range(5) if action >> i & 1]
        return f"keep {''.join(map(str, kept)) or 'nothing'}"
    box = action - 32
    _, points = game.player.options(game.roll)
    return f"{BOX_NAMES[box]} for {int(points[box])}"


def _open(card: Any) -> list[str]:
    return [BOX_NAMES[b] for b in range(NUM_BOXES) if not card.filled >> b & 1]


def find_table_decisions(
    agent: Any, games: int = 2_000, seed: int = 0, rules: RuleSet | str = "official"
) -> dict[str, Any]:
    """The report (JSON-ready; module docstring): counts and every move off the optimum that
    the other card caused, with the solver's values and the duelist's choice."""
    from yahtzee_env.policies.baselines import OptimalPolicy
    from yahtzee_env.policies.models import load_opponent

    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    rules = RuleSet.from_spec(rules)
    duel = load_opponent("duelist", rules)
    optimal = OptimalPolicy(rules, table=duel.values)
    rng = np.random.default_rng(seed)
    moves = off = 0
    plain: list[float] = []
    caused: list[dict[str, Any]] = []
    for g in range(games):
        seat = g % 2
        game = Game(rules, num_players=2, canonical_holds=True)
        game.reset(rng)
        while not game.over:
            obs, mask = encode_seat(game, game.current), game.legal_action_mask()
            if game.current != seat:
                game.step(optimal.act(obs, mask))
                continue
            cards = table_cards(game, seat)
            mine, solver = agent.act_table(obs, mask, cards), optimal.act(obs, mask)
            moves += 1
            if mine != solver:
                off += 1
                points = optimal.oracle.action_values(obs[None])[0]
                even = agent.act_table(obs, mask, [cards[0], cards[0]])
                if even == mine:
                    plain.append(float(points[solver] - points[mine]))
                else:
                    caused.append(_decision(game, g, seat, cards, obs, mask, mine, solver,
                                            even, points, duel))  # fmt: skip
            game.step(mine)
    same = sum(d["duelist"]["action"] == d["agent"]["action"] for d in caused)
    window = window_summary(caused)
    return {
        "games": games,
        "seed": seed,
        "rules": rules.name,
        "opponent": "optimal",
        "seats": "alternated (game g: the agent at seat g % 2)",
        "agent": getattr(agent, "name", type(agent).__name__),
        "agent_moves": moves,
        "off_optimum": off,
        "off_optimum_plain": len(plain),
        "plain_cost_per_move": float(np.mean(plain)) if plain else 0.0,
        "off_optimum_because_of_the_other_card": len(caused),
        "cost_of_those_per_move": (float(np.mean([d["cost"] for d in caused])) if caused else 0.0),
        "duelist_makes_the_same_move": same,
        "in_the_duelist_window": window["moves"],
        "window": window,
        "decisions": caused,
    }


class EvenTable:
    """``policy`` (one that reads a 2-seat table) shown an even table at every move: the other
    card replaced by a copy of its own (same boxes, same total), as `find_table_decisions`
    asks it. Graded beside the policy on the same deals, it says how much of the policy's
    result comes from reading the other card: none, if the two score alike."""

    reads_table = True
    table_only = True

    def __init__(self, policy: Any) -> None:
        if not getattr(policy, "reads_table", False):
            raise ValueError(f"{getattr(policy, 'name', policy)!r}: does not read the table")
        self.policy = policy
        self.name = f"{policy.name} on an even table"
        self.threshold = policy.threshold

    def act_batch_table(self, observations: Any, action_masks: Any, cards: Any) -> np.ndarray:
        even = np.array(cards, dtype=np.int64, copy=True)
        even[:, 1:] = even[:, :1]
        return self.policy.act_batch_table(observations, action_masks, even)

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        raise ValueError(f"{self.name}: plays only at a table of two (act_batch_table)")

    def act_table(self, observation: Any, action_mask: Any, cards: Any) -> int:
        cards = np.asarray(cards, dtype=np.int64)[None]
        return int(self.act_batch_table(observation[None], np.asarray(action_mask)[None], cards)[0])


def table_reading(
    policy: Any, opponent: str = "hard", deals: int = 200_000, seed: int = 2
) -> dict[str, Any]:
    """``policy`` against ``opponent`` by the multi-player protocol on the deals of ``seed``
    (seats alternated), and the same on an even table (`EvenTable`), on the same deals: each
    one's win rate with draws as 1/2, over decisive games and its margin, with 95% CIs, and
    the difference of the two win rates with its CI paired by deal."""
    from yahtzee_env.analysis.leaderboard import load_agent
    from yahtzee_env.analysis.multiplayer import _mean_ci, decisive, play_rotated
    from yahtzee_env.policies.resolve import resolve_policy

    if deals < 2:
        raise ValueError(f"deals must be >= 2, got {deals}")
    rules = RuleSet.from_spec("official")
    other = resolve_policy(opponent, rules, 0)

    def ci(x: np.ndarray) -> float:
        return _mean_ci(x)[1]

    out: dict[str, Any] = {"opponent": opponent, "deals": deals, "games": 2 * deals,
                           "seed": seed, "rules": rules.name}  # fmt: skip
    points = {}
    for key, agent in (("with_the_table", policy), ("on_an_even_table", EvenTable(policy))):
        checked = load_agent(agent, rules, agent.name)
        points[key], margins, results = play_rotated(checked, other, 2, deals, seed, rules)
        out[key] = {"win_rate": float(points[key].mean()), "win_ci95": ci(points[key]),
                    "margin": float(margins.mean()), "margin_ci95": ci(margins),
                    **decisive(results)}  # fmt: skip
    gap = points["with_the_table"] - points["on_an_even_table"]
    out["win_rate_difference"] = float(gap.mean())
    out["win_rate_difference_ci95"] = ci(gap)
    return out


DECIDED = 0.01
"""A game is decided where the solver's move wins with probability at most this, or at least
one minus it."""


def window_summary(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """Of ``decisions`` (`find_table_decisions`'s), those in the duelist's window: how many
    raise, lower or keep the probability of winning of the solver's move, the sum of the
    changes, and how many are in a decided game (`DECIDED`)."""
    window = [d for d in decisions if d["agent"]["p_win"] is not None]
    change = [d["agent"]["p_win"] - d["solver"]["p_win"] for d in window]
    decided = [d for d in window if not DECIDED < d["solver"]["p_win"] < 1.0 - DECIDED]
    return {
        "moves": len(window),
        "p_win_higher": sum(c > 1e-9 for c in change),
        "p_win_lower": sum(c < -1e-9 for c in change),
        "p_win_equal": sum(abs(c) <= 1e-9 for c in change),
        "p_win_change": float(sum(change)),
        "in_a_decided_game": len(decided),
    }


def _decision(game, g, seat, cards, obs, mask, mine, solver, even, points, duel) -> dict:
    me, other = game.players[seat], game.players[1 - seat]
    theirs = duel.act_table(obs, mask, cards)
    wins = duel.win_values(
        me.filled, me.upper_total, me.yahtzee_state, me.total, cards[1], game.roll,
        game.rolls_left,
    )  # fmt: skip

    def p(action: int) -> float | None:
        return None if wins is None else float(wins[action])

    return {
        "game": g,
        "seat": seat,
        "dice": sorted(int(d) for d in game.dice),
        "rolls_left": game.rolls_left,
        "open": _open(me),
        "total": me.total,
        "opponent_total": other.total,
        "opponent_open": _open(other),
        "cost": float(points[solver] - points[mine]),
        "solver": {"move": _move(game, solver), "action": describe_action(solver),
                   "expected": float(points[solver]), "p_win": p(solver)},
        "agent": {"move": _move(game, mine), "action": describe_action(mine),
                  "expected": float(points[mine]), "p_win": p(mine),
                  "on_an_even_table": _move(game, even)},
        "duelist": {"move": _move(game, theirs), "action": describe_action(theirs),
                    "p_win_agent": p(mine)},
    }  # fmt: skip


def _window_words(w: dict[str, Any]) -> str:
    return (
        f"In that window {w['p_win_higher']} of the {w['moves']} raise the probability of "
        f"winning, {w['p_win_lower']} lower it, {w['p_win_equal']} leave it (together "
        f"{w['p_win_change']:+.3f} wins); {w['in_a_decided_game']} are in a decided game."
    )


def format_decisions(report: dict[str, Any], show: int = 8) -> str:
    """The counts in words, then a Markdown table of the first ``show`` decisions."""
    r = report
    lines = [
        f"{r['agent']} against {r['opponent']}, {r['games']:,} games (seed {r['seed']}, seats "
        f"alternated): {r['off_optimum']:,} of {r['agent_moves']:,} moves off the solver's; "
        f"{r['off_optimum_because_of_the_other_card']:,} because of the other card (another "
        f"move on an even table), costing {r['cost_of_those_per_move']:.2f} expected points "
        f"each; {r['off_optimum_plain']:,} plain ({r['plain_cost_per_move']:.2f} each). "
        f"The duelist makes the same move at {r['duelist_makes_the_same_move']} of the "
        f"{r['off_optimum_because_of_the_other_card']} ({r['in_the_duelist_window']} in its "
        "search window).",
        _window_words(r["window"]),
        "",
        "| dice (re-rolls left) | open boxes | score: own – theirs (their open boxes) "
        "| solver's move (exp. points, P(win)) | agent's move (exp. points, P(win)) "
        "| on an even table | duelist's move |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in r["decisions"][:show]:
        s, a = d["solver"], d["agent"]
        theirs = ", ".join(d["opponent_open"]) or "finished"

        def pw(x: float | None) -> str:
            return "–" if x is None else f"{x:.3f}"

        lines.append(
            f"| {''.join(map(str, d['dice']))} ({d['rolls_left']}) | {', '.join(d['open'])} | "
            f"{d['total']} – {d['opponent_total']} ({theirs}) | {s['move']} "
            f"({s['expected']:.1f}, {pw(s['p_win'])}) | {a['move']} ({a['expected']:.1f}, "
            f"{pw(a['p_win'])}) | {a['on_an_even_table']} | {d['duelist']['move']} |"
        )
    return "\n".join(lines)


__all__ = ["find_table_decisions", "format_decisions"]
