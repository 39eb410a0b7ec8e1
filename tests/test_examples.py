"""Every script in examples/ runs, at a tiny budget (issue 21.7)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {
    "masked_random_agent.py": (["--episodes", "2"], "masked random agent:", None),
    "evaluate_your_agent.py": (["--games", "40"], "expected score", None),
    "play_against_a_level.py": (["--games", "1"], "vs hard: won", None),
    "pettingzoo_multiplayer.py": (["--games", "1"], "wins per seat", "pettingzoo"),
    "sb3_maskable_ppo.py": (
        ["--timesteps", "1024", "--games", "16"],
        "maskable-ppo",
        "sb3_contrib",
    ),
    "cleanrl_ppo.py": (["--total-timesteps", "4096", "--games", "16"], "cleanrl-ppo", "torch"),
}


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in (ROOT / "examples").glob("*.py")) == sorted(EXAMPLES)


@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_example_runs(script: str, tmp_path: Path) -> None:
    args, expected, needs = EXAMPLES[script]
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"needs {needs}")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # examples do not rely on the working directory
        env=env,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert expected in out.stdout
    if "benchmark" in (ROOT / "examples" / script).read_text():  # a graded agent says what it knew
        track = next(line for line in out.stdout.splitlines() if "track" in line)
        assert "not stated" not in track and "(what it knew: stated by the submitter)" in track
