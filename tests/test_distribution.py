"""The lean masked distribution (issue 22.5, training faster) gives sb3-contrib's numbers bit
for bit: actions, log probabilities, entropy, the gradients, and a whole training run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution  # noqa: E402

from yahtzee_agents.config import load_config  # noqa: E402
from yahtzee_agents.sb3.distribution import LeanMaskedCategorical, install  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def both(seed: int, masked: bool):
    """The same random logits (and masks) through sb3-contrib's and the lean distribution."""
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randn(257, 45, generator=gen) * 3
    masks = torch.rand(257, 45, generator=gen) < 0.4
    masks[:, 7] = True  # at least one legal action per row
    masks[0] = False
    masks[0, 3] = True  # a row with one legal action
    out = []
    for dist in (MaskableCategoricalDistribution(45), LeanMaskedCategorical(45)):
        logits = raw.clone().requires_grad_(True)
        d = dist.proba_distribution(logits)
        if masked:
            d.apply_masking(masks.numpy())
        torch.manual_seed(seed)
        actions = d.sample()
        log_prob, entropy = d.log_prob(actions), d.entropy()
        (log_prob.sum() * 0.7 - entropy.sum() * 0.03).backward()
        out.append((actions, log_prob, entropy, d.mode(), logits.grad))
    return out


@pytest.mark.parametrize("masked", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_same_numbers_as_sb3_contrib(seed: int, masked: bool) -> None:
    theirs, ours = both(seed, masked)
    names = ("actions", "log_prob", "entropy", "mode", "grad")
    for name, a, b in zip(names, theirs, ours, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert torch.equal(a, b), name  # bit for bit, not within a tolerance


def test_masked_actions_are_never_drawn() -> None:
    _, (actions, log_prob, entropy, mode, _) = both(3, masked=True)
    assert actions[0].item() == 3 and mode[0].item() == 3
    assert log_prob[0].item() == 0.0 and entropy[0].item() == 0.0


def test_apply_masking_first_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="proba_distribution"):
        LeanMaskedCategorical(45).apply_masking(np.ones((1, 45), bool))


def test_install_refuses_another_distribution() -> None:
    class Policy:
        action_dist = object()

    class Model:
        policy = Policy()

    with pytest.raises(TypeError, match="masked categorical"):
        install(Model())


def test_a_run_is_the_same_run(tmp_path: Path, monkeypatch) -> None:
    """tiny.yaml trained with sb3-contrib's distribution and with the lean one: the same
    weights and the same evaluation."""
    from sb3_contrib import MaskablePPO

    import yahtzee_agents.sb3.distribution as distribution
    from yahtzee_agents.sb3.train import weights_sha256
    from yahtzee_agents.train import train

    overrides = ["train.eval_interval=1024", "train.eval_games=64", "warm_start.teacher=none"]
    results = []
    for name, lean in (("sb3", False), ("lean", True)):
        if not lean:
            monkeypatch.setattr(distribution, "install", lambda model: model)
        else:
            monkeypatch.undo()
        cfg = load_config(ROOT / "configs" / "tiny.yaml", overrides)
        run = train(cfg, tmp_path / name, progress=False, argv=["test"])
        model = MaskablePPO.load(run / "checkpoints" / "ckpt_2048.zip", device="cpu")
        evals = (run / "evals.jsonl").read_text()
        results.append((weights_sha256(model), evals))
        kind = type(model.policy.action_dist).__name__
        assert kind == "MaskableCategoricalDistribution"  # the file names sb3-contrib's class
    assert results[0] == results[1]


def test_the_benchmark_measures_before_and_after(monkeypatch) -> None:
    """`bench_train.py --setups 1:sb3,2:lean`: sb3-contrib's distribution (as before) and the
    lean one, interleaved; a bad setup names the problem."""
    import importlib.util

    from yahtzee_agents.sb3 import bench

    seen = []

    def fake(cfg, steps, distribution):
        seen.append((cfg.train.torch_threads, distribution))
        return {}

    monkeypatch.setattr(bench, "bench_config", fake)
    bench.run_bench([], 1, [], repeats=2, setups=[(1, "sb3"), (2, "lean")])
    assert seen == [(1, "sb3"), (2, "lean"), (1, "sb3"), (2, "lean")]
    with pytest.raises(ValueError, match="not both"):
        bench.run_bench([], 1, [], threads=[1], setups=[(1, "sb3")])
    monkeypatch.undo()
    cfg = load_config(ROOT / "configs" / "tiny.yaml", [])
    with pytest.raises(ValueError, match="distribution must be one of"):
        bench.bench_config(cfg, 64, "fast")
    row = bench.bench_config(cfg, 256, "sb3")
    assert row["distribution"] == "sb3" and row["steps"] >= 256
    spec = importlib.util.spec_from_file_location(
        "bench_train", ROOT / "experiments" / "bench_train.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.parse_setups("1:sb3,2:lean") == [(1, "sb3"), (2, "lean")]
    import argparse

    for bad in ("0:lean", "2:fast", "two:lean", "2"):
        with pytest.raises(argparse.ArgumentTypeError, match="THREADS:DISTRIBUTION"):
            script.parse_setups(bad)
