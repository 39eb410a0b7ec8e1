"""Throughput of `Yahtzee-v0`: the single env through `gym.make` and the native vector env.

Library functions behind ``yahtzee bench-env`` and ``experiments/bench_env.py``. What is timed:

* ``single_sampled``: ``gym.make("Yahtzee-v0")`` (default wrappers included), random legal
  actions, the loop body being *choose an action + step + reset at the end of a game*. The
  choice is cheap on purpose: precomputed uniform floats and a cache of legal-action tuples
  keyed by the mask's bytes (`LegalActionCache`).
* ``single_step``: the same env replaying the recorded actions of the same seeded games, so
  only ``step`` and ``reset`` are in the loop.
* ``vector_sampled``: ``gym.make_vec(..., vectorization_mode="vector_entry_point")``, random
  legal actions for all N games per step (`BatchMaskSampler`: exactly uniform, about 0.06 ms
  for N=4096) + ``step`` (which autoresets finished games).
* ``vector_step``: the vector env replaying the recorded actions: ``step`` alone.

Every figure is the best of ``repeats`` runs (the machine may be shared). Nothing global is
set here; run with ``OPENBLAS_NUM_THREADS=1`` (the Makefile sets it) for comparable numbers.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import version

import gymnasium as gym
import numpy as np

from yahtzee_env.game.engine import BOX_ACTION_OFFSET, NUM_ACTIONS

# pyhtzee (a pure-Python Yahtzee env) runs about this many random steps per second on one
# core; quoted for context only, it is not measured here.
PYHTZEE_STEPS_PER_S = 33_000
DEFAULT_STEPS = 300_000
DEFAULT_NUM_ENVS = 4096
MIN_VECTOR_BATCHES = 100


class LegalActionCache:
    """Uniform choice among the legal actions of a bool mask, via a cache keyed by its bytes.

    There are few distinct masks in practice (the hold block is all-or-nothing), so after a
    warm-up a choice is a ``tobytes`` and a dict lookup.
    """

    def __init__(self) -> None:
        self._legal: dict[bytes, tuple[int, ...]] = {}

    def choose(self, mask: np.ndarray, u: float) -> int:
        key = mask.tobytes()
        legal = self._legal.get(key)
        if legal is None:
            legal = self._legal[key] = tuple(np.flatnonzero(mask).tolist())
        return legal[int(u * len(legal))]


class BatchMaskSampler:
    """Exactly uniform legal actions for a batch of ``bool[N, 45]`` Yahtzee masks, row-loop free.

    It relies on the action layout of `Yahtzee-v0` without ``canonical_holds``: the 32 holds
    are all legal (re-rolls left) or all illegal, so a row is described by one hold flag and a
    13-bit code of legal boxes, both read with one small float32 matrix product. Tables over
    the 8192 codes give the count of legal boxes and the position of the k-th. (A mask outside
    that layout would give illegal actions, which the env rejects loudly.)
    """

    def __init__(self) -> None:
        first_box, num_boxes = BOX_ACTION_OFFSET, NUM_ACTIONS - BOX_ACTION_OFFSET
        self.weights = np.zeros((NUM_ACTIONS, 2), dtype=np.float32)
        self.weights[first_box:, 0] = 2.0 ** np.arange(num_boxes)  # box code, exact in f32
        self.weights[0, 1] = first_box  # 32 if the holds are legal, else 0
        bits = (np.arange(1 << num_boxes)[:, None] >> np.arange(num_boxes)) & 1
        self.popcount = bits.sum(axis=1).astype(np.intp)
        kth = np.zeros(bits.shape, dtype=np.intp)
        rows, cols = np.nonzero(bits)
        kth[rows, np.cumsum(bits, axis=1)[rows, cols] - 1] = cols
        self.kth = (first_box + kth).reshape(-1)  # [code * 13 + k]: action of the k-th box
        self.num_boxes = num_boxes

    def sample(self, masks: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Actions ``[N]`` given masks ``[N, 45]`` and uniform floats ``u`` in [0, 1) ``[N]``."""
        described = (masks.astype(np.float32) @ self.weights).astype(np.intp)
        code, holds = described[:, 0], described[:, 1]
        total = holds + self.popcount.take(code)
        k = np.minimum((u * total).astype(np.intp), total - 1)  # the k-th legal action
        box = self.kth.take(code * self.num_boxes + np.maximum(k - holds, 0))
        return np.where(k < holds, k, box)


@dataclass
class BenchResult:
    """Steps per second (env-steps for the vector env), each the best of ``repeats`` runs."""

    single_sampled: float
    single_step: float
    vector_sampled: float
    vector_step: float
    num_envs: int
    single_steps: int
    vector_env_steps: int
    repeats: int
    seed: int
    pyhtzee_reference: int = PYHTZEE_STEPS_PER_S

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = asdict(self)
        data["environment"] = {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "gymnasium": gym.__version__,
            "yahtzee_env": version("yahtzee-rl"),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "machine": platform.machine(),
        }
        return data


def _best(run: Callable[[], float], repeats: int) -> float:
    """The largest rate of ``repeats`` calls of ``run`` (which returns a rate)."""
    return max(run() for _ in range(repeats))


def bench_single(steps: int, seed: int, repeats: int = 3) -> tuple[float, float]:
    """(sampled, step-only) steps/s of one ``gym.make("Yahtzee-v0")`` env."""
    env = gym.make("Yahtzee-v0")
    uniforms = np.random.default_rng(seed).random(steps).tolist()
    cache = LegalActionCache()
    masks = env.unwrapped.action_masks

    # Record the actions (and where games end) of the seeded run once, untimed.
    actions: list[int] = []
    ends: list[bool] = []
    env.reset(seed=seed)
    for u in uniforms:
        action = cache.choose(masks(), u)
        terminated = env.step(action)[2]
        actions.append(action)
        ends.append(terminated)
        if terminated:
            env.reset()

    def sampled() -> float:
        step, reset, choose = env.step, env.reset, cache.choose
        reset(seed=seed)
        start = time.perf_counter()
        for u in uniforms:
            if step(choose(masks(), u))[2]:
                reset()
        return steps / (time.perf_counter() - start)

    def step_only() -> float:
        step, reset = env.step, env.reset
        reset(seed=seed)
        start = time.perf_counter()
        for action, end in zip(actions, ends, strict=True):
            step(action)
            if end:
                reset()
        return steps / (time.perf_counter() - start)

    result = _best(sampled, repeats), _best(step_only, repeats)
    env.close()
    return result


def bench_vector(
    num_envs: int, env_steps: int, seed: int, repeats: int = 3
) -> tuple[float, float, int]:
    """(sampled, step-only) env-steps/s of the native vector env, and the env-steps timed."""
    env = gym.make_vec("Yahtzee-v0", num_envs=num_envs, vectorization_mode="vector_entry_point")
    batches = max(-(-env_steps // num_envs), MIN_VECTOR_BATCHES)
    uniforms = np.random.default_rng(seed).random((batches, num_envs), dtype=np.float32)
    sampler = BatchMaskSampler()
    masks = env.unwrapped.action_masks

    actions = []
    env.reset(seed=seed)
    for u in uniforms:
        action = sampler.sample(masks(), u)
        env.step(action)
        actions.append(action)

    def sampled() -> float:
        env.reset(seed=seed)
        step, sample = env.step, sampler.sample
        start = time.perf_counter()
        for u in uniforms:
            step(sample(masks(), u))
        return batches * num_envs / (time.perf_counter() - start)

    def step_only() -> float:
        env.reset(seed=seed)
        step = env.step
        start = time.perf_counter()
        for action in actions:
            step(action)
        return batches * num_envs / (time.perf_counter() - start)

    result = _best(sampled, repeats), _best(step_only, repeats), batches * num_envs
    env.close()
    return result


def run_benchmarks(
    steps: int = DEFAULT_STEPS,
    num_envs: int = DEFAULT_NUM_ENVS,
    seed: int = 0,
    repeats: int = 3,
) -> BenchResult:
    if steps < 1 or num_envs < 1 or repeats < 1:
        raise ValueError("steps, num_envs and repeats must be positive")
    single_sampled, single_step = bench_single(steps, seed, repeats)
    vector_sampled, vector_step, vector_env_steps = bench_vector(num_envs, steps, seed, repeats)
    return BenchResult(
        single_sampled=single_sampled,
        single_step=single_step,
        vector_sampled=vector_sampled,
        vector_step=vector_step,
        num_envs=num_envs,
        single_steps=steps,
        vector_env_steps=vector_env_steps,
        repeats=repeats,
        seed=seed,
    )


def format_report(result: BenchResult) -> str:
    ref = result.pyhtzee_reference
    rows = [
        (
            f"single env (gym.make, default wrappers), {result.single_steps:,} steps",
            [
                ("random legal actions (choice + step + reset timed)", result.single_sampled),
                ("step + reset only (recorded actions replayed)", result.single_step),
            ],
            "steps/s",
        ),
        (
            f"vector env (native, N={result.num_envs}), {result.vector_env_steps:,} env-steps",
            [
                ("random legal actions (batched choice + step timed)", result.vector_sampled),
                ("step only (recorded actions replayed)", result.vector_step),
            ],
            "env-steps/s",
        ),
    ]
    lines = [f"Yahtzee-v0 throughput, best of {result.repeats} runs, seed {result.seed}"]
    for title, figures, unit in rows:
        lines.append(f"  {title}:")
        lines.extend(f"    {label:<52}{rate:>13,.0f} {unit}" for label, rate in figures)
    lines.append(
        f"  single env with random legal actions = {result.single_sampled / ref:.1f}x pyhtzee "
        f"(about {ref:,} random steps/s on one core; a reference, not measured here)"
    )
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        lines.append("  note: OPENBLAS_NUM_THREADS=1 is recommended for comparable numbers")
    return "\n".join(lines)
