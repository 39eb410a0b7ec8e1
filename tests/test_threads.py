"""Training on both cores (issue 22.5): `train.torch_threads: 2` gives the same run for the same
config and seed, as one thread does (bit for bit on one machine: same weights digest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yahtzee_agents.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def test_two_threads_repeat_the_same_run(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from yahtzee_agents.sb3.train import weights_sha256
    from yahtzee_agents.train import train

    digests = []
    before = torch.get_num_threads()
    try:
        for i in range(2):
            cfg = load_config(
                ROOT / "configs" / "tiny.yaml",
                [
                    "train.torch_threads=2",
                    "train.eval_interval=0",
                    "warm_start.teacher=none",
                    "policy.net_arch=[128, 128]",  # large enough for the kernels to split work
                    "ppo.batch_size=512",
                ],
            )
            run = train(cfg, tmp_path / f"run{i}", progress=False, argv=["test"])
            model = MaskablePPO.load(run / "checkpoints" / "ckpt_2048.zip", device="cpu")
            digests.append(weights_sha256(model))
            assert torch.get_num_threads() == 2  # the run set what its config says
    finally:
        torch.set_num_threads(before)
    assert digests[0] == digests[1]
