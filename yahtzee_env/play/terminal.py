"""Yahtzee in a terminal, for people: one human against one to three CPU players.

The logic of ``yahtzee play`` lives here and does its I/O through two injected objects, an
input function (``prompt -> line``, raising `EOFError` at the end of input) and an output
stream, so a whole session can be scripted and tested::

    from yahtzee_env.policies.baselines import make_policy
    from yahtzee_env.play.terminal import Player, TerminalGame

    players = [Player("Ada"), Player("heuristic", make_policy("heuristic"))]
    TerminalGame(players, seed=1).run()

What the human types (dice positions 1-5 count from the left of the sorted dice; boxes go by
name, unambiguous prefix or number 1-13) is listed in `HELP_TEXT`. Bad input gets a one-line
explanation and the prompt again, and changes nothing. What is drawn (the scorecards, the
dice, the colours) is `yahtzee_env.game.render`, shared with the envs' text renders.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import (
    BOX_ACTION_OFFSET,
    NUM_TURNS,
    Game,
    IllegalActionError,
    box_action,
    hold_action,
    roll_for_first_player,
    top_seats,
)
from yahtzee_env.game.match import MATCH_WINS_NEEDED, MatchResult, run_match
from yahtzee_env.game.render import PLAIN, Style, render_dice, render_table
from yahtzee_env.game.rules import BOX_NAMES, NUM_BOXES, RuleSet
from yahtzee_env.game.words import box_label, describe_reroll, format_dice, kept_faces, positions_of

InputFn = Callable[[str], str]

HELP_TEXT = """\
Commands (dice positions are 1-5 from the left; boxes by name, prefix or number 1-13):
  hold 1 3 5     hold dice 1, 3 and 5; the others will be re-rolled (also: h 135)
  keep 5 5       hold dice by face, here two 5s (also: keep 55)
  hold none      release every held die (also: release)
  roll, r        re-roll the dice that are not held
  roll 2 4       re-roll dice 2 and 4 now, keeping the others (also: r 24)
  score NAME     fill a box: score full_house, score 9, score ful (also: s 9)
  card           show the scorecards and dice again
  hint           ask the coach for the best moves (yahtzee play --coach)
  help, ?        this help
  quit, q        leave the game (asks first)
Held dice stay held after a roll until you release them. Open boxes show, in brackets,
what the dice would score there now."""

BOX_ALIASES = {
    "ones": 0,
    "3k": 6,
    "4k": 7,
    "fh": 8,
    "ss": 9,
    "ls": 10,
    "yatzy": 11,
}


# ------------------------------------------------------------------------------ parsing
class InputError(ValueError):
    """A command the game cannot carry out; the message is shown to the player."""


@dataclass(frozen=True)
class Command:
    """A parsed command. ``verb`` is one of hold, keep, release, roll, score, card, help,
    quit; ``values`` are 0-based dice positions (hold, roll) or faces (keep); ``box`` is the
    box to score."""

    verb: str
    values: tuple[int, ...] = ()
    box: int | None = None


_VERBS = {
    "hold": "hold",
    "h": "hold",
    "keep": "keep",
    "k": "keep",
    "release": "release",
    "roll": "roll",
    "r": "roll",
    "reroll": "roll",
    "score": "score",
    "s": "score",
    "card": "card",
    "show": "card",
    "c": "card",
    "help": "help",
    "?": "help",
    "hint": "hint",
    "quit": "quit",
    "q": "quit",
    "exit": "quit",
}


def is_ascii_digits(text: str) -> bool:
    """True for a non-empty run of ASCII ``0-9`` only. `str.isdigit` also accepts ``²``,
    ``①`` or Arabic-Indic digits, which `int` then refuses or reads as other numbers."""
    return bool(text) and text.isascii() and text.isdigit()


def _digits(tokens: Sequence[str], what: str) -> list[int]:
    text = "".join(tokens).replace(",", "")
    if not text:
        raise InputError(f"say which {what}, e.g. 1 3 5")
    if not is_ascii_digits(text):
        raise InputError(f"expected {what} as digits, e.g. 1 3 5, got {' '.join(tokens)!r}")
    return [ord(ch) - ord("0") for ch in text]


def parse_positions(tokens: Sequence[str]) -> tuple[int, ...]:
    """0-based dice positions from ``1 3 5``, ``135`` or ``1,3,5``."""
    positions = _digits(tokens, "dice positions")
    for p in positions:
        if not 1 <= p <= NUM_DICE:
            raise InputError(f"there is no die {p}: dice positions are 1 to {NUM_DICE}")
    return tuple(sorted({p - 1 for p in positions}))


def parse_faces(tokens: Sequence[str]) -> tuple[int, ...]:
    faces = _digits(tokens, "faces")
    for f in faces:
        if not 1 <= f <= 6:
            raise InputError(f"dice faces are 1 to 6, not {f}")
    return tuple(faces)


def parse_box(tokens: Sequence[str]) -> int:
    """A box (0-based) from its number 1-13, its name, an alias or an unambiguous prefix."""
    text = "_".join(tokens).lower().replace("-", "_")
    if not text:
        raise InputError("say which box, e.g. score chance or score 13")
    if is_ascii_digits(text):
        # No int() of a 5,000-digit string (Python refuses those): a box number has 2 digits.
        number = int(text[-3:]) if len(text.lstrip("0")) <= 2 else None
        if number is None or not 1 <= number <= NUM_BOXES:
            shown = text if len(text) <= 12 else f"{text[:8]}... ({len(text)} digits)"
            raise InputError(f"boxes are numbered 1 to {NUM_BOXES}, not {shown}")
        return number - 1
    if text.isdigit():  # digits, but not ASCII ones: ², ① ...
        raise InputError(f"type the box number with the digits 0-9, got {text!r}")
    if text in BOX_NAMES:
        return BOX_NAMES.index(text)
    if text in BOX_ALIASES:
        return BOX_ALIASES[text]
    matches = [b for b, name in enumerate(BOX_NAMES) if name.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(BOX_NAMES[b] for b in matches)
        raise InputError(f"{text!r} could be {names}: type more of the name")
    raise InputError(f"there is no box {text!r}; boxes: {', '.join(BOX_NAMES)}")


def parse_command(line: str) -> Command:
    """One line of input as a `Command` (raises `InputError` with the reason)."""
    tokens = line.strip().split()
    if not tokens:
        raise InputError("type a command (help lists them)")
    word, args = tokens[0].lower(), tokens[1:]
    verb = _VERBS.get(word)
    if verb is None:
        raise InputError(f"unknown command {tokens[0]!r} (type help for the commands)")
    if verb == "hold" and [a.lower() for a in args] in (["none"], ["nothing"]):
        return Command("release")
    if verb == "hold":
        return Command("hold", parse_positions(args))
    if verb == "keep":
        return Command("keep", parse_faces(args))
    if verb == "roll":
        return Command("roll", parse_positions(args) if args else ())
    if verb == "score":
        return Command("score", box=parse_box(args))
    if args:
        raise InputError(f"{word!r} takes no arguments")
    return Command(verb)


# ------------------------------------------------------------------------------ the game
class Quit(Exception):
    """The human left the game (confirmed quit, or end of input)."""


@dataclass
class Player:
    """A seat: a human when ``policy`` is None, else a CPU acting on its `Yahtzee-v0`
    observation with ``policy.act(observation, action_mask)``."""

    name: str
    policy: Any = None

    @property
    def is_human(self) -> bool:
        return self.policy is None


def line_reader(stdin: TextIO, out: TextIO) -> InputFn:
    """An input function over a text stream: writes the prompt to ``out``; when the input is
    not a terminal, echoes the line read so that a piped session reads as a transcript."""
    echo = not (hasattr(stdin, "isatty") and stdin.isatty())

    def read(prompt: str) -> str:
        out.write(prompt)
        out.flush()
        try:
            line = stdin.readline()
        except UnicodeDecodeError:  # bytes that are not text: a bad command, not a crash
            line = "\ufffd\n"
        if not line:
            out.write("\n")
            raise EOFError
        if echo:
            out.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\n")

    return read


class TerminalGame:
    """Plays games (or a best-of-five match) between the given players in a terminal.

    ``players`` are in seat order (2 to 4, any of them human). ``seed`` seeds the dice, the
    roll for first player and the CPU policies' randomness is theirs. ``input_fn(prompt)``
    returns one line and raises `EOFError` at the end of input; text goes to ``out``.
    """

    def __init__(
        self,
        players: Sequence[Player],
        rules: str | RuleSet | None = "official",
        seed: int | None = None,
        *,
        input_fn: InputFn | None = None,
        out: TextIO | None = None,
        style: Style = PLAIN,
    ) -> None:
        if not 2 <= len(players) <= 4:
            raise ValueError(f"a table has 2 to 4 players, got {len(players)}")
        self.players = list(players)
        self.names = [p.name for p in self.players]
        self.rules = RuleSet.from_spec(rules)
        self.rng = np.random.default_rng(seed)
        self.out = sys.stdout if out is None else out
        self.input_fn = input_fn if input_fn is not None else line_reader(sys.stdin, self.out)
        self.style = style
        self.game = Game(self.rules, num_players=len(self.players))
        self.held: set[int] = set()

    # --------------------------------------------------------------------- entry points
    def run(self, match: bool = False, first: int | None = None) -> int:
        """Play one game (or a match); ``first`` is the starting seat (0-based), None to roll
        the dice for it. Returns the exit status: 0, also when the human quits."""
        try:
            if match:
                self.play_match(first)
            else:
                self.play_game(first)
        except Quit:
            self.say("Game abandoned.")
        return 0

    def play_game(self, first: int | None = None, title: str = "") -> list[int]:
        """Play one game to the end; return the final totals in seat order."""
        if first is None:
            first = self.roll_for_first()
        self.game.reset(self.rng, first=first)
        self.say(
            self.style.paint(f"=== {title or 'New game'}: {self.names[first]} starts ===", "bold")
        )
        while not self.game.over:
            seat = self.game.current
            turn = self.game.players[seat].filled.bit_count() + 1
            self.say("")
            self.say(
                self.style.paint(f"--- Round {turn}/{NUM_TURNS}: {self.names[seat]} ---", "cyan")
            )
            if self.players[seat].is_human:
                self.human_turn(seat)
            else:
                self.cpu_turn(seat)
        totals = self.game.totals()
        self.say("")
        self.say(render_table(self.game, self.names, self.style, show_options=False))
        self.say(self.style.paint(self.describe_result(totals), "bold", "green"))
        return totals

    def play_match(self, first: int | None = None) -> MatchResult:
        """Best of five: first to three game wins; draws count for nobody; if five games
        leave no one with three wins, most wins and then total points decide
        (`match.match_winners`). The roll (or ``first``) picks who starts game 1; the start
        then passes to the next seat each game."""
        if first is None:
            first = self.roll_for_first()
        result = run_match(
            lambda start, number: self.play_game(start, title=f"Match game {number}"),
            len(self.players),
            first,
            on_game=lambda standing: self.say(self.describe_standing(standing)),
        )
        self.say(self.style.paint(self.describe_match(result), "bold", "green"))
        return result

    def roll_for_first(self) -> int:
        first = roll_for_first_player(len(self.players), self.rng)
        self.say(f"Each player rolls the dice for first turn: {self.names[first]} rolls highest.")
        return first

    # --------------------------------------------------------------------- turns
    def cpu_turn(self, seat: int) -> None:
        game, policy, name = self.game, self.players[seat].policy, self.names[seat]
        self.say(f"{name} rolls: {format_dice(game.dice)}")

        def apply(action: int) -> None:
            if action >= BOX_ACTION_OFFSET:
                self.fill(seat, action - BOX_ACTION_OFFSET)
            else:
                kept = kept_faces(game.dice, action)
                game.step(action)
                self.say(describe_reroll(name, kept, game.dice))

        while cpu_move(game, seat, policy, name, apply) < BOX_ACTION_OFFSET:
            pass

    def human_turn(self, seat: int) -> None:
        game = self.game
        self.held = set()
        self.show_position()
        while True:
            line = self.ask(f"{self.names[seat]} [roll {3 - game.rolls_left}/3]> ")
            try:
                command = parse_command(line)
                if self.apply(seat, command):
                    return
            except InputError as err:
                self.say(self.style.paint(f"  {err}", "red"))
            except Quit:
                raise
            except Exception as err:  # a bug must not cost the player the game
                # The engine changes nothing on a refused step, so the game goes on as it was.
                self.say(
                    self.style.paint(
                        f"  could not do that ({type(err).__name__}: {err}); try again", "red"
                    )
                )

    def apply(self, seat: int, command: Command) -> bool:
        """Carry out one command of the human; True when the turn is over."""
        game = self.game
        verb = command.verb
        if verb == "help":
            self.say(HELP_TEXT)
        elif verb == "card":
            self.show_position()
        elif verb == "hint":
            self.hint(seat)
        elif verb == "quit":
            answer = self.ask("Really quit the game? [y/N] ").strip().lower()
            if answer in ("y", "yes"):
                raise Quit
            self.say("  Not quitting.")
        elif verb == "score":
            self.fill(seat, command.box)
            return True
        elif game.rolls_left == 0:
            raise InputError("no re-rolls left this turn: score a box (e.g. score chance)")
        elif verb == "hold":
            self.held = set(command.values)
            self.say("  " + self.describe_held())
        elif verb == "keep":
            self.held = self.positions_of_faces(command.values)
            self.say("  " + self.describe_held())
        elif verb == "release":
            self.held = set()
            self.say("  " + self.describe_held())
        elif verb == "roll":
            held = self.held
            if command.values:
                held = set(range(NUM_DICE)) - set(command.values)
            if len(held) == NUM_DICE:
                raise InputError("all five dice are held: release some (hold none) or score a box")
            kept = [game.dice[i] for i in sorted(held)]
            game.step(hold_action(sorted(held)))
            self.held = self.positions_of_faces(kept)
            self.say(describe_reroll(self.names[seat], kept, game.dice))
            self.show_position()
        return False

    def fill(self, seat: int, box: int) -> None:
        """Score ``box`` for the mover (raises `InputError` with the engine's reason if the
        rules do not allow it; nothing changes then)."""
        card = self.game.players[seat]
        before_upper, before_yahtzee = card.upper_bonus, card.yahtzee_bonus
        try:
            gained = self.game.step(box_action(box))
        except IllegalActionError as err:
            raise InputError(str(err)) from None
        extras = []
        if card.yahtzee_bonus > before_yahtzee:
            extras.append(f"+{card.yahtzee_bonus - before_yahtzee} Yahtzee bonus")
        if card.upper_bonus > before_upper:
            extras.append(f"+{card.upper_bonus - before_upper} upper bonus")
        extra = f" and {' and '.join(extras)}" if extras else ""
        self.say(
            f"{self.names[seat]} scores {card.scores[box]} in {box_label(box)}{extra} "
            f"(+{gained}, total {card.total})"
        )

    def hint(self, seat: int) -> None:
        """The coach's advice; `yahtzee_env.play.terminal_coach.CoachedTerminalGame` gives it."""
        raise InputError("the coach is off: start the game with yahtzee play --coach")

    # --------------------------------------------------------------------- helpers
    def positions_of_faces(self, faces: Sequence[int]) -> set[int]:
        """Positions of the dice on the table showing ``faces`` (a multiset)."""
        try:
            return set(positions_of(self.game.dice, faces))
        except ValueError as err:
            raise InputError(str(err)) from None

    def describe_held(self) -> str:
        if not self.held:
            return "holding nothing: roll re-rolls all five dice"
        dice = self.game.dice
        kept = " ".join(f"{i + 1}:{dice[i]}" for i in sorted(self.held))
        return f"holding {kept}; roll re-rolls the other {NUM_DICE - len(self.held)}"

    def describe_result(self, totals: Sequence[int]) -> str:
        top = top_seats(totals)
        best = totals[top[0]]
        others = ", ".join(f"{self.names[s]} {t}" for s, t in enumerate(totals) if s not in top)
        rest = f" ({others})" if others else ""
        if len(top) == 1:
            return f"{self.names[top[0]]} wins with {best} points{rest}."
        tied = " and ".join(self.names[s] for s in top)
        return f"Draw: {tied} tie on {best} points{rest}."

    def describe_standing(self, result: MatchResult) -> str:
        draws = sum(1 for totals in result.game_totals if len(top_seats(totals)) > 1)
        wins = ", ".join(f"{n} {w}" for n, w in zip(self.names, result.wins, strict=True))
        return (
            f"Match after {len(result.game_totals)} game(s): wins {wins}; draws {draws} "
            f"(first to {MATCH_WINS_NEEDED} wins)."
        )

    def describe_match(self, result: MatchResult) -> str:
        names = [self.names[s] for s in result.winners]
        wins = "-".join(str(w) for w in result.wins)
        if len(names) > 1:
            return (
                f"The match is drawn between {' and '.join(names)}: equal wins ({wins}) and "
                f"equal points ({result.points[result.winners[0]]})."
            )
        winner = result.winners[0]
        if result.wins[winner] >= MATCH_WINS_NEEDED:
            return f"{names[0]} wins the match ({wins} in games)."
        points = ", ".join(f"{n} {p}" for n, p in zip(self.names, result.points, strict=True))
        return (
            f"{names[0]} wins the match on total points after {len(result.game_totals)} games "
            f"(games {wins}; points {points})."
        )

    def show_position(self) -> None:
        game = self.game
        self.say(render_table(game, self.names, self.style))
        self.say(render_dice(game.dice, self.held, game.rolls_left, self.style))

    def say(self, text: str) -> None:
        self.out.write(text + "\n")

    def ask(self, prompt: str) -> str:
        try:
            return self.input_fn(prompt)
        except EOFError:
            raise Quit from None


__all__ = [
    "HELP_TEXT",
    "Command",
    "InputError",
    "Player",
    "Quit",
    "TerminalGame",
    "line_reader",
    "parse_box",
    "parse_command",
]
