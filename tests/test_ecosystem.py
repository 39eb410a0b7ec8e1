"""The researcher's common paths, end to end: Gymnasium's sync, async and native vector envs
with its vector wrappers, both autoreset modes, the info types, both env checkers in the modes
docs/env.md claims, SB3's and sb3-contrib's `evaluate_policy`, `make_vec_env`, rgb_array and
`RecordVideo`, and the installed wheel next to `openai-agents` (slow)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import yahtzee_env  # noqa: F401  (registers the ids)
from yahtzee_env.envs.checks import MAX_EPISODE_STEPS
from yahtzee_env.envs.info import INFO_SPEC, OPEN
from yahtzee_env.envs.vector import YahtzeeVectorEnv
from yahtzee_env.game.engine import IllegalActionError, box_action
from yahtzee_env.game.render import RGB_SHAPE
from yahtzee_env.game.rules import Box

ROOT = Path(__file__).resolve().parents[1]


def check_info(info: dict, batch: int | None) -> None:
    """Every key of `INFO_SPEC` with its dtype and shape (leading ``[batch]`` if batched)."""
    for key, (dtype, shape) in INFO_SPEC.items():
        value = np.asarray(info[key])
        expected = shape if batch is None else (batch, *shape)
        assert value.dtype == dtype, (key, value.dtype)
        assert value.shape == expected, (key, value.shape)
        if batch is not None:
            assert info["_" + key].dtype == bool and info["_" + key].shape == (batch,)


def cleanrl_loop(envs, steps: int, seed: int) -> dict[str, int]:
    """A CleanRL-style rollout: masked random actions from ``info["action_mask"]``; returns
    counts of what happened. Checks the info types at every step. (Gymnasium's own vector
    envs autoreset at the next step and give the ended game an all-zero mask until then: its
    action is ignored, any will do. The native env's masks are never all False.)"""
    rng = np.random.default_rng(seed)
    n = envs.num_envs
    _obs, infos = envs.reset(seed=seed)
    check_info(infos, n)
    counts = {"episodes": 0, "fills": 0, "holds": 0}
    for _ in range(steps):
        masks = infos["action_mask"].astype(bool)
        if isinstance(envs.unwrapped, YahtzeeVectorEnv):
            assert masks.any(axis=1).all(), "a row with no legal action"
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        counts["fills"] += int((actions >= 32).sum())
        counts["holds"] += int((actions < 32).sum())
        obs, rewards, terms, truncs, infos = envs.step(actions)
        assert obs.shape == (n, 72) and rewards.shape == (n,) and not truncs.any()
        check_info(infos, n)
        counts["episodes"] += int(terms.sum())
        if "final_info" in infos:
            done = infos["_final_info"]
            assert (infos["final_info"]["scorecard"][done] >= 0).all()
            assert (infos["final_info"]["action_mask"][done] == 0).all()
    return counts


# ------------------------------------------------------------------ 8.2: vector envs and infos
def test_single_env_info_types():
    env = gym.make("Yahtzee-v0")
    _, info = env.reset(seed=0)
    check_info(info, None)
    assert (info["scorecard"] == OPEN).all()
    _, _, _, _, info = env.step(box_action(Box.CHANCE))
    check_info(info, None)
    assert info["scorecard"][Box.CHANCE] == info["total"] > 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gymnasium_sync_and_async_vector_envs(mode):
    """Once a crash (`None` in the scorecard): one game fills a box while the other re-rolls."""
    envs = gym.make_vec("Yahtzee-v0", num_envs=2, vectorization_mode=mode)
    try:
        counts = cleanrl_loop(envs, steps=45, seed=1)
        assert counts["fills"] and counts["holds"] and counts["episodes"] >= 1
    finally:
        envs.close()


def test_native_vector_env_infos_match_sync():
    """Same keys, dtypes and shapes as Gymnasium's SyncVectorEnv builds from single envs."""
    native = gym.make_vec("Yahtzee-v0", num_envs=3, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("Yahtzee-v0", num_envs=3, vectorization_mode="sync")
    _, a = native.reset(seed=0)
    _, b = sync.reset(seed=0)
    assert set(a) == set(b)
    for key in a:
        assert np.asarray(a[key]).dtype == np.asarray(b[key]).dtype, key
        assert np.asarray(a[key]).shape == np.asarray(b[key]).shape, key
    assert cleanrl_loop(native, steps=45, seed=2)["episodes"] == 3
    sync.close()


def test_versus_env_in_sync_vector_env():
    envs = gym.make_vec("YahtzeeVs-v0", num_envs=2, vectorization_mode="sync", opponents=["greedy"])
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=0)
    ended = 0
    for _ in range(45):
        masks = infos["action_mask"].astype(bool)
        actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
        _, _, terms, _, infos = envs.step(np.array(actions))
        check_info(infos, 2)
        assert infos["totals"].dtype == np.int32 and infos["totals"].shape == (2, 2)
        ended += int(terms.sum())
    assert ended == 2
    envs.close()


# ------------------------------------------------------------------ 8.5: the native vector env
def test_native_env_takes_the_single_env_kwargs():
    kwargs = {
        "illegal_action": "penalize",
        "illegal_penalty": -0.5,
        "max_episode_steps": 7,
        "render_mode": "ansi",
        "canonical_holds": True,
        "rules": "free-joker",
    }
    env = gym.make_vec("Yahtzee-v0", 2, vectorization_mode="vector_entry_point", **kwargs)
    base = env.unwrapped
    assert isinstance(base, YahtzeeVectorEnv)
    assert (base.illegal_action, base.illegal_penalty, base.max_episode_steps) == (
        "penalize",
        -0.5,
        7,
    )
    registered = gym.make_vec("Yahtzee-v0", 2, vectorization_mode="vector_entry_point")
    assert registered.unwrapped.max_episode_steps == MAX_EPISODE_STEPS
    single = gym.make("Yahtzee-v0", **{k: v for k, v in kwargs.items()})
    assert single.spec.max_episode_steps == 7


def test_native_penalize_mode_and_truncation():
    env = YahtzeeVectorEnv(2, illegal_action="penalize", illegal_penalty=-2.0, max_episode_steps=5)
    _, infos = env.reset(seed=0)
    before = {k: np.array(infos[k]) for k in ("dice", "scorecard", "total")}
    # Game 0 fills chance twice (the second is illegal), game 1 re-rolls.
    obs, rewards, terms, truncs, infos = env.step(np.array([box_action(Box.CHANCE), 31]))
    assert rewards[0] > 0 and "illegal_action" not in infos
    snapshot = obs[0].copy(), np.array(infos["dice"][0])
    obs, rewards, _, _, infos = env.step(np.array([box_action(Box.CHANCE), 31]))
    assert rewards.tolist() == [-2.0, 0.0]
    assert infos["illegal_action"].tolist() == [True, False]
    assert infos["_illegal_action"].tolist() == [True, False]
    assert np.array_equal(obs[0], snapshot[0]) and np.array_equal(infos["dice"][0], snapshot[1])
    assert infos["rolls_left"][1] == 0  # game 1 re-rolled twice
    assert before["total"].tolist() == [0, 0]
    # A game stuck on illegal actions is truncated at max_episode_steps (5), then reset.
    for step in range(3, 6):
        _, _, terms, truncs, infos = env.step(np.array([box_action(Box.CHANCE), 0]))
        assert not terms.any()
        assert truncs.tolist() == ([True, True] if step == 5 else [False, False])
    assert infos["_final_info"].all() and infos["final_info"]["scorecard"][0][Box.CHANCE] > 0
    assert (infos["scorecard"] == OPEN).all() and (infos["rolls_left"] == 2).all()
    assert infos["final_obs"][0].shape == (72,)


def test_native_raise_mode_changes_nothing():
    env = YahtzeeVectorEnv(2)
    env.reset(seed=0)
    env.step(np.array([box_action(Box.CHANCE), 31]))
    with pytest.raises(IllegalActionError, match="env indices"):
        env.step(np.array([box_action(Box.CHANCE), 0]))


def play_until_an_end(env, rng, limit: int = 60):
    """Random legal steps until some game ends; returns that step's results."""
    for _ in range(limit):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        result = env.step(actions)
        if result[2].any():
            return result
    raise AssertionError("no game ended")


def test_next_step_autoreset():
    env = gym.make_vec(
        "Yahtzee-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    obs, rewards, terms, _, infos = play_until_an_end(env, rng)
    assert "final_obs" not in infos
    done = np.flatnonzero(terms)
    assert (obs[done, 71] == 1.0).all(), "the step that ends a game returns its last observation"
    assert (infos["scorecard"][done] >= 0).all()
    masks = env.unwrapped.action_masks()
    assert masks[done].all(), "a game waiting for its reset accepts any action (never all False)"
    assert np.array_equal(infos["action_mask"], masks.astype(np.int8))
    totals = infos["total"][done].copy()
    assert (totals > 0).all()
    # The reset step: the action is ignored, reward 0, a fresh game.
    actions = np.zeros(3, dtype=np.int64)
    actions[done] = box_action(Box.CHANCE)  # would be illegal in a finished game: ignored
    live = np.setdiff1d(np.arange(3), done)
    actions[live] = [rng.choice(np.flatnonzero(m)) for m in masks[live]]
    obs, rewards, terms, truncs, infos = env.step(actions)
    assert (rewards[done] == 0).all() and not terms[done].any() and not truncs[done].any()
    assert (obs[done, 71] == 0.0).all() and (obs[done, 38] == 1.0).all()  # 2 re-rolls left
    assert (infos["total"][done] == 0).all() and (infos["scorecard"][done] == OPEN).all()


def test_gymnasium_vector_wrappers():
    """Observation wrappers need NEXT_STEP; RecordEpisodeStatistics works in both modes."""
    same = YahtzeeVectorEnv(4)
    with pytest.raises(ValueError, match="autoreset_mode"):
        gym.wrappers.vector.NormalizeObservation(same)
    env = YahtzeeVectorEnv(4, autoreset_mode=AutoresetMode.NEXT_STEP)
    env = gym.wrappers.vector.NormalizeObservation(env)
    env = gym.wrappers.vector.TransformObservation(env, lambda o: np.clip(o, -5, 5))
    env = gym.wrappers.vector.RecordEpisodeStatistics(env)
    stats = []
    for wrapped in (env, gym.wrappers.vector.RecordEpisodeStatistics(YahtzeeVectorEnv(4))):
        rng = np.random.default_rng(0)
        _, infos = wrapped.reset(seed=0)
        returns = []
        for _ in range(90):
            masks = wrapped.unwrapped.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _, _, _, _, infos = wrapped.step(actions)
            if "episode" in infos:
                returns += infos["episode"]["r"][infos["_episode"]].tolist()
        assert len(returns) >= 4 and all(r > 0 for r in returns)
        stats.append(returns)


def test_call_get_attr_set_attr():
    env = gym.make_vec("Yahtzee-v0", 3, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    masks = env.call("action_masks")
    assert len(masks) == 3 and all(m.shape == (45,) and m.dtype == bool for m in masks)
    assert env.get_attr("canonical_holds") == (False, False, False)
    env.set_attr("illegal_penalty", -3.0)
    assert env.unwrapped.illegal_penalty == -3.0
    with pytest.raises(ValueError, match="illegal_penalty"):
        env.set_attr("illegal_penalty", 5.0)
    with pytest.raises(ValueError, match="shared"):
        env.set_attr("canonical_holds", [True, False, True])
    with pytest.raises(AttributeError):
        env.get_attr("no_such_thing")


def test_action_masks_dtype_for_space_sample():
    env = gym.make("Yahtzee-v0")
    env.reset(seed=0)
    env.step(box_action(Box.CHANCE))
    mask = env.unwrapped.action_masks(np.int8)
    assert mask.dtype == np.int8
    action = env.action_space.sample(mask=mask)
    assert mask[action] == 1
    vec = YahtzeeVectorEnv(2)
    vec.reset(seed=0)
    assert vec.action_masks(np.int8).dtype == np.int8 and vec.action_masks().dtype == bool


# ------------------------------------------------------------------ 8.4: checkers and step cap
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"illegal_action": "penalize"},
        {"illegal_action": "penalize", "canonical_holds": True},
        {"render_mode": "rgb_array"},
    ],
)
def test_gymnasium_check_env(kwargs):
    """Gymnasium's checker samples unmasked actions once after reset: it passes in raise mode
    without canonical holds (every action is legal at a turn's start) and in penalize mode."""
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.make("Yahtzee-v0", **kwargs).unwrapped, skip_render_check=False)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("kwargs", [{}, {"canonical_holds": True}])
def test_sb3_check_env_in_penalize_mode(kwargs, capsys):
    """SB3's checker steps with unmasked random actions, so it needs penalize mode."""
    from stable_baselines3.common.env_checker import check_env

    env = gym.make("Yahtzee-v0", illegal_action="penalize", **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, warn=True)
    assert [str(w.message) for w in caught if "render" not in str(w.message)] == []
    capsys.readouterr()  # it renders the "human" mode


def test_stuck_policy_is_truncated_and_evaluate_policy_returns():
    """A deterministic policy stuck on an illegal action under penalize mode: the registered
    max_episode_steps truncates the episode, so SB3's evaluate_policy returns."""
    from stable_baselines3.common.evaluation import evaluate_policy

    class Stuck:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.full(len(obs), box_action(Box.CHANCE)), None

    env = gym.make("Yahtzee-v0", illegal_action="penalize", max_episode_steps=50)
    mean, _ = evaluate_policy(Stuck(), env, n_eval_episodes=2, warn=False)
    # chance once (its points), then 49 penalties of -1
    assert mean < 30 - 48
    registered = gym.make("Yahtzee-v0", illegal_action="penalize")
    registered.reset(seed=0)
    truncated = False
    steps = 0
    while not truncated and steps < MAX_EPISODE_STEPS + 1:
        *_, terminated, truncated, _ = registered.step(box_action(Box.CHANCE))
        steps += 1
        assert not terminated
    assert truncated and steps == MAX_EPISODE_STEPS


def test_maskable_evaluate_policy_and_make_vec_env():
    """sb3-contrib's maskable evaluate_policy on a make_vec_env of Yahtzee-v0 (which no
    longer warns about rgb_array), and on the SB3 adapter over a Gymnasium vector wrapper."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.env_util import make_vec_env

    from yahtzee_agents.sb3.vec_env import SB3VecEnv

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        venv = make_vec_env("Yahtzee-v0", n_envs=2, seed=0)
    assert [str(w.message) for w in caught if "render" in str(w.message)] == []
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, seed=0, device="cpu")
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=2, use_masking=True, warn=False)
    assert 0 < mean < 1600
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(YahtzeeVectorEnv(2))
    adapter = SB3VecEnv(wrapped, seed=0)
    mean, _ = evaluate_policy(model, adapter, n_eval_episodes=2, use_masking=True)
    assert 0 < mean < 1600


# ------------------------------------------------------------------ 8.7: rendering
def test_rgb_array_render():
    env = gym.make("Yahtzee-v0", render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.shape == RGB_SHAPE and first.dtype == np.uint8
    env.step(box_action(Box.CHANCE))
    second = env.render()
    assert second.shape == RGB_SHAPE and not np.array_equal(first, second)
    vec = YahtzeeVectorEnv(3, render_mode="rgb_array")
    vec.reset(seed=0)
    image = vec.render()
    assert image.shape == RGB_SHAPE and image.dtype == np.uint8


def test_vector_env_renders_its_first_game():
    vec = YahtzeeVectorEnv(2, render_mode="ansi")
    _, infos = vec.reset(seed=0)
    text = vec.render()
    assert text.startswith("Yahtzee (official): turn 1/13, rolls left 2")
    assert "dice: " + " ".join(f"[{d}]" for d in infos["dice"][0].tolist()) in text


def test_record_video(tmp_path):
    pytest.importorskip("moviepy", reason="RecordVideo writes files with moviepy (video extra)")
    env = gym.make("Yahtzee-v0", render_mode="rgb_array")
    folder = tmp_path / "videos"
    env = gym.wrappers.RecordVideo(env, str(folder), episode_trigger=lambda e: e == 0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        action = rng.choice(np.flatnonzero(env.unwrapped.action_masks()))
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0


# ------------------------------------------------------------------ 8.3 / 8.15: imports
def test_core_imports_no_training_package():
    code = (
        "import sys, gymnasium as gym, yahtzee_env\n"
        "from yahtzee_env.commands.cli import build_parser\n"
        "build_parser()\n"
        "gym.make('Yahtzee-v0'); gym.make_vec('Yahtzee-v0', 2)\n"
        "import yahtzee_env.envs.versus, yahtzee_env.analysis.evaluation\n"
        "bad = [m for m in ('yahtzee_agents', 'torch', 'stable_baselines3', 'sb3_contrib')\n"
        "       if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.parametrize(
    ("argv", "module", "extra"),
    [
        (["train", "configs/tiny.yaml"], "torch", "train"),
        (["export", "runs/x", "--out", "x"], "sb3_contrib", "train"),
        (["train", "configs/tiny.yaml"], "yahtzee_agents", "train"),
    ],
)
def test_training_commands_give_the_install_hint(argv, module, extra):
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from yahtzee_env.commands.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 2, out.stderr
    assert f"pip install 'yahtzee-rl[{extra}]'" in out.stderr
    assert "Traceback" not in out.stderr


def test_pettingzoo_import_hint():
    code = (
        "import sys; sys.modules['pettingzoo'] = None\n"
        "try:\n"
        "    import yahtzee_env.envs.multiplayer\n"
        "except ModuleNotFoundError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "pip install 'yahtzee-rl[multiplayer]'" in out.stdout


def test_aec_checks_hold_under_python_O():
    """PettingZoo's wrappers assert; ours check explicitly, so `python -O` still refuses a bad
    action with a clear error instead of an IndexError."""
    pytest.importorskip("pettingzoo")
    code = (
        "from yahtzee_env.envs import multiplayer\n"
        "from yahtzee_env.game.engine import IllegalActionError\n"
        "for action in (45, -1, True, 1.5, None):\n"
        "    env = multiplayer.env(num_players=2)\n"
        "    env.reset(seed=0)\n"
        "    try:\n"
        "        env.step(action)\n"
        "    except IllegalActionError:\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit(f'accepted {action!r}')\n"
        "raw = multiplayer.raw_env(num_players=2)\n"
        "raw.reset(seed=0)\n"
        "try:\n"
        "    raw.step(99)\n"
        "except IllegalActionError:\n"
        "    print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("action", [True, False, np.True_, np.array(True)])
def test_bools_are_refused_as_actions(action):
    env = gym.make("Yahtzee-v0", illegal_action="penalize")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="bool"):
        env.step(action)
    versus = gym.make("YahtzeeVs-v0", opponents=["greedy"])
    versus.reset(seed=0)
    with pytest.raises(IllegalActionError, match="bool"):
        versus.step(action)


# ------------------------------------------------------------------ 8.3: the wheel
@pytest.mark.slow
def test_wheel_installs_next_to_openai_agents(tmp_path):
    """The built wheel claims only project import names: installed in a fresh venv next to
    `openai-agents` (import name `agents`), `from agents import Agent` still works, ours is
    `yahtzee_agents`, and uninstalling ours leaves theirs intact. Needs PyPI (skipped without
    it)."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, env=env, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("yahtzee_rl-*.whl")
    import zipfile

    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert "agents" not in tops and {"yahtzee_env", "yahtzee_agents"} <= tops
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    theirs = subprocess.run(
        [py, "-m", "pip", "install", "-q", "openai-agents"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    if theirs.returncode != 0:
        pytest.skip(f"openai-agents could not be installed (no PyPI?): {theirs.stderr[-300:]}")
    subprocess.run(
        [py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True, env=env, timeout=300,
    )  # fmt: skip
    # Run from tmp_path: the repository root has an `agents/` folder that would shadow theirs.
    check = "from agents import Agent; import yahtzee_agents, agents; print(agents.__file__)"
    out = subprocess.run(
        [py, "-c", check], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "site-packages/agents/__init__.py" in out.stdout
    subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "yahtzee-rl"], check=True, env=env)
    theirs_left = subprocess.run(
        [py, "-c", "from agents import Agent"], capture_output=True, text=True, cwd=tmp_path
    )
    assert theirs_left.returncode == 0, theirs_left.stderr
    gone = subprocess.run([py, "-c", "import yahtzee_agents"], capture_output=True, cwd=tmp_path)
    assert gone.returncode != 0
