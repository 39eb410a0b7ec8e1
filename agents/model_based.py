"""A model-based baseline (not reward-only: it plans with the exact rules model): a learned
value of turn-start states, played by exact expectimax through the rules. The method is
fitted value iteration (see below).

The agent knows the rules (the dice probabilities, the 252 rolls and 462 keeps, the scoring:
`yahtzee_env.solver.exact`'s within-turn machinery) but not the values of the states a turn
leads to. Those it learns from the games it plays: a small MLP ``V(filled, upper, ystate)``
over the turn-start states. Each turn is then played by exact expectimax over the rolls and
keeps of the turn, with the learned ``V`` at the turn starts it can reach (an `OptimalValues`
built on the learned table instead of the solved one).

Learning is fitted value iteration on the states its own games visit (in the spirit of
real-time dynamic programming, Barto et al. 1995): each iteration plays a batch of games
(epsilon-greedy), keeps their turn-start states in a buffer, computes each buffered state's
one-turn expectimax backup through the rules with the current ``V`` (the expected turn reward
plus ``V`` of where the turn ends, under the best play of the turn), and regresses ``V`` on
those targets. The solver's table is never read while learning (a test runs the learner with
it made unloadable); the solver only grades the evaluations.

    from yahtzee_agents.model_based import ModelBasedConfig, learn
    result = learn(ModelBasedConfig(games=20_000, seed=0), run_dir="runs/model-based-s0")
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.rules import YAHTZEE_OPEN, RuleSet
from yahtzee_env.policies.turn_value import (
    VALUE_SCALE,  # targets are regressed in hundreds of points
    TurnValuePolicy,
    all_states,
    feature_size,
    state_features,
    turn_value_table,
)

TARGET_SLICE = 20_000  # turn-start states per backup slice (~4.7 KB each while computed)


@dataclass
class ModelBasedConfig:
    """What the learner does; every field has the meaning it says, nothing is derived."""

    rules: str = "official"
    seed: int = 0
    games: int = 100_000
    """Training games in all."""
    games_per_iteration: int = 2_000
    """Games played between two fits of V (all at once, as one vector env)."""
    explore: float = 0.05
    """Probability that a decision of a training game is a uniformly random legal action."""
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    learning_rate: float = 1e-3
    epochs: int = 2
    """Passes over the buffer per fit."""
    batch_size: int = 2_048
    buffer_states: int = 200_000
    """The most recent turn-start states kept (first in, first out)."""
    eval_every: int = 10_000
    """Evaluate after every this many training games (and at the end)."""
    eval_games: int = 4_000
    eval_seed: int = 12_345
    """Evaluation games use fixed seeds, the same at every evaluation (as the PPO runs')."""

    def __post_init__(self) -> None:
        RuleSet.from_spec(self.rules)  # a ValueError names an unknown preset
        ints = ("games", "games_per_iteration", "epochs", "batch_size", "buffer_states")
        for name in (*ints, "eval_every", "eval_games"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.explore < 1.0:
            raise ValueError(f"explore must be in [0, 1), got {self.explore!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if not self.hidden or any(not isinstance(h, int) or h <= 0 for h in self.hidden):
            raise ValueError(f"hidden must be a list of positive layer sizes, got {self.hidden!r}")

    def digest(self) -> str:
        """sha256 of the config (canonical JSON, as `yahtzee_agents.config`'s), recorded in
        an exported level."""
        from .config import canonical_digest, canonical_form

        return canonical_digest(canonical_form(self))


# ------------------------------------------------------------------------------ the value net
class ValueNet:
    """The learned ``V`` (torch MLP, ReLU) and the table of every turn start it gives."""

    def __init__(self, rules: RuleSet, hidden: list[int], learning_rate: float, seed: int):
        import torch

        torch.manual_seed(seed)
        self.rules = rules
        self.threshold = rules.upper_bonus_threshold
        sizes = [feature_size(self.threshold), *hidden, 1]
        layers: list[Any] = []
        for a, b in pairwise(sizes):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        self.net = torch.nn.Sequential(*layers[:-1])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=learning_rate)
        self.states = all_states(rules)

    def predict(self, features: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            out = self.net(torch.from_numpy(features)).numpy()[:, 0]
        return out.astype(np.float64) * VALUE_SCALE

    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The network as (W [in, out], b [out]) pairs, the value layer last (numpy)."""
        params = [p.detach().numpy() for p in self.net.parameters()]
        return [(params[i].T, params[i + 1]) for i in range(0, len(params), 2)]

    def table(self) -> np.ndarray:
        """``float32 [8192, T + 1, 3]`` turn-start values (`turn_value_table`: V where
        reachable, 0 at the end of the game, NaN elsewhere), computed as the shipped level
        computes it at load."""
        return turn_value_table(self.weights(), self.rules, states=self.states)

    def fit(
        self,
        features: np.ndarray,
        targets: np.ndarray,
        epochs: int,
        batch_size: int,
        rng: np.random.Generator,
    ) -> float:
        """Regress V on ``targets`` (points); the mean squared error of the last epoch."""
        import torch

        x = torch.from_numpy(features)
        y = torch.from_numpy((targets / VALUE_SCALE).astype(np.float32))
        loss_sum, seen = 0.0, 0
        for _ in range(epochs):
            order = torch.from_numpy(rng.permutation(len(targets)))
            loss_sum, seen = 0.0, 0
            for lo in range(0, len(targets), batch_size):
                idx = order[lo : lo + batch_size]
                loss = torch.nn.functional.mse_loss(self.net(x[idx])[:, 0], y[idx])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                loss_sum += float(loss.detach()) * len(idx)
                seen += len(idx)
        return loss_sum / max(seen, 1) * VALUE_SCALE**2

    def save(self, path: Path, extra: dict[str, Any]) -> None:
        """Weights as a plain ``.npz`` (arrays only: loading runs no code) and a JSON beside."""
        arrays = {f"p{i}": p.detach().numpy() for i, p in enumerate(self.net.parameters())}
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            np.savez(f, **arrays)
        atomic_write(path.with_suffix(".json"), json.dumps(extra, indent=2) + "\n")


def expectimax_policy(rules: RuleSet, table: np.ndarray) -> TurnValuePolicy:
    """The agent of a turn-value table: exact expectimax over each turn, ``table`` at the
    turn starts it reaches (the solver's within-turn machinery on a learned table)."""
    return TurnValuePolicy(rules, table, name="model-based", trained_rules=rules.name)


def read_saved(path: str | Path) -> tuple[ModelBasedConfig, dict[str, Any], list[tuple]]:
    """A file written by `ValueNet.save`, with numpy alone: the learner's config, the last
    evaluation row (games, env-steps, ...) and the network as (W [in, out], b [out]) pairs.
    The ``.npz`` holds arrays only (``allow_pickle=False``); ValueError names a bad one."""
    path = Path(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    cfg = ModelBasedConfig(**meta["config"])
    sizes = [feature_size(RuleSet.from_spec(cfg.rules).upper_bonus_threshold), *cfg.hidden, 1]
    shapes = []
    for a, b in pairwise(sizes):
        shapes += [(b, a), (b,)]  # torch's Linear: weight [out, in], bias [out]
    with np.load(path, allow_pickle=False) as data:
        if sorted(data.files) != sorted(f"p{i}" for i in range(len(shapes))):
            raise ValueError(f"{path}: arrays {sorted(data.files)[:10]}, the network has "
                             f"{len(shapes)} (p0..p{len(shapes) - 1})")  # fmt: skip
        params = [data[f"p{i}"] for i in range(len(shapes))]
    for i, (array, shape) in enumerate(zip(params, shapes, strict=True)):
        if array.shape != shape:
            raise ValueError(f"{path}: p{i} has shape {array.shape}, expected {shape}")
    weights = [(params[i].T, params[i + 1]) for i in range(0, len(params), 2)]
    return cfg, meta.get("last", {}), weights


def load_policy(path: str | Path, rules: str | RuleSet | None = None) -> TurnValuePolicy:
    """The learned agent as a policy (``act_batch``): expectimax over the learned table.

    ``path`` is a ``.npz`` written by `ValueNet.save` (read by `read_saved`)."""
    cfg, _, weights = read_saved(path)
    rules = RuleSet.from_spec(rules if rules is not None else cfg.rules)
    return expectimax_policy(rules, turn_value_table(weights, rules))


def export_level(
    path: str | Path,
    out_dir: str | Path,
    name: str = "master",
    *,
    level: str | None = "master",
    eval_games: int = 4_000,
    eval_seed: int = 12_345,
) -> Path:
    """Ship a learned agent as a numpy level: ``NAME.json`` + ``NAME.npz`` in ``out_dir``
    (`yahtzee_env.policies.models.save_turn_value`), its manifest stating the method, the
    training games and env-steps, the config's sha256 and an evaluation by the other
    levels' protocol (``eval_games`` games from ``eval_seed``, solver-graded regret)."""
    from yahtzee_env.analysis.evaluation import evaluate_policy
    from yahtzee_env.policies.knowledge import knowledge_of_turn_values
    from yahtzee_env.policies.models import load_opponent, save_turn_value

    cfg, last, weights = read_saved(path)
    rules = RuleSet.from_spec(cfg.rules)
    facts = {
        "source": Path(path).as_posix(),
        "method": "model-based",
        "objective": "score",
        "teacher": None,
        "knew": knowledge_of_turn_values(),
        "games": int(last["games"]),
        "env_steps": int(last["env_steps"]),
    }

    def save(extra: dict[str, Any]) -> Path:
        return save_turn_value(
            out_dir, name, weights, rules=rules.name, config_sha256=cfg.digest(), level=level,
            extra=facts | extra,
        )  # fmt: skip

    # The level graded as it loads: its table from the shipped arrays (a near-tie between
    # two moves can follow the float rounding of another copy of the same weights).
    r = evaluate_policy(load_opponent(save({})), eval_games, seed=eval_seed, rules=rules)
    keys = ("games", "seed", "mean", "ci95", "std", "median", "upper_bonus_rate", "yahtzee_rate")
    return save({"evaluation": {k: r[k] for k in keys} | {"regret_per_game": r["regret"]["mean"]}})


# ------------------------------------------------------------------------------ learning
def backup_targets(
    rules: RuleSet, table: np.ndarray, f: np.ndarray, u: np.ndarray, y: np.ndarray
) -> np.ndarray:
    """One-turn expectimax through the rules: the value of each turn start when the turn
    is played at its best and the turn starts it can reach are worth ``table``."""
    from yahtzee_env.solver.exact import OptimalValues

    values = OptimalValues(rules, table)
    out = np.empty(f.size, dtype=np.float64)
    for lo in range(0, f.size, TARGET_SLICE):
        s = slice(lo, lo + TARGET_SLICE)
        out[s] = values.turn_values(f[s], u[s], y[s]).start_values
    return out


def play_games(
    rules: RuleSet, table: np.ndarray, games: int, explore: float, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Play ``games`` games at once by expectimax over ``table`` (epsilon-greedy); the
    ``[M, 3]`` turn-start states they visited and the env-steps taken."""
    from yahtzee_env.envs.vector import YahtzeeVectorEnv
    from yahtzee_env.policies.baselines import decode

    policy = expectimax_policy(rules, table)
    env = YahtzeeVectorEnv(num_envs=games, rules=rules)
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    live = np.ones(games, dtype=bool)  # each slot plays one game, then idles
    seen: list[np.ndarray] = []
    steps = 0
    while live.any():
        rows = np.flatnonzero(live)
        d = decode(obs[rows], rules)
        start = d.rolls_left == 2  # the first decision of a turn
        seen.append(np.stack([d.filled, d.upper_total, d.yahtzee_state], axis=1)[start])
        masks = env.action_masks()[rows]
        actions = np.zeros(games, dtype=np.int64)
        chosen = policy.act_batch(obs[rows], masks)
        wild = rng.random(rows.size) < explore
        if wild.any():
            noise = rng.random((int(wild.sum()), masks.shape[1])) * masks[wild]
            chosen[wild] = noise.argmax(axis=1)
        actions[rows] = chosen
        # idle slots take any legal action; their steps are not counted or recorded
        idle = np.flatnonzero(~live)
        if idle.size:
            actions[idle] = env.action_masks()[idle].argmax(axis=1)
        obs, _, terminated, truncated, _ = env.step(actions)
        steps += rows.size
        live &= ~(terminated | truncated)
    env.close()
    return np.concatenate(seen), steps


def learn(
    cfg: ModelBasedConfig,
    run_dir: str | Path | None = None,
    *,
    evaluate: Callable[[Any, ModelBasedConfig], dict[str, Any]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Learn V for ``cfg.games`` games; evaluations go to ``run_dir/curve.jsonl``.

    ``evaluate(policy, cfg)`` grades the current agent (default: `default_evaluate`, the
    PPO runs' protocol: ``eval_games`` fixed-seed games, every decision graded by the
    solver); ``evaluate=False``-like callers pass a function that returns ``{}``.
    """
    import torch

    torch.set_num_threads(1)
    rules = RuleSet.from_spec(cfg.rules)
    rng = np.random.default_rng(cfg.seed)
    value = ValueNet(rules, cfg.hidden, cfg.learning_rate, cfg.seed)
    evaluate = evaluate or default_evaluate
    run = Path(run_dir) if run_dir is not None else None
    if run is not None:
        run.mkdir(parents=True, exist_ok=True)
        atomic_write(run / "config.json", json.dumps(asdict(cfg), indent=2) + "\n")
        (run / "curve.jsonl").unlink(missing_ok=True)
    buffer = np.zeros((0, 3), dtype=np.int64)
    games = steps = 0
    seconds = 0.0  # learning time; evaluations are not counted
    next_eval = cfg.eval_every
    curve: list[dict[str, Any]] = []
    table = value.table()
    while games < cfg.games:
        t0 = time.perf_counter()
        batch = min(cfg.games_per_iteration, cfg.games - games)
        visited, taken = play_games(rules, table, batch, cfg.explore, rng)
        games += batch
        steps += taken
        buffer = np.concatenate([buffer, visited])[-cfg.buffer_states :]
        states, counts = np.unique(buffer, axis=0, return_counts=True)
        f, u, y = states.T
        targets = backup_targets(rules, table, f, u, y)
        # each distinct state once per time it is in the buffer (visit frequency)
        reps = np.repeat(np.arange(len(states)), counts)
        feats = state_features(f, u, y, rules.upper_bonus_threshold)
        mse = value.fit(feats[reps], targets[reps], cfg.epochs, cfg.batch_size, rng)
        table = value.table()
        seconds += time.perf_counter() - t0
        if games >= next_eval or games >= cfg.games:
            next_eval += cfg.eval_every
            policy = expectimax_policy(rules, table)
            row = {
                "games": games,
                "env_steps": steps,
                "seconds": round(seconds, 1),
                "fit_mse": round(mse, 3),
                "v_start": round(float(table[0, 0, YAHTZEE_OPEN]), 3),
                "buffer_states": len(buffer),
                **evaluate(policy, cfg),
            }
            curve.append(row)
            log(json.dumps(row))
            if run is not None:
                with open(run / "curve.jsonl", "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                value.save(run / "value.npz", {"config": asdict(cfg), "last": row})
    return {"curve": curve, "table": table, "games": games, "env_steps": steps}


def default_evaluate(policy: Any, cfg: ModelBasedConfig) -> dict[str, Any]:
    """The PPO runs' evaluation protocol: fixed-seed games, solver-graded regret."""
    from yahtzee_env.analysis.evaluation import evaluate_policy

    r = evaluate_policy(policy, cfg.eval_games, seed=cfg.eval_seed, rules=cfg.rules)
    return {
        "mean": round(r["mean"], 3),
        "ci95": round(r["ci95"], 3),
        "regret_per_game": round(r["regret"]["mean"], 3),
        "regret_ci95": round(r["regret"]["ci95"], 3),
        "upper_bonus_rate": r["upper_bonus_rate"],
        "yahtzee_rate": r["yahtzee_rate"],
    }
