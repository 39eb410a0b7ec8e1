"""`yahtzee benchmark` and `yahtzee_env.benchmark` (issue 21.1): one protocol for any agent:
a callable, an object with act_batch, a level, a model file. Tiny game counts here; the
model kinds that need a training run (ONNX, SB3 zip, run folder) are in test_training.py."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import yahtzee_env
from yahtzee_env.analysis.evaluation import evaluate_policy
from yahtzee_env.analysis.leaderboard import PROTOCOL, AgentError
from yahtzee_env.commands.cli import main
from yahtzee_env.policies.baselines import HeuristicPolicy

ROW_KEYS = {
    "agent", "mean", "ci95", "expected_score", "expected_ci95", "optimum", "regret_per_game",
    "regret_ci95", "regret_per_decision", "upper_bonus_rate", "yahtzee_rate", "games", "seed",
    "rules", "protocol", "standard", "version", "evaluation", "row_format", "row_version",
    "kind", "knew", "knew_from", "track", "reproducible", "model", "provenance", "chunks",
}  # fmt: skip


def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A deliberately poor agent: the lowest legal action id."""
    assert obs.dtype == np.float32 and obs.shape[1] == 72 and mask.shape[1] == 45
    return np.argmax(mask, axis=1)


def _yahtzee(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_protocol_is_fixed() -> None:
    assert (PROTOCOL.games, PROTOCOL.seed, PROTOCOL.rules) == (10_000, 0, "official")


def test_benchmark_a_callable_in_one_call() -> None:
    row = yahtzee_env.benchmark(first_legal, games=64)
    assert set(row) == ROW_KEYS
    assert row["agent"] == "first_legal" and row["games"] == 64 and not row["standard"]
    assert row["expected_score"] == pytest.approx(row["optimum"] - row["regret_per_game"])
    assert row["expected_ci95"] == row["regret_ci95"] > 0 and math.isfinite(row["ci95"])
    assert 200 < row["regret_per_game"] < row["optimum"]  # a poor agent: most points given up
    assert row["optimum"] == pytest.approx(254.59, abs=5e-3)  # the official rules' optimum
    # The benchmark is `evaluate_policy` with the protocol's seed: the same games.
    same = evaluate_policy(HeuristicPolicy(), 64, seed=PROTOCOL.seed, rules="official")
    assert yahtzee_env.benchmark(HeuristicPolicy(), games=64)["mean"] == same["mean"]
    assert yahtzee_env.benchmark("heuristic", games=64)["mean"] == same["mean"]


def test_optimal_agent_has_no_regret() -> None:
    row = yahtzee_env.benchmark("optimal", games=32)
    assert row["regret_per_game"] == pytest.approx(0.0, abs=1e-6)
    assert row["expected_score"] == pytest.approx(row["optimum"])


def test_workers_change_the_speed_not_the_numbers() -> None:
    one = yahtzee_env.benchmark("greedy", games=300, workers=1)
    two = yahtzee_env.benchmark("greedy", games=300, workers=2)
    assert one["mean"] == two["mean"] and one["regret_per_game"] == two["regret_per_game"]


class ActBatchAgent:
    name = "act-batch-agent"

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return first_legal(obs, masks)


def test_an_object_with_act_batch_and_a_level_by_name() -> None:
    row = yahtzee_env.benchmark(ActBatchAgent(), games=40)
    assert row["agent"] == "act-batch-agent"
    assert row["mean"] == yahtzee_env.benchmark(first_legal, games=40)["mean"]
    easy = yahtzee_env.benchmark("easy", games=40)
    assert easy["mean"] > row["mean"] + 50


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda obs, mask: np.full(len(obs), 44), "not legal under its mask"),
        (lambda obs, mask: np.zeros((len(obs), 2), dtype=int), "shape"),
        (lambda obs, mask: np.full(len(obs), 0.5), "non-integer"),
        (lambda obs, mask: np.full(len(obs), 99), "action 99 in row 0"),
    ],
)
def test_illegal_answers_are_refused_by_row(answer, message) -> None:
    with pytest.raises(AgentError, match=message):
        yahtzee_env.benchmark(answer, games=8)


def test_cli_module_function_and_json_row(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "my_agent.py").write_text(
        "import numpy as np\n\ndef act(obs, mask):\n    return np.argmax(mask, axis=1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agent", None)
    out = tmp_path / "row.json"
    code, stdout, stderr = _yahtzee(
        "benchmark", "my_agent:act", "--games", "40", "--json", str(out), "--no-progress"
    )
    assert code == 0, stderr
    row = json.loads(out.read_text())
    assert row["agent"] == "my_agent:act" and row["games"] == 40
    assert row["mean"] == yahtzee_env.benchmark(first_legal, games=40)["mean"]
    assert "expected score" in stdout and "regret per game" in stdout


def test_cli_model_file_rules_and_errors(tmp_path: Path) -> None:
    levels = Path(yahtzee_env.__file__).parent / "policies" / "levels"
    code, stdout, stderr = _yahtzee(
        "benchmark", str(levels / "easy.npz"), "--games", "30", "--no-progress"
    )
    assert code == 0, stderr
    assert "easy.npz: 30 games, official rules" in stdout
    code, stdout, _ = _yahtzee("benchmark", "greedy", "--rules", "no-joker", "--games", "20")
    assert code == 0 and "no-joker rules" in stdout
    code, stdout, stderr = _yahtzee("benchmark", "easy", "--rules", "no-joker", "--games", "20")
    assert code == 0, stderr  # a level trained for other rules plays, and the row says so
    assert "easy (trained for official rules): 20 games, no-joker rules" in stdout
    code, _, stderr = _yahtzee("benchmark", "nope", "--games", "5")
    assert code == 2 and "unknown policy 'nope'" in stderr
    code, _, stderr = _yahtzee("benchmark", "os.path:nope", "--games", "5")
    assert code == 2 and "has no 'nope'" in stderr
    code, _, stderr = _yahtzee("benchmark", "no_such_module_21:act", "--games", "5")
    assert code == 2 and "cannot import module" in stderr


def test_constraints_pin_the_installed_benchmark_stack() -> None:
    """constraints/benchmark.txt pins exact versions (==) of the stack, and names each
    package of the train extra that changes numbers."""
    text = (Path(__file__).resolve().parents[1] / "constraints" / "benchmark.txt").read_text()
    pins = dict(line.split("==") for line in text.splitlines() if line and not line.startswith("#"))
    for name in ("torch", "numpy", "gymnasium", "stable-baselines3", "sb3-contrib"):
        assert name in pins, name
    assert pins["torch"] == "2.13.0"  # the project's pin (Makefile, pyproject)


def test_the_documented_example_runs_and_is_short(capsys) -> None:
    """docs/benchmark.md, "Evaluate your agent": the example is under 20 lines and runs as
    written (here with 200 games instead of the protocol's 10,000)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "benchmark.md").read_text()
    section = page.split("## Evaluate your agent", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) < 20
    assert "games=10_000" in code
    exec(compile(code.replace("games=10_000", "games=200"), "docs/benchmark.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert "expected" in printed[0]
    assert json.loads(printed[1])["games"] == 200


def test_versions_and_citation() -> None:
    import yahtzee_agents

    root = Path(__file__).resolve().parents[1]
    assert yahtzee_agents.__version__ == yahtzee_env.__version__
    citation = (root / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in citation
    assert f"version: {yahtzee_env.__version__}" in citation
    changelog = (root / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog
    assert re.search(
        rf"^## \[{re.escape(yahtzee_env.__version__)}\] - \d{{4}}-\d\d-\d\d$", changelog, re.M
    )
    assert "date-released:" in citation
    assert "github.com/yahtzee-rl" not in citation  # no placeholder: what is not known is left out
