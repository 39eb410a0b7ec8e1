"""`yahtzee play` and `yahtzee_env.play.terminal`: scripted sessions through a pipe, command
parsing, rejected input leaving the game unchanged, quitting, end of input, colour, matches
(and the engine's best-of-five rules they follow)."""

from __future__ import annotations

import io
import itertools
import subprocess
import sys

import numpy as np
import pytest

from yahtzee_env.commands.cli import main
from yahtzee_env.game.dice import roll_index
from yahtzee_env.game.match import MATCH_WINS_NEEDED, match_is_decided, match_winners
from yahtzee_env.game.render import Style, color_enabled, render_table
from yahtzee_env.game.rules import BOX_NAMES, YAHTZEE_50, Box
from yahtzee_env.play.terminal import InputError, Player, TerminalGame, parse_box, parse_command
from yahtzee_env.policies.baselines import make_policy

SCORE_EVERY_BOX = [f"score {b}" for b in range(1, 14)] * 14  # each turn takes the first open one


def run_play(argv, lines, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = main(["play", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


class Script:
    """An input function: answers from ``lines`` first, then from ``fallback(game)``; records
    the game state at every prompt."""

    def __init__(self, lines=(), fallback=None):
        self.lines = list(lines)
        self.fallback = fallback
        self.game = None
        self.prompts = []
        self.states = []

    def __call__(self, prompt):
        game = self.game
        self.prompts.append(prompt)
        state = (game.roll, game.rolls_left, game.current, tuple(game.totals()))
        self.states.append((state, tuple(p.filled for p in game.players)))
        if self.lines:
            return self.lines.pop(0)
        if self.fallback is None:
            raise EOFError
        return self.fallback(game)


def first_legal_box(game):
    legal, _ = game.box_options()
    return f"score {int(np.flatnonzero(legal)[0]) + 1}"


def make_game(script, opponents=("greedy",), seed=0, **kwargs):
    players = [Player("Ada")] + [Player(o, make_policy(o, seed=1)) for o in opponents]
    out = io.StringIO()
    game = TerminalGame(players, seed=seed, input_fn=script, out=out, **kwargs)
    script.game = game.game
    return game, out


# ------------------------------------------------------------------ whole sessions via the CLI
def test_full_game_through_stdin(monkeypatch, capsys):
    code, out, err = run_play(
        ["--opponents", "greedy,random", "--name", "Ada", "--seed", "5"],
        SCORE_EVERY_BOX,
        monkeypatch,
        capsys,
    )
    assert code == 0 and err == ""
    assert "Traceback" not in out and "\x1b[" not in out  # a pipe: plain text
    assert out.count("--- Round 13/13: Ada ---") == 1
    assert "Ada scores" in out and "greedy scores" in out and "random rolls:" in out
    last = out.strip().splitlines()[-1]
    assert last.endswith(".") and ("wins with" in last or last.startswith("Draw"))
    assert "Game abandoned" not in out


def test_subprocess_pipe_and_eof():
    """A real pipe: the scripted input ends mid-game, which quits without a traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "yahtzee_env", "play", "--opponents", "greedy", "--seed", "1"],
        input="hold 1 2\nroll\nscore chance\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "re-rolls 3 dice" in proc.stdout and "scores" in proc.stdout
    assert proc.stdout.rstrip().endswith("Game abandoned.")


def test_quit_needs_confirmation(monkeypatch, capsys):
    code, out, _ = run_play(
        ["--opponents", "greedy", "--seed", "2", "--first", "1"],
        ["quit", "n", "card", "quit", "y"],
        monkeypatch,
        capsys,
    )
    assert code == 0
    assert "Not quitting." in out
    assert out.count("Really quit the game?") == 2
    assert out.rstrip().endswith("Game abandoned.")


def test_first_option_and_roll_for_first(monkeypatch, capsys):
    _, out, _ = run_play(
        ["--opponents", "greedy", "--seed", "2", "--first", "2"], [], monkeypatch, capsys
    )
    assert "=== New game: greedy starts ===" in out
    _, out, _ = run_play(["--opponents", "greedy", "--seed", "2"], [], monkeypatch, capsys)
    assert "rolls highest" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--opponents", "greedy,greedy,greedy,greedy"], "1 to 3"),
        (["--opponents", "greedy", "--first", "3"], "--first"),
        (["--opponents", "nobody"], "unknown policy"),
    ],
)
def test_bad_arguments(argv, message, monkeypatch, capsys):
    code, _, err = run_play(argv, [], monkeypatch, capsys)
    assert code == 2 and message in err


@pytest.mark.parametrize("seed", ["-1", "abc"])
def test_bad_seed_is_a_usage_error(seed, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_play(["--opponents", "greedy", "--seed", seed], [], monkeypatch, capsys)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert f"expected a non-negative integer, got '{seed}'" in err and "Traceback" not in err


def test_missing_level_is_explained(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("yahtzee_env.policies.models.LEVELS_DIR", tmp_path)  # an install without it
    code, _, err = run_play(["--opponents", "hard"], [], monkeypatch, capsys)
    assert code == 2
    assert "'hard' is not available" in err and "heuristic" in err
    assert "not installed yet" not in err  # the levels ship in yahtzee_env/policies/levels/


def test_match_through_stdin(monkeypatch, capsys):
    code, out, _ = run_play(
        ["--opponents", "greedy", "--seed", "9", "--match"],
        SCORE_EVERY_BOX * 5,
        monkeypatch,
        capsys,
    )
    assert code == 0
    games = out.count("=== Match game")
    assert 3 <= games <= 5
    assert out.count("Match after") == games
    assert "wins the match" in out or "match is drawn" in out


# ------------------------------------------------------------------ the terminal game
def test_adaptive_human_plays_to_the_end_with_holds():
    last = [""]

    def human(game):
        if game.rolls_left == 2 and not last[0].startswith("keep"):
            last[0] = "keep " + str(max(game.dice))  # hold the highest face, then roll
        elif game.rolls_left == 2:
            last[0] = "roll"
        elif game.rolls_left == 1:
            last[0] = "r"
        else:
            last[0] = first_legal_box(game)
        return last[0]

    script = Script(fallback=human)
    tg, out = make_game(script, opponents=("greedy", "random", "greedy"), seed=4)
    totals = tg.play_game(first=0)
    assert tg.game.over and totals == tg.game.totals()
    assert all(p.complete for p in tg.game.players)
    text = out.getvalue()
    assert "Ada keeps" in text and "holding" in text


def test_bad_inputs_are_rejected_and_change_nothing():
    lines = [
        "jump",  # unknown command
        "hold 7",  # position out of range
        "hold 0",
        "keep 9",  # not a face
        "score 14",  # no such box
        "score t",  # ambiguous
        "",  # empty
        "roll",
        "roll",
        "hold 1",  # no rolls left
        "roll 2",  # no rolls left
        "score chance",
    ]
    script = Script(lines)
    tg, out = make_game(script, seed=1)
    tg.game.reset(tg.rng, first=0)
    tg.human_turn(0)
    text = out.getvalue()
    for message in [
        "unknown command 'jump'",
        "there is no die 7",
        "there is no die 0",
        "dice faces are 1 to 6, not 9",
        "boxes are numbered 1 to 13, not 14",
        "'t' could be twos, threes, three_of_a_kind",
        "type a command",
        "no re-rolls left this turn",
    ]:
        assert message in text
    # States at the prompts: each rejected command left roll, rolls left and cards as they were.
    states = script.states
    assert len(set(states[:8])) == 1  # the 7 rejected commands and the first roll prompt
    assert states[8][0][1] == 1 and states[9][0][1] == 0
    assert len(set(states[9:])) == 1
    assert tg.game.players[0].scores[Box.CHANCE] is not None


def test_face_not_on_table_and_filled_box():
    script = Script(["keep 6", "score chance", "score chance", "score aces"])
    tg, out = make_game(script, seed=0)
    tg.game.reset(tg.rng, first=0)
    # Fix the dice so that no 6 is showing.
    tg.game.roll = roll_index([1, 2, 2, 3, 4])
    tg.game.players[0].scores[Box.CHANCE] = 20
    tg.game.players[0].filled |= 1 << Box.CHANCE
    tg.human_turn(0)
    text = out.getvalue()
    assert "there is no 6 on the table (dice: 1 2 2 3 4)" in text
    assert "box 'chance' is already filled (with 20)" in text
    assert text.count("already filled") == 2
    assert tg.game.players[0].scores[Box.ACES] == 1


def test_too_many_of_a_face():
    script = Script(["keep 2 2 2", "keep 22", "score 2"])
    tg, out = make_game(script, seed=0)
    tg.game.reset(tg.rng, first=0)
    tg.game.roll = roll_index([1, 2, 2, 3, 4])
    tg.human_turn(0)
    assert "only 2 2s on the table" in out.getvalue()
    assert "holding 2:2 3:2" in out.getvalue()


def test_joker_rule_forbids_a_box():
    script = Script(["score chance", "score fives"])
    tg, out = make_game(script, seed=0)
    tg.game.reset(tg.rng, first=0)
    card = tg.game.players[0]
    card.scores[Box.YAHTZEE] = 50
    card.filled |= 1 << Box.YAHTZEE
    card.yahtzee_state = YAHTZEE_50
    tg.game.roll = roll_index([5, 5, 5, 5, 5])
    tg.human_turn(0)
    text = out.getvalue()
    assert "the joker rule does not allow 'chance'" in text
    assert "Yahtzee bonus: +100" in text
    assert card.scores[Box.FIVES] == 25 and card.yahtzee_bonus == 100
    assert "+100 Yahtzee bonus" in text


def test_roll_positions_and_held_dice_follow_the_roll():
    script = Script(["hold 4 5", "roll", "card", "roll 1 2 3", "score chance"])
    tg, out = make_game(script, seed=3)
    tg.game.reset(tg.rng, first=0)
    tg.game.roll = roll_index([1, 2, 3, 6, 6])
    tg.human_turn(0)
    text = out.getvalue()
    assert "Ada keeps 6 6, re-rolls 3 dice" in text
    assert text.count("Ada keeps 6 6, re-rolls 3 dice") == 2


def test_all_dice_held_is_rejected():
    script = Script(["hold 12345", "roll", "score 13"])
    tg, out = make_game(script, seed=3)
    tg.game.reset(tg.rng, first=0)
    tg.human_turn(0)
    assert "all five dice are held" in out.getvalue()
    assert script.states[1] == script.states[2]


def test_eof_quits_quietly_and_help():
    script = Script(["help", "?"])
    tg, out = make_game(script)
    assert tg.run(first=0) == 0
    text = out.getvalue()
    assert text.count("Commands (dice positions") == 2
    assert text.rstrip().endswith("Game abandoned.")


def test_play_match_rules_and_standings():
    script = Script(fallback=first_legal_box)
    tg, out = make_game(script, seed=6)
    result = tg.play_match(first=1)
    text = out.getvalue()
    assert len(result.game_totals) == text.count("=== Match game")
    assert match_is_decided([list(t) for t in result.game_totals])
    assert "=== Match game 1: greedy starts ===" in text
    assert "=== Match game 2: Ada starts ===" in text
    assert text.count("Match after") == len(result.game_totals)


# ------------------------------------------------------------------ parsing and colour
@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("9", Box.FULL_HOUSE),
        ("full_house", Box.FULL_HOUSE),
        ("full house", Box.FULL_HOUSE),
        ("ful", Box.FULL_HOUSE),
        ("Full-House", Box.FULL_HOUSE),
        ("threes", Box.THREES),
        ("three_", Box.THREE_OF_A_KIND),
        ("3k", Box.THREE_OF_A_KIND),
        ("ch", Box.CHANCE),
        ("1", Box.ACES),
        ("13", Box.CHANCE),
    ],
)
def test_parse_box(text, box):
    assert parse_box(text.split()) == box


def test_parse_commands():
    assert parse_command("hold 1 3 5").values == (0, 2, 4)
    assert parse_command("h 135").values == (0, 2, 4)
    assert parse_command("keep 55").values == (5, 5)
    assert parse_command("r").verb == "roll" and parse_command("r").values == ()
    assert parse_command("roll 2,4").values == (1, 3)
    assert parse_command("hold none").verb == "release"
    assert parse_command("S 9").box == Box.FULL_HOUSE
    for bad in ["fly", "hold x", "score", "score 0", "help me", "score three"]:
        with pytest.raises(InputError):
            parse_command(bad)


def test_colour_only_for_terminals():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert color_enabled(Tty(), environ={})
    assert not color_enabled(Tty(), environ={"NO_COLOR": "1"})
    assert not color_enabled(io.StringIO(), environ={})
    assert Style(True).paint("x", "bold") == "\x1b[1mx\x1b[0m"
    assert Style(False).paint("x", "bold") == "x"
    script = Script(["score 1"])
    tg, out = make_game(script, style=Style(True))
    tg.game.reset(tg.rng, first=0)
    tg.human_turn(0)
    assert "\x1b[" in out.getvalue()


def test_render_table_shows_options_of_the_mover_only():
    script = Script()
    tg, _ = make_game(script, seed=0)
    tg.game.reset(tg.rng, first=0)
    tg.game.roll = roll_index([2, 2, 3, 3, 3])
    text = render_table(tg.game, tg.names)
    row = next(line for line in text.splitlines() if "full house" in line)
    assert row.split()[-2:] == ["(25)", "."]
    assert "(13)" in next(line for line in text.splitlines() if "chance" in line)


# ------------------------------------------------------------------ match rules (engine)
def test_best_of_five_ends_at_three_wins():
    games = [[250, 200], [180, 190], [300, 120], [220, 210]]
    assert not match_is_decided(games[:3])
    assert match_is_decided(games)
    result = match_winners(games)
    assert result.wins == (3, 1) and result.winners == (0,)
    assert MATCH_WINS_NEEDED == 3


def test_draws_count_for_nobody_and_points_break_ties():
    games = [[200, 200], [250, 150], [150, 251], [200, 200], [180, 180]]
    assert match_is_decided(games)
    result = match_winners(games)
    assert result.wins == (1, 1)
    assert result.points == (980, 981) and result.winners == (1,)
    level = match_winners([[200, 200], [250, 150], [150, 250], [200, 200], [180, 180]])
    assert level.winners == (0, 1)  # equal wins and points: the match is drawn


def test_match_outcome_messages():
    script = Script()
    tg, _ = make_game(script)
    assert "wins the match (3-1" in tg.describe_match(
        match_winners([[1, 0], [0, 1], [1, 0], [1, 0]])
    )
    tied = match_winners([[5, 5], [1, 0], [0, 1], [5, 5], [3, 9]])
    assert "on total points" in tg.describe_match(tied)
    drawn = match_winners([[5, 5]] * 5)
    assert "drawn" in tg.describe_match(drawn)


def test_box_names_numbered_in_table():
    script = Script()
    tg, _ = make_game(script)
    tg.game.reset(tg.rng, first=0)
    text = render_table(tg.game, tg.names)
    for number, name in zip(itertools.count(1), BOX_NAMES, strict=False):
        assert f"{number:>3} {name.replace('_', ' ')}" in text


# ------------------------------------------------------------------ hostile input (issue 8.10)
@pytest.mark.parametrize(
    "line",
    ["hold ²", "keep ²", "roll ①", "h ٣", "score ²", "score ①", "keep ５", "hold 1²"],
)
def test_non_ascii_digits_are_refused_not_crashed(line):
    with pytest.raises(InputError, match="digits"):
        parse_command(line)


@pytest.mark.parametrize("digits", ["1" * 5000, "0" * 5000, "9" * 40, "0" * 4999 + "7"])
def test_huge_box_numbers_are_refused(digits):
    if digits.lstrip("0") == "7":  # leading zeros do not make a number big
        assert parse_command(f"score {digits}").box == 6
        return
    with pytest.raises(InputError, match="numbered 1 to 13"):
        parse_command(f"score {digits}")


def test_hostile_lines_do_not_end_the_game():
    lines = ["hold ²", "keep ²", "roll ①", "score " + "1" * 5000, "score ²", "score chance"]
    script = Script(lines)
    tg, _ = make_game(script, seed=1)
    tg.game.reset(tg.rng, first=0)
    tg.human_turn(0)
    assert len(script.prompts) == len(lines)
    assert len(set(script.states[:-1])) == 1  # nothing changed until the box was scored
    assert tg.game.players[0].scores[Box.CHANCE] is not None


def test_an_unexpected_error_prints_one_line_and_the_prompt_returns(monkeypatch):
    script = Script(["card", "score chance"])
    tg, out = make_game(script, seed=1)
    tg.game.reset(tg.rng, first=0)
    calls = []

    def broken_show_position():
        calls.append(1)
        if len(calls) == 2:  # the first call shows the turn; the `card` command then fails
            raise ZeroDivisionError("boom")

    monkeypatch.setattr(tg, "show_position", broken_show_position)
    tg.human_turn(0)
    text = out.getvalue()
    assert text.count("ZeroDivisionError: boom") == 1
    assert len(script.prompts) == 2 and tg.game.players[0].scores[Box.CHANCE] is not None


def test_non_utf8_stdin_is_a_bad_command(monkeypatch, capsys):
    raw = io.TextIOWrapper(io.BytesIO(b"\xff\xfe\n" + b"q\ny\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", raw)
    assert main(["play", "--opponents", "greedy", "--seed", "1", "--first", "1"]) == 0
    out = capsys.readouterr().out
    assert "unknown command" in out and "Game abandoned." in out


def test_level_under_other_rules_plays_labelled(monkeypatch, capsys):
    """Issue 16: one resolver; a level trained for official rules plays a no-joker game,
    labelled, as it does at a web table (issue 8.15's "damaged files" stays gone)."""
    _, out, err = run_play(["--opponents", "easy", "--rules", "no-joker"], [], monkeypatch, capsys)
    assert "easy (trained for official rules)" in out
    assert "damaged" not in err and "damaged" not in out


# ------------------------------------------------------------------ one match loop (issue 9.5)
def test_match_state_rotates_the_start_and_stops_when_decided():
    from yahtzee_env.game.match import Match

    match = Match(num_players=3, first=1)
    starts = []
    while not match.decided:
        starts.append(match.next_start)
        match.record([100, 200, 150] if len(starts) % 2 else [300, 100, 100])
    assert starts == [1, 2, 0, 1, 2]  # five games: 3 wins for nobody before that
    assert match.standing.wins == (2, 3, 0) and match.standing.winners == (1,)
    with pytest.raises(ValueError, match="already decided"):
        match.record([1, 2, 3])
    with pytest.raises(ValueError, match="2 totals for 3"):
        Match(3).record([1, 2])


def test_library_and_terminal_matches_run_the_same_loop(monkeypatch):
    """`analysis.tournament.play_match` and `TerminalGame.play_match` both go through
    `game.match.run_match`,
    so the rotation and the decision are written once."""
    import yahtzee_env.analysis.tournament as match_module
    import yahtzee_env.play.terminal as terminal_module
    from yahtzee_env.game import match as engine

    calls = []

    def spy(play_game, num_players, first=0, on_game=None):
        calls.append((num_players, first))
        return engine.run_match(play_game, num_players, first, on_game)

    monkeypatch.setattr(match_module, "run_match", spy)
    monkeypatch.setattr(terminal_module, "run_match", spy)
    greedy = make_policy("greedy")
    library = match_module.play_match([greedy, greedy], rng=3, first=1)
    script = Script(fallback=first_legal_box)
    tg, out = make_game(script, seed=6)
    terminal = tg.play_match(first=1)
    assert calls == [(2, 1), (2, 1)]
    assert match_is_decided([list(t) for t in library.game_totals])
    assert len(terminal.game_totals) == out.getvalue().count("=== Match game")


def test_standing_counts_draws_by_top_seats():
    script = Script()
    tg, _ = make_game(script)
    standing = match_winners([[200, 200], [250, 150], [150, 150]])
    assert "draws 2" in tg.describe_standing(standing)
