"""Exact resume: everything random or positional that a training run carries between two PPO
rollouts, saved beside each checkpoint and restored on ``--resume``.

A checkpoint is taken between rollouts (the rollout buffer is empty there) and is two files:

    checkpoints/ckpt_<steps>.zip         SB3's model: weights, Adam state, step count, the last
                                         observation and episode starts (``_last_obs``, ...)
    checkpoints/ckpt_<steps>.state.npz   this module: the torch, numpy and Python generators,
                                         the vector env's games and dice generator, the
                                         adapter's episode counters, the shaping potentials and
                                         the callback's next evaluation and checkpoint steps

The state file is arrays plus one JSON member (``facts``), read with ``allow_pickle=False``.
Restored on the same machine, kernels and library versions, a resumed run repeats the
uninterrupted one bit for bit (the test kills a run with SIGTERM and compares).
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import atomic_write

STATE_FORMAT = "yahtzee-rl-train-state-1"
STATE_SUFFIX = ".state.npz"


def state_path(checkpoint: Path) -> Path:
    """The state file beside ``checkpoints/ckpt_<steps>.zip``."""
    return checkpoint.with_name(checkpoint.stem + STATE_SUFFIX)


def _layers(env: Any) -> tuple[Any, Any, Any]:
    """(LearningView, SB3VecEnv, YahtzeeVectorEnv) of the env `train.make_env` builds."""
    view = env
    adapter = view.venv
    return view, adapter, adapter.venv.unwrapped


def save_state(path: Path, model: Any, env: Any, callback_state: dict[str, Any]) -> Path:
    """Write the training state (see the module docstring) to ``path`` atomically."""
    import torch

    view, adapter, vec = _layers(env)
    arrays, vec_facts = vec.get_state()
    arrays = {f"vec.{k}": v for k, v in arrays.items()}
    arrays["torch_rng"] = torch.get_rng_state().numpy().copy()
    # SB3 shuffles minibatches with numpy's global generator
    np_state = np.random.get_state()  # noqa: NPY002
    arrays["numpy_keys"] = np.asarray(np_state[1])
    arrays["episode_returns"] = np.array(adapter._episode_returns)
    arrays["episode_lengths"] = np.array(adapter._episode_lengths)
    arrays["phi"] = np.array(view.phi)
    facts = {
        "format": STATE_FORMAT,
        "timesteps": int(model.num_timesteps),
        "vec": vec_facts,
        "numpy": [np_state[0], int(np_state[2]), int(np_state[3]), float(np_state[4])],
        "python_random": _python_random_state(),
        "callback": callback_state,
    }
    arrays["facts"] = np.array(json.dumps(facts))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return atomic_write(path, buffer.getvalue())


def load_state(path: Path, model: Any, env: Any) -> dict[str, Any]:
    """Restore the state in ``path`` into the freshly loaded ``model`` and its ``env`` (after
    ``MaskablePPO.load``, which reseeds every generator); returns the callback's state."""
    import torch

    view, adapter, vec = _layers(env)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    facts = json.loads(str(arrays.pop("facts")))
    if facts.get("format") != STATE_FORMAT:
        raise ValueError(f"{path}: not a training state file ({facts.get('format')!r})")
    if facts["timesteps"] != model.num_timesteps:
        raise ValueError(
            f"{path}: state of step {facts['timesteps']}, model at {model.num_timesteps}"
        )
    vec.set_state({k[4:]: v for k, v in arrays.items() if k.startswith("vec.")}, facts["vec"])
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


def _python_random_state() -> list[Any]:
    version, internal, gauss_next = random.getstate()
    return [version, list(internal), gauss_next]
