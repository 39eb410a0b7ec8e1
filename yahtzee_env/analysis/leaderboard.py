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

A row states what the agent knew (``knew``, `yahtzee_env.policies.knowledge`), what makes it
comparable with other rows (``provenance``: commit, solver and dice digests, numpy and the
platform; `yahtzee_env.analysis.protocol`), which model made it (``model``: its sha256), and
its per-chunk sums (``chunks``), which `yahtzee verify` re-plays.

Stochastic agents. A function may take a third argument ``rng`` (``fn(obs, mask, rng)``; an
object: ``act_batch(obs, masks, rng)``): the protocol passes a numpy Generator seeded per
chunk of games, so the agent's numbers are the same for any number of workers. An agent that
draws from its own generator instead is found by a probe (the same 256 games played twice
give different scores) and its row is marked ``"reproducible": "no"``, with its spread over
the protocol's seeds 0-4.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
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

ROW_FORMAT = "yahtzee-rl-benchmark-row"
ROW_VERSION = 1
SPREAD_SEEDS = (0, 1, 2, 3, 4)  # the protocol seeds of a not-reproducible agent's spread
PROBE_GAMES = 256  # games of the determinism probe (played twice)

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
    chunk_size: int = 4096
    dice_sha256: str = "470a6b8b1cc3eb50d05b79e408d9d1f71927396d729ee53f30fc057bef67813f"
    """`yahtzee_env.analysis.protocol.dice_digest` of the games above (numpy's PCG64):
    ``yahtzee benchmark --check-protocol`` recomputes it on a machine."""


PROTOCOL = BenchmarkProtocol()


class AgentError(ValueError):
    """A POLICY that cannot be loaded, or an agent whose answer is not a legal action."""


def _takes_rng(fn: Any) -> bool:
    """Whether ``fn`` has a parameter named ``rng`` (the protocol's per-chunk generator)."""
    try:
        return "rng" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


class _ProtocolRng:
    """The per-chunk generator of an agent that takes ``rng``: `reseed` is called by the
    evaluation harness with the chunk's own seed (`yahtzee_env.policies.baselines.reseeded`)."""

    rng: np.random.Generator | None = None

    def reseed(self, seed: int) -> None:
        if self.takes_rng:
            self.rng = np.random.default_rng(seed)
        else:
            self.policy.reseed(seed)

    def _rng(self) -> np.random.Generator:
        if self.rng is None:  # played outside the harness: a fixed stream, still reproducible
            self.rng = np.random.default_rng(0)
        return self.rng


class CallablePolicy(_ProtocolRng):
    """An agent given as ``fn(obs[N, 72], mask[N, 45]) -> actions[N]`` (or ``fn(obs, mask,
    rng)``), its answers checked: one integer per row, each legal under its row's mask."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.name = name
        self.takes_rng = _takes_rng(fn)
        self.stochastic = self.takes_rng

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks, dtype=bool)
        if self.takes_rng:
            actions = np.asarray(self.fn(obs, masks, rng=self._rng()))
        else:
            actions = np.asarray(self.fn(obs, masks))
        return check_actions(actions, masks, self.name)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


class CheckedPolicy(_ProtocolRng):
    """An object with ``act_batch`` whose answers are checked like `CallablePolicy`'s. Its
    ``stochastic``/``reseed`` (if any) are passed on, so a random agent gets a chunk's stream;
    an ``act_batch(obs, masks, rng)`` gets the protocol's generator."""

    def __init__(self, policy: Any, name: str) -> None:
        self.policy = policy
        self.name = name
        self.takes_rng = _takes_rng(policy.act_batch)
        self.stochastic = self.takes_rng or bool(getattr(policy, "stochastic", False))
        # a policy that plays the table (`DuelPolicy`) is shown every card at a table
        self.reads_table = bool(getattr(policy, "reads_table", False))
        self.table_only = bool(getattr(policy, "table_only", False))  # no solitaire play

    def __copy__(self) -> CheckedPolicy:
        twin = CheckedPolicy(copy.copy(self.policy), self.name)
        twin.rng = self.rng
        return twin

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        if self.takes_rng:
            actions = np.asarray(self.policy.act_batch(observations, masks, rng=self._rng()))
        else:
            actions = np.asarray(self.policy.act_batch(observations, masks))
        return check_actions(actions, masks, self.name)

    def act_batch_table(
        self, observations: np.ndarray, action_masks: np.ndarray, cards: np.ndarray
    ) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        actions = np.asarray(self.policy.act_batch_table(observations, masks, cards))
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
    knew: dict[str, str] | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """Grade ``policy`` by the benchmark protocol; returns the leaderboard row (JSON-ready):
    ``agent``, ``mean`` ± ``ci95``, ``expected_score`` ± ``expected_ci95`` (optimum - regret),
    ``optimum``, ``regret_per_game`` ± ``regret_ci95``, ``regret_per_decision``,
    ``upper_bonus_rate``, ``yahtzee_rate``, ``games``, ``seed``, ``rules``, ``protocol``,
    ``standard``, ``version``; what the agent knew (``knew``, ``knew_from``, ``track``);
    ``reproducible`` (``"deterministic"``, ``"seeded by the protocol"`` or ``"no"``, then with
    ``seed_spread`` over `SPREAD_SEEDS`); ``model`` (what made the row, with its sha256);
    ``provenance``; ``chunks`` (per-chunk sums, for `yahtzee verify`); ``evaluation`` holds the
    full `evaluate_policy` result. ``workers`` changes the speed only, never the numbers.

    ``knew`` states what the agent knew (the five facts of `yahtzee_env.policies.knowledge`)
    where the agent cannot say (a function); ``source`` names the POLICY an already loaded
    object came from (a model file), for the row's ``model``."""
    from yahtzee_env.policies.knowledge import check_knowledge, knowledge_of, track
    from yahtzee_env.solver import exact as solver

    rules = RuleSet.from_spec(rules)
    agent = load_agent(policy, rules, name)
    if knew is not None:
        knew, knew_from = check_knowledge(knew), "stated by the submitter"
    else:
        knew = knowledge_of(agent)
        knew_from = "the agent" if knew != knowledge_of(None) else "nobody"
    table = solver.load_or_solve(rules)  # solved once, before any worker loads it
    reproducible = reproducibility(agent, rules)
    result, chunks = _graded(agent, rules, games, PROTOCOL.seed, table, workers, progress)
    row = _row(agent.name, result, table, rules, games)
    row.update(
        knew=knew,
        knew_from=knew_from,
        track=track(knew),
        reproducible=reproducible,
        model=model_identity(source if source is not None else policy, agent),
        provenance=protocol_facts(table, games),
        chunks=chunks,
        evaluation=result,
    )
    if reproducible == "no":
        spread = [row]
        for seed in SPREAD_SEEDS[1:]:
            other, _ = _graded(agent, rules, games, seed, table, workers, None)
            spread.append(_row(agent.name, other, table, rules, games))
        row["seed_spread"] = {
            "seeds": list(SPREAD_SEEDS),
            "expected_score": [r["expected_score"] for r in spread],
            "mean": [r["mean"] for r in spread],
        }
    return row


def _graded(
    agent: Any,
    rules: RuleSet,
    games: int,
    seed: int,
    table: Any,
    workers: int | None,
    progress: Callable[[int, int], None] | None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`evaluate_policy`'s summary of the protocol's games from ``seed``, and the per-chunk
    sums (games, score sum, regret sum) that `yahtzee verify` compares."""
    import time

    from yahtzee_env.analysis.evaluation import play_games, summarize
    from yahtzee_env.analysis.protocol import chunk_sizes

    t0 = time.perf_counter()
    records = play_games(
        agent, games, seed, rules, regret="yes", chunk_size=PROTOCOL.chunk_size,
        workers=workers, progress=progress,
    )  # fmt: skip
    result = summarize(records, name=agent.name, seed=seed, rules=rules.name)
    result["seconds"] = time.perf_counter() - t0
    chunks, lo = [], 0
    for n in chunk_sizes(games, PROTOCOL.chunk_size):
        chunks.append(
            {
                "games": n,
                "score_sum": int(records.scores[lo : lo + n].sum()),
                "regret_sum": float(records.regret[lo : lo + n].sum()),
            }
        )
        lo += n
    return result, chunks


def _row(
    agent: str, result: dict[str, Any], table: Any, rules: RuleSet, games: int
) -> dict[str, Any]:
    optimum = float(table.expected_score)
    regret = result["regret"]
    return {
        "row_format": ROW_FORMAT,
        "row_version": ROW_VERSION,
        "kind": "solitaire",
        "agent": agent,
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
        "seed": result["seed"],
        "rules": rules.name,
        "protocol": PROTOCOL.name,
        "standard": games == PROTOCOL.games and rules == RuleSet.from_spec(PROTOCOL.rules),
        "version": _package_version(),
    }


def protocol_facts(table: Any, games: int) -> dict[str, Any]:
    """`yahtzee_env.analysis.protocol.provenance` of this protocol's games."""
    from yahtzee_env.analysis.protocol import provenance

    return provenance(table, games=games, seed=PROTOCOL.seed, chunk_size=PROTOCOL.chunk_size)


def reproducibility(agent: Any, rules: RuleSet | str = "official") -> str:
    """``"no"`` if the same `PROBE_GAMES` games played twice give ``agent`` different
    scores (it draws from a generator of its own), else ``"seeded by the protocol"`` for an
    agent that takes the protocol's generator (or is reseeded by it), else
    ``"deterministic"``."""
    from yahtzee_env.analysis.evaluation import play_chunk

    rules = RuleSet.from_spec(rules)
    if getattr(agent, "table_only", False):  # it plays only at a table of two: probe there
        from yahtzee_env.analysis.tournament import play_batched_games
        from yahtzee_env.policies.baselines import make_policy

        seats = [agent, make_policy("greedy", rules=rules)]
        first, second = (
            play_batched_games(seats, PROBE_GAMES, rules, seed=2_029) for _ in range(2)
        )
        if not np.array_equal(first, second):
            return "no"
        return "seeded by the protocol" if getattr(agent, "stochastic", False) else "deterministic"
    first, second = (
        play_chunk(agent, PROBE_GAMES, np.random.SeedSequence(2_029), rules) for _ in range(2)
    )
    if not np.array_equal(first.box_scores, second.box_scores):
        return "no"
    return "seeded by the protocol" if getattr(agent, "stochastic", False) else "deterministic"


def _sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_identity(policy: Any) -> dict[str, Any]:
    """``code`` (the modules) and ``code_sha256`` (`protocol.code_digest`) of a policy whose
    play is code around its weights (``plays_with``, the duelist's search); nothing for a
    network that plays alone, so that its row and its digests stay as they were."""
    from yahtzee_env.analysis.protocol import code_digest

    modules = tuple(getattr(policy, "plays_with", ()))
    if not modules:
        return {}
    return {"code": list(modules), "code_sha256": code_digest(modules)}


def table_identity(manifest: Any) -> dict[str, Any]:
    """``table_sha256``: the weights digest of a level's second network, the one that plays
    at a 2-seat table (`models.TABLE_MLP`); nothing for a model of one network."""
    table = getattr(manifest, "table", None)
    return {} if table is None else {"table_sha256": table.weights_sha256}


def model_identity(policy: Any, agent: Any = None) -> dict[str, Any]:
    """What made a row: ``kind`` (built-in, level, model file, function, python object),
    ``name`` and ``sha256`` (a level's or manifest's weights digest, a model file's bytes, a
    function's module source; None where there is nothing to hash), and for a search around
    the weights its ``code`` and ``code_sha256`` (`code_identity`)."""
    from pathlib import Path

    from yahtzee_env.policies.baselines import POLICIES
    from yahtzee_env.policies.models import LEVELS

    if not isinstance(policy, str):
        name = getattr(agent, "name", None) or getattr(policy, "name", type(policy).__name__)
        return {"kind": "python object", "name": name, "sha256": None}
    spec = policy
    if spec in POLICIES:
        return {"kind": "built-in", "name": spec, "sha256": None}
    if _CALLABLE_SPEC.fullmatch(spec):
        module = importlib.import_module(spec.partition(":")[0])
        try:
            path = inspect.getsourcefile(module)
        except TypeError:
            path = None
        return {
            "kind": "function",
            "name": spec,
            "sha256": _sha256_file(path) if path else None,
        }
    inner = getattr(agent, "policy", agent)
    manifest = getattr(inner, "manifest", None)
    if manifest is not None:
        return {
            "kind": "level" if spec in LEVELS else "model file",
            "name": spec if spec in LEVELS else Path(spec).name,
            "sha256": manifest.weights_sha256,
            **code_identity(inner),
            **table_identity(manifest),
        }
    path = Path(spec)
    return {
        "kind": "model file",
        "name": path.name,
        "sha256": _sha256_file(path) if path.is_file() else None,
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
            *_knew_lines(row),
        ]
    )


def _knew_lines(row: dict[str, Any]) -> list[str]:
    if "knew" not in row:
        return []
    lines = [f"  track            {row['track']}  (what it knew: {row['knew_from']})"]
    lines += [f"    {field:<12}   {value}" for field, value in row["knew"].items()]
    if row["knew_from"] == "nobody":
        lines.append(
            "    (not stated: nothing in the agent or its file says what it knew; state it with "
            '--knew "observation=...;reward=...;actions=...;model=...;teacher=...", or '
            "export it again with `yahtzee export`, whose files carry it)"
        )
    spread = row.get("seed_spread")
    lines.append(f"  reproducible     {row['reproducible']}")
    if spread:
        lines.append(
            "    expected score over protocol seeds "
            f"{spread['seeds'][0]}-{spread['seeds'][-1]}: "
            + ", ".join(f"{x:.2f}" for x in spread["expected_score"])
        )
    p = row["provenance"]
    lines.append(
        f"  provenance       commit {p['commit'][:12]}{' (modified)' if p['modified'] else ''}, "
        f"dice {p['dice_sha256'][:12]}, solver {p['solver_sha256'][:12]}, numpy {p['numpy']} "
        f"{p['bit_generator']}"
    )
    return lines
