"""Loading SB3 MaskablePPO checkpoints as numpy policies: the training package's side of
`yahtzee_env.policies.resolve.resolve_policy`. The core finds `load_sb3_policy` through the
``yahtzee_env.model_loaders`` entry point (pyproject.toml), never by importing this package.

    from yahtzee_agents.sources import load_sb3_policy

    policy = load_sb3_policy("runs/hard")       # a run folder (its best model) or a zip in it
    policy = load_sb3_policy("my_model.zip")    # any script's MaskablePPO on Yahtzee-v0

No part of the file is unpickled and no code in it runs: the weights come from
``policy.pth`` read by ``torch.load(weights_only=True)``, the observation's shape from the
plain JSON fields of ``data``, and the activation from ``policy_kwargs`` decoded by a pickle
reader that builds nothing (`_read_policy_kwargs`).

A zip inside a run folder takes its rules, holds mode and network-input version from the
run's config. A zip saved by any other script (as ``examples/sb3_maskable_ppo.py`` makes one)
has no config: its input version comes from its observation space (72 floats: version 1, 86:
version 2), and its holds mode and rules are the env's defaults (all 32 holds, official)
unless given. What was assumed is in the policy's ``assumed`` (the CLI prints it and writes it
into the benchmark row and the exported manifest). A run's zip also says what it knew
(``knew``: its observation, reward shaping, holds and teacher, from the config), so a
benchmark row of a checkpoint states its track; a zip without a config says nothing
(``yahtzee benchmark --knew`` states it).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import INPUT_SIZES
from yahtzee_env.game.rules import PRESETS, RuleSet
from yahtzee_env.policies.checkpoints import check_sb3_zip
from yahtzee_env.policies.models import MLPPolicy, ModelFormatError, RulesMismatchError

ENV_DEFAULT_HOLDS = "all"
"""`Yahtzee-v0`'s default (``canonical_holds=False``): what a zip without a config assumes."""
ENV_DEFAULT_RULES = "official"

_ACTIVATIONS = {"ReLU": "relu", "Tanh": "tanh"}
_SB3_DEFAULT_ACTIVATION = "tanh"  # ActorCriticPolicy's activation_fn default (nn.Tanh)


def _run_folder_of(path: Path) -> Path | None:
    """The run folder holding ``path`` (a model.zip in best/, final/ or checkpoints/)."""
    from .run.folder import is_run_folder

    for folder in (path, path.parent, path.parent.parent):
        if is_run_folder(folder):
            return folder
    return None


def load_jax_run_policy(run: Path, rules: RuleSet | str | None, holds: str | None) -> MLPPolicy:
    """The numpy policy of a JAX run (``train.engine: jax``): its best model (else its final),
    a numpy model file; what it knew from the run's config, as for an SB3 run."""
    from yahtzee_env.policies.models import load_opponent, read_manifest

    from .run.folder import RunPaths, load_run_config, model_facts

    paths = RunPaths(run)
    model = paths.model("best") or paths.model("final")
    if model is None:
        raise ModelFormatError(f"{run}: the JAX run has no model yet (best/ or final/)")
    cfg = load_run_config(run)
    run_holds = "canonical" if cfg.env.canonical_holds else "all"
    if holds is not None and holds != run_holds:
        raise ValueError(f"{run}: the run's config says {run_holds} holds, not {holds}")
    policy = load_opponent(model, rules)
    policy.name = cfg.name
    policy.trained_rules = cfg.env.rules
    policy.assumed = {}
    policy.timesteps = read_manifest(model).env_steps
    policy.knew = model_facts(cfg, policy.timesteps or 0)["knew"]
    return policy


class _Named:
    """What `_Reader` builds in place of any class a pickle names: the name, nothing run."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args: Any, **kwargs: Any) -> _Named:
        return self  # a REDUCE of a named class: still only its name


class _Reader(pickle.Unpickler):
    """A pickle reader that imports and calls nothing: every global becomes a `_Named`."""

    def find_class(self, module: str, name: str) -> Any:
        return _Named(module, name)


def _read_policy_kwargs(data: dict[str, Any], where: str) -> dict[str, Any]:
    """``policy_kwargs`` of SB3's ``data`` JSON: plain JSON, or a cloudpickle read by
    `_Reader` (classes come back as `_Named`)."""
    raw = data.get("policy_kwargs", {})
    if not isinstance(raw, dict):
        raise ModelFormatError(f"{where}: policy_kwargs is not a mapping")
    if ":serialized:" not in raw:
        return raw
    try:
        value = _Reader(io.BytesIO(base64.b64decode(raw[":serialized:"]))).load()
    except Exception as err:  # any damage in the pickle stream
        raise ModelFormatError(
            f"{where}: policy_kwargs unreadable ({type(err).__name__})"
        ) from None
    if not isinstance(value, dict):
        raise ModelFormatError(f"{where}: policy_kwargs is not a mapping")
    return value


def _activation(kwargs: dict[str, Any], where: str) -> str:
    fn = kwargs.get("activation_fn")
    if fn is None:
        return _SB3_DEFAULT_ACTIVATION
    if isinstance(fn, _Named) and fn.module.startswith("torch.nn") and fn.name in _ACTIVATIONS:
        return _ACTIVATIONS[fn.name]
    name = f"{fn.module}.{fn.name}" if isinstance(fn, _Named) else repr(fn)[:80]
    raise ModelFormatError(f"{where}: activation_fn {name} is not supported (ReLU or Tanh)")


def _observation_size(data: dict[str, Any], where: str) -> int:
    space = data.get("observation_space")
    shape = space.get("_shape") if isinstance(space, dict) else None
    if not isinstance(shape, list) or not all(isinstance(n, int) for n in shape):
        raise ModelFormatError(
            f"{where}: its observation space has no plain shape (a Yahtzee-v0 policy reads a "
            f"flat Box of {' or '.join(str(n) for n in INPUT_SIZES.values())} floats)"
        )
    if len(shape) != 1:
        raise ModelFormatError(f"{where}: observation space of shape {tuple(shape)}, not flat")
    return shape[0]


def _state_weights(state: dict[str, Any], where: str) -> list[tuple[Any, Any]]:
    """(W [in, out], b) of ``mlp_extractor.policy_net.*`` in order, then ``action_net``."""
    prefix = "mlp_extractor.policy_net."
    indices = sorted({int(k[len(prefix) :].split(".")[0]) for k in state if k.startswith(prefix)})
    names = [f"{prefix}{i}" for i in indices] + ["action_net"]
    weights = []
    for name in names:
        w, b = state.get(f"{name}.weight"), state.get(f"{name}.bias")
        if w is None or b is None:
            raise ModelFormatError(f"{where}: policy.pth has no {name}.weight and .bias")
        weights.append((w.detach().cpu().numpy().T.copy(), b.detach().cpu().numpy().copy()))
    if weights[-1][0].shape[1] != NUM_ACTIONS:
        raise ModelFormatError(
            f"{where}: the policy has {weights[-1][0].shape[1]} actions, Yahtzee-v0 has "
            f"{NUM_ACTIONS}"
        )
    return weights


def read_sb3_zip(zip_path: Path) -> tuple[dict[str, Any], list[tuple[Any, Any]], str]:
    """(``data`` JSON, policy weights, activation) of a checked SB3 zip; nothing unpickled."""
    import torch

    where = os.fspath(zip_path)
    check_sb3_zip(zip_path)
    with zipfile.ZipFile(zip_path) as archive:
        data = json.loads(archive.read("data").decode("utf-8"))
        blob = archive.read("policy.pth")
    if not isinstance(data, dict):
        raise ModelFormatError(f"{where}: data is not a mapping")
    try:
        state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types on a damaged or hostile file
        raise ModelFormatError(
            f"{where}: cannot read policy.pth ({type(err).__name__}: {str(err)[:200]})"
        ) from None
    if not isinstance(state, dict):
        raise ModelFormatError(f"{where}: policy.pth is not a state dict")
    return data, _state_weights(state, where), _activation(_read_policy_kwargs(data, where), where)


def load_sb3_policy(
    path: str | os.PathLike,
    rules: RuleSet | str | None = None,
    *,
    holds: str | None = None,
) -> MLPPolicy:
    """The numpy policy of an SB3 MaskablePPO checkpoint: a ``.zip``, or a run folder (its
    best model). See the module docstring for what a zip without a run folder assumes.

    ``rules``: for a run's zip, checked against the run's (`RulesMismatchError`); for a zip
    without a config, the rules it was trained for (default official). ``holds``
    (``"all"`` or ``"canonical"``): for a zip without a config (default all); a run's config
    says it, and a different ``holds`` is refused."""
    if holds not in (None, "all", "canonical"):
        raise ValueError(f"holds must be 'all' or 'canonical', got {holds!r}")
    path = Path(path)
    run = _run_folder_of(path) if path.is_dir() or path.suffix == ".zip" else None
    if path.is_dir():
        from .run.folder import RunPaths

        if run is None:
            raise ModelFormatError(f"{path}: not a run folder (no {RunPaths(path).config.name})")
        paths = RunPaths(run)
        found = paths.model("best") or paths.model("final")
        if found is not None and found.suffix == ".json":  # a JAX run's numpy model
            return load_jax_run_policy(run, rules, holds)
        zip_path = found or paths.model_in(paths.final, "sb3")
    else:
        zip_path = path
    data, weights, activation = read_sb3_zip(zip_path)
    width = weights[0][0].shape[0]
    if run is not None:  # issue 16.2: the input version comes from the config, never the width
        from .export import check_input_version
        from .run.folder import load_run_config, model_facts

        cfg = load_run_config(run)
        if rules is not None and RuleSet.from_spec(rules) != RuleSet.from_spec(cfg.env.rules):
            raise RulesMismatchError(
                f"{path}: model trained for rules {cfg.env.rules!r}, asked to play "
                f"{RuleSet.from_spec(rules).name!r}"
            )
        run_holds = "canonical" if cfg.env.canonical_holds else "all"
        if holds is not None and holds != run_holds:
            raise ValueError(f"{path}: the run's config says {run_holds} holds, not {holds}")
        try:
            version = check_input_version(weights, cfg.env.observation_version)
        except ValueError as err:
            raise ModelFormatError(f"{path}: {err}") from None
        name, trained, assumed = cfg.name, cfg.env.rules, {}
        canonical = cfg.env.canonical_holds
        knew = model_facts(cfg, _timesteps(data) or 0)["knew"]  # what the run's config gave it
    else:
        size = _observation_size(data, os.fspath(path))
        versions = {n: v for v, n in INPUT_SIZES.items()}
        if size not in versions or width != size:
            raise ModelFormatError(
                f"{path}: observation of {size} floats (network reads {width}): a Yahtzee-v0 "
                "policy reads "
                + " or ".join(f"{n} (input version {v})" for v, n in INPUT_SIZES.items())
            )
        version = versions[size]
        trained = RuleSet.from_spec(rules).name if rules is not None else ENV_DEFAULT_RULES
        if trained not in PRESETS:
            raise ModelFormatError(f"{path}: rules must be a preset name, got {trained!r}")
        chosen = holds or ENV_DEFAULT_HOLDS
        canonical, name = chosen == "canonical", path.stem
        knew = None  # a zip without its config cannot say what it knew (--knew can)
        assumed = {
            "input_version": {"value": version, "from": f"observation space ({size} floats)"},
            "holds": {"value": chosen, "from": "given" if holds else "Yahtzee-v0's default"},
            "rules": {"value": trained, "from": "given" if rules else "Yahtzee-v0's default"},
            "source_sha256": hashlib.sha256(zip_path.read_bytes()).hexdigest(),
        }
    policy = MLPPolicy(
        weights,
        activation,
        name=name,
        canonical_holds=canonical,
        input_version=version,
        threshold=RuleSet.from_spec(trained).upper_bonus_threshold,
    )
    policy.trained_rules = trained
    policy.assumed = assumed
    policy.timesteps = _timesteps(data)
    if knew is not None:
        policy.knew = knew  # the benchmark row's "knew", from "the agent" (its run's config)
    return policy


def _timesteps(data: dict[str, Any]) -> int | None:
    steps = data.get("num_timesteps")
    return steps if isinstance(steps, int) else None


def describe_assumed(assumed: dict[str, Any]) -> str:
    """One line of what a config-less zip was taken to be (empty for a run's zip)."""
    parts = [
        f"{key} {item['value']} ({item['from']})"
        for key, item in assumed.items()
        if isinstance(item, dict)
    ]
    return "assumed: " + "; ".join(parts) if parts else ""


__all__ = ["describe_assumed", "load_sb3_policy", "read_sb3_zip"]
