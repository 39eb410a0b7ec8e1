"""What the games look like: text (the terminal game and the envs' ``"ansi"``/``"human"``
renders) and images (the envs' ``"rgb_array"`` render), numpy only.

- `render_table`: every player's scorecard side by side (the terminal game, `YahtzeeVs-v0`,
  PettingZoo `yahtzee_v0`); `render_dice`: the dice with their positions and holds.
- `CardView`: one solitaire card and the dice on the table, the input of `render_card_text`
  (`Yahtzee-v0`'s text) and `render_card_rgb` (its image); `Yahtzee-v0` and its vector env
  (first game) build it from their state.

`render_card_rgb` draws, on a green table (`RGB_SHAPE` = 352 x 256 pixels, uint8): the five
dice with their pips; one yellow mark per re-roll left; then the 13 boxes in `BOX_NAMES`
order, a row each (a small die showing the face for the six upper boxes, the box number 7..13
for the others), with the points in white once filled, what the dice would score there now in
yellow for a box the rules allow now, and a grey dash for any other open box; then the upper
total (green once the bonus is earned), the Yahtzee bonus and the total. Digits come from a
3x5 bitmap font, so no font or imaging library is needed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TextIO

import numpy as np

from yahtzee_env.game.engine import NUM_TURNS, Game
from yahtzee_env.game.rules import BOX_NAMES, NUM_BOXES, NUM_UPPER
from yahtzee_env.game.words import box_label, format_dice


# ------------------------------------------------------------------------------ colour
class Style:
    """ANSI styling, or plain text when ``color`` is False (every method returns its input)."""

    CODES: ClassVar[dict[str, str]] = {
        "bold": "1",
        "dim": "2",
        "red": "31",
        "green": "32",
        "yellow": "33",
        "cyan": "36",
    }

    def __init__(self, color: bool = False) -> None:
        self.color = color

    def paint(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(self.CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


PLAIN = Style(False)


def color_enabled(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """ANSI colour only for a terminal, and not when ``NO_COLOR`` is set (https://no-color.org)."""
    environ = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not environ.get("NO_COLOR")


# ------------------------------------------------------------------------------ rendering
def render_table(
    game: Game,
    names: Sequence[str],
    style: Style = PLAIN,
    show_options: bool = True,
) -> str:
    """Every player's scorecard side by side. While the game runs, the mover's column is
    marked and (with ``show_options``) each of its open boxes that the rules allow now shows
    in brackets what the dice on the table would score there (joker rules applied; the
    Yahtzee bonus, earned wherever the dice go, is noted below the table)."""
    if not game.players:
        return "(no game yet)"
    mover = None if game.over else game.current
    legal, points = game.box_options() if mover is not None else (None, None)
    width = max(7, *(len(n) + 2 for n in names))
    label_width = 20
    header = " " * (4 + label_width)
    for seat, name in enumerate(names):
        cell = f"{name:>{width}}"
        header += style.paint(cell, "bold", "cyan") if seat == mover else cell
    lines = [header]

    def cell_for(seat: int, box: int) -> str:
        score = game.players[seat].scores[box]
        if score is not None:
            return f"{score:>{width}}"
        if show_options and seat == mover and legal[box]:
            return style.paint(f"{'(' + str(int(points[box])) + ')':>{width}}", "dim")
        return f"{'.':>{width}}"

    def summary(label: str, values: list[int | str], *styles: str) -> None:
        row = f"    {label:<{label_width}}" + "".join(f"{v:>{width}}" for v in values)
        lines.append(style.paint(row, *styles))

    threshold = game.rules.upper_bonus_threshold
    cards = game.players
    for box in range(NUM_BOXES):
        row = f"{box + 1:>3} {box_label(box):<{label_width}}"
        row += "".join(cell_for(seat, box) for seat in range(len(cards)))
        lines.append(row)
        if box == NUM_UPPER - 1:
            summary(f"upper total (/{threshold})", [c.upper_total for c in cards])
            summary("upper bonus", [c.upper_bonus for c in cards])
    summary("yahtzee bonus", [c.yahtzee_bonus for c in cards])
    summary("TOTAL", [c.total for c in cards], "bold")
    if mover is not None and show_options:
        card = cards[mover]
        bonus = card.rules.tables.yahtzee_bonus(game.roll, card.yahtzee_state)
        if bonus:
            lines.append(
                style.paint(f"    Yahtzee bonus: +{bonus} wherever these dice go", "green")
            )
        lines.append(
            f"    dice {format_dice(game.dice)}, roll {3 - game.rolls_left} of 3, "
            f"{names[mover]} to move"
        )
    return "\n".join(lines)


def render_dice(dice: Sequence[int], held: set[int], rolls_left: int, style: Style = PLAIN) -> str:
    """The dice with their positions 1-5 and which are held, and the rolls left."""
    positions = "  position " + "".join(f"{i + 1:^6}" for i in range(len(dice)))
    faces = "  dice     "
    marks = "           "
    for i, d in enumerate(dice):
        die = f"[{d}]"
        faces += style.paint(f"{die:^6}", "bold", "yellow") if i in held else f"{die:^6}"
        marks += f"{'held' if i in held else '':^6}"
    roll_no = 3 - rolls_left
    rolls = f"  roll {roll_no} of 3: " + (
        f"{rolls_left} re-roll{'s' if rolls_left != 1 else ''} left"
        if rolls_left
        else "no re-rolls left, score a box"
    )
    return "\n".join([positions, faces, marks.rstrip(), rolls])


# ------------------------------------------------------------------------------ one card
@dataclass(frozen=True)
class CardView:
    """One solitaire card and the dice on the table: what `render_card_text` and
    `render_card_rgb` draw. ``options`` is ``(legal bool[13], points[13])`` for the dice on
    the table, or None once the game is over; ``scores[b]`` is None (or negative) while open."""

    rules_name: str
    threshold: int
    dice: tuple[int, ...]
    rolls_left: int
    scores: tuple[int | None, ...]
    upper_total: int
    upper_bonus: int
    yahtzee_bonus: int
    total: int
    over: bool
    options: tuple[np.ndarray, np.ndarray] | None

    @classmethod
    def of_game(cls, game: Game, seat: int = 0) -> CardView:
        card = game.players[seat]
        return cls(
            rules_name=game.rules.name,
            threshold=game.rules.upper_bonus_threshold,
            dice=tuple(game.dice),
            rolls_left=game.rolls_left,
            scores=tuple(card.scores),
            upper_total=card.upper_total,
            upper_bonus=card.upper_bonus,
            yahtzee_bonus=card.yahtzee_bonus,
            total=card.total,
            over=game.over,
            options=None if game.over else game.box_options(),
        )

    def score(self, box: int) -> int | None:
        value = self.scores[box]
        return None if value is None or value < 0 else int(value)


def render_card_text(view: CardView | None) -> str:
    """`Yahtzee-v0`'s ``"ansi"`` render: status, dice, the 13 boxes (open boxes the rules
    allow now show ``(+points)``), upper total and bonus, Yahtzee bonus, total."""
    if view is None:
        return "Yahtzee: call reset() to start a game"
    filled = sum(view.score(b) is not None for b in range(NUM_BOXES))
    turn = min(filled + 1, NUM_TURNS)
    status = "game over" if view.over else f"turn {turn}/{NUM_TURNS}, rolls left {view.rolls_left}"
    lines = [
        f"Yahtzee ({view.rules_name}): {status}",
        "dice: " + " ".join(f"[{d}]" for d in view.dice),
    ]
    legal, points = (None, None) if view.options is None else view.options
    for box, name in enumerate(BOX_NAMES):
        score = view.score(box)
        if score is not None:
            cell = f"{score:>4}"
        elif legal is not None and legal[box]:
            cell = f"   . (+{int(points[box])})"
        else:
            cell = "   ."
        lines.append(f"  {name:<16}{cell}")
        if box == NUM_UPPER - 1:
            lines.append(
                f"  {'upper total':<16}{view.upper_total:>4} / {view.threshold}"
                f"  bonus {view.upper_bonus}"
            )
    lines.append(f"  {'yahtzee bonus':<16}{view.yahtzee_bonus:>4}")
    lines.append(f"  {'total':<16}{view.total:>4}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ images
RGB_SHAPE = (352, 256, 3)  # height, width, channels (both sides even, as video codecs want)

_FONT = {  # 3x5 bitmaps, rows top to bottom
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    "-": ("000", "000", "111", "000", "000"),
    "+": ("000", "010", "111", "010", "000"),
}
_GLYPHS = {ch: np.array([[c == "1" for c in row] for row in rows]) for ch, rows in _FONT.items()}
_PIPS = {  # pip centres on a 3x3 grid (row, column), per face
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (0, 2), (2, 0), (2, 2)),
    5: ((0, 0), (0, 2), (1, 1), (2, 0), (2, 2)),
    6: ((0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)),
}
_TABLE = (24, 96, 56)
_WHITE = (245, 245, 240)
_BLACK = (20, 20, 20)
_YELLOW = (250, 210, 60)
_GREY = (120, 150, 130)
_GREEN = (120, 230, 120)
_ROW = 15  # pixels per scorecard row
_CARD_TOP = 84


def _text(img: np.ndarray, y: int, x: int, text: str, color: tuple[int, int, int]) -> None:
    """Digits and ``+-`` at (y, x), 2x scaled (6 x 10 pixels a character, 8 apart)."""
    for i, ch in enumerate(text):
        glyph = np.kron(_GLYPHS[ch], np.ones((2, 2), dtype=bool))
        img[y : y + 10, x + 8 * i : x + 8 * i + 6][glyph] = color


def _die(img: np.ndarray, y: int, x: int, size: int, face: int) -> None:
    img[y : y + size, x : x + size] = _WHITE
    step, pip = size // 4, max(size // 7, 2)
    for r, c in _PIPS[face]:
        cy, cx = y + step * (r + 1), x + step * (c + 1)
        img[cy - pip // 2 : cy - pip // 2 + pip, cx - pip // 2 : cx - pip // 2 + pip] = _BLACK


def render_card_rgb(view: CardView | None) -> np.ndarray:
    """`Yahtzee-v0`'s ``"rgb_array"`` render: uint8 ``RGB_SHAPE`` (layout in the module doc)."""
    img = np.empty(RGB_SHAPE, dtype=np.uint8)
    img[...] = _TABLE
    if view is None:
        return img
    for i, face in enumerate(view.dice):
        _die(img, 12, 16 + 48 * i, 40, int(face))
    for r in range(view.rolls_left):
        img[60:68, 16 + 12 * r : 24 + 12 * r] = _YELLOW
    legal, points = (None, None) if view.options is None else view.options
    right = RGB_SHAPE[1] - 16

    def value(y: int, text: str, color: tuple[int, int, int]) -> None:
        _text(img, y, right - 8 * len(text) + 2, text, color)

    y = _CARD_TOP
    for box in range(NUM_BOXES):
        if box < NUM_UPPER:
            _die(img, y, 16, 12, box + 1)
        else:
            _text(img, y + 1, 16, str(box + 1), _GREY)
        score = view.score(box)
        if score is not None:
            value(y + 1, str(score), _WHITE)
        elif legal is not None and legal[box]:
            value(y + 1, str(int(points[box])), _YELLOW)
        else:
            value(y + 1, "-", _GREY)
        y += _ROW
        if box == NUM_UPPER - 1:
            img[y : y + 1, 16:right] = _GREY
            y += 3
            earned = view.upper_total >= view.threshold
            _text(img, y + 1, 16, "+" if earned else "-", _GREEN if earned else _GREY)
            value(y + 1, str(view.upper_total), _GREEN if earned else _WHITE)
            y += _ROW
            img[y : y + 1, 16:right] = _GREY
            y += 3
    img[y : y + 1, 16:right] = _GREY
    y += 3
    value(y + 1, str(view.yahtzee_bonus), _WHITE)
    _text(img, y + 1, 16, "+", _YELLOW)
    y += _ROW
    value(y + 1, str(view.total), _YELLOW)
    img[y + 12 : y + 14, right - 48 : right] = _YELLOW
    return img


__all__ = [
    "PLAIN",
    "RGB_SHAPE",
    "CardView",
    "Style",
    "color_enabled",
    "render_card_rgb",
    "render_card_text",
    "render_dice",
    "render_table",
]
