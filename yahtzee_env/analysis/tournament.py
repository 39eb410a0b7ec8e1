"""Tournaments between policies: batched games at 2- or 4-player tables, win/draw/loss rates
with Wilson 95% intervals, pairwise head-to-head scores, a printed table, JSON and plots.

    from yahtzee_env.analysis.tournament import Entrant, run_tournament, format_tournament
    entrants = [Entrant("heuristic", make_policy("heuristic")), Entrant("greedy", ...)]
    result = run_tournament(entrants, players=2, games=5000, seed=0)
    print(format_tournament(result))

How a table is played. Players at a Yahtzee table do not interact: each fills its own card
with its own dice, and the table only compares the totals at the end. Every policy here acts
on its own seat's `Yahtzee-v0` observation (`observation.encode_seat`, the same for every
seat of `engine.Game`), so a game of ``k`` players *is* ``k`` solitaire scorecards rolled
with independent fair dice. `play_batched_games` therefore plays ``G`` games as one
`yahtzee_env.envs.vector.YahtzeeVectorEnv` of ``G`` scorecards per seat (the native vector env,
whose observations equal `encode_seat`'s), calling each seat's policy once per step with
``act_batch`` on the stacked observations, and compares the seats' final totals game by
game. The outcome distribution is exactly that of `engine.Game` with the same policies (the
dice come from different streams, so individual games differ). One seat may instead play the
table (a policy that ``reads_table``, the ``duelist``): it is shown every card as a real table
shows it (`_play_table_chunk`), on the same dice.

Fairness. Every pairing (2 players) or table of 4 plays each seat arrangement equally often:
the rotations of the seat order and of its reverse (both orders for 2 players, 8 for 4), so
every entrant sits in every seat and precedes every other equally often. Seat order cannot
matter in this game (see above), and the per-seat win rates in the result show it.

Statistics. Win, draw and loss rates get Wilson score 95% intervals. The headline number is
the pairwise head-to-head *score*: (wins + draws / 2) / games for "A's total beat B's at the
same table", with a Wilson interval on that fraction (draws only lower the variance of a
game's outcome, so this interval is conservative).
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from yahtzee_env.analysis.evaluation import Z95, ChunkRunner
from yahtzee_env.fileio import atomic_path
from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.engine import Game
from yahtzee_env.game.match import run_match
from yahtzee_env.game.rules import RuleSet

DEFAULT_BATCH = 1024  # games per vector env: the fastest size per game on one core
MAX_BATCH = 65_536  # games per vector env at most (memory: ~1 KB per game and seat)
# Games of a whole tournament at most (tables x games per table): refused up front above it.
# Memory stays bounded by a table's games (8 bytes per game and seat), time does not.
MAX_TOURNAMENT_GAMES = 100_000_000
CI_METHOD = "wilson-95"


@dataclass(frozen=True)
class Entrant:
    """A named policy with ``act(observation, action_mask)`` and ``act_batch``."""

    name: str
    policy: Any


# ------------------------------------------------------------------------------ statistics
def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (``successes`` may be fractional)."""
    if n <= 0:
        return (float("nan"), float("nan"))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _rates(wins: int, draws: int, losses: int) -> dict[str, Any]:
    n = wins + draws + losses
    score = wins + draws / 2
    return {
        "games": n,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "score": score / n if n else float("nan"),
        "score_ci95": list(wilson_interval(score, n)),
        "win_rate": wins / n if n else float("nan"),
        "win_ci95": list(wilson_interval(wins, n)),
        "draw_rate": draws / n if n else float("nan"),
        "draw_ci95": list(wilson_interval(draws, n)),
        "loss_rate": losses / n if n else float("nan"),
        "loss_ci95": list(wilson_interval(losses, n)),
    }


def game_results(totals: np.ndarray) -> np.ndarray:
    """int8 [G, S]: per game and seat 1 = sole top total (win), 0 = tied on top (draw),
    -1 = below the top (loss)."""
    totals = np.asarray(totals)
    top = totals == totals.max(axis=1, keepdims=True)
    sole = top.sum(axis=1, keepdims=True) == 1
    return np.where(top, np.where(sole, 1, 0), -1).astype(np.int8)


# ------------------------------------------------------------------------------ playing
def play_batched_games(
    policies: Sequence[Any],
    games: int,
    rules: RuleSet | str | None = "official",
    seed: int | np.random.SeedSequence = 0,
    batch_size: int = DEFAULT_BATCH,
    duplicate: bool = False,
) -> np.ndarray:
    """Final totals, int64 [games, seats], of ``games`` games with ``policies[s]`` in seat s.

    Batched (see the module docstring): per chunk of ``batch_size`` games, one vector env per
    seat, each policy called with ``act_batch`` once per step. Seeded and reproducible.
    ``duplicate``: every seat of a game gets the same dice for the same turn and roll (the
    vector envs' duplicate dice, all seats reset with the chunk's first seat seed).
    """
    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    rules = RuleSet.from_spec(rules)
    seats = len(policies)
    totals = np.zeros((games, seats), dtype=np.int64)
    readers = [s for s, p in enumerate(policies) if getattr(p, "reads_table", False)]
    if len(readers) > 1:
        raise ValueError("at most one seat may read the table in a batched game (play_game)")
    for start, n, env_seeds in seat_seeds(seed, games, seats, batch_size):
        if duplicate:
            env_seeds = [env_seeds[0]] * seats
        if readers:
            envs = [
                YahtzeeVectorEnv(num_envs=n, rules=rules, duplicate=duplicate) for _ in env_seeds
            ]
            totals[start : start + n] = _play_table_chunk(policies, envs, env_seeds, readers[0])
            continue
        envs, obs = [], []
        for env_seed in env_seeds:
            env = YahtzeeVectorEnv(num_envs=n, rules=rules, duplicate=duplicate)
            o, _ = env.reset(seed=env_seed)
            envs.append(env)
            obs.append(o)
        done = np.zeros((n, seats), dtype=bool)
        out = totals[start : start + n]
        while not done.all():
            for s, (env, policy) in enumerate(zip(envs, policies, strict=True)):
                if done[:, s].all():
                    continue
                actions = np.asarray(policy.act_batch(obs[s], env.action_masks()))
                obs[s], _, terminated, _, info = env.step(actions)
                ended = terminated & ~done[:, s]
                if ended.any():  # same-step autoreset: the totals are in final_info
                    out[ended, s] = info["final_info"]["total"][ended]
                    done[ended, s] = True
    return totals


# Cards of a table as a table-reading policy gets them (`DuelPolicy.act_batch_table`).
_CARD_ARRAYS = ("filled", "upper_total", "yahtzee_state", "total")
_POPCOUNT = np.array([bin(m).count("1") for m in range(1 << 13)], dtype=np.int64)


def _cards(env: Any) -> np.ndarray:
    """int64 [n, 4]: each game's card now (`_CARD_ARRAYS`)."""
    arrays, _ = env.get_state()
    return np.stack([arrays[name] for name in _CARD_ARRAYS], axis=1).astype(np.int64)


def _play_table_chunk(
    policies: Sequence[Any], envs: Sequence[Any], env_seeds: Sequence[int], reader: int
) -> np.ndarray:
    """Final totals [n, seats] of one chunk where seat ``reader`` sees every card
    (``act_batch_table``) and the other seats play solitaire.

    The other seats do not react to anyone, so their games are played first, their card
    after each of their turns kept; the reader then plays, shown each opponent's card as it
    stands at that point of a real table (seats before it have played the reader's turn,
    seats after it have not). Every seat keeps its own dice stream, so the games are those
    of `play_batched_games` with the same seeds."""
    seats, n = len(policies), envs[0].num_envs
    history = np.zeros((seats, 14, n, len(_CARD_ARRAYS)), dtype=np.int64)
    totals = np.zeros((n, seats), dtype=np.int64)
    order = [s for s in range(seats) if s != reader] + [reader]
    for s in order:
        env, policy = envs[s], policies[s]
        obs, _ = env.reset(seed=env_seeds[s])
        done = np.zeros(n, dtype=bool)
        while not done.all():
            masks = env.action_masks()
            if s == reader:
                mine = _cards(env)
                turn = _POPCOUNT[mine[:, 0]]
                view = [mine]
                for k in range(1, seats):
                    other = (reader + k) % seats
                    played = np.minimum(turn + (other < reader), 13)
                    view.append(history[other, played, np.arange(n)])
                actions = policy.act_batch_table(obs, masks, np.stack(view, axis=1))
            else:
                actions = policy.act_batch(obs, masks)
            actions = np.asarray(actions)
            obs, _, terminated, _, info = env.step(actions)
            ended = terminated & ~done
            if ended.any():
                totals[ended, s] = info["final_info"]["total"][ended]
                history[s, 13, ended] = [(1 << 13) - 1, 0, 0, 0]
                history[s, 13, ended, 3] = totals[ended, s]
                done |= ended
            if s != reader:
                now = _cards(env)
                filled = (actions >= 32) & ~terminated & ~done
                rows = np.flatnonzero(filled)
                history[s, _POPCOUNT[now[rows, 0]], rows] = now[rows]
    return totals


def seat_seeds(
    seed: int | np.random.SeedSequence, games: int, seats: int, batch_size: int = DEFAULT_BATCH
) -> list[tuple[int, int, list[int]]]:
    """How `play_batched_games` seeds its dice: per chunk of ``batch_size`` games, (first
    game, games, one env seed per seat). The multi-player protocol's dice digest reads it."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    starts = range(0, games, batch_size)
    return [
        (start, min(batch_size, games - start),
         [int(s.generate_state(1)[0]) for s in chunk_seq.spawn(seats)])
        for start, chunk_seq in zip(starts, seq.spawn(len(starts)), strict=True)
    ]  # fmt: skip


SeedOrRng = np.random.Generator | np.random.SeedSequence | int


def _required_rng(rng: SeedOrRng | None, caller: str) -> np.random.Generator:
    """``rng`` as a Generator (a Generator is used as is); None is refused, so that no game
    is played with unseeded dice by accident."""
    if rng is None:
        raise TypeError(
            f"{caller} needs rng: a numpy Generator or a seed (int or SeedSequence), so the "
            "game is reproducible"
        )
    return np.random.default_rng(rng)


def play_game(
    policies: Sequence[Any],
    rules: RuleSet | str | None = "official",
    rng: SeedOrRng | None = None,
    first: int = 0,
) -> list[int]:
    """One game on `engine.Game`, move by move (the reference for `play_batched_games`); the final
    totals in seat order.

    ``rng`` is required (None raises `TypeError`): a `numpy.random.Generator`, used and
    advanced as is, or a seed for a new one.
    """
    game = Game(rules, num_players=len(policies))
    game.reset(_required_rng(rng, "play_game"), first=first)
    while not game.over:
        cpu_move(game, game.current, policies[game.current])
    return game.totals()


def play_match(
    policies: Sequence[Any],
    rules: RuleSet | str | None = "official",
    rng: SeedOrRng | None = None,
    first: int = 0,
):
    """A best-of-five match on the engine between per-seat policies, no I/O (the start
    passes to the next seat each game: `game.match.run_match`, the loop the terminal runs too);
    the `game.match.MatchResult`. ``rng`` is required, as in `play_game`."""
    rng = _required_rng(rng, "play_match")
    return run_match(
        lambda start, _number: play_game(policies, rules, rng, start), len(policies), first
    )


# ------------------------------------------------------------------------------ schedule
def seat_arrangements(k: int) -> list[tuple[int, ...]]:
    """The rotations of ``range(k)`` and of its reverse, without repeats: each index sits
    in each seat, and precedes each other index, equally often."""
    base = list(range(k))
    found: list[tuple[int, ...]] = []
    for order in (base, base[::-1]):
        for r in range(k):
            arrangement = tuple(order[r:] + order[:r])
            if arrangement not in found:
                found.append(arrangement)
    return found


def tournament_tables(num_entrants: int, players: int) -> list[tuple[int, ...]]:
    """Every set of ``players`` distinct entrants (all pairs for 2 players)."""
    if players < 2:
        raise ValueError(f"a table needs at least 2 players, got {players}")
    if num_entrants < players:
        raise ValueError(
            f"{players}-player tables need at least {players} entrants, got {num_entrants} "
            "(repeat a name to seat a policy twice)"
        )
    return list(itertools.combinations(range(num_entrants), players))


def tournament_games(num_entrants: int, players: int, games: int) -> int:
    """Games a tournament plays: tables times ``games`` rounded up to the seat arrangements."""
    arrangements = len(seat_arrangements(players))
    return math.comb(num_entrants, players) * arrangements * -(-games // arrangements)


def check_tournament_size(num_entrants: int, players: int, games: int) -> None:
    """Raise ValueError, before any game, if the tournament would play more than
    `MAX_TOURNAMENT_GAMES` games."""
    total = tournament_games(num_entrants, players, games)
    if total > MAX_TOURNAMENT_GAMES:
        raise ValueError(
            f"{num_entrants} entrants at {players}-player tables with {games:,} games per table "
            f"make {total:,} games, more than the {MAX_TOURNAMENT_GAMES:,} allowed: use fewer "
            "games or entrants"
        )


def unique_names(names: Sequence[str]) -> list[str]:
    """Names made distinct: a repeated name gets ``#2``, ``#3``..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


# ------------------------------------------------------------------------------ tournament
def _job_policies(
    entrants: Sequence[Entrant], seated: Sequence[int], job_seed: np.random.SeedSequence
) -> list[Any]:
    """The seat policies of one job. A ``stochastic`` policy gets a copy reseeded
    (`yahtzee_env.policies.baselines.reseeded`) from the job's seed and its seat, so that a job's
    games
    do not depend on the jobs played before it (in this process or another): the same
    results with any runner."""
    from yahtzee_env.policies.baselines import reseeded

    seat_seeds = job_seed.generate_state(len(seated))
    return [reseeded(entrants[e].policy, int(seat_seeds[s])) for s, e in enumerate(seated)]


def run_tournament(
    entrants: Sequence[Entrant],
    players: int = 2,
    games: int = 1000,
    seed: int = 0,
    rules: RuleSet | str | None = "official",
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[int, int], None] | None = None,
    runner: ChunkRunner | None = None,
) -> dict[str, Any]:
    """Round-robin: every table of ``players`` distinct entrants plays ``games`` games (rounded
    up to a multiple of the seat arrangements), each arrangement equally often. Returns a
    JSON-ready dict: ``config``, ``entrants``, ``head_to_head`` (every pair, from the first
    entrant's side: wins/draws/losses, ``score`` with ``score_ci95``, rates with Wilson
    intervals, mean totals), ``standings`` (per entrant: game wins = sole top total, draws =
    shared top, losses, mean total with a normal 95% half-width), ``seats`` (win rate by
    seat), ``speed``.

    Each (table, seat arrangement) is one job with its own seed, played here or by
    ``runner`` (e.g. `yahtzee_env.analysis.ray_backend.RayRunner`) with the same results."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be in 1..{MAX_BATCH:,}, got {batch_size:,}")
    rules = RuleSet.from_spec(rules)
    names = unique_names([e.name for e in entrants])
    check_tournament_size(len(entrants), players, games)
    tables = tournament_tables(len(entrants), players)
    arrangements = seat_arrangements(players)
    per_arrangement = -(-games // len(arrangements))
    jobs = [(t, a) for t in tables for a in arrangements]
    seeds = np.random.SeedSequence(seed).spawn(len(jobs))

    n = len(entrants)
    pair_counts = np.zeros((n, n, 3), dtype=np.int64)  # [a, b, (a won, draw, b won)]
    pair_totals = np.zeros((n, n, 2), dtype=np.float64)  # summed totals of a and b
    outcome_counts = np.zeros((n, 3), dtype=np.int64)  # [entrant, (win, draw, loss)]
    score_sums = np.zeros((n, 2), dtype=np.float64)  # sum, sum of squares
    games_played = np.zeros(n, dtype=np.int64)
    seat_wins = np.zeros((players, 2), dtype=np.int64)  # [seat, (wins, games)]
    start = time.perf_counter()
    total_games = per_arrangement * len(jobs)
    seatings = [[table[j] for j in arrangement] for table, arrangement in jobs]  # entrant/seat
    table_jobs = [
        (_job_policies(entrants, seated, job_seed), per_arrangement, rules, job_seed, batch_size)
        for seated, job_seed in zip(seatings, seeds, strict=True)
    ]
    played = (
        runner(play_batched_games, table_jobs)
        if runner
        else (play_batched_games(*j) for j in table_jobs)
    )
    for i, (seated, totals) in enumerate(zip(seatings, played, strict=True)):
        results = game_results(totals)
        for s, e in enumerate(seated):
            outcome_counts[e] += [(results[:, s] == v).sum() for v in (1, 0, -1)]
            score_sums[e] += [totals[:, s].sum(), (totals[:, s].astype(np.float64) ** 2).sum()]
            games_played[e] += per_arrangement
            seat_wins[s] += [(results[:, s] == 1).sum(), per_arrangement]
        for s1, s2 in itertools.combinations(range(players), 2):
            a, b = seated[s1], seated[s2]
            diff = totals[:, s1] - totals[:, s2]
            counts = [(diff > 0).sum(), (diff == 0).sum(), (diff < 0).sum()]
            pair_counts[a, b] += counts
            pair_counts[b, a] += counts[::-1]
            pair_totals[a, b] += [totals[:, s1].sum(), totals[:, s2].sum()]
            pair_totals[b, a] += [totals[:, s2].sum(), totals[:, s1].sum()]
        if progress:
            progress((i + 1) * per_arrangement, total_games)
    seconds = time.perf_counter() - start

    head_to_head = []
    for a, b in itertools.combinations(range(n), 2):
        w, d, lo = (int(x) for x in pair_counts[a, b])
        if w + d + lo == 0:
            continue
        row = {"a": names[a], "b": names[b], **_rates(w, d, lo)}
        row["mean_a"] = pair_totals[a, b, 0] / (w + d + lo)
        row["mean_b"] = pair_totals[a, b, 1] / (w + d + lo)
        head_to_head.append(row)
    standings = []
    for e in range(n):
        g = int(games_played[e])
        mean = score_sums[e, 0] / g
        var = max(score_sums[e, 1] / g - mean * mean, 0.0) * g / max(g - 1, 1)
        row = {"name": names[e], **_rates(*(int(x) for x in outcome_counts[e]))}
        row["mean_total"] = mean
        row["mean_total_ci95"] = Z95 * math.sqrt(var / g)
        standings.append(row)
    seats = [
        {
            "seat": s,
            "games": int(seat_wins[s, 1]),
            "win_rate": seat_wins[s, 0] / seat_wins[s, 1],
            "win_ci95": list(wilson_interval(int(seat_wins[s, 0]), int(seat_wins[s, 1]))),
        }
        for s in range(players)
    ]
    return {
        "config": {
            "players": players,
            "games_per_table": per_arrangement * len(arrangements),
            "games_per_arrangement": per_arrangement,
            "arrangements": [list(a) for a in arrangements],
            "seed": seed,
            "rules": rules.name,
            "batch_size": batch_size,
            "ci": CI_METHOD,
        },
        "entrants": names,
        "head_to_head": head_to_head,
        "standings": standings,
        "seats": seats,
        "speed": {
            "games": total_games,
            "seconds": seconds,
            "games_per_second": total_games / seconds if seconds > 0 else float("inf"),
        },
    }


def score_matrix(result: dict[str, Any]) -> np.ndarray:
    """[n, n] head-to-head scores, row entrant against column entrant (NaN where none)."""
    names = result["entrants"]
    index = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for row in result["head_to_head"]:
        a, b = index[row["a"]], index[row["b"]]
        matrix[a, b] = row["score"]
        matrix[b, a] = 1.0 - row["score"]
    return matrix


# ------------------------------------------------------------------------------ output
def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _ci(ci: Sequence[float]) -> str:
    return f"[{100 * ci[0]:4.1f}, {100 * ci[1]:4.1f}]"


def format_tournament(result: dict[str, Any]) -> str:
    """The results as plain-text tables: head-to-head first (the headline), then standings."""
    cfg = result["config"]
    width = max(8, *(len(n) for n in result["entrants"]))
    lines = [
        f"Tournament: {cfg['players']}-player tables, {cfg['games_per_table']} games per "
        f"table, rules {cfg['rules']}, seed {cfg['seed']}",
        "",
        "Head to head (score = wins + draws/2 of A's total against B's at the same table; "
        "Wilson 95% CI)",
    ]
    header = (
        f"{'A':<{width}}  {'B':<{width}}  {'games':>7}  {'A score':>7} {'95% CI':>14}  "
        f"{'A wins':>6} {'draws':>6} {'B wins':>6}  {'mean A':>7} {'mean B':>7}"
    )
    lines += [header, "-" * len(header)]
    for row in result["head_to_head"]:
        lines.append(
            f"{row['a']:<{width}}  {row['b']:<{width}}  {row['games']:>7}  "
            f"{_pct(row['score']):>7} {_ci(row['score_ci95']):>14}  "
            f"{_pct(row['win_rate']):>6} {_pct(row['draw_rate']):>6} {_pct(row['loss_rate']):>6}"
            f"  {row['mean_a']:>7.1f} {row['mean_b']:>7.1f}"
        )
    lines += ["", "Standings (win = sole top total at the table, draw = shared top)"]
    header = (
        f"{'entrant':<{width}}  {'games':>7}  {'win':>6} {'95% CI':>14}  {'draw':>6}  "
        f"{'loss':>6}  {'mean total':>15}"
    )
    lines += [header, "-" * len(header)]
    for row in sorted(result["standings"], key=lambda r: -r["score"]):
        lines.append(
            f"{row['name']:<{width}}  {row['games']:>7}  {_pct(row['win_rate'])} "
            f"{_ci(row['win_ci95']):>14}  {_pct(row['draw_rate'])}  {_pct(row['loss_rate'])}  "
            f"{row['mean_total']:>7.1f} ± {row['mean_total_ci95']:4.1f}"
        )
    seats = ", ".join(
        f"seat {s['seat'] + 1} {_pct(s['win_rate']).strip()}" for s in result["seats"]
    )
    speed = result["speed"]
    lines += [
        "",
        f"Win rate by seat (first mover check): {seats}",
        f"{speed['games']} games in {speed['seconds']:.2f} s "
        f"({speed['games_per_second']:,.0f} games/s)",
    ]
    return "\n".join(lines)


def plot_tournament(result: dict[str, Any], path: str | os.PathLike) -> None:
    """A PNG: heatmap of pairwise head-to-head scores, and mean totals with 95% CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = result["entrants"]
    matrix = score_matrix(result)
    fig, (ax_map, ax_bar) = plt.subplots(1, 2, figsize=(6 + 1.2 * len(names), 4 + 0.5 * len(names)))
    image = ax_map.imshow(matrix, cmap="RdBu", vmin=0.0, vmax=1.0)
    ax_map.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax_map.set_yticks(range(len(names)), names)
    for i, j in itertools.product(range(len(names)), repeat=2):
        if np.isfinite(matrix[i, j]):
            ax_map.text(j, i, f"{100 * matrix[i, j]:.0f}", ha="center", va="center", fontsize=9)
    ax_map.set_title("Head-to-head score of row vs column (%)")
    fig.colorbar(image, ax=ax_map, fraction=0.046)
    standings = result["standings"]
    ax_bar.bar(
        range(len(standings)),
        [r["mean_total"] for r in standings],
        yerr=[r["mean_total_ci95"] for r in standings],
        capsize=4,
    )
    ax_bar.set_xticks(range(len(standings)), [r["name"] for r in standings], rotation=45)
    ax_bar.set_ylabel("mean final total")
    ax_bar.set_title(f"{result['config']['players']}-player tables")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


__all__ = [
    "CI_METHOD",
    "Entrant",
    "format_tournament",
    "game_results",
    "play_batched_games",
    "play_game",
    "play_match",
    "plot_tournament",
    "run_tournament",
    "score_matrix",
    "seat_arrangements",
    "tournament_tables",
    "unique_names",
    "wilson_interval",
]
