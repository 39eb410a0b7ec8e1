"""The ONNX export plays on its own (issue 21.5): the graph takes the env's 72-float
observation and whatever mask the env gives, computes the network's input features, applies
the canonical-holds restriction itself, and outputs `action` and `logits`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from yahtzee_agents.export import export_onnx  # noqa: E402
from yahtzee_env import load_opponent  # noqa: E402
from yahtzee_env.envs.vector import YahtzeeVectorEnv  # noqa: E402
from yahtzee_env.policies.sources import load_onnx_policy  # noqa: E402

GAMES = 2_000


@pytest.fixture(scope="module")
def hard_onnx(tmp_path_factory) -> Path:
    """The shipped `hard` level (input version 2, canonical holds) as ONNX."""
    path = tmp_path_factory.mktemp("onnx") / "hard.onnx"
    return export_onnx(load_opponent("hard"), path, rules="official", level="hard")


def _play(act, seed: int, canonical_holds: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """GAMES whole games on the vector env with ``act(obs, mask)``: scores, and every action."""
    env = YahtzeeVectorEnv(num_envs=GAMES, canonical_holds=canonical_holds)
    obs, _ = env.reset(seed=seed)
    done = np.zeros(GAMES, dtype=bool)
    total = np.zeros(GAMES)
    actions = []
    while not done.all():
        a = act(obs, env.action_masks())
        actions.append(np.where(done, -1, a))
        obs, rewards, terminated, _, _ = env.step(a)
        total += np.where(done, 0.0, rewards)
        done |= terminated
    return total, np.concatenate(actions)


def test_onnxruntime_alone_plays_like_the_npz_level(hard_onnx: Path) -> None:
    """2,000 games with only the env and an onnxruntime session in the loop, under the env's
    default mask (every hold): the mean is within the npz level's CI on the same games (the
    old graph needed 14 features computed in Python and scored 192.7 instead of 213.3)."""
    session = ort.InferenceSession(str(hard_onnx), providers=["CPUExecutionProvider"])

    def onnx_act(obs, mask):
        return session.run(["action"], {"obs": obs, "mask": mask})[0]

    npz = load_opponent("hard")
    onnx_scores, onnx_actions = _play(onnx_act, seed=7)
    npz_scores, npz_actions = _play(npz.act_batch, seed=7)
    ci = 1.959964 * npz_scores.std(ddof=1) / np.sqrt(GAMES)
    assert abs(onnx_scores.mean() - npz_scores.mean()) <= ci
    assert npz_scores.mean() > 235  # the level is the strong one, under the default mask
    assert (onnx_actions == npz_actions).mean() > 0.999  # float near-ties may differ


def test_the_graph_restricts_holds_itself(hard_onnx: Path) -> None:
    """A default mask and a canonical-holds mask give the same actions: the graph keeps only
    the canonical hold of each kept multiset, as the level does in numpy."""
    session = ort.InferenceSession(str(hard_onnx), providers=["CPUExecutionProvider"])
    env = YahtzeeVectorEnv(num_envs=512)
    canonical = YahtzeeVectorEnv(num_envs=512, canonical_holds=True)
    obs, _ = env.reset(seed=3)
    canonical.reset(seed=3)
    rng = np.random.default_rng(3)
    npz = load_opponent("hard")
    for _ in range(60):
        both = [session.run(["action"], {"obs": obs, "mask": e.action_masks()})[0]
                for e in (env, canonical)]  # fmt: skip
        np.testing.assert_array_equal(both[0], both[1])
        np.testing.assert_array_equal(both[0], npz.act_batch(obs, env.action_masks()))
        logits = session.run(["logits"], {"obs": obs, "mask": env.action_masks()})[0]
        np.testing.assert_allclose(logits, npz.logits(obs), atol=1e-4)  # features in-graph
        explore = np.argmax(rng.random((512, 45)) * canonical.action_masks(), axis=1)
        obs, *_ = env.step(explore)
        canonical.step(explore)


def test_metadata_names_a_level_only_when_exported_as_one(hard_onnx: Path, tmp_path) -> None:
    meta = {p.key: p.value for p in onnx.load(str(hard_onnx)).metadata_props}
    assert meta["level"] == "hard" and meta["observation_version"] == "2"
    assert meta["holds"] == "canonical"
    plain = export_onnx(load_opponent("hard"), tmp_path / "plain.onnx", rules="official")
    assert {p.key: p.value for p in onnx.load(str(plain)).metadata_props}["level"] == ""
    policy = load_onnx_policy(plain, rules="official")  # the loader's checks still hold
    assert policy.name == "plain"
    graph = onnx.load(str(plain)).graph
    assert [i.name for i in graph.input] == ["obs", "mask"]
    assert [o.name for o in graph.output] == ["action", "logits"]
    assert graph.input[0].type.tensor_type.shape.dim[1].dim_value == 72


def test_cli_exports_a_level_manifest(tmp_path: Path) -> None:
    import yahtzee_env
    from yahtzee_env.commands.cli import main

    manifest = Path(yahtzee_env.__file__).parent / "policies" / "levels" / "easy.json"
    assert main(["export", str(manifest), "--format", "onnx", "--out", str(tmp_path)]) == 0
    row = yahtzee_env.benchmark(str(tmp_path / "easy.onnx"), games=64)
    assert row["mean"] == pytest.approx(yahtzee_env.benchmark("easy", games=64)["mean"], abs=1.0)
    assert main(["export", str(manifest), "--out", str(tmp_path)]) == 2  # npz from npz: no


def test_cli_refuses_a_turn_value_level(tmp_path: Path, capsys) -> None:
    """master plays by expectimax through the rules: no graph to export, and it says so."""
    import yahtzee_env
    from yahtzee_env.commands.cli import main

    manifest = Path(yahtzee_env.__file__).parent / "policies" / "levels" / "master.json"
    assert main(["export", str(manifest), "--format", "onnx", "--out", str(tmp_path)]) == 2
    assert "no ONNX graph" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_export_carries_what_the_agent_knew(hard_onnx: Path, tmp_path: Path) -> None:
    """Knowledge travels: the ONNX metadata holds the level's `knew`, the loaded policy states
    it, and `yahtzee benchmark hard.onnx` gives hard's track; a forged `knew` is refused."""
    import json

    import yahtzee_env
    from yahtzee_env.commands.cli import main
    from yahtzee_env.policies.knowledge import knowledge_of, track
    from yahtzee_env.policies.models import ModelFormatError

    knew = knowledge_of(load_opponent("hard"))
    meta = {p.key: p.value for p in onnx.load(str(hard_onnx)).metadata_props}
    assert json.loads(meta["knew"]) == knew
    assert knowledge_of(load_onnx_policy(hard_onnx)) == knew
    assert main(["export", "hard", "--format", "onnx", "--out", str(tmp_path)]) == 0
    row = yahtzee_env.benchmark(str(tmp_path / "hard.onnx"), games=32)
    assert row["knew"] == knew and row["knew_from"] == "the agent"
    assert (
        row["track"] == track(knew) == "model-free with aids (features, shaping, canonical holds)"
    )
    model = onnx.load(str(hard_onnx))
    for prop in model.metadata_props:
        if prop.key == "knew":
            prop.value = json.dumps({**knew, "reward": "shapped"})
    onnx.save(model, str(tmp_path / "forged.onnx"))
    with pytest.raises(ModelFormatError, match=r"forged\.onnx: metadata knew\.reward"):
        load_onnx_policy(tmp_path / "forged.onnx")


def test_an_export_of_an_unknown_agent_says_not_stated_and_how_to_state_it(tmp_path) -> None:
    from yahtzee_env.analysis.leaderboard import format_benchmark
    from yahtzee_env.policies.models import MLPPolicy

    hard = load_opponent("hard")
    bare = MLPPolicy(hard.weights, hard.activation, "bare", canonical_holds=True,
                     input_version=2, threshold=63)  # fmt: skip
    path = export_onnx(bare, tmp_path / "bare.onnx", rules="official")
    assert "knew" not in {p.key for p in onnx.load(str(path)).metadata_props}
    import yahtzee_env

    row = yahtzee_env.benchmark(str(path), games=16)
    assert row["track"] == "not stated" and row["knew_from"] == "nobody"
    assert "state it with --knew" in format_benchmark(row)
