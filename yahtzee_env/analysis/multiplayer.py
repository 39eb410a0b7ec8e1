"""The multi-player protocol (``yahtzee benchmark POLICY --players N --vs LEVEL[,LEVEL]``):
an agent's win rate against fixed opponents, on fixed dice, with the seat order rotated.

    from yahtzee_env.analysis.multiplayer import benchmark_versus
    row = benchmark_versus("expert", players=2, vs=["hard", "optimal"])
    row["opponents"][0]["win_rate"], row["opponents"][0]["win_ci95"]

Winning a table is another objective than the solitaire score: a player behind late in the
game should take risks that lower its expected score (Perkins, AAMAS 2019), so the two
benchmarks rank agents differently. The protocol (`VERSUS_PROTOCOL`):

* each opponent is its own match-up: the agent against ``N - 1`` copies of it;
* 2,000 deals from seed 0: deal ``d`` is ``N`` scorecards' dice streams (chunk ``d // 1024``
  of `yahtzee_env.analysis.tournament.play_batched_games`, seeded by ``SeedSequence(0)``'s
  children), the same for every agent and opponent;
* every deal is played ``N`` times with the seat order rotated, so the agent plays every
  seat's dice once: luck of the deal cancels between the agent and its opponents;
* a game's result for the agent is 1 for the sole top total, 1/2 for a shared top total (a
  draw), 0 below; a deal's result is the mean over its rotations. The win rate is the mean
  over deals, ± a normal 95% CI over deals; the margin is the agent's total minus the best
  opponent's, its mean over deals ± 95% CI.
* beside it, the figures a peer who counts otherwise can compare (`decisive`): the draw rate,
  and the win rate over decisive games only (wins / (wins + losses), draws left out) with two
  95% CIs: ``paired by deal`` (a ratio of sums over deals, by the delta method: a deal's
  rotations stay together, so the luck they share cancels; the one to quote) and
  ``binomial`` (as if every decisive game were independent: the plain interval of a peer
  with a fixed seat order). ``seats`` says how seats were assigned (``alternated``: each
  deal played once from every seat).

Intervals: `INTERVAL` names how the row's CIs were computed, for the reader of the JSON.

Duplicate dice (``duplicate=True``, ``yahtzee benchmark --duplicate``): every seat of a game
gets the same dice for the same turn and roll (`yahtzee_env.game.fair_dice`; with the same
holds, the same dice), so the luck of the deal cancels within each game, not only between the
rotations. Each rotation of a deal is then its own duplicate deal (rotation ``r`` of the
protocol's seed ``s`` is seeded ``SeedSequence([s, r])``), so the games are as many as
without it; the row says ``"duplicate": true`` and is not the standard protocol.

Players do not interact in Yahtzee (each fills its own card; see the tournament module), so
an agent's opponents never react to it, and the solitaire observation is all most agents get.
An agent that plays the table (``reads_table``, the ``duelist``) is shown every card at each
of its moves as a real table would show it (`tournament.play_batched_games`): the opponents'
games are played first, on the same dice, and their cards replayed turn by turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from yahtzee_env.analysis.evaluation import Z95
from yahtzee_env.game.rules import RuleSet


@dataclass(frozen=True)
class VersusProtocol:
    name: str = "yahtzee-versus-v1"
    deals: int = 2_000
    seed: int = 0
    rules: str = "official"
    batch_size: int = 1024
    standard_opponents: tuple[str, ...] = ("hard", "optimal")
    """The standard opponents at 2 players: the best reward-trained level and the solver."""


VERSUS_PROTOCOL = VersusProtocol()
MAX_PLAYERS = 4
SEATS = "alternated (every deal played once from each seat: the agent plays each seat's dice)"
INTERVAL = (
    "normal 95% CI over deals (paired by deal: a deal's seat rotations averaged first); the "
    "decisive-game win rate's as a ratio of sums over deals (delta method), and binomially"
)


def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(Z95 * x.std(ddof=1) / np.sqrt(x.size))


def decisive(results: np.ndarray) -> dict[str, float]:
    """From the game results (int8 [deals, rotations]: 1 win, 0 draw, -1 loss): the draw rate
    and the win rate over decisive games with its 95% CI paired by deal (the ratio of the
    deals' win and decisive-game sums, delta method) and its binomial 95% CI (every decisive
    game independent). NaN where no game was decisive."""
    wins = (results == 1).sum(axis=1).astype(np.float64)
    played = (results != 0).sum(axis=1).astype(np.float64)
    games, total = results.size, float(played.sum())
    draw_rate = float((results == 0).sum() / games) if games else float("nan")
    if total == 0:
        nan = float("nan")
        return {"draw_rate": draw_rate, "decisive_win_rate": nan, "decisive_ci95": nan,
                "decisive_ci95_binomial": nan}  # fmt: skip
    rate = float(wins.sum() / total)
    deals = wins.size
    if deals > 1:  # Var(sum(w - p n)) / (sum n)^2, the ratio estimator's delta-method variance
        residual = wins - rate * played
        paired = Z95 * np.sqrt(deals / (deals - 1) * np.sum(residual**2)) / total
    else:
        paired = float("nan")
    return {
        "draw_rate": draw_rate,
        "decisive_win_rate": rate,
        "decisive_ci95": float(paired),
        "decisive_ci95_binomial": float(Z95 * np.sqrt(rate * (1 - rate) / total)),
    }


def play_rotated(
    agent: Any,
    opponent: Any,
    players: int,
    deals: int,
    seed: int,
    rules: RuleSet,
    duplicate: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per deal: the agent's result averaged over the ``players`` rotations (1 win, 1/2 draw,
    0 loss), its margin over the best opponent averaged the same way, and the game results
    (int8 [deals, players]: 1 win, 0 draw, -1 loss, one column per rotation). ``duplicate``:
    every seat on the same dice (the module docstring)."""
    from yahtzee_env.analysis.protocol import rotation_seed
    from yahtzee_env.analysis.tournament import game_results, play_batched_games
    from yahtzee_env.policies.baselines import reseeded

    policy_seeds = np.random.SeedSequence([seed, 1]).generate_state(players * players)
    results = np.zeros((deals, players), dtype=np.int8)
    margins = np.zeros((deals, players), dtype=np.float64)
    for r in range(players):  # rotation r: the agent in seat r, the copies elsewhere
        seats = [agent if s == r else opponent for s in range(players)]
        seats = [reseeded(p, int(policy_seeds[r * players + s])) for s, p in enumerate(seats)]
        totals = play_batched_games(
            seats, deals, rules, seed=rotation_seed(seed, r, duplicate),
            batch_size=VERSUS_PROTOCOL.batch_size, duplicate=duplicate,
        )  # fmt: skip
        results[:, r] = game_results(totals)[:, r]
        others = np.delete(totals, r, axis=1)
        margins[:, r] = totals[:, r] - others.max(axis=1)
    points = np.where(results == 1, 1.0, np.where(results == 0, 0.5, 0.0))
    return points.mean(axis=1), margins.mean(axis=1), results


def benchmark_versus(
    policy: Any,
    *,
    players: int = 2,
    vs: Sequence[str] = VERSUS_PROTOCOL.standard_opponents,
    deals: int = VERSUS_PROTOCOL.deals,
    rules: RuleSet | str = VERSUS_PROTOCOL.rules,
    name: str | None = None,
    knew: dict[str, str] | None = None,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    duplicate: bool = False,
    seed: int = VERSUS_PROTOCOL.seed,
) -> dict[str, Any]:
    """The agent's row of the multi-player protocol (JSON-ready): ``kind`` ``"versus"``,
    ``duplicate`` (every seat on the same dice: the module docstring),
    ``players``, ``deals``, and per opponent its ``win_rate`` ± ``win_ci95`` (draws count 1/2),
    ``wins``/``draws``/``losses`` over all games, ``margin`` ± ``margin_ci95``; what the agent
    knew, the model and the provenance as a solitaire row has them."""
    from yahtzee_env.analysis.leaderboard import (
        ROW_FORMAT,
        ROW_VERSION,
        _package_version,
        load_agent,
        model_identity,
        reproducibility,
    )
    from yahtzee_env.analysis.protocol import machine, versus_dice_digest
    from yahtzee_env.policies.knowledge import check_knowledge, knowledge_of, track
    from yahtzee_env.policies.resolve import resolve_policy

    if not 2 <= players <= MAX_PLAYERS:
        raise ValueError(f"--players must be in 2..{MAX_PLAYERS}, got {players}")
    if not vs:
        raise ValueError("--vs needs at least one opponent")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed: must be 0 to 2**32 - 1, got {seed}")
    rules = RuleSet.from_spec(rules)
    agent = load_agent(policy, rules, name)
    knew = check_knowledge(knew) if knew is not None else knowledge_of(agent)
    opponents = []
    for i, opponent_name in enumerate(vs):
        opponent = resolve_policy(opponent_name, rules, 0)
        points, margins, results = play_rotated(
            agent, opponent, players, deals, seed, rules, duplicate
        )
        win, win_ci = _mean_ci(points)
        margin, margin_ci = _mean_ci(margins)
        opponents.append(
            {
                "opponent": opponent_name,
                "win_rate": win,
                "win_ci95": win_ci,
                "wins": int((results == 1).sum()),
                "draws": int((results == 0).sum()),
                "losses": int((results == -1).sum()),
                "margin": margin,
                "margin_ci95": margin_ci,
                "points_sum": float(points.sum()),
                **decisive(results),
            }
        )
        if progress:
            progress(i + 1, len(vs))
    return {
        "row_format": ROW_FORMAT,
        "row_version": ROW_VERSION,
        "kind": "versus",
        "agent": agent.name,
        "players": players,
        "deals": deals,
        "games": deals * players * len(vs),
        "seed": seed,
        "rules": rules.name,
        "protocol": VERSUS_PROTOCOL.name,
        "duplicate": duplicate,
        "standard": deals == VERSUS_PROTOCOL.deals
        and rules == RuleSet.from_spec("official")
        and not duplicate
        and seed == VERSUS_PROTOCOL.seed,
        "version": _package_version(),
        "seats": SEATS,
        "interval": INTERVAL,
        "opponents": opponents,
        "knew": knew,
        "track": track(knew),
        "reproducible": reproducibility(agent, rules),
        "model": model_identity(source if source is not None else policy, agent),
        "provenance": {
            **machine(),
            "dice_sha256": versus_dice_digest(
                deals, players, seed, VERSUS_PROTOCOL.batch_size, duplicate
            ),
        },
    }


def format_versus(row: dict[str, Any]) -> str:
    """The row in words, for the terminal."""
    lines = [
        f"{row['agent']}: {row['players']}-player tables, {row['deals']:,} deals x "
        f"{row['players']} seat rotations, {row['rules']} rules, seed {row['seed']} "
        f"({row['protocol']}{', duplicate dice' if row.get('duplicate') else ''})"
    ]
    for o in row["opponents"]:
        copies = "" if row["players"] == 2 else f" x{row['players'] - 1}"
        lines.append(
            f"  vs {o['opponent']}{copies}: win rate {100 * o['win_rate']:5.1f}% "
            f"± {100 * o['win_ci95']:.1f}  (wins/draws/losses {o['wins']}/{o['draws']}/"
            f"{o['losses']}), margin {o['margin']:+.2f} ± {o['margin_ci95']:.2f}"
        )
        if "decisive_win_rate" in o:
            lines.append(
                f"    over decisive games (draws left out): {100 * o['decisive_win_rate']:.2f}% "
                f"± {100 * o['decisive_ci95']:.2f} paired by deal, "
                f"± {100 * o['decisive_ci95_binomial']:.2f} binomial; draw rate "
                f"{100 * o['draw_rate']:.2f}%"
            )
    lines.append(f"  seats {row.get('seats', 'alternated')}; CIs: {row.get('interval', INTERVAL)}")
    return "\n".join(lines)
