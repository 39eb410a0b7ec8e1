"""Policies from other model files than the numpy levels: ONNX files, SB3 checkpoints and run
folders. `resolve_policy` sends ``*.onnx``, ``*.zip`` and run folders here.

    from yahtzee_env.policies.sources import load_onnx_policy, load_sb3_policy

    policy = load_onnx_policy("out/hard.onnx", rules="official")  # needs the export extra
    policy = load_sb3_policy("runs/hard")                          # needs the train extra

Each returns an `models.MLPPolicy` (``act``/``act_batch`` with the same masking as the
levels). The heavy libraries are imported only here, only when called; a missing one raises
`MissingExtraError` (an `ImportError`) whose message is the install hint.

An ONNX file written by ``yahtzee export --format onnx`` carries in its ``metadata_props``
the holds mode, the rules, the observation version, the level and ``arrays_sha256``, the
sha256 of its weight arrays (`weights_digest`; a level manifest's ``weights_sha256`` is the
digest of its ``.npz`` file instead) (`onnx_metadata`); `load_onnx_policy` checks every one
before it plays. Where the exporter knew it, ``knew`` holds what the agent knew (the five
facts as JSON, `yahtzee_env.policies.knowledge`): the loaded policy states it, so a benchmark
row of the file gives its track. SB3 loading lives in the training package
(`yahtzee_agents.sources`), found through an entry point.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import UnsafeFileError, read_regular_file
from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import INPUT_SIZES
from yahtzee_env.game.rules import PRESETS, RuleSet
from yahtzee_env.policies.models import (
    ACTIVATIONS,
    FORMAT_NAME,
    MLPPolicy,
    ModelFormatError,
    RulesMismatchError,
)

ONNX_FORMAT = f"{FORMAT_NAME}-onnx"
ONNX_KEYS = (
    "format",
    "holds",
    "rules",
    "observation_version",
    "level",
    "activation",
    "arrays_sha256",
)
MAX_ONNX_BYTES = 256 << 20


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message is the one-line install hint."""


def _require(module: str, extra: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{what} needs {module.split('.')[0]} (pip install 'yahtzee-rl[{extra}]')"
        ) from None


# ------------------------------------------------------------------------------ ONNX
def weights_digest(weights: Sequence[tuple[np.ndarray, np.ndarray]]) -> str:
    """sha256 over every layer's weight then bias, float32 little-endian, row-major: the
    same numbers give the same digest whatever file holds them."""
    digest = hashlib.sha256()
    for w, b in weights:
        for array in (w, b):
            digest.update(np.ascontiguousarray(array, dtype="<f4").tobytes())
    return digest.hexdigest()


def onnx_metadata(
    policy: MLPPolicy, *, rules: str, level: str | None, knew: dict[str, str] | None = None
) -> dict[str, str]:
    """The ``metadata_props`` of an exported ONNX file (all strings, as ONNX requires);
    ``knew`` (what the agent knew, checked) only when given."""
    import json

    from yahtzee_env.policies.knowledge import check_knowledge

    extra = {"knew": json.dumps(check_knowledge(knew), sort_keys=True)} if knew else {}
    return {
        "format": ONNX_FORMAT,
        "holds": "canonical" if policy.canonical_holds else "all",
        "rules": rules,
        "observation_version": str(policy.input_version),
        "level": level or "",
        "activation": policy.activation,
        "arrays_sha256": weights_digest(policy.weights),
        **extra,
    }


def _onnx_session(blob: bytes) -> Any:
    ort = _require("onnxruntime", "export", "an .onnx policy")
    return ort.InferenceSession(blob, providers=["CPUExecutionProvider"])


class OnnxPolicy(MLPPolicy):
    """An `MLPPolicy` whose logits come from onnxruntime running the ONNX file. It pickles
    (the evaluation harness sends policies to worker processes) as the file's bytes, and
    builds its session again on the other side."""

    def __init__(self, blob: bytes, weights, activation: str, name: str, **kwargs: Any):
        super().__init__(weights, activation, name, **kwargs)
        self.blob = blob
        self.session = _onnx_session(blob)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "session"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.session = _onnx_session(self.blob)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        x = np.array(observations, dtype=np.float32, ndmin=2)
        mask = np.ones((len(x), NUM_ACTIONS), dtype=bool)  # the logits are unmasked anyway
        out = self.session.run(["logits"], {"obs": x, "mask": mask})[0]
        return out if np.ndim(observations) == 2 else out[0]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation, action_mask)[0])  # the graph's, one row

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The graph's own ``action``: its features, canonical-holds restriction and masked
        argmax (the ONNX file plays exactly as it would anywhere else)."""
        x = np.array(observations, dtype=np.float32, ndmin=2)
        masks = np.array(action_masks, dtype=bool, ndmin=2)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask has no legal action")
        return self.session.run(["action"], {"obs": x, "mask": masks})[0]


def load_onnx_policy(path: str | os.PathLike, rules: RuleSet | str | None = None) -> OnnxPolicy:
    """An ONNX file written by ``yahtzee export --format onnx``, its metadata checked (format,
    observation version, holds, rules, activation, weights digest); with ``rules``, a model
    made for other rules raises `RulesMismatchError`. Needs onnx and onnxruntime."""
    onnx = _require("onnx", "export", "an .onnx policy")
    numpy_helper = _require("onnx.numpy_helper", "export", "an .onnx policy")
    _require("onnxruntime", "export", "an .onnx policy")
    path = Path(path)
    try:
        blob = read_regular_file(path, MAX_ONNX_BYTES)
    except (UnsafeFileError, OSError, ValueError) as err:
        raise ModelFormatError(f"{path}: cannot read the ONNX file: {err}") from None
    try:
        model = onnx.load_from_string(blob)
    except Exception as err:  # protobuf's DecodeError and friends
        raise ModelFormatError(f"{path}: not an ONNX model ({type(err).__name__})") from None
    meta = {p.key: p.value for p in model.metadata_props}
    if meta.get("format") != ONNX_FORMAT:
        raise ModelFormatError(
            f"{path}: no {ONNX_FORMAT} metadata (export it with `yahtzee export --format onnx`)"
        )
    missing = [k for k in ONNX_KEYS if k not in meta]
    if missing:
        older = " (an export of yahtzee-rl 0.1: export it again)"
        older = older if "weights_sha256" in meta else ""
        raise ModelFormatError(f"{path}: metadata lacks {', '.join(missing)}{older}")
    versions = {str(v): v for v in INPUT_SIZES}
    if meta["observation_version"] not in versions:
        raise ModelFormatError(
            f"{path}: model expects observation version {meta['observation_version']}, this "
            f"package reads versions {sorted(INPUT_SIZES)}"
        )
    input_version = versions[meta["observation_version"]]
    if meta["holds"] not in ("canonical", "all") or meta["activation"] not in ACTIVATIONS:
        raise ModelFormatError(f"{path}: metadata holds/activation not understood")
    if meta["rules"] not in PRESETS:
        raise ModelFormatError(f"{path}: unknown rules preset {meta['rules']!r}")
    if rules is not None and RuleSet.from_spec(rules) != PRESETS[meta["rules"]]:
        raise RulesMismatchError(
            f"{path}: model trained for rules {meta['rules']!r}, asked to play "
            f"{RuleSet.from_spec(rules).name!r}"
        )
    names = [i.name for i in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    if names != ["obs", "mask"] or outputs != ["action", "logits"]:
        raise ModelFormatError(
            f"{path}: graph takes {names} and gives {outputs}, not obs, mask -> action, logits "
            "(an export of an older version: export it again)"
        )
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    weights = []
    while f"w{len(weights)}" in inits and f"b{len(weights)}" in inits:
        weights.append((inits[f"w{len(weights)}"], inits[f"b{len(weights)}"]))
    if not weights:
        raise ModelFormatError(f"{path}: no layer weights w0, b0, ... in the graph")
    if weights_digest(weights) != meta["arrays_sha256"]:
        raise ModelFormatError(
            f"{path}: weights do not match the metadata's arrays_sha256 (file altered or corrupt)"
        )
    inputs = INPUT_SIZES[input_version]
    if weights[0][0].shape[0] != inputs or weights[-1][0].shape[1] != NUM_ACTIONS:
        raise ModelFormatError(f"{path}: network is not {inputs} -> {NUM_ACTIONS}")
    knew = _onnx_knew(meta, path)
    try:
        policy = OnnxPolicy(
            blob,
            weights,
            meta["activation"],
            name=meta["level"] or path.stem,
            canonical_holds=meta["holds"] == "canonical",
            input_version=input_version,
            threshold=PRESETS[meta["rules"]].upper_bonus_threshold,
            trained_rules=meta["rules"],
        )
    except Exception as err:  # onnxruntime raises its own exception types
        raise ModelFormatError(f"{path}: onnxruntime cannot run it ({err})") from None
    if knew is not None:
        policy.knew = knew  # what the exporter knew it knew (`knowledge_of` reads it)
    return policy


def _onnx_knew(meta: dict[str, str], path: Path) -> dict[str, str] | None:
    """The metadata's ``knew`` (JSON of the five facts), checked; None where it has none."""
    import json

    from yahtzee_env.policies.knowledge import KnowledgeError, check_knowledge

    if "knew" not in meta:
        return None
    try:
        return check_knowledge(json.loads(meta["knew"]), "metadata knew")
    except (ValueError, KnowledgeError) as err:
        raise ModelFormatError(f"{path}: {err}") from None


# ------------------------------------------------------------------------------ SB3
SB3_LOADERS = "yahtzee_env.model_loaders"
"""The entry-point group where the training package (`yahtzee_agents`) registers its SB3
loader (``sb3``): the core never imports the training package; it finds the loader the
installed distribution declares (``[project.entry-points]`` in pyproject.toml)."""


def load_sb3_policy(
    path: str | os.PathLike, rules: RuleSet | str | None = None, *, holds: str | None = None
) -> MLPPolicy:
    """The numpy policy of an SB3 MaskablePPO checkpoint (a ``.zip`` or a run folder), by the
    loader `yahtzee_agents.sources.load_sb3_policy` registers (a zip saved by any script is
    taken too: what it assumed is in the policy's ``assumed``). Needs the train extra."""
    from importlib.metadata import entry_points

    found = entry_points(group=SB3_LOADERS, name="sb3")
    if not found:
        raise MissingExtraError(
            "an SB3 checkpoint needs the training package (pip install 'yahtzee-rl[train]')"
        )
    try:
        return next(iter(found)).load()(path, rules, holds=holds)
    except MissingExtraError:
        raise
    except ImportError as err:
        raise MissingExtraError(
            f"an SB3 checkpoint needs {err.name or 'the train extra'} "
            "(pip install 'yahtzee-rl[train]')"
        ) from None


def is_model_source(name: str) -> bool:
    """True for what `load_model_source` takes: ``*.onnx``, ``*.zip``, or a folder."""
    return name.endswith((".onnx", ".zip")) or Path(name).is_dir()


def load_model_source(
    name: str, rules: RuleSet | str | None = None, *, holds: str | None = None
) -> MLPPolicy:
    """An ONNX file, an SB3 zip or a run folder; ``holds`` only for an SB3 zip without a run
    folder (see `yahtzee_agents.sources.load_sb3_policy`)."""
    if name.endswith(".onnx"):
        if holds is not None:
            raise ValueError(f"{name}: an ONNX file records its holds mode; --holds is not for it")
        return load_onnx_policy(name, rules)
    return load_sb3_policy(name, rules, holds=holds)
