"""The words about dice and boxes, in every language the game speaks: the one writer of
dice lists, box labels, held positions and the sentences that narrate a move.

The terminal, the web table's narration, the coach and the evaluation tables all take their
wording from here; the browser page has its own message catalogues (`web/static/i18n/`) with
the same box names, held equal by a test. Languages are keys of `BOX_LABELS` (``"en"``,
``"it"``: the seed's Italian names, "Yatzy" rather than Hasbro's "Yahtzee").
"""

from __future__ import annotations

from collections.abc import Sequence

from yahtzee_env.game.dice import NUM_DICE
from yahtzee_env.game.engine import BOX_ACTION_OFFSET
from yahtzee_env.game.rules import BOX_NAMES

LANGUAGES: tuple[str, ...] = ("en", "it")

BOX_LABELS: dict[str, tuple[str, ...]] = {
    "en": tuple(name.replace("_", " ") for name in BOX_NAMES),
    "it": (
        "Uno",
        "Due",
        "Tre",
        "Quattro",
        "Cinque",
        "Sei",
        "Tris",
        "Poker",
        "Full",
        "Scala corta",
        "Scala lunga",
        "Yatzy",
        "Chance",
    ),
}

_SENTENCES: dict[str, dict[str, str]] = {
    "en": {
        "reroll_all": "{name} re-rolls all five dice: {dice}",
        "keep_all": "{name} keeps all five dice and spends a roll: {dice}",
        "keep_one": "{name} keeps {kept}, re-rolls 1 die: {dice}",
        "keep_some": "{name} keeps {kept}, re-rolls {n} dice: {dice}",
        "score": "{name} scores {points} in {box}",
        "score_bonus": "{name} scores {points} in {box} (+{bonus} bonus)",
        "move_box": "score {box}",
        "move_reroll_all": "re-roll all five",
        "move_keep_all": "keep all five (spend a roll)",
        "move_keep": "keep {kept}, re-roll {n}",
    },
    "it": {
        "reroll_all": "{name} ritira tutti e cinque i dadi: {dice}",
        "keep_all": "{name} tiene tutti e cinque i dadi e spende un tiro: {dice}",
        "keep_one": "{name} tiene {kept}, ritira 1 dado: {dice}",
        "keep_some": "{name} tiene {kept}, ritira {n} dadi: {dice}",
        "score": "{name} segna {points} in {box}",
        "score_bonus": "{name} segna {points} in {box} (+{bonus} di bonus)",
        "move_box": "segna {box}",
        "move_reroll_all": "ritira tutti e cinque",
        "move_keep_all": "tieni tutti e cinque (spendi un tiro)",
        "move_keep": "tieni {kept}, ritira {n}",
    },
}


def _lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
    return lang


def format_dice(dice: Sequence[int]) -> str:
    """``2 5 5 5 6``: dice faces as the player reads them."""
    return " ".join(str(int(d)) for d in dice)


def box_label(box: int, lang: str = "en") -> str:
    """The name a player reads for box ``box`` (``"full house"``; ``"Full"`` in Italian)."""
    return BOX_LABELS[_lang(lang)][box]


def kept_faces(dice: Sequence[int], hold: int) -> list[int]:
    """The faces a hold action keeps: bit ``i`` of ``hold`` keeps the die at position ``i``."""
    return [int(d) for i, d in enumerate(dice) if hold >> i & 1]


def positions_of(dice: Sequence[int], faces: Sequence[int]) -> list[int]:
    """Sorted positions in ``dice`` of the multiset ``faces`` (where kept dice lie after a roll
    re-sorts the dice, so that they still show as held). Raises ValueError naming the first
    face that is not on the table."""
    free = list(range(len(dice)))
    out = []
    for face in faces:
        spot = next((i for i in free if dice[i] == face), None)
        if spot is None:
            have = sum(1 for d in dice if d == face)
            raise ValueError(
                f"there is no {face} on the table (dice: {format_dice(dice)})"
                if have == 0
                else f"only {have} {face}{'s' if have > 1 else ''} on the table "
                f"(dice: {format_dice(dice)})"
            )
        free.remove(spot)
        out.append(spot)
    return sorted(out)


def describe_reroll(name: str, kept: Sequence[int], dice: Sequence[int], lang: str = "en") -> str:
    """A re-roll told as it happened: ``hard keeps 5 5 5, re-rolls 2 dice: 2 5 5 5 6``.
    ``kept`` are the faces held, ``dice`` the dice after the roll."""
    said = _SENTENCES[_lang(lang)]
    n = NUM_DICE - len(kept)
    if n == NUM_DICE:
        key = "reroll_all"
    else:
        key = "keep_all" if n == 0 else "keep_one" if n == 1 else "keep_some"
    return said[key].format(name=name, kept=format_dice(kept), n=n, dice=format_dice(dice))


def describe_score(name: str, box: int, points: int, bonus: int = 0, lang: str = "en") -> str:
    """A fill told as it happened: ``hard scores 25 in full house (+35 bonus)``."""
    said = _SENTENCES[_lang(lang)]
    key = "score_bonus" if bonus else "score"
    return said[key].format(name=name, points=points, box=box_label(box, lang), bonus=bonus)


def describe_move(dice: Sequence[int], action: int, lang: str = "en") -> str:
    """An action as advice: ``keep 5 5 5, re-roll 2`` / ``re-roll all five`` /
    ``score full house`` (action ids of `yahtzee_env.game.engine`)."""
    said = _SENTENCES[_lang(lang)]
    if action >= BOX_ACTION_OFFSET:
        return said["move_box"].format(box=box_label(action - BOX_ACTION_OFFSET, lang))
    kept = kept_faces(dice, action)
    if not kept:
        return said["move_reroll_all"]
    if len(kept) == NUM_DICE:
        return said["move_keep_all"]
    return said["move_keep"].format(kept=format_dice(kept), n=NUM_DICE - len(kept))


__all__ = [
    "BOX_LABELS",
    "LANGUAGES",
    "box_label",
    "describe_move",
    "describe_reroll",
    "describe_score",
    "format_dice",
    "kept_faces",
    "positions_of",
]
