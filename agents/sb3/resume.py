"""Exact resume: everything random or positional that a training run carries between two PPO
rollouts, saved beside each checkpoint and restored on ``--resume``.

A checkpoint is taken between rollouts (the rollout buffer is empty there) and is two files:

    checkpoints/ckpt_<steps>.zip         SB3's model: weights, Adam state, step count, the last
                                         observation and episode starts (``_last_obs``, ...)
    checkpoints/ckpt_<steps>.state.npz   this module's arrays (`training_state`; the run
                                         folder writes them): the torch, numpy and Python
                                         generators, the vector env's games and dice
                                         generator, the adapter's episode counters, the
                                         shaping potentials and the callback's next
                                         evaluation and checkpoint steps

A run at a 2-seat table (`versus_env`) saves its tables instead of the vector env's games
(``table.*``: both cards of every table, the dice, seats, opponents, the env's generator) and
its pool of past selves (``pool.*``: every kept snapshot's weights).

The state file is arrays plus one JSON member (``facts``), read with ``allow_pickle=False``.
Restored on the same machine, kernels and library versions, a resumed run repeats the
uninterrupted one bit for bit (the test kills a run with SIGTERM and compares).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

STATE_FORMAT = "yahtzee-rl-train-state-1"


def _layers(env: Any) -> tuple[Any, Any, Any]:
    """(LearningView, SB3VecEnv, YahtzeeVectorEnv) of the env `train.make_env` builds."""
    view = env
    adapter = view.venv
    return view, adapter, adapter.venv.unwrapped


def _is_table(env: Any) -> bool:
    from .versus_env import TableVecEnv

    return isinstance(env, TableVecEnv)


def training_state(model: Any, env: Any, callback_state: dict[str, Any]) -> dict[str, Any]:
    """The training state (see the module docstring) as the state file's arrays."""
    import torch

    env_facts: dict[str, Any] = {}
    if _is_table(env):
        tables, env_facts["table"] = env.get_state()
        arrays = {f"table.{k}": v for k, v in tables.items()}
        if env.mix.pool is not None:
            pool, env_facts["pool"] = env.mix.pool.state()
            arrays.update({f"pool.{k}": v for k, v in pool.items()})
    else:
        view, adapter, vec = _layers(env)
        vec_arrays, env_facts["vec"] = vec.get_state()
        arrays = {f"vec.{k}": v for k, v in vec_arrays.items()}
        arrays["episode_returns"] = np.array(adapter._episode_returns)
        arrays["episode_lengths"] = np.array(adapter._episode_lengths)
        arrays["phi"] = np.array(view.phi)
    arrays["torch_rng"] = torch.get_rng_state().numpy().copy()
    # SB3 shuffles minibatches with numpy's global generator
    np_state = np.random.get_state()  # noqa: NPY002
    arrays["numpy_keys"] = np.asarray(np_state[1])
    facts = {
        "format": STATE_FORMAT,
        "timesteps": int(model.num_timesteps),
        **env_facts,
        "numpy": [np_state[0], int(np_state[2]), int(np_state[3]), float(np_state[4])],
        "python_random": _python_random_state(),
        "callback": callback_state,
    }
    arrays["facts"] = np.array(json.dumps(facts))
    return arrays


def load_state(path: Path, model: Any, env: Any) -> dict[str, Any]:
    """Restore the state in ``path`` into the freshly loaded ``model`` and its ``env`` (after
    ``MaskablePPO.load``, which reseeds every generator); returns the callback's state."""
    import torch

    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    facts = json.loads(str(arrays.pop("facts")))
    if facts.get("format") != STATE_FORMAT:
        raise ValueError(f"{path}: not a training state file ({facts.get('format')!r})")
    if facts["timesteps"] != model.num_timesteps:
        raise ValueError(
            f"{path}: state of step {facts['timesteps']}, model at {model.num_timesteps}"
        )
    if _is_table(env):
        if "table" not in facts:
            raise ValueError(f"{path}: the state of a solitaire run, not of a 2-seat table")
        env.set_state(_prefixed(arrays, "table."), facts["table"])
        if env.mix.pool is not None:
            env.mix.pool.restore(_prefixed(arrays, "pool."), facts["pool"])
    else:
        if "vec" not in facts:
            raise ValueError(f"{path}: the state of a 2-seat table run, not of a solitaire one")
        view, adapter, vec = _layers(env)
        vec.set_state(_prefixed(arrays, "vec."), facts["vec"])
        adapter._pending_seed = None  # MaskablePPO.load seeded it for a reset that never comes
        adapter._episode_returns[:] = arrays["episode_returns"]
        adapter._episode_lengths[:] = arrays["episode_lengths"]
        view.phi = np.array(arrays["phi"])
    torch.set_rng_state(torch.from_numpy(arrays["torch_rng"]))
    name, pos, has_gauss, gauss = facts["numpy"]
    np.random.set_state((name, arrays["numpy_keys"], pos, has_gauss, gauss))  # noqa: NPY002
    version, internal, gauss_next = facts["python_random"]
    random.setstate((version, tuple(internal), gauss_next))
    return facts["callback"]


def _prefixed(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}


def _python_random_state() -> list[Any]:
    version, internal, gauss_next = random.getstate()
    return [version, list(internal), gauss_next]
