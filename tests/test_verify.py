"""`yahtzee verify` on the rows that headline the README (issue 59): our runs' networks kept in
results/weights/ and replayed from the row alone, a versus row's failure naming the field
that differs, and the digest of the code that plays a search around its weights."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest

from yahtzee_env.analysis.multiplayer import benchmark_versus
from yahtzee_env.analysis.protocol import code_digest
from yahtzee_env.analysis.results import RowError, check_row, load_rows
from yahtzee_env.analysis.verify import model_of_row, verify_digests, verify_row
from yahtzee_env.commands.cli import main
from yahtzee_env.policies.knowledge import CHOSEN_BY_SOLVER
from yahtzee_env.policies.models import read_manifest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
WEIGHTS = RESULTS / "weights"
sys.path.insert(0, str(ROOT / "experiments"))
results_rows = pytest.importorskip("results_rows")


def _yahtzee(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def _kept() -> list[str]:
    return sorted(p.name for p in WEIGHTS.iterdir() if p.is_dir())


def test_every_kept_network_is_its_rows_model_and_says_the_solver_chose_it() -> None:
    """results/weights/NAME/ is the model of results/NAME.json (its path and sha256), and the
    manifest and the row both say that the solver's grading chose the checkpoint."""
    kept = _kept()
    assert {"ppo-strict-lam09-ent06-s2", "ppo-long-s0"} <= set(kept)
    assert kept == results_rows.shipped()
    for name in kept:
        row = check_row(json.loads((RESULTS / f"{name}.json").read_text()))
        manifest = read_manifest(WEIGHTS / name / f"{name}.json")
        assert row["kind"] == "solitaire" and row["agent"] == name
        assert row["model"] == {
            "kind": "model file",
            "name": f"{name}.json",
            "sha256": manifest.weights_sha256,
            "path": f"weights/{name}/{name}.json",
        }
        assert CHOSEN_BY_SOLVER in manifest.raw["knew"]["teacher"]
        assert row["knew"] == manifest.raw["knew"] and row["knew_from"] == "the agent"
        assert model_of_row(row, RESULTS / f"{name}.json") == str(WEIGHTS / name / f"{name}.json")
        size = (WEIGHTS / name / f"{name}.npz").stat().st_size
        assert size < 1_000_000, f"{name}: {size} bytes"


def test_verify_replays_the_strict_recipes_row_from_the_row_alone() -> None:
    """The README's reward-only row: `yahtzee verify ROW.json` finds its network beside the
    row and replays the 10,000 games, chunk for chunk."""
    code, out, err = _yahtzee(
        "verify", str(RESULTS / "ppo-strict-lam09-ent06-s2.json"), "--no-progress"
    )
    assert code == 0, out + err
    assert "holds exactly" in out and "expected score 250.2786" in out


def test_the_rows_of_runs_whose_weights_are_gone_say_so() -> None:
    """A run of ours with no network in results/weights/ is a reported row that says its
    weights were not kept and that the solver's grading chose its checkpoint."""
    kept = set(_kept())
    for name in results_rows.OUR_RUNS:
        row = json.loads((RESULTS / f"{name}.json").read_text())
        assert CHOSEN_BY_SOLVER in row["knew"]["teacher"], name
        if name in kept:
            continue
        assert row["kind"] == "reported", name
        if row.get("model", {}).get("kind") == "level":  # ppo-long-lam09-s0: the level hard
            continue
        assert "weights not kept" in row["description"], name
        with pytest.raises(RowError, match="kind: a 'reported' row"):
            model_of_row(row, RESULTS / f"{name}.json")


def test_each_runs_graded_checkpoint_had_the_lower_evaluation_regret() -> None:
    """What the rows say: of the two checkpoints a run kept (both graded in its data/
    folder), the one its row grades had the lower regret on the run's evaluation games."""
    for name, (_, _, folder, steps) in results_rows.OUR_RUNS.items():
        run = ROOT / "data" / folder / name
        graded = {int(m[1]) for p in run.glob("benchmark-*.json")
                  if (m := re.fullmatch(r"benchmark-(\d+)\.json", p.name))}  # fmt: skip
        evals = [json.loads(x) for x in (run / "evals.jsonl").read_text().splitlines() if x]
        regret = {e["timesteps"]: e["regret_per_game"] for e in evals if "regret_per_game" in e}
        final = max(regret)
        kept = graded | {final}
        if len(kept) == 1:  # ppo-long-s2 graded its final model only: the other is 2 M back
            kept.add(final - 1_998_848)
        assert kept <= set(regret), name
        assert steps in kept and len(kept) == 2, (name, kept)
        assert regret[steps] == min(regret[s] for s in kept), name


def test_a_versus_row_that_does_not_replay_names_the_field_that_differs() -> None:
    """The same wins, draws and losses with another margin: the message names the margin
    and says which fields held."""
    row = benchmark_versus("greedy", players=2, vs=["random"], deals=6)
    assert verify_row(row, "greedy").holds
    row["opponents"][0]["margin"] += 0.0004
    verdict = verify_row(row, "greedy")
    assert not verdict.holds
    (line,) = [x for x in verdict.lines if x.startswith("does not hold")]
    assert "vs random, margin" in line and "win_rate" not in line.split("(")[0]
    assert line.endswith("(wins, draws, losses, win_rate, points_sum the same)")


def test_the_duelists_rows_digest_its_search_and_old_rows_still_check(tmp_path) -> None:
    """The duelist's rows name the code that plays it around hard's weights (a change to the
    search is a change of agent); by digests alone a row of other code is refused naming
    `model.code_sha256`, and a row from before the field verifies as it did."""
    digest = code_digest(("yahtzee_env.policies.duel",))
    rows = [r for r in load_rows(RESULTS) if r["agent"] == "duelist"]
    rows += [json.loads((ROOT / "data" / "duel" / f"versus-2p-duelist-{o}.json").read_text())
             for o in ("optimal", "hard")]  # fmt: skip
    assert len(rows) == 4
    for row in rows:
        assert row["model"]["code"] == ["yahtzee_env.policies.duel"]
        assert row["model"]["code_sha256"] == digest
    row = json.loads((RESULTS / "versus-2p-duelist.json").read_text())
    assert verify_digests(row, "duelist").holds
    row["model"]["code_sha256"] = "0" * 64
    with pytest.raises(RowError, match=r"model\.code_sha256: the row was played by"):
        verify_digests(row, "duelist")
    del row["model"]["code"], row["model"]["code_sha256"]  # a row from before the field
    assert verify_digests(check_row(row), "duelist").holds
    hard = json.loads((RESULTS / "versus-2p-hard.json").read_text())
    assert "code_sha256" not in hard["model"]  # a network alone: its rows as they were
