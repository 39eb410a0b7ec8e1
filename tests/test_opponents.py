"""Numpy-only model files: round trip, and every way a file can be bad."""

from __future__ import annotations

import itertools
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.engine import NUM_ACTIONS
from yahtzee_env.observation import OBS_SIZE
from yahtzee_env.opponents import (
    LEVELS,
    LEVELS_DIR,
    MLPPolicy,
    ModelFormatError,
    load_opponent,
    save_policy,
)
from yahtzee_env.vector import YahtzeeVectorEnv


def _weights(seed: int = 0, hidden=(16, 8)):
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *hidden, NUM_ACTIONS]
    return [
        (rng.normal(size=(a, b)).astype(np.float32), rng.normal(size=b).astype(np.float32))
        for a, b in itertools.pairwise(sizes)
    ]


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return save_policy(
        tmp_path, "m", _weights(), "relu", rules="official", config_sha256="0" * 64, level="test"
    )


def test_round_trip_and_legal_actions(model: Path) -> None:
    policy = load_opponent(model)
    reference = MLPPolicy(_weights(), "relu")
    env = YahtzeeVectorEnv(num_envs=500)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(7):  # somewhere mid-game, with holds and without
        masks = env.action_masks()
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    masks = env.action_masks()
    actions = policy.act_batch(obs, masks)
    assert masks[np.arange(500), actions].all()
    np.testing.assert_array_equal(actions, reference.act_batch(obs, masks))
    assert [policy.act(o, m) for o, m in zip(obs[:50], masks[:50], strict=True)] == list(
        actions[:50]
    )
    assert load_opponent(model.with_suffix(".npz")).act(obs[0], masks[0]) == actions[0]


def test_garbage_observation_is_refused(model: Path) -> None:
    with pytest.raises(ValueError, match="five dice"):
        load_opponent(model).act(np.zeros(OBS_SIZE, np.float32), np.ones(NUM_ACTIONS, bool))


def test_truncated_weights(model: Path) -> None:
    npz = model.with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:100])
    with pytest.raises(ModelFormatError, match="sha256"):
        load_opponent(model)


def test_tampered_weights_even_with_valid_npz(model: Path) -> None:
    w = _weights(seed=5)
    layers = ["hidden0", "hidden1", "logits"]
    arrays = {}
    for layer, (weight, bias) in zip(layers, w, strict=True):
        arrays[f"{layer}.weight"], arrays[f"{layer}.bias"] = weight, bias
    np.savez(model.with_suffix(".npz"), **arrays)
    with pytest.raises(ModelFormatError, match="does not match the manifest"):
        load_opponent(model)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(observation_version=99), "observation version 99"),
        (lambda m: m.update(format_version=2), "format_version 2"),
        (lambda m: m.update(format="something-else"), "not a yahtzee-rl-policy"),
        (lambda m: m["architecture"].update(hidden=[16]), "do not match the architecture"),
        (lambda m: m["architecture"].update(activation="gelu"), "unsupported activation"),
        (lambda m: m["architecture"].update(inputs=10), "expected 72 -> 45"),
        (lambda m: m.update(weights_file="../other.npz"), "bare file name"),
        (lambda m: m.pop("weights_sha256"), "no 'weights_sha256'"),
        (lambda m: m.update(rules="yatzy"), "unknown rules preset"),
        (lambda m: m.update(level=["x"]), "'level' must be a string"),
        (lambda m: m.update(config_sha256="zzz"), "config_sha256 is not a sha256"),
    ],
)
def test_mismatched_manifest(model: Path, edit, message: str) -> None:
    manifest = json.loads(model.read_text())
    edit(manifest)
    model.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(model)


def test_rules_mismatch_is_refused(model: Path) -> None:
    assert load_opponent(model, rules="official").act is not None
    with pytest.raises(ModelFormatError, match="trained for rules 'official'"):
        load_opponent(model, rules="no-joker")


def test_npy_instead_of_npz(model: Path) -> None:
    import hashlib

    npz = model.with_suffix(".npz")
    with open(npz, "wb") as f:
        np.save(f, np.zeros(3, np.float32))
    manifest = json.loads(model.read_text())
    manifest["weights_sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    model.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=r"not an \.npz archive"):
        load_opponent(model)


def test_manifest_not_json(model: Path) -> None:
    model.write_text("{not json")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        load_opponent(model)


def test_pickle_payload_never_executes(model: Path, tmp_path: Path) -> None:
    """An .npz whose array is a pickled object (that would run code) is rejected unrun."""
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (Path.touch, (marker,))

    arrays = {"hidden0.weight": np.array([Exploit()], dtype=object)}
    npz = model.with_suffix(".npz")
    with open(npz, "wb") as f:
        np.savez(f, **arrays)
    # Make the hash match, so that only allow_pickle=False stands between us and the payload.
    import hashlib

    manifest = json.loads(model.read_text())
    manifest["weights_sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    model.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError):
        load_opponent(model)
    assert not marker.exists()
    # A raw pickle file in place of the manifest is not even parsed as one.
    model.write_bytes(pickle.dumps(Exploit()))
    with pytest.raises(ModelFormatError):
        load_opponent(model)
    assert not marker.exists()


def test_unknown_level_or_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match="cannot read"):
        load_opponent(tmp_path / "nope.json")


@pytest.mark.parametrize("level", [lv for lv in LEVELS if (LEVELS_DIR / f"{lv}.json").exists()])
def test_shipped_levels_load_without_torch(level: str) -> None:
    """Loading and playing a shipped level must not import torch or SB3 (they are hidden)."""
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import numpy as np, gymnasium as gym, yahtzee_env
from yahtzee_env.opponents import load_opponent
policy = load_opponent({level!r})
env = gym.make('Yahtzee-v0')
obs, info = env.reset(seed=0)
done = False
while not done:
    obs, r, done, _, info = env.step(policy.act(obs, info['action_mask']))
heavy = ('torch', 'stable_baselines3', 'sb3_contrib')
assert not any(m.split('.')[0] in heavy for m in sys.modules)
print(info['total'])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 0
