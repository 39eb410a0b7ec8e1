"""Trained CPU opponents that run on numpy alone (no torch, no pickle).

A model is two files side by side: ``NAME.json`` (the manifest) and the weights it names
(``NAME.npz``, loaded with ``allow_pickle=False``). The manifest records the format version,
the network architecture, the observation version, the rules preset, the sha256 of the
training config and the sha256 of the weights file. `load_opponent` checks all of it before
it trusts a single number: a truncated, corrupt, tampered or mismatched model raises
`ModelFormatError` naming the problem.

    from yahtzee_env.policies.models import load_opponent

    hard = load_opponent("hard")          # a shipped level, or a path to NAME.json
    action = hard.act(observation, mask)  # the `Yahtzee-v0` observation and action mask
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import UnsafeFileError, atomic_write, read_regular_file
from yahtzee_env.game.dice import CANONICAL_HOLDS, NUM_HOLDS
from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import (
    INPUT_SIZES,
    OBS_SIZE,
    TABLE_INPUT_SEATS,
    TABLE_INPUT_VERSION,
    TABLE_SIZE,
    decode_roll,
    decode_rolls,
    model_input,
    table_input,
    write_table,
)
from yahtzee_env.game.rules import PRESETS, UPPER_BONUS_THRESHOLD, RuleSet
from yahtzee_env.policies.turn_value import TurnValuePolicy, feature_size, turn_value_table

FORMAT_NAME = "yahtzee-rl-policy"
FORMAT_VERSION = 1
LEVELS_DIR = Path(__file__).with_name("levels")
ACTIVATIONS = ("relu", "tanh")
# How a level was made (`Manifest.method`): "ppo": PPO with no teacher (what else it knew is the
# manifest's `knew`: the shipped PPO levels had three aids, so they are not the strict
# "reward-only" track); "search": no learning of its own, a search on top of other policies
# (the `duelist`: the solver and an exact win-probability search).
METHODS = ("ppo", "distilled", "model-based", "search")
# A method's older name, read as the current one.
OLD_METHODS = {"reward-only": "ppo"}
# What a level plays for (`Manifest.objective`): its own expected score (every level trained
# or solved for the solitaire score) or, at a 2-seat table, the win (the `duelist`).
OBJECTIVES = ("score", "win")
# The architectures a manifest may declare: a policy network over the observation, or a
# value network over turn-start states played by expectimax (`policies.turn_value`).
# Or a policy network that plays only where the table is not 2 seats (`policies.duel`), or
# one that plays there while a second network (`Manifest.table`) plays at a 2-seat table.
MLP, TURN_VALUE_MLP, WIN_SEARCH_MLP = "mlp", "turn-value-mlp", "win-search-mlp"
TABLE_MLP = "table-mlp"
ARCHITECTURE_OUTPUTS = {
    MLP: "masked argmax over action logits",
    TURN_VALUE_MLP: "expectimax over each turn through the rules, the learned value at turn starts",
    WIN_SEARCH_MLP: "at a 2-seat table: the solver's moves and an exact win-probability search "
    "over the last turns; elsewhere: masked argmax over action logits",
    TABLE_MLP: "at a 2-seat table: masked argmax over the table network's logits (it reads "
    "both cards); elsewhere: masked argmax over action logits",
}
MAX_MANIFEST_BYTES = 1 << 20
# Bounds on the architecture a manifest may declare, so that the weights file it promises is
# at most ~130 MB (checked before a byte of the weights is read).
MAX_HIDDEN_LAYERS = 8
MAX_HIDDEN_WIDTH = 2048
_NPY_HEADER_BYTES = 4096  # what an .npy member may add to its raw data (numpy writes 128)
_ZIP_MEMBER_OVERHEAD = 512  # a zip's local header, directory entry and data descriptor
_SHA256 = re.compile(r"[0-9a-f]{64}")
_PLAIN_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")


class ModelFormatError(ValueError):
    """A model file that is missing, corrupt, tampered with or made for something else."""


class RulesMismatchError(ModelFormatError):
    """An intact model trained for other rules than those it was asked to play."""


def _discover_levels(directory: Path) -> tuple[str, ...]:
    """The shipped levels: every ``NAME.json`` in ``directory``, weakest first (by the mean
    score in the manifest's evaluation; a manifest that cannot be read sorts last, and
    `load_opponent` then reports what is wrong with it). A new level is its two files (and
    its training config): nothing else lists the levels."""

    def strength(path: Path) -> tuple[float, str]:
        try:
            data = json.loads(read_regular_file(path, MAX_MANIFEST_BYTES))
            return float(data["evaluation"]["mean"]), path.stem
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return float("inf"), path.stem

    try:
        manifests = [p for p in directory.glob("*.json") if _PLAIN_FILE_NAME.fullmatch(p.stem)]
    except OSError:
        return ()
    return tuple(p.stem for p in sorted(manifests, key=strength))


LEVELS: tuple[str, ...] = _discover_levels(LEVELS_DIR)  # easy, medium, hard, expert, master


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
    version: int | None = None
    """The level's version: a retrained level gets a higher one (None in older files)."""
    method: str | None = None
    """``"ppo"`` (PPO with no teacher; ``"reward-only"`` in older files), ``"distilled"``
    (imitating a teacher first, then PPO), ``"model-based"`` (a turn-value network learned
    from played games, played by expectimax through the rules) or ``"search"``; None in older
    files."""
    env_steps: int | None = None
    """Env-steps behind the exported weights (0: the distilled policy before PPO)."""
    objective: str | None = None
    """What it plays for, one of `OBJECTIVES`; None in older files (which all play for the
    score)."""
    kind: str = MLP
    """The architecture's type: `MLP` (a policy over the observation), `TURN_VALUE_MLP`,
    `WIN_SEARCH_MLP` or `TABLE_MLP`."""
    table: Manifest | None = None
    """A `TABLE_MLP`'s second network, the one that plays at a 2-seat table (input version
    3, its own weights file and digest); None for the other kinds."""

    @property
    def trained_rules(self) -> str:
        """The preset the model learned (as the loaded policy's ``trained_rules``)."""
        return self.rules

    def layer_sizes(self) -> list[int]:
        """The network's widths, input first: the observation's features to the 45 action
        logits, or a turn start's features to its one value."""
        if self.kind == TURN_VALUE_MLP:
            threshold = RuleSet.from_spec(self.rules).upper_bonus_threshold
            return [feature_size(threshold), *self.hidden, 1]
        return [INPUT_SIZES[self.input_version], *self.hidden, NUM_ACTIONS]

    def layer_names(self) -> list[str]:
        """The npz's layers, in order (each a ``.weight`` [in, out] and a ``.bias`` [out])."""
        return _layer_names(len(self.hidden), "value" if self.kind == TURN_VALUE_MLP else "logits")

    def max_weights_bytes(self) -> int:
        """The largest weights file this architecture can have: float32 parameters plus
        the npz container's overhead per array."""
        params = sum(a * b + b for a, b in itertools.pairwise(self.layer_sizes()))
        arrays = 2 * (len(self.hidden) + 1)
        return 4 * params + arrays * (_NPY_HEADER_BYTES + _ZIP_MEMBER_OVERHEAD) + 4096


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: Path) -> Any:
    if key not in data:
        raise ModelFormatError(f"{where}: manifest has no {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ModelFormatError(f"{where}: manifest {key!r} has the wrong type: {value!r}")
    return value


def _optional_int(data: dict[str, Any], key: str, minimum: int, where: Path) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ModelFormatError(f"{where}: manifest {key!r} must be an int >= {minimum}: {value!r}")
    return value


def read_manifest(path: str | Path) -> Manifest:
    """Parse and check a manifest (not yet the weights: see `load_opponent`)."""
    path = Path(path)
    try:
        blob = read_regular_file(path, MAX_MANIFEST_BYTES)
    except UnsafeFileError as err:
        raise ModelFormatError(f"model manifest {err}") from None
    except (OSError, ValueError) as err:  # ValueError: a NUL in the path
        reason = getattr(err, "strerror", None) or err
        raise ModelFormatError(f"{path}: cannot read model manifest: {reason}") from None
    try:
        data = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        # ValueError: not JSON, or an integer too long to convert; RecursionError: nesting.
        reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)[:200]
        raise ModelFormatError(f"{path}: manifest is not valid JSON ({reason})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{path}: not a {FORMAT_NAME} manifest")
    version = _require(data, "format_version", int, path)
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            f"{path}: format_version {version} is not supported (this package reads "
            f"{FORMAT_VERSION})"
        )
    arch = _require(data, "architecture", dict, path)
    kind = arch.get("type")
    if kind not in ARCHITECTURE_OUTPUTS:
        raise ModelFormatError(f"{path}: unsupported architecture {str(kind)[:100]!r}")
    hidden, activation = _layers(arch, path, "architecture.hidden")
    rules = _require(data, "rules", str, path)
    if rules not in PRESETS:
        raise ModelFormatError(f"{path}: unknown rules preset {rules!r}")
    level = data.get("level")
    if level is not None and not isinstance(level, str):
        raise ModelFormatError(f"{path}: manifest 'level' must be a string or null: {level!r}")
    if kind in (MLP, WIN_SEARCH_MLP, TABLE_MLP):
        obs_version = _require(data, "observation_version", int, path)
        if obs_version not in INPUT_SIZES:
            raise ModelFormatError(
                f"{path}: model expects observation version {obs_version}, this package reads "
                f"versions {sorted(INPUT_SIZES)}"
            )
        holds = _holds(data, path)
        sizes, reads = (INPUT_SIZES[obs_version], NUM_ACTIONS), f"observation version {obs_version}"
    else:  # a turn-value network reads the scorecard, not the observation
        obs_version, holds = 1, "canonical"
        threshold = PRESETS[rules].upper_bonus_threshold
        sizes, reads = (feature_size(threshold), 1), f"turn-start states of rules {rules!r}"
    if (arch.get("inputs"), arch.get("outputs")) != sizes:
        raise ModelFormatError(
            f"{path}: network maps {str(arch.get('inputs'))[:20]} -> "
            f"{str(arch.get('outputs'))[:20]}, expected {sizes[0]} -> {sizes[1]} for {reads}"
        )
    if kind != MLP and arch.get("output") != ARCHITECTURE_OUTPUTS[kind]:
        # how the values become moves: the one way this package plays such a network
        raise ModelFormatError(
            f"{path}: a {kind} network's output must read {ARCHITECTURE_OUTPUTS[kind]!r}"
        )
    config_sha256 = _require(data, "config_sha256", str, path)
    if not _SHA256.fullmatch(config_sha256):
        raise ModelFormatError(f"{path}: config_sha256 is not a sha256 hex digest")
    weights_name, weights_sha256 = _weights_file(data, path)
    if "knew" in data:  # what the model knew (issue 29): five facts from a fixed vocabulary
        from yahtzee_env.policies.knowledge import KnowledgeError, check_knowledge

        try:
            check_knowledge(data["knew"], "knew")
        except KnowledgeError as err:
            raise ModelFormatError(f"{path}: manifest {err}") from None
    method = data.get("method")
    method = OLD_METHODS.get(method, method) if isinstance(method, str) else method
    if method is not None and method not in METHODS:
        raise ModelFormatError(f"{path}: manifest 'method' must be one of {METHODS}: {method!r}")
    objective = data.get("objective")
    if objective is not None and objective not in OBJECTIVES:
        raise ModelFormatError(
            f"{path}: manifest 'objective' must be one of {OBJECTIVES}: {str(objective)[:40]!r}"
        )
    table = None
    if kind == TABLE_MLP:
        table = _table_network(data, path, rules, level, config_sha256)
    return Manifest(
        path=path,
        weights_path=path.with_name(weights_name),
        hidden=tuple(hidden),
        activation=activation,
        rules=rules,
        level=level,
        config_sha256=config_sha256,
        weights_sha256=weights_sha256,
        canonical_holds=holds == "canonical",
        raw=data,
        input_version=obs_version,
        version=_optional_int(data, "version", 1, path),
        method=method,
        env_steps=_optional_int(data, "env_steps", 0, path),
        objective=objective,
        kind=kind,
        table=table,
    )


def _layers(spec: dict[str, Any], where: Path, field: str) -> tuple[list[int], str]:
    """A network's hidden widths (``field`` names them in errors) and activation, checked
    against the bounds that cap the weights file it may promise."""
    hidden = _require(spec, "hidden", list, where)
    if len(hidden) > MAX_HIDDEN_LAYERS or not all(
        isinstance(h, int) and not isinstance(h, bool) and 0 < h <= MAX_HIDDEN_WIDTH for h in hidden
    ):
        raise ModelFormatError(
            f"{where}: {field} must be at most {MAX_HIDDEN_LAYERS} ints in "
            f"1..{MAX_HIDDEN_WIDTH}: {str(hidden)[:100]}"
        )
    activation = _require(spec, "activation", str, where)
    if activation not in ACTIVATIONS:
        raise ModelFormatError(f"{where}: unsupported activation {activation!r}")
    return hidden, activation


def _holds(spec: dict[str, Any], where: Path) -> str:
    holds = _require(spec, "holds", str, where)
    if holds not in ("canonical", "all"):
        raise ModelFormatError(f"{where}: holds must be 'canonical' or 'all', got {holds!r}")
    return holds


def _weights_file(spec: dict[str, Any], where: Path) -> tuple[str, str]:
    """A network's weights file (a bare name beside the manifest) and its sha256."""
    digest = _require(spec, "weights_sha256", str, where)
    if not _SHA256.fullmatch(digest):
        raise ModelFormatError(f"{where}: weights_sha256 is not a sha256 hex digest")
    name = _require(spec, "weights_file", str, where)
    if not _PLAIN_FILE_NAME.fullmatch(name):
        raise ModelFormatError(f"{where}: weights_file must be a bare file name: {name[:100]!r}")
    return name, digest


def _table_network(
    data: dict[str, Any], path: Path, rules: str, level: str | None, config_sha256: str
) -> Manifest:
    """A `TABLE_MLP` manifest's ``table``: the network that plays at a 2-seat table, a
    policy network over the table observation (input version 3) in a weights file of its own,
    checked as strictly as the manifest's own network."""
    spec = _require(data, "table", dict, path)
    where = Path(f"{path} (table)")
    hidden, activation = _layers(spec, where, "hidden")
    if _require(spec, "observation_version", int, where) != TABLE_INPUT_VERSION:
        raise ModelFormatError(
            f"{where}: the table network reads observation version {TABLE_INPUT_VERSION} "
            f"(both cards), got {spec['observation_version']!r}"
        )
    sizes = (INPUT_SIZES[TABLE_INPUT_VERSION], NUM_ACTIONS)
    if (spec.get("inputs"), spec.get("outputs")) != sizes:
        raise ModelFormatError(
            f"{where}: network maps {str(spec.get('inputs'))[:20]} -> "
            f"{str(spec.get('outputs'))[:20]}, expected {sizes[0]} -> {sizes[1]}"
        )
    holds = _holds(spec, where)
    name, digest = _weights_file(spec, where)
    if name == data.get("weights_file"):
        raise ModelFormatError(f"{where}: the table network needs a weights file of its own")
    return Manifest(
        path=path,
        weights_path=path.with_name(name),
        hidden=tuple(hidden),
        activation=activation,
        rules=rules,
        level=level,
        config_sha256=config_sha256,
        weights_sha256=digest,
        canonical_holds=holds == "canonical",
        raw=spec,
        input_version=TABLE_INPUT_VERSION,
        kind=MLP,
    )


def _layer_names(num_hidden: int, last: str = "logits") -> list[str]:
    return [f"hidden{i}" for i in range(num_hidden)] + [last]


class MLPPolicy:
    """A masked-argmax MLP policy: ``act(observation, action_mask) -> int`` with numpy only.

    With ``canonical_holds=True`` (how the levels are trained) the policy only ever picks the
    canonical hold of each kept multiset (`yahtzee_env.game.dice.CANONICAL_HOLDS`): the logits of
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
        threshold: int = UPPER_BONUS_THRESHOLD,
        trained_rules: str | None = "official",
    ) -> None:
        self.weights = [(w.astype(np.float32), b.astype(np.float32)) for w, b in weights]
        self.manifest: Manifest | None = None  # set by `load_opponent`
        self.activation = activation
        self.name = name
        self.canonical_holds = canonical_holds
        self.input_version = input_version
        self.threshold = threshold
        self.trained_rules = trained_rules  # the preset it learned (None: unknown)
        # input version 3 reads a 2-seat table: it is shown both cards (`act_batch_table`)
        self.reads_table = input_version == TABLE_INPUT_VERSION
        self.table_only = self.reads_table  # it has no solitaire play (the duelist has one)

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

    stochastic = False  # see `policies.BasePolicy.stochastic`

    def reseed(self, seed: int | None) -> None:
        """Nothing to reseed: the policy is deterministic."""

    def _solitaire(self, observations: np.ndarray) -> None:
        if self.reads_table and np.shape(observations)[-1] == OBS_SIZE:
            raise ValueError(
                f"{self.name}: this model reads a 2-seat table (input version "
                f"{TABLE_INPUT_VERSION}): give it both cards (act_table / act_batch_table, as "
                "a table does), not a solitaire observation"
            )

    def act_table(self, observation: np.ndarray, action_mask: np.ndarray, cards: Any) -> int:
        """One move at a table of two: ``cards`` (filled, upper total, yahtzee state, total)
        per seat, the mover's own first (`yahtzee_env.game.cpu.table_cards`). A table model's
        one row is built in plain Python (`write_table`'s one-table path), the batch's floats."""
        obs = np.asarray(observation, dtype=np.float32)
        if (
            not self.reads_table
            or len(cards) != TABLE_INPUT_SEATS
            or obs.shape != (OBS_SIZE,)
            or np.shape(action_mask) != (NUM_ACTIONS,)
        ):  # the batch's checks and errors
            batch = np.asarray(cards, dtype=np.int64)[None]
            return int(self.act_batch_table(obs[None], np.asarray(action_mask)[None], batch)[0])
        row = np.empty(OBS_SIZE + TABLE_SIZE, dtype=np.float32)
        row[:OBS_SIZE] = obs
        write_table(row[OBS_SIZE:], cards, self.threshold)
        return self._act_row(row, obs, action_mask)

    def act_batch_table(
        self, observations: np.ndarray, action_masks: np.ndarray, cards: np.ndarray
    ) -> np.ndarray:
        """Moves for ``N`` seats at tables of two: their `Yahtzee-v0` rows ``[N, 72]`` and the
        cards ``int [N, 2, 4]`` (`act_table`). A solitaire model ignores the cards."""
        if not self.reads_table:
            return self.act_batch(observations, action_masks)
        cards = np.asarray(cards, dtype=np.int64)
        if cards.ndim != 3 or cards.shape[1:] != (TABLE_INPUT_SEATS, 4):
            raise ValueError(
                f"{self.name}: reads tables of {TABLE_INPUT_SEATS} (cards [N, 2, 4]), got "
                f"cards of shape {cards.shape}"
            )
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        return self.act_batch(table_input(obs, cards, self.threshold), action_masks)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """One decision (a CPU seat's): `act_batch`'s choice for one row, the same logits (the
        network sees a ``[1, n]`` batch), with the mask decoded in plain Python."""
        self._solitaire(observation)
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape != (OBS_SIZE,) or np.shape(action_mask) != (NUM_ACTIONS,):
            return int(self.act_batch(observation, action_mask)[0])  # its checks and errors
        return self._act_row(obs, obs, action_mask)

    def _act_row(self, x: np.ndarray, obs: np.ndarray, action_mask: np.ndarray) -> int:
        """The masked argmax of one row ``x`` (what the network reads) whose own
        `Yahtzee-v0` observation is ``obs``, the mask decoded in plain Python."""
        allowed = np.array(action_mask, dtype=bool)
        if not allowed.any():
            raise ValueError("an action_mask has no legal action")
        if self.canonical_holds:
            roll = decode_roll(obs.tolist())
            if roll < 0:
                raise ValueError("an observation does not show five dice (not a Yahtzee-v0 obs)")
            allowed[:NUM_HOLDS] &= CANONICAL_HOLDS[roll]
        logits = self.logits(x[None])[0]
        return int(np.argmax(np.where(allowed, logits, -np.inf)))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Masked argmax over ``[N, 72]`` rows (``[N, 93]``, the table observation, for a
        model of input version 3)."""
        self._solitaire(observations)
        logits = np.array(self.logits(observations), ndmin=2)
        return np.argmax(np.where(self._allowed(observations, action_masks), logits, -np.inf), 1)

    def __repr__(self) -> str:
        sizes = [w.shape[1] for w, _ in self.weights[:-1]]
        return f"MLPPolicy({self.name!r}, hidden={sizes}, activation={self.activation!r})"


class TablePlay:
    """A level of two networks (`TABLE_MLP`): at a table of two, ``table`` (it reads both
    cards: input version 3); alone and at 3-4 seats, ``alone`` (the network it started
    from). Deterministic, no search: each move is one network's masked argmax."""

    reads_table = True  # `act_table` wants every seat's card
    table_only = False  # it plays alone too (``alone``)
    stochastic = False

    def __init__(self, alone: MLPPolicy, table: MLPPolicy, name: str) -> None:
        self.alone, self.table, self.name = alone, table, name
        self.manifest: Manifest | None = None  # set by `load_opponent`
        self.trained_rules = alone.trained_rules
        self.threshold = table.threshold  # the upper bonus's, as the table's floats read it

    def __repr__(self) -> str:
        return f"TablePlay({self.name!r}, alone={self.alone!r}, table={self.table!r})"

    def reseed(self, seed: int | None) -> None:
        """Nothing to reseed: the policy is deterministic."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.alone.act(observation, action_mask)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.alone.act_batch(observations, action_masks)

    def act_table(self, observation: np.ndarray, action_mask: np.ndarray, cards: Any) -> int:
        """One move at a table: ``cards`` (filled, upper total, yahtzee state, total) per
        seat, the mover's own first (`yahtzee_env.game.cpu.table_cards`)."""
        if len(cards) != TABLE_INPUT_SEATS:
            return self.alone.act(observation, action_mask)
        return self.table.act_table(observation, action_mask, cards)

    def act_batch_table(
        self, observations: np.ndarray, action_masks: np.ndarray, cards: np.ndarray
    ) -> np.ndarray:
        """Moves for ``N`` seats at tables of one size: ``cards`` ``int [N, seats, 4]``."""
        cards = np.asarray(cards, dtype=np.int64)
        if cards.ndim == 3 and cards.shape[1] != TABLE_INPUT_SEATS:
            return self.alone.act_batch(observations, action_masks)
        return self.table.act_batch_table(observations, action_masks, cards)


def load_opponent(name_or_path: str | Path, rules: RuleSet | str | None = None) -> Any:
    """A shipped level (``"easy"``, ``"medium"``, ``"hard"``, ``"expert"``, ``"master"``) or a
    manifest path.

    With ``rules``, a model trained under other rules is refused (`ModelFormatError`). A
    turn-value model (``master``) plays expectimax through the rules it was trained for
    (its table is theirs), whatever the env's rules; the env's mask keeps its moves legal.
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
    # The rules first: a mismatch is the caller's choice, not damage, and says so.
    if rules is not None and RuleSet.from_spec(rules) != RuleSet.from_spec(manifest.rules):
        raise RulesMismatchError(
            f"{path}: model trained for rules {manifest.rules!r}, asked to play "
            f"{RuleSet.from_spec(rules).name!r}"
        )
    weights = _checked_weights(manifest)
    trained = RuleSet.from_spec(manifest.rules)
    if manifest.kind == TURN_VALUE_MLP:
        table = turn_value_table(weights, trained, manifest.activation)
        policy: MLPPolicy | TurnValuePolicy = TurnValuePolicy(
            trained, table, name=manifest.level or path.stem
        )
        policy.manifest = manifest
        policy.trained_rules = manifest.rules
        return policy
    policy = MLPPolicy(
        weights,
        manifest.activation,
        name=manifest.level or path.stem,
        canonical_holds=manifest.canonical_holds,
        input_version=manifest.input_version,
        threshold=trained.upper_bonus_threshold,
    )
    policy.manifest = manifest
    policy.trained_rules = manifest.rules
    if manifest.kind == WIN_SEARCH_MLP:  # the network plays where the search does not
        from yahtzee_env.policies.duel import DuelPolicy

        duel = DuelPolicy(trained, policy, name=manifest.level or path.stem)
        duel.manifest = manifest
        return duel
    if manifest.kind == TABLE_MLP:  # the table network plays at 2 seats, this one elsewhere
        spec = manifest.table
        assert spec is not None  # read_manifest gives a TABLE_MLP its table
        table = MLPPolicy(
            _checked_weights(spec),
            spec.activation,
            name=f"{policy.name} (table)",
            canonical_holds=spec.canonical_holds,
            input_version=TABLE_INPUT_VERSION,
            threshold=trained.upper_bonus_threshold,
        )
        table.manifest, table.trained_rules = spec, manifest.rules
        both = TablePlay(policy, table, name=policy.name)
        both.manifest = manifest
        return both
    return policy


def _checked_weights(manifest: Manifest) -> list[tuple[np.ndarray, np.ndarray]]:
    """The weights file a manifest names, read once, its size bounded by the architecture,
    its sha256 checked, then its arrays (`_read_weights`)."""
    limit = manifest.max_weights_bytes()
    try:
        blob = read_regular_file(manifest.weights_path, limit)
    except UnsafeFileError as err:
        raise ModelFormatError(f"weights {err} (for this architecture)") from None
    except OSError as err:
        raise ModelFormatError(
            f"{manifest.weights_path}: cannot read weights: {err.strerror or err}"
        ) from None
    digest = hashlib.sha256(blob).hexdigest()
    if digest != manifest.weights_sha256:
        raise ModelFormatError(
            f"{manifest.weights_path}: sha256 {digest[:12]}… does not match the manifest's "
            f"{manifest.weights_sha256[:12]}… (file corrupt, truncated or replaced)"
        )
    return _read_weights(manifest, blob)


def level_manifest(level: str) -> Manifest:
    """The checked manifest of a shipped level (its version, method, env-steps, ...)."""
    if level not in LEVELS:
        raise ModelFormatError(f"no shipped level {level!r} (levels: {', '.join(LEVELS)})")
    return read_manifest(LEVELS_DIR / f"{level}.json")


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, shape: tuple[int, ...]):
    """One float32 array from an .npy member, its header checked before its data is read,
    and never more read than that shape's bytes."""
    nbytes = 4 * math.prod(shape)
    if info.file_size > nbytes + _NPY_HEADER_BYTES:
        raise ValueError(
            f"{info.filename} declares {info.file_size:,} bytes, more than a float32"
            f"{list(shape)} needs"
        )
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{info.filename}: unsupported compression {info.compress_type}")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            header = np.lib.format.read_array_header_1_0(member, max_header_size=2048)
        elif version == (2, 0):
            header = np.lib.format.read_array_header_2_0(member, max_header_size=2048)
        else:
            raise ValueError(f"{info.filename}: npy format version {version}")
        found_shape, fortran, dtype = header
        if dtype != np.dtype("<f4") or tuple(found_shape) != shape:
            raise ValueError(
                f"{info.filename[: -len('.npy')]} is {dtype}{list(found_shape)}, expected "
                f"float32{list(shape)}"
            )
        data = member.read(nbytes + 1)
    if len(data) != nbytes:
        raise ValueError(f"{info.filename}: {len(data)} bytes of data, expected {nbytes}")
    order = "F" if fortran else "C"
    return np.frombuffer(data, dtype="<f4").reshape(shape, order=order).astype(np.float32)


def _read_weights(manifest: Manifest, blob: bytes) -> list[tuple[np.ndarray, np.ndarray]]:
    """Arrays from the very bytes whose hash was checked (no second read of the file).

    The zip's member names, then each member's npy header (dtype and shape), are checked
    against the architecture before any array data is decompressed, and no member is read
    past the size its shape needs (a zip bomb costs nothing)."""
    path = manifest.weights_path
    sizes = manifest.layer_sizes()
    expected: dict[str, tuple[int, ...]] = {}
    for i, layer in enumerate(manifest.layer_names()):
        expected[f"{layer}.weight"] = (sizes[i], sizes[i + 1])
        expected[f"{layer}.bias"] = (sizes[i + 1],)
    arrays = {}
    if blob.startswith(b"\x93NUMPY"):
        raise ModelFormatError(f"{path}: an .npy array, not an .npz archive")
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            infos = archive.infolist()
            names = sorted(i.filename.removesuffix(".npy") for i in infos)
            if names != sorted(expected) or not all(i.filename.endswith(".npy") for i in infos):
                raise ModelFormatError(
                    f"{path}: arrays {names[:20]} do not match the architecture {sorted(expected)}"
                )
            for info in infos:
                key = info.filename.removesuffix(".npy")
                arrays[key] = _read_member(archive, info, expected[key])
    except ModelFormatError:
        raise
    except (OSError, ValueError, TypeError, zipfile.BadZipFile, EOFError, RuntimeError) as err:
        raise ModelFormatError(f"{path}: not a readable npz weights file ({err})") from None
    for key, array in arrays.items():
        if not np.isfinite(array).all():
            raise ModelFormatError(f"{path}: {key} holds non-finite values")
    return [
        (arrays[f"{layer}.weight"], arrays[f"{layer}.bias"]) for layer in manifest.layer_names()
    ]


def _next_version(json_path: Path, digest: str) -> int:
    try:
        old = read_manifest(json_path)
    except ModelFormatError:  # none there (or unreadable): a new model
        return 1
    if old.weights_sha256 == digest:
        return old.version or 1
    return (old.version or 1) + 1


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
    version: int | None = None,
) -> Path:
    """Write a policy network's ``NAME.npz`` and ``NAME.json`` atomically; return the
    manifest path.

    ``weights`` are (W [in, out], b [out]) pairs, hidden layers first, logits last.
    ``version`` (None: automatic) is 1 for a new model, the old one's for the same weights,
    and one more than the old one's when other weights replace a model: a retrained level
    is told apart from the one it replaces.
    """
    reads = {
        "observation_version": input_version,
        "holds": "canonical" if canonical_holds else "all",
    }
    return _save_model(
        directory, name, weights, activation, MLP, (INPUT_SIZES[input_version], NUM_ACTIONS),
        reads, rules=rules, config_sha256=config_sha256, level=level, extra=extra,
        version=version,
    )  # fmt: skip


def save_turn_value(
    directory: str | Path,
    name: str,
    weights: list[tuple[np.ndarray, np.ndarray]],
    *,
    rules: str,
    config_sha256: str,
    activation: str = "relu",
    level: str | None = None,
    extra: dict[str, Any] | None = None,
    version: int | None = None,
) -> Path:
    """Write a turn-value network (`yahtzee_env.policies.turn_value`) as ``NAME.npz`` and
    ``NAME.json``, as `save_policy` does: ``weights`` map a turn start's features to its
    value (in hundreds of points), the value layer last."""
    inputs = feature_size(RuleSet.from_spec(rules).upper_bonus_threshold)
    return _save_model(
        directory, name, weights, activation, TURN_VALUE_MLP, (inputs, 1), {}, rules=rules,
        config_sha256=config_sha256, level=level, extra=extra, version=version,
    )  # fmt: skip


def _save_model(
    directory: str | Path,
    name: str,
    weights: list[tuple[np.ndarray, np.ndarray]],
    activation: str,
    kind: str,
    sizes: tuple[int, int],
    reads: dict[str, Any],
    *,
    rules: str,
    config_sha256: str,
    level: str | None,
    extra: dict[str, Any] | None,
    version: int | None,
) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    widths = [int(np.shape(weights[0][0])[0]), *(int(np.shape(w)[1]) for w, _ in weights)]
    if (widths[0], widths[-1]) != sizes:
        raise ValueError(f"the network maps {widths[0]} -> {widths[-1]}, a {kind} needs {sizes}")
    layers = _layer_names(len(weights) - 1, "value" if kind == TURN_VALUE_MLP else "logits")
    arrays = {}
    for layer, (w, b) in zip(layers, weights, strict=True):
        arrays[f"{layer}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
        arrays[f"{layer}.bias"] = np.ascontiguousarray(b, dtype=np.float32)
    npz_path = directory / f"{name}.npz"
    json_path = directory / f"{name}.json"
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    blob = buffer.getvalue()
    digest = hashlib.sha256(blob).hexdigest()
    if version is None:
        version = _next_version(json_path, digest)
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "architecture": {
            "type": kind,
            "inputs": sizes[0],
            "hidden": widths[1:-1],
            "outputs": sizes[1],
            "activation": activation,
            "output": ARCHITECTURE_OUTPUTS[kind],
        },
        **reads,
        "rules": rules,
        "level": level,
        "version": version,
        "config_sha256": config_sha256,
        "weights_file": npz_path.name,
        "weights_sha256": digest,
        **(extra or {}),
    }
    # Weights first: until the new manifest lands, the old one rejects the new weights by hash.
    atomic_write(npz_path, blob)
    atomic_write(json_path, json.dumps(manifest, indent=2) + "\n")
    return json_path
