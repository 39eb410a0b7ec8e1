"""The CLI refuses bad output paths and oversized counts up front: one line, exit 2, no work
done and nothing left behind (issue 8.12 and 8.14)."""

from __future__ import annotations

import os
import sys

import pytest

from yahtzee_env.commands.cli import main

FAST = {
    "evaluate": ["evaluate", "--policy", "random", "--games", "2", "--no-regret", "--no-progress"],
    "tournament": [
        "tournament",
        "--policies",
        "random,random",
        "--games",
        "2",
        "--no-progress",
    ],
    "bench-env": ["bench-env", "--steps", "10", "--num-envs", "2", "--repeats", "1"],
}


def _run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _bad_paths(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    paths = {"folder": str(folder), "under-a-file": "/dev/null/x.json"}
    if sys.platform.startswith("linux"):
        paths["proc"] = "/proc/x.json"
        paths["device"] = "/dev/null"  # never replaced, not even by root
    return paths


@pytest.mark.parametrize("command", sorted(FAST))
@pytest.mark.parametrize("kind", ["folder", "under-a-file", "proc", "device"])
def test_bad_json_path_is_refused_before_the_work(command, kind, tmp_path, capsys):
    paths = _bad_paths(tmp_path)
    if kind not in paths:
        pytest.skip("Linux paths")
    before = sorted(os.listdir(tmp_path))
    code, out, err = _run([*FAST[command], "--json", paths[kind]], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "--json" in err and "Traceback" not in err
    assert out == ""  # no table: nothing was played or timed
    assert sorted(os.listdir(tmp_path)) == before  # no stray .tmp or probe file
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


@pytest.mark.parametrize("command", ["evaluate", "tournament"])
def test_bad_plot_path_is_refused_before_the_work(command, tmp_path, capsys):
    code, out, err = _run([*FAST[command], "--plot", "/dev/null/x.png"], capsys)
    assert code == 2 and "--plot" in err and out == ""


def test_outputs_are_written_atomically_to_new_folders(tmp_path, capsys):
    target = tmp_path / "new" / "deeper" / "t.json"
    code, _, _ = _run([*FAST["tournament"], "--json", str(target)], capsys)
    assert code == 0 and target.is_file()
    assert sorted(os.listdir(target.parent)) == ["t.json"]  # no .tmp left next to it


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "--policy", "random", "--games", str(10**12)], "at most 10,000,000"),
        (["evaluate", "--policy", "random", "--workers", "100000"], "at most 256"),
        (["bench-env", "--num-envs", str(10**8)], "at most 131,072"),
        (["bench-env", "--steps", str(10**12)], "at most 10,000,000"),
        (["tournament", "--policies", "random,greedy", "--batch-size", str(10**9)], "at most"),
    ],
)
def test_huge_counts_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err


def test_huge_tournament_is_refused_up_front(capsys):
    code, out, err = _run(
        ["tournament", "--policies", "random,greedy", "--games", str(10**12)], capsys
    )
    assert code == 2 and "more than the 100,000,000 allowed" in err and out == ""
    entrants = ",".join(["random"] * 200)  # 1.3 billion tables of 4
    code, _, err = _run(["tournament", "--policies", entrants, "--players", "4"], capsys)
    assert code == 2 and "allowed" in err


def test_library_limits():
    from yahtzee_env.analysis.evaluation import MAX_GAMES, play_games
    from yahtzee_env.analysis.tournament import run_tournament
    from yahtzee_env.policies.baselines import make_policy

    with pytest.raises(ValueError, match="games must be in"):
        play_games(make_policy("random", seed=0), MAX_GAMES + 1)
    with pytest.raises(ValueError, match="allowed"):
        from yahtzee_env.analysis.tournament import Entrant

        entrants = [Entrant("a", make_policy("random")), Entrant("b", make_policy("greedy"))]
        run_tournament(entrants, games=10**12)
