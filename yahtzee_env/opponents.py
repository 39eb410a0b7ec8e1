"""Trained CPU opponents that run on numpy alone (no torch, no pickle).

A model is two files side by side: ``NAME.json`` (the manifest) and the weights it names
(``NAME.npz``, loaded with ``allow_pickle=False``). The manifest records the format version,
the network architecture, the observation version, the rules preset, the sha256 of the
training config and the sha256 of the weights file. `load_opponent` checks all of it before
it trusts a single number: a truncated, corrupt, tampered or mismatched model raises
`ModelFormatError` naming the problem.

    from yahtzee_env.opponents import load_opponent

    hard = load_opponent("hard")          # a shipped level, or a path to NAME.json
    action = hard.act(observation, mask)  # the `Yahtzee-v0` observation and action mask
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.dice import CANONICAL_HOLDS, NUM_HOLDS
from yahtzee_env.engine import NUM_ACTIONS
from yahtzee_env.fileio import atomic_write
from yahtzee_env.observation import INPUT_SIZES, decode_rolls, model_input
from yahtzee_env.rules import PRESETS, RuleSet

FORMAT_NAME = "yahtzee-rl-policy"
FORMAT_VERSION = 1
LEVELS = ("easy", "medium", "hard")
LEVELS_DIR = Path(__file__).with_name("levels")
ACTIVATIONS = ("relu", "tanh")
MAX_MANIFEST_BYTES = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ModelFormatError(ValueError):
    """A model file that is missing, corrupt, tampered with or made for something else."""


@dataclass(frozen=True)
class Manifest:
    path: Path
    weights_path: Path
    hidden: tuple[int, ...]
    activation: str
    rules: str
    level: str | None
    config_sha256: str
    weights_sha256: str
    canonical_holds: bool
    raw: dict[str, Any]
    input_version: int = 1


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: Path) -> Any:
    if key not in data:
        raise ModelFormatError(f"{where}: manifest has no {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ModelFormatError(f"{where}: manifest {key!r} has the wrong type: {value!r}")
    return value


def read_manifest(path: str | Path) -> Manifest:
    """Parse and check a manifest (not yet the weights: see `load_opponent`)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            blob = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as err:
        raise ModelFormatError(f"{path}: cannot read model manifest: {err.strerror}") from err
    if len(blob) > MAX_MANIFEST_BYTES:
        raise ModelFormatError(f"{path}: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFormatError(f"{path}: manifest is not valid JSON ({err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{path}: not a {FORMAT_NAME} manifest")
    version = _require(data, "format_version", int, path)
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            f"{path}: format_version {version} is not supported (this package reads "
            f"{FORMAT_VERSION})"
        )
    obs_version = _require(data, "observation_version", int, path)
    if obs_version not in INPUT_SIZES:
        raise ModelFormatError(
            f"{path}: model expects observation version {obs_version}, this package reads "
            f"versions {sorted(INPUT_SIZES)}"
        )
    arch = _require(data, "architecture", dict, path)
    if arch.get("type") != "mlp":
        raise ModelFormatError(f"{path}: unsupported architecture {arch.get('type')!r}")
    hidden = _require(arch, "hidden", list, path)
    if not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden):
        raise ModelFormatError(f"{path}: architecture.hidden must be positive ints: {hidden!r}")
    activation = _require(arch, "activation", str, path)
    if activation not in ACTIVATIONS:
        raise ModelFormatError(f"{path}: unsupported activation {activation!r}")
    if arch.get("inputs") != INPUT_SIZES[obs_version] or arch.get("outputs") != NUM_ACTIONS:
        raise ModelFormatError(
            f"{path}: network maps {arch.get('inputs')} -> {arch.get('outputs')}, expected "
            f"{INPUT_SIZES[obs_version]} -> {NUM_ACTIONS} for observation version {obs_version}"
        )
    rules = _require(data, "rules", str, path)
    if rules not in PRESETS:
        raise ModelFormatError(f"{path}: unknown rules preset {rules!r}")
    level = data.get("level")
    if level is not None and not isinstance(level, str):
        raise ModelFormatError(f"{path}: manifest 'level' must be a string or null: {level!r}")
    config_sha256 = _require(data, "config_sha256", str, path)
    if not _SHA256.fullmatch(config_sha256):
        raise ModelFormatError(f"{path}: config_sha256 is not a sha256 hex digest")
    if not _SHA256.fullmatch(_require(data, "weights_sha256", str, path)):
        raise ModelFormatError(f"{path}: weights_sha256 is not a sha256 hex digest")
    holds = _require(data, "holds", str, path)
    if holds not in ("canonical", "all"):
        raise ModelFormatError(f"{path}: holds must be 'canonical' or 'all', got {holds!r}")
    weights_name = _require(data, "weights_file", str, path)
    if Path(weights_name).name != weights_name:
        raise ModelFormatError(f"{path}: weights_file must be a bare file name: {weights_name!r}")
    return Manifest(
        path=path,
        weights_path=path.with_name(weights_name),
        hidden=tuple(hidden),
        activation=activation,
        rules=rules,
        level=level,
        config_sha256=config_sha256,
        weights_sha256=_require(data, "weights_sha256", str, path),
        canonical_holds=holds == "canonical",
        raw=data,
        input_version=obs_version,
    )


def _layer_names(num_hidden: int) -> list[str]:
    return [f"hidden{i}" for i in range(num_hidden)] + ["logits"]


class MLPPolicy:
    """A masked-argmax MLP policy: ``act(observation, action_mask) -> int`` with numpy only.

    With ``canonical_holds=True`` (how the levels are trained) the policy only ever picks the
    canonical hold of each kept multiset (`yahtzee_env.dice.CANONICAL_HOLDS`): the logits of
    the other holds were masked out in training and mean nothing. Any env mask allows the
    canonical holds whenever it allows holds, so the choice is always legal.
    """

    def __init__(
        self,
        weights: list[tuple[np.ndarray, np.ndarray]],
        activation: str,
        name: str = "mlp",
        *,
        canonical_holds: bool = True,
        input_version: int = 1,
        threshold: int = 63,
    ) -> None:
        self.weights = [(w.astype(np.float32), b.astype(np.float32)) for w, b in weights]
        self.activation = activation
        self.name = name
        self.canonical_holds = canonical_holds
        self.input_version = input_version
        self.threshold = threshold

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked action logits for a batch ``[N, 72]`` (or one observation ``[72]``)."""
        x = np.asarray(observations, dtype=np.float32)
        if self.input_version != 1:
            x = model_input(np.atleast_2d(x), self.input_version, self.threshold)
        *hidden, (w_out, b_out) = self.weights
        for w, b in hidden:
            x = x @ w
            x += b
            if self.activation == "relu":
                np.maximum(x, 0.0, out=x)
            else:
                np.tanh(x, out=x)
        return x @ w_out + b_out

    def _allowed(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.array(action_masks, dtype=bool, ndmin=2)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask has no legal action")
        if self.canonical_holds:
            rolls = decode_rolls(np.asarray(observations))
            if (rolls < 0).any():
                raise ValueError("an observation does not show five dice (not a Yahtzee-v0 obs)")
            masks[:, :NUM_HOLDS] &= CANONICAL_HOLDS[rolls]
        return masks

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation, action_mask)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        logits = np.array(self.logits(observations), ndmin=2)
        return np.argmax(np.where(self._allowed(observations, action_masks), logits, -np.inf), 1)

    def __repr__(self) -> str:
        sizes = [w.shape[1] for w, _ in self.weights[:-1]]
        return f"MLPPolicy({self.name!r}, hidden={sizes}, activation={self.activation!r})"


def load_opponent(name_or_path: str | Path, rules: RuleSet | str | None = None) -> MLPPolicy:
    """A shipped level (``"easy"``, ``"medium"``, ``"hard"``) or a model manifest path.

    With ``rules``, a model trained under other rules is refused (`ModelFormatError`).
    """
    if isinstance(name_or_path, str) and name_or_path in LEVELS:
        path = LEVELS_DIR / f"{name_or_path}.json"
        if not path.exists():
            raise ModelFormatError(
                f"level {name_or_path!r} is not shipped in this install ({path})"
            )
    else:
        path = Path(name_or_path)
        if path.suffix == ".npz":
            path = path.with_suffix(".json")
    manifest = read_manifest(path)
    try:
        blob = manifest.weights_path.read_bytes()
    except OSError as err:
        raise ModelFormatError(
            f"{manifest.weights_path}: cannot read weights: {err.strerror}"
        ) from err
    digest = hashlib.sha256(blob).hexdigest()
    if digest != manifest.weights_sha256:
        raise ModelFormatError(
            f"{manifest.weights_path}: sha256 {digest[:12]}… does not match the manifest's "
            f"{manifest.weights_sha256[:12]}… (file corrupt, truncated or replaced)"
        )
    if rules is not None and RuleSet.from_spec(rules) != RuleSet.from_spec(manifest.rules):
        raise ModelFormatError(
            f"{path}: model trained for rules {manifest.rules!r}, asked to play "
            f"{RuleSet.from_spec(rules).name!r}"
        )
    weights = _read_weights(manifest, blob)
    return MLPPolicy(
        weights,
        manifest.activation,
        name=manifest.level or path.stem,
        canonical_holds=manifest.canonical_holds,
        input_version=manifest.input_version,
        threshold=RuleSet.from_spec(manifest.rules).upper_bonus_threshold,
    )


def _read_weights(manifest: Manifest, blob: bytes) -> list[tuple[np.ndarray, np.ndarray]]:
    """Arrays from the very bytes whose hash was checked (no second read of the file)."""
    path = manifest.weights_path
    try:
        loaded = np.load(io.BytesIO(blob), allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError("an .npy array, not an .npz archive")
        with loaded as npz:
            arrays = {key: npz[key] for key in npz.files}
    except (OSError, ValueError, TypeError, zipfile.BadZipFile, EOFError) as err:
        raise ModelFormatError(f"{path}: not a readable npz weights file ({err})") from err
    sizes = [INPUT_SIZES[manifest.input_version], *manifest.hidden, NUM_ACTIONS]
    expected = {}
    for i, layer in enumerate(_layer_names(len(manifest.hidden))):
        expected[f"{layer}.weight"] = (sizes[i], sizes[i + 1])
        expected[f"{layer}.bias"] = (sizes[i + 1],)
    if set(arrays) != set(expected):
        raise ModelFormatError(
            f"{path}: arrays {sorted(arrays)} do not match the architecture {sorted(expected)}"
        )
    for key, shape in expected.items():
        array = arrays[key]
        if array.shape != shape or array.dtype != np.float32:
            raise ModelFormatError(
                f"{path}: {key} is {array.dtype}{list(array.shape)}, expected float32{list(shape)}"
            )
        if not np.isfinite(array).all():
            raise ModelFormatError(f"{path}: {key} holds non-finite values")
    return [
        (arrays[f"{layer}.weight"], arrays[f"{layer}.bias"])
        for layer in _layer_names(len(manifest.hidden))
    ]


def save_policy(
    directory: str | Path,
    name: str,
    weights: list[tuple[np.ndarray, np.ndarray]],
    activation: str,
    *,
    rules: str,
    config_sha256: str,
    level: str | None = None,
    canonical_holds: bool = True,
    input_version: int = 1,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``NAME.npz`` and ``NAME.json`` atomically; return the manifest path.

    ``weights`` are (W [in, out], b [out]) pairs, hidden layers first, logits last.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    layers = _layer_names(len(weights) - 1)
    arrays = {}
    for layer, (w, b) in zip(layers, weights, strict=True):
        arrays[f"{layer}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
        arrays[f"{layer}.bias"] = np.ascontiguousarray(b, dtype=np.float32)
    hidden = [int(w.shape[1]) for w, _ in weights[:-1]]
    npz_path = directory / f"{name}.npz"
    json_path = directory / f"{name}.json"
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    weights = buffer.getvalue()
    digest = hashlib.sha256(weights).hexdigest()
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "architecture": {
            "type": "mlp",
            "inputs": INPUT_SIZES[input_version],
            "hidden": hidden,
            "outputs": NUM_ACTIONS,
            "activation": activation,
            "output": "masked argmax over action logits",
        },
        "observation_version": input_version,
        "holds": "canonical" if canonical_holds else "all",
        "rules": rules,
        "level": level,
        "config_sha256": config_sha256,
        "weights_file": npz_path.name,
        "weights_sha256": digest,
        **(extra or {}),
    }
    # Weights first: until the new manifest lands, the old one rejects the new weights by hash.
    atomic_write(npz_path, weights)
    atomic_write(json_path, json.dumps(manifest, indent=2) + "\n")
    return json_path
