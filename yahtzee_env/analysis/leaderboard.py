"""The benchmark (``yahtzee benchmark``): one fixed protocol that grades any agent the same
way, in one call.

    import yahtzee_env

    row = yahtzee_env.benchmark("hard")                       # a level, a model file, ...
    row = yahtzee_env.benchmark(my_fn, games=2_000)           # fn(obs[N, 72], mask[N, 45])
    row["mean"], row["ci95"], row["expected_score"], row["regret_per_game"]

The protocol (`PROTOCOL`; ``yahtzee benchmark POLICY`` runs the same function):

* 10,000 solitaire games of `Yahtzee-v0`, the games of
  `yahtzee_env.analysis.evaluation.play_games` with seed 0 (chunk ``i`` of 4,096 games seeded
  by the ``i``-th child of ``SeedSequence(0)``): every agent meets the same dice;
* the official rules unless another preset is asked for;
* the env's default action mask (every legal hold); the agent returns one action per row;
  trained models act greedily (the argmax of their logits over the legal actions);
* every decision graded by the exact solver: its regret is the expected final score it gives
  up against the best action there. The expected score, optimum - regret per game, estimates
  the agent's true mean with far less noise than the mean of the 10,000 scores.

A POLICY is a built-in policy or level name, a model file (``NAME.json``/``.npz``, ``.onnx``,
an SB3 ``.zip`` or a run folder; see `yahtzee_env.resolve_policy`), a
``package.module:function`` that maps ``(obs float32[N, 72], mask bool[N, 45])`` to
``actions[N]``, or any object with ``act_batch(obs, masks)``. Evaluation is
`yahtzee_env.evaluate_policy`; this module only fixes its arguments, checks the
agent's answers and words the result.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.rules import RuleSet

__all__ = ["PROTOCOL", "BenchmarkProtocol", "benchmark", "format_benchmark", "load_agent"]

_CALLABLE_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class BenchmarkProtocol:
    """What a benchmark row means. A row records its protocol; rows with another number of
    games or other rules are marked ``"standard": false``."""

    name: str = "yahtzee-benchmark-v1"
    games: int = 10_000
    seed: int = 0
    rules: str = "official"
    mask: str = "default (every legal hold)"
    action: str = "the agent's own; trained models: argmax of the logits over legal actions"
    grading: str = "every decision against the exact solver's action values"


PROTOCOL = BenchmarkProtocol()


class AgentError(ValueError):
    """A POLICY that cannot be loaded, or an agent whose answer is not a legal action."""


class CallablePolicy:
    """An agent given as ``fn(obs[N, 72], mask[N, 45]) -> actions[N]``, its answers checked:
    one integer per row, each legal under its row's mask."""

    stochastic = False

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], Any], name: str) -> None:
        self.fn = fn
        self.name = name

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks, dtype=bool)
        actions = np.asarray(self.fn(obs, masks))
        return check_actions(actions, masks, self.name)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


class CheckedPolicy:
    """An object with ``act_batch`` whose answers are checked like `CallablePolicy`'s. Its
    ``stochastic``/``reseed`` (if any) are passed on, so a random agent gets a chunk's stream."""

    def __init__(self, policy: Any, name: str) -> None:
        self.policy = policy
        self.name = name
        self.stochastic = bool(getattr(policy, "stochastic", False))

    def reseed(self, seed: int) -> None:
        self.policy.reseed(seed)

    def __copy__(self) -> CheckedPolicy:
        import copy

        return CheckedPolicy(copy.copy(self.policy), self.name)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        actions = np.asarray(self.policy.act_batch(observations, masks))
        return check_actions(actions, masks, self.name)


def check_actions(actions: np.ndarray, masks: np.ndarray, name: str) -> np.ndarray:
    """``actions`` as int64[N] if they are one legal action per row of ``masks``, else
    `AgentError` saying which row and what was wrong."""
    n = masks.shape[0]
    if actions.shape != (n,):
        raise AgentError(f"{name}: returned actions of shape {actions.shape}, expected ({n},)")
    whole = actions.dtype.kind == "f" and np.all(np.equal(np.mod(actions, 1), 0))
    if actions.dtype.kind not in "iu" and not whole:
        raise AgentError(f"{name}: returned non-integer actions (dtype {actions.dtype})")
    actions = actions.astype(np.int64)
    bad = np.flatnonzero((actions < 0) | (actions >= NUM_ACTIONS))
    if bad.size == 0:
        bad = np.flatnonzero(~masks[np.arange(n), actions])
    if bad.size:
        i = int(bad[0])
        raise AgentError(
            f"{name}: action {int(actions[i])} in row {i} is not legal under its mask "
            f"({bad.size} such row(s) in this batch of {n})"
        )
    return actions


def _import_callable(spec: str) -> Any:
    """``package.module:function``, imported as ``python -m`` would: the current folder is
    searched first (a console script's ``sys.path`` starts at its own ``bin/`` instead)."""
    module_name, _, attr = spec.partition(":")
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise AgentError(f"{spec}: cannot import module {module_name!r} ({err})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AgentError(f"{spec}: module {module_name!r} has no {attr!r}") from None
    return obj


def load_agent(policy: Any, rules: RuleSet | str = "official", name: str | None = None) -> Any:
    """The checked policy object that the benchmark plays, from any POLICY (see the module
    docstring). Names and files go through `yahtzee_env.resolve_policy`."""
    if isinstance(policy, (CallablePolicy, CheckedPolicy)):
        return policy
    if isinstance(policy, str):
        spec = policy
        if _CALLABLE_SPEC.fullmatch(spec):
            policy = _import_callable(spec)
        else:
            from yahtzee_env.policies.resolve import policy_label, resolve_policy

            resolved = resolve_policy(spec, rules, 0)
            # a model trained for other rules plays, labelled "(trained for official rules)"
            return CheckedPolicy(resolved, policy_label(name or spec, resolved, rules))
        name = name or spec
    if hasattr(policy, "act_batch"):
        return CheckedPolicy(policy, name or getattr(policy, "name", type(policy).__name__))
    if callable(policy):
        return CallablePolicy(policy, name or getattr(policy, "__name__", "agent"))
    raise AgentError(
        f"{policy!r}: not a policy (give a name, a model file, 'package.module:function', a "
        "function of (obs, mask), or an object with act_batch)"
    )


def benchmark(
    policy: Any,
    *,
    rules: RuleSet | str = PROTOCOL.rules,
    games: int = PROTOCOL.games,
    name: str | None = None,
    workers: int | None = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Grade ``policy`` by the benchmark protocol; returns the leaderboard row (JSON-ready):
    ``agent``, ``mean`` ± ``ci95``, ``expected_score`` ± ``expected_ci95`` (optimum - regret),
    ``optimum``, ``regret_per_game`` ± ``regret_ci95``, ``regret_per_decision``,
    ``upper_bonus_rate``, ``yahtzee_rate``, ``games``, ``seed``, ``rules``, ``protocol``,
    ``standard``, ``version``; ``evaluation`` holds the full `evaluate_policy` result.
    ``workers`` changes the speed only, never the numbers."""
    from yahtzee_env.analysis.evaluation import evaluate_policy
    from yahtzee_env.solver import exact as solver

    rules = RuleSet.from_spec(rules)
    agent = load_agent(policy, rules, name)
    table = solver.load_or_solve(rules)  # solved once, before any worker loads it
    result = evaluate_policy(
        agent,
        games,
        PROTOCOL.seed,
        rules,
        regret="yes",
        name=agent.name,
        workers=workers,
        progress=progress,
    )
    optimum = float(table.expected_score)
    regret = result["regret"]
    return {
        "agent": agent.name,
        "mean": result["mean"],
        "ci95": result["ci95"],
        "expected_score": optimum - regret["mean"],
        "expected_ci95": regret["ci95"],
        "optimum": optimum,
        "regret_per_game": regret["mean"],
        "regret_ci95": regret["ci95"],
        "regret_per_decision": regret["per_decision"],
        "upper_bonus_rate": result["upper_bonus_rate"],
        "yahtzee_rate": result["yahtzee_rate"],
        "games": result["games"],
        "seed": PROTOCOL.seed,
        "rules": rules.name,
        "protocol": PROTOCOL.name,
        "standard": games == PROTOCOL.games and rules == RuleSet.from_spec(PROTOCOL.rules),
        "version": _package_version(),
        "evaluation": result,
    }


def _package_version() -> str | None:
    """The installed yahtzee-rl's version (the row says which code graded it)."""
    from importlib import metadata

    try:
        return metadata.version("yahtzee-rl")
    except metadata.PackageNotFoundError:
        return None


def protocol_dict() -> dict[str, Any]:
    return asdict(PROTOCOL)


def format_benchmark(row: dict[str, Any]) -> str:
    """The row in words, for the terminal."""
    tag = "" if row["standard"] else "  (not the standard protocol: other games or rules)"
    return "\n".join(
        [
            f"{row['agent']}: {row['games']:,} games, {row['rules']} rules, seed "
            f"{row['seed']} ({row['protocol']}){tag}",
            f"  mean score       {row['mean']:8.2f} ± {row['ci95']:.2f}  (95% CI)",
            f"  expected score   {row['expected_score']:8.2f} ± {row['expected_ci95']:.2f}  "
            f"(optimum {row['optimum']:.2f} - regret)",
            f"  regret per game  {row['regret_per_game']:8.2f} ± {row['regret_ci95']:.2f}  "
            f"({row['regret_per_decision']:.4f} per decision)",
            f"  upper bonus      {100 * row['upper_bonus_rate']:7.1f}%",
            f"  yahtzee          {100 * row['yahtzee_rate']:7.1f}%",
        ]
    )
