"""The evaluation harness: play N games of any policy on the vector env, grade every decision
against the optimal strategy, and summarise with confidence intervals.

    from yahtzee_env.analysis.evaluation import evaluate_policy
    result = evaluate_policy(policy, games=10_000, seed=0, rules="official")
    result["mean"], result["ci95"], result["regret"]["mean"]

Games are played in chunks of ``chunk_size``; chunk ``i`` is seeded with the ``i``-th child
of ``SeedSequence(seed)``, and results are concatenated in chunk order, so the same seed gives
the same numbers whatever the number of worker processes.

Regret of a decision is the expected final score it gives up against the best action there
(the exact solver's action values); a game's regret is the sum over its 30-odd decisions.
An optimal player has regret exactly 0.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from yahtzee_env.fileio import atomic_path
from yahtzee_env.game.rules import BOX_NAMES, NUM_BOXES, RuleSet
from yahtzee_env.game.words import box_label

RegretMode = Literal["yes", "no", "if-cached"]
ChunkRunner = Callable[[Callable[..., Any], Sequence[tuple]], Iterator[Any]]
"""Runs ``fn(*job)`` for every job somewhere and yields the results in job order; e.g.
`yahtzee_env.analysis.ray_backend.RayRunner` (Ray tasks). Every job carries its own seed, so where
the
jobs run cannot change the results."""
Z95 = 1.959963984540054
# Every game's record (~150 bytes) is kept for medians and percentiles: 10 M games is 1.5 GB.
# More is refused up front rather than running out of memory hours later.
MAX_GAMES = 10_000_000
HIST_BIN = 5  # points per histogram bin


@dataclass
class GameRecords:
    """Per-game results of an evaluation (arrays over games, in a fixed order)."""

    scores: np.ndarray  # [G] final totals
    box_scores: np.ndarray  # [G, 13]
    upper_bonus: np.ndarray  # [G] points
    yahtzee_bonus: np.ndarray  # [G] points
    regret: np.ndarray | None  # [G] summed per-decision regret
    decisions: int

    @staticmethod
    def concat(parts: Sequence[GameRecords]) -> GameRecords:
        regret = None if parts[0].regret is None else np.concatenate([p.regret for p in parts])
        return GameRecords(
            np.concatenate([p.scores for p in parts]),
            np.concatenate([p.box_scores for p in parts]),
            np.concatenate([p.upper_bonus for p in parts]),
            np.concatenate([p.yahtzee_bonus for p in parts]),
            regret,
            sum(p.decisions for p in parts),
        )


def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(Z95 * x.std(ddof=1) / np.sqrt(x.size))


# ------------------------------------------------------------------------------ playing
class FirstGames:
    """Play exactly one game (its first) in every env of a same-step-autoreset vector env.

        games = FirstGames(env, seed)
        for active, obs, masks in games:      # the envs still in their first game
            rewards, ended, final_info = games.step(policy.act_batch(obs, masks))

    Envs whose game is over keep stepping with any legal move (their later games are never
    shown), so every recorded game is a whole, unbiased one.
    """

    def __init__(self, env: Any, seed: int) -> None:
        self.env = env
        self._obs, _ = env.reset(seed=seed)
        self.done = np.zeros(env.num_envs, dtype=bool)
        self._active = np.flatnonzero(~self.done)

    def __iter__(self):
        while not self.done.all():
            self._active = np.flatnonzero(~self.done)
            masks = self.env.action_masks()
            self._masks = masks
            yield self._active, self._obs[self._active], masks[self._active]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any] | None]:
        """Apply ``actions`` (one per active env); return their rewards, the env indices whose
        first game just ended, and the vector env's ``final_info`` (None if none ended)."""
        full = np.argmax(self._masks, axis=1)  # finished games: any legal move, unrecorded
        full[self._active] = actions
        self._obs, rewards, terminated, _, info = self.env.step(full)
        ended = np.flatnonzero(terminated & ~self.done)
        self.done |= terminated
        return rewards[self._active], ended, info.get("final_info")


def play_chunk(
    policy: Any,
    games: int,
    seed: np.random.SeedSequence | int,
    rules: RuleSet | str,
    table: Any = None,
) -> GameRecords:
    """Play ``games`` games at once (one vector env of that size); grade if ``table``."""
    from yahtzee_env.envs.vector import YahtzeeVectorEnv
    from yahtzee_env.policies.baselines import reseeded
    from yahtzee_env.solver.oracle import OptimalOracle

    oracle = OptimalOracle(table) if table is not None else None
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    env_seed, policy_seed = seq.generate_state(2)
    # A random policy draws from the chunk's own stream: the same games whatever the number
    # of workers, and whatever the policy object did before.
    policy = reseeded(policy, int(policy_seed))
    env = YahtzeeVectorEnv(num_envs=games, rules=rules)
    scores = np.zeros(games, dtype=np.int64)
    box_scores = np.zeros((games, NUM_BOXES), dtype=np.int64)
    upper_bonus = np.zeros(games, dtype=np.int64)
    yahtzee_bonus = np.zeros(games, dtype=np.int64)
    regret = np.zeros(games, dtype=np.float64) if oracle else None
    decisions = 0
    first_games = FirstGames(env, int(env_seed))
    for active, obs, masks in first_games:
        actions = policy.act_batch(obs, masks)
        if oracle is not None:
            av = oracle.action_values(obs)
            regret[active] += av.max(axis=1) - av[np.arange(active.size), actions]
        decisions += active.size
        _, ended, final = first_games.step(actions)
        if ended.size:  # same-step autoreset: the finished games are in final_info
            scores[ended] = final["total"][ended]
            box_scores[ended] = final["scorecard"][ended]
            upper_bonus[ended] = final["upper_bonus"][ended]
            yahtzee_bonus[ended] = final["yahtzee_bonus"][ended]
    env.close()
    return GameRecords(scores, box_scores, upper_bonus, yahtzee_bonus, regret, decisions)


def _solver_table(rules: RuleSet, mode: RegretMode):
    if mode == "no":
        return None
    from yahtzee_env.solver import exact as solver

    if mode == "if-cached" and not solver.cache_path(rules).exists():
        return None
    return solver.load_or_solve(rules)


def _play_chunk_job(args: tuple) -> GameRecords:
    policy, games, seed, rules, mode = args
    return play_chunk(policy, games, seed, rules, _solver_table(rules, mode))


def play_games(
    policy: Any,
    games: int,
    seed: int = 0,
    rules: RuleSet | str = "official",
    *,
    regret: RegretMode = "yes",
    chunk_size: int = 4096,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    runner: ChunkRunner | None = None,
) -> GameRecords:
    """Play ``games`` games of ``policy`` (``act_batch(obs, masks)``), in seeded chunks: in
    this process, in ``workers`` processes, or by ``runner`` (e.g. Ray tasks)."""
    if not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be in 1..{MAX_GAMES:,}, got {games:,}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    rules = RuleSet.from_spec(rules)
    sizes = [min(chunk_size, games - lo) for lo in range(0, games, chunk_size)]
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    jobs = [(policy, n, s, rules, regret) for n, s in zip(sizes, seeds, strict=True)]
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    parts: list[GameRecords] = []
    if runner is not None:
        table = _solver_table(rules, regret)
        chunks = [(p, n, s, r, table) for p, n, s, r, _ in jobs]
        for i, part in enumerate(runner(play_chunk, chunks)):
            parts.append(part)
            if progress:
                progress(sum(sizes[: i + 1]), games)
    elif workers <= 1:
        table = _solver_table(rules, regret)
        for i, (p, n, s, r, _) in enumerate(jobs):
            parts.append(play_chunk(p, n, s, r, table))
            if progress:
                progress(sum(sizes[: i + 1]), games)
    else:
        _solver_table(rules, regret)  # solve/cache once before the workers load it
        with ProcessPoolExecutor(workers) as pool:
            for i, part in enumerate(pool.map(_play_chunk_job, jobs)):
                parts.append(part)
                if progress:
                    progress(sum(sizes[: i + 1]), games)
    return GameRecords.concat(parts)


# ------------------------------------------------------------------------------ summaries
def summarize(
    records: GameRecords, *, name: str = "policy", seed: int | None = None, rules: str = "official"
) -> dict[str, Any]:
    """Statistics of an evaluation, JSON-ready. CIs are normal 95% intervals of the mean."""
    s = records.scores
    mean, ci = _mean_ci(s)
    edges = np.arange(0, max(int(s.max()) + HIST_BIN + 1, 400), HIST_BIN)
    counts, _ = np.histogram(s, bins=edges)
    result: dict[str, Any] = {
        "policy": name,
        "rules": rules,
        "games": int(s.size),
        "seed": seed,
        "mean": mean,
        "ci95": ci,
        "std": float(s.std(ddof=1)) if s.size > 1 else 0.0,
        "median": float(np.median(s)),
        "p5": float(np.percentile(s, 5)),
        "p95": float(np.percentile(s, 95)),
        "min": int(s.min()),
        "max": int(s.max()),
        "upper_bonus_rate": float((records.upper_bonus > 0).mean()),
        "yahtzee_rate": float((records.box_scores[:, BOX_NAMES.index("yahtzee")] > 0).mean()),
        "yahtzee_bonus_mean": float(records.yahtzee_bonus.mean()),
        "box_means": {
            b: float(m) for b, m in zip(BOX_NAMES, records.box_scores.mean(axis=0), strict=True)
        },
        "decisions": int(records.decisions),
        "regret": None,
        "histogram": {"bin_width": HIST_BIN, "counts": counts.tolist()},
    }
    if records.regret is not None:
        r_mean, r_ci = _mean_ci(records.regret)
        result["regret"] = {
            "mean": r_mean,
            "ci95": r_ci,
            "per_decision": float(records.regret.sum() / max(records.decisions, 1)),
        }
    return result


def evaluate_policy(
    policy: Any,
    games: int,
    seed: int = 0,
    rules: RuleSet | str = "official",
    *,
    regret: RegretMode = "yes",
    name: str | None = None,
    workers: int | None = 1,
    progress: Callable[[int, int], None] | None = None,
    runner: ChunkRunner | None = None,
) -> dict[str, Any]:
    """Play and summarise; see `play_games` and `summarize`."""
    rules = RuleSet.from_spec(rules)
    t0 = time.perf_counter()
    records = play_games(
        policy,
        games,
        seed,
        rules,
        regret=regret,
        workers=workers,
        progress=progress,
        runner=runner,
    )
    result = summarize(
        records,
        name=name or getattr(policy, "name", type(policy).__name__),
        seed=seed,
        rules=rules.name,
    )
    result["seconds"] = time.perf_counter() - t0
    return result


def format_table(results: Sequence[dict[str, Any]]) -> str:
    """A plain-text results table."""
    header = (
        f"{'policy':<12} {'games':>7} {'mean ± 95% CI':>17} {'std':>6} {'median':>7} "
        f"{'p5':>5} {'p95':>5} {'bonus':>6} {'yahtzee':>7} {'regret/game ± CI':>18}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        reg = r.get("regret")
        reg_s = f"{reg['mean']:8.2f} ± {reg['ci95']:5.2f}" if reg else "-"
        lines.append(
            f"{r['policy']:<12} {r['games']:>7} {r['mean']:>9.2f} ± {r['ci95']:5.2f} "
            f"{r['std']:>6.1f} {r['median']:>7.1f} {r['p5']:>5.0f} {r['p95']:>5.0f} "
            f"{100 * r['upper_bonus_rate']:>5.1f}% {100 * r['yahtzee_rate']:>6.1f}% {reg_s:>18}"
        )
    return "\n".join(lines)


def plot_results(results: Sequence[dict[str, Any]], path: str | os.PathLike) -> None:
    """Score histograms overlaid, and mean points per box, of several evaluations (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_hist, ax_box) = plt.subplots(1, 2, figsize=(15, 5.5))
    for r in results:
        h = r["histogram"]
        counts = np.asarray(h["counts"], dtype=float)
        edges = np.arange(counts.size + 1) * h["bin_width"]
        ax_hist.stairs(
            counts / counts.sum() / h["bin_width"],
            edges,
            label=f"{r['policy']} ({r['mean']:.1f})",
            linewidth=1.5,
        )
    ax_hist.set_xlim(0, 500)
    ax_hist.set_xlabel("final score")
    ax_hist.set_ylabel("density")
    ax_hist.set_title(f"Score distribution ({results[0]['games']} games each)")
    ax_hist.legend()
    width = 0.8 / len(results)
    x = np.arange(NUM_BOXES)
    for i, r in enumerate(results):
        ax_box.bar(x + i * width, [r["box_means"][b] for b in BOX_NAMES], width, label=r["policy"])
    labels = [box_label(b) for b in range(NUM_BOXES)]
    ax_box.set_xticks(x + 0.4 - width / 2, labels, rotation=45, ha="right")
    ax_box.set_ylabel("mean points")
    ax_box.set_title("Mean points per box")
    ax_box.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
