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

from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.engine import NUM_ACTIONS
from yahtzee_env.game.observation import OBS_SIZE, decode_roll, decode_rolls
from yahtzee_env.policies.models import (
    LEVELS,
    LEVELS_DIR,
    MLPPolicy,
    ModelFormatError,
    load_opponent,
    save_policy,
    save_turn_value,
)
from yahtzee_env.policies.turn_value import TurnValuePolicy


def _weights(seed: int = 0, hidden=(16, 8)):
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *hidden, NUM_ACTIONS]
    return [
        (rng.normal(size=(a, b)).astype(np.float32), rng.normal(size=b).astype(np.float32))
        for a, b in itertools.pairwise(sizes)
    ]


def _value_weights(seed: int = 0, hidden=(16, 8)):
    """A small turn-value network (80 state features -> 1) of plausible scale."""
    rng = np.random.default_rng(seed)
    sizes = [13 + 1 + 63 + 3, *hidden, 1]
    return [
        (rng.normal(size=(a, b)).astype(np.float32) * 0.1, rng.normal(size=b).astype(np.float32))
        for a, b in itertools.pairwise(sizes)
    ]


@pytest.fixture(params=["mlp", "turn-value-mlp"])
def model(request, tmp_path: Path) -> Path:
    """A saved model of each kind: the hostile-file tests hold for both."""
    if request.param == "turn-value-mlp":
        return save_turn_value(
            tmp_path, "m", _value_weights(), rules="official", config_sha256="0" * 64, level="test"
        )
    return save_policy(
        tmp_path, "m", _weights(), "relu", rules="official", config_sha256="0" * 64, level="test"
    )


@pytest.fixture
def mlp(tmp_path: Path) -> Path:
    return save_policy(
        tmp_path, "m", _weights(), "relu", rules="official", config_sha256="0" * 64, level="test"
    )


@pytest.fixture
def turn_value(tmp_path: Path) -> Path:
    return save_turn_value(
        tmp_path, "m", _value_weights(), rules="official", config_sha256="0" * 64, level="test"
    )


def _kind(model: Path) -> str:
    return json.loads(model.read_text())["architecture"]["type"]


def _mid_game(n: int = 500, seed: int = 1):
    env = YahtzeeVectorEnv(num_envs=n)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(7):  # somewhere mid-game, with holds and without
        masks = env.action_masks()
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return obs, env.action_masks()


def test_round_trip_and_legal_actions(mlp: Path) -> None:
    model = mlp
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


def test_turn_value_round_trip(turn_value: Path) -> None:
    """A turn-value model loads as expectimax over the table of its network (numpy)."""
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.policies.turn_value import turn_value_table

    policy = load_opponent(turn_value)
    assert isinstance(policy, TurnValuePolicy) and policy.name == "test"
    assert policy.trained_rules == "official" and policy.manifest.kind == "turn-value-mlp"
    assert not policy.stochastic and policy.reseed(3) is None
    expected = turn_value_table(_value_weights(), RuleSet.from_spec("official"))
    np.testing.assert_array_equal(policy.oracle.table.table, expected)
    obs, masks = _mid_game(200)
    actions = policy.act_batch(obs, masks)
    assert masks[np.arange(200), actions].all()
    assert [policy.act(o, m) for o, m in zip(obs[:20], masks[:20], strict=True)] == list(
        actions[:20]
    )


def test_garbage_observation_is_refused(mlp: Path) -> None:
    with pytest.raises(ValueError, match="five dice"):
        load_opponent(mlp).act(np.zeros(OBS_SIZE, np.float32), np.ones(NUM_ACTIONS, bool))


@pytest.mark.parametrize(
    "level",
    [lv for lv in ("easy", "medium", "hard", "expert") if (LEVELS_DIR / f"{lv}.json").exists()],
)
def test_one_decision_is_the_batch_row(level: str) -> None:
    """`MLPPolicy.act` decodes one row in plain Python (the roll, the canonical holds) and must
    choose what `act_batch` chooses for that row, on every state of random games (holds after
    each roll and box choices, the features' fast path too where the level reads them)."""
    policy = load_opponent(level)
    env = YahtzeeVectorEnv(num_envs=64)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(39):  # 13 rounds of roll, roll, box
        masks = env.action_masks()
        batch = policy.act_batch(obs, masks)
        assert [policy.act(o, m) for o, m in zip(obs, masks, strict=True)] == list(batch)
        np.testing.assert_array_equal([decode_roll(o.tolist()) for o in obs], decode_rolls(obs))
        checked += len(obs)
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    assert checked == 64 * 39


def test_one_row_roll_decoding_refuses_what_the_batch_refuses() -> None:
    rows = np.zeros((3, OBS_SIZE), np.float32)
    rows[1, 30:36] = [0.2, 0.2, 0.2, 0.2, 0.0, 0.0]  # four dice
    rows[2, 30:36] = [1.2, 0.0, 0.0, 0.0, 0.0, 0.0]  # six of one face
    assert [decode_roll(r.tolist()) for r in rows] == [-1, -1, -1]
    assert list(decode_rolls(rows[:2])) == [-1, -1]


def test_truncated_weights(model: Path) -> None:
    npz = model.with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:100])
    with pytest.raises(ModelFormatError, match="sha256"):
        load_opponent(model)


def test_tampered_weights_even_with_valid_npz(model: Path) -> None:
    turn_value = _kind(model) == "turn-value-mlp"
    w = _value_weights(seed=5) if turn_value else _weights(seed=5)
    layers = ["hidden0", "hidden1", "value" if turn_value else "logits"]
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
def test_mismatched_manifest(mlp: Path, edit, message: str) -> None:
    model = mlp
    manifest = json.loads(model.read_text())
    edit(manifest)
    model.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(model)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(format_version=2), "format_version 2"),
        (lambda m: m["architecture"].update(type="value-net"), "unsupported architecture"),
        (lambda m: m["architecture"].update(hidden=[16]), "do not match the architecture"),
        (lambda m: m["architecture"].update(activation="gelu"), "unsupported activation"),
        (lambda m: m["architecture"].update(inputs=72), "expected 80 -> 1"),
        (lambda m: m["architecture"].update(outputs=45), "expected 80 -> 1"),
        (lambda m: m["architecture"].update(output="masked argmax"), "output must read"),
        (lambda m: m.update(weights_file="../other.npz"), "bare file name"),
        (lambda m: m.pop("weights_sha256"), "no 'weights_sha256'"),
        (lambda m: m.update(rules="yatzy"), "unknown rules preset"),
        (lambda m: m.update(config_sha256="zzz"), "config_sha256 is not a sha256"),
    ],
)
def test_mismatched_turn_value_manifest(turn_value: Path, edit, message: str) -> None:
    manifest = json.loads(turn_value.read_text())
    edit(manifest)
    turn_value.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(turn_value)


def test_non_finite_turn_values_are_refused(turn_value: Path) -> None:
    w = _value_weights()
    w[1][0][3, 2] = np.nan
    arrays = {}
    for layer, (weight, bias) in zip(["hidden0", "hidden1", "value"], w, strict=True):
        arrays[f"{layer}.weight"], arrays[f"{layer}.bias"] = weight, bias
    np.savez(turn_value.with_suffix(".npz"), **arrays)
    _rehash(turn_value)
    with pytest.raises(ModelFormatError, match=r"hidden1\.weight holds non-finite"):
        load_opponent(turn_value)


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
from yahtzee_env.policies.models import load_opponent
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


# ------------------------------------------------------------------ hostile files (issue 8.9)
def _rehash(model: Path) -> None:
    """Make the manifest vouch for whatever the weights file now holds (an attacker writes
    both files), so that only the loader's own checks stand in the way."""
    import hashlib

    manifest = json.loads(model.read_text())
    manifest["weights_sha256"] = hashlib.sha256(model.with_suffix(".npz").read_bytes()).hexdigest()
    model.write_text(json.dumps(manifest))


def _npz_with(model: Path, member: str, payload_writer) -> None:
    """Rewrite the model's npz with ``member`` replaced by what ``payload_writer(f)`` writes."""
    import zipfile

    npz = model.with_suffix(".npz")
    with zipfile.ZipFile(npz) as old:
        members = {i.filename: old.read(i) for i in old.infolist()}
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as new:
        for name, data in members.items():
            if name == member:
                with new.open(name, "w", force_zip64=True) as f:
                    payload_writer(f)
            else:
                new.writestr(name, data)
    _rehash(model)


def test_zip_bomb_is_refused_before_it_is_decompressed(model: Path) -> None:
    """A member whose npy header is right but which inflates to 16 MB of zeros (a 17 KB
    file): refused by its declared size, with no more than a few MB allocated."""
    import tracemalloc

    def bomb(f):
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": False, "shape": (72, 16)}
        )
        chunk = bytes(1 << 20)
        for _ in range(16):
            f.write(chunk)

    _npz_with(model, "hidden0.weight.npy", bomb)
    assert model.with_suffix(".npz").stat().st_size < 38_000  # under the size limit, too
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError, match="declares 16,"):
            load_opponent(model)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_member_header_is_checked_before_its_data(model: Path) -> None:
    inputs = json.loads(model.read_text())["architecture"]["inputs"]  # 72 or 80

    def float64(f):
        np.lib.format.write_array(f, np.zeros((inputs, 16), np.float64))

    _npz_with(model, "hidden0.weight.npy", float64)
    with pytest.raises(ModelFormatError, match=r"declares|float64"):
        load_opponent(model)

    def wrong_shape(f):
        np.lib.format.write_array(f, np.zeros((16, inputs), np.float32))

    _npz_with(model, "hidden0.weight.npy", wrong_shape)
    shapes = rf"float32\[16, {inputs}\], expected float32\[{inputs}, 16\]"
    with pytest.raises(ModelFormatError, match=shapes):
        load_opponent(model)


def test_weights_larger_than_the_architecture_allows_are_not_read(model: Path) -> None:
    npz = model.with_suffix(".npz")
    with open(npz, "ab") as f:
        f.write(bytes(2 << 20))  # 2 MB appended: the 72-16-8-45 network needs ~10 KB
    with pytest.raises(ModelFormatError, match="more than the"):
        load_opponent(model)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="POSIX only")
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder"])
def test_weights_that_are_not_regular_files_are_refused(model: Path, kind: str) -> None:
    """A symlink to /dev/zero was read until the OOM killer came; a FIFO hung forever. Run
    in a subprocess with a timeout, so that a regression fails instead of hanging."""
    import os

    npz = model.with_suffix(".npz")
    npz.unlink()
    if kind == "dev-zero":
        npz.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(npz)
    else:
        npz.mkdir()
    code = (
        "import sys\nfrom yahtzee_env.policies.models import load_opponent, ModelFormatError\n"
        "try:\n    load_opponent(sys.argv[1])\nexcept ModelFormatError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(model)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "not a regular file" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
        ('{"format": "yahtzee-rl-policy", "format_version": ' + "9" * 5000 + "}", "not valid"),
        ('{"format": "yahtzee-rl-policy", "format_version": 1e999}', "wrong type"),
    ],
)
def test_hostile_manifests_raise_model_format_error(model: Path, text: str, message: str) -> None:
    model.write_text(text)
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(model)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(weights_file=""), "bare file name"),
        (lambda m: m.update(weights_file="m\0.npz"), "bare file name"),
        (lambda m: m.update(weights_file="."), "bare file name"),
        (lambda m: m.update(weights_file="/etc/passwd"), "bare file name"),
        (lambda m: m["architecture"].update(hidden=[10**6]), "architecture.hidden"),
        (lambda m: m["architecture"].update(hidden=[16] * 50), "architecture.hidden"),
        (lambda m: m["architecture"].update(hidden=[10**400]), "architecture.hidden"),
        (lambda m: m.update(version=0), "'version' must be an int >= 1"),
        (lambda m: m.update(env_steps=-5), "'env_steps' must be an int >= 0"),
        (lambda m: m.update(method="magic"), "'method' must be one of"),
        (lambda m: m.update(objective="fame"), "'objective' must be one of"),
        (lambda m: m.update(objective=["win"]), "'objective' must be one of"),
    ],
)
def test_hostile_manifest_fields(model: Path, edit, message: str) -> None:
    manifest = json.loads(model.read_text())
    edit(manifest)
    model.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(model)


def test_rules_mismatch_is_named_before_the_files_are_read(model: Path) -> None:
    """Issue 8.15: a level asked to play other rules says so, even before reading the
    weights (it used to be reported as damage by `yahtzee play`)."""
    from yahtzee_env.policies.models import RulesMismatchError

    model.with_suffix(".npz").unlink()
    with pytest.raises(RulesMismatchError, match="trained for rules 'official'"):
        load_opponent(model, rules="no-joker")


# ------------------------------------------------------------------ level registry (issue 9.6)
def test_levels_are_discovered_from_the_shipped_manifests() -> None:
    from yahtzee_env.policies.models import _discover_levels

    shipped = sorted(p.stem for p in LEVELS_DIR.glob("*.json"))
    assert sorted(LEVELS) == shipped
    ladder = [lv for lv in LEVELS if lv in ("easy", "medium", "hard", "expert", "master")]
    assert ladder == ["easy", "medium", "hard", "expert", "master"]  # weakest first
    assert _discover_levels(LEVELS_DIR) == LEVELS


def test_a_new_level_is_its_files(tmp_path: Path) -> None:
    from yahtzee_env.policies.models import _discover_levels

    for name, mean in (("pro", 240.0), ("rookie", 100.0)):
        save_policy(
            tmp_path, name, _weights(), "relu", rules="official", config_sha256="0" * 64,
            level=name, extra={"evaluation": {"mean": mean}},
        )  # fmt: skip
    (tmp_path / "broken.json").write_text("{")  # listed (last), so that loading it explains
    assert _discover_levels(tmp_path) == ("rookie", "pro", "broken")


@pytest.mark.parametrize(
    ("level", "version", "method", "objective", "teacher", "env_steps"),
    [
        ("easy", 2, "ppo", "score", None, 262_144),
        ("medium", 2, "ppo", "score", None, 1_261_568),
        ("hard", 5, "ppo", "score", None, 120_012_800),
        ("expert", 1, "distilled", "score", "optimal", 0),
        ("master", 1, "model-based", "score", None, 1_479_711),
        ("duelist", 1, "search", "win", None, 120_012_800),  # hard's network's env-steps
    ],
)
def test_shipped_manifests_say_how_the_level_was_made(
    level, version, method, objective, teacher, env_steps
) -> None:
    """Issue 34.4: every level's manifest states its method, objective, what it knew and
    its env-steps."""
    from yahtzee_env.policies.knowledge import check_knowledge
    from yahtzee_env.policies.models import level_manifest

    manifest = level_manifest(level)
    assert manifest.version == version
    assert manifest.method == method and manifest.raw["teacher"] == teacher
    assert manifest.objective == objective
    check_knowledge(manifest.raw["knew"], "knew")
    assert manifest.env_steps == env_steps == manifest.raw.get("timesteps", env_steps)
    assert load_opponent(level).manifest.weights_sha256 == manifest.weights_sha256


def test_an_older_manifest_method_reward_only_is_read_as_ppo(mlp: Path) -> None:
    """Manifests written before the rename said ``"method": "reward-only"`` for PPO with no
    teacher (whatever its aids); they load, read as ``ppo``; an unknown method is refused."""
    from yahtzee_env.policies.models import read_manifest

    data = json.loads(mlp.read_text())
    mlp.write_text(json.dumps({**data, "method": "reward-only"}))
    assert read_manifest(mlp).method == "ppo" and load_opponent(mlp).manifest.method == "ppo"
    mlp.write_text(json.dumps({**data, "method": "reward only"}))
    with pytest.raises(ModelFormatError, match="manifest 'method' must be one of"):
        read_manifest(mlp)


def test_master_is_the_learned_turn_values_played_by_expectimax() -> None:
    """The shipped master: its manifest says how it was made (40,000 learning games, the
    learner's config hash), and its numpy table is the torch network's at every turn start."""
    torch = pytest.importorskip("torch")
    from yahtzee_agents.model_based import ModelBasedConfig, ValueNet, read_saved
    from yahtzee_env.game.rules import ALL_FILLED, RuleSet
    from yahtzee_env.policies.models import level_manifest
    from yahtzee_env.policies.turn_value import state_features

    source = Path(__file__).parents[1] / "data" / "model_based" / "value-s0.npz"
    cfg, last, weights = read_saved(source)
    manifest = level_manifest("master")
    assert manifest.kind == "turn-value-mlp" and manifest.raw["games"] == last["games"] == 40_000
    assert manifest.config_sha256 == cfg.digest() == ModelBasedConfig(**vars(cfg)).digest()
    rules = RuleSet.from_spec("official")
    net = ValueNet(rules, cfg.hidden, 1e-3, seed=0)
    arrays = [a for w, b in weights for a in (w.T, b)]  # torch's Linear: weight [out, in]
    with torch.no_grad():
        for p, array in zip(net.net.parameters(), arrays, strict=True):
            p.copy_(torch.from_numpy(np.ascontiguousarray(array)))
    table = load_opponent("master").oracle.table.table
    f, u, y = net.states
    pick = np.random.default_rng(0).choice(f.size, 20_000, replace=False)
    direct = net.predict(state_features(f[pick], u[pick], y[pick], rules.upper_bonus_threshold))
    np.testing.assert_allclose(table[f[pick], u[pick], y[pick]], direct, rtol=1e-5, atol=2e-4)
    assert (table[ALL_FILLED] == 0).all()
    assert np.isnan(table).sum() == table.size - f.size - table[ALL_FILLED].size


def test_version_goes_up_when_other_weights_replace_a_model(tmp_path: Path) -> None:
    from yahtzee_env.policies.models import read_manifest

    def save(seed):
        return save_policy(
            tmp_path, "lvl", _weights(seed), "relu", rules="official", config_sha256="0" * 64
        )

    assert read_manifest(save(0)).version == 1
    assert read_manifest(save(0)).version == 1  # the same weights again
    assert read_manifest(save(1)).version == 2  # retrained
    assert read_manifest(save(2)).version == 3
