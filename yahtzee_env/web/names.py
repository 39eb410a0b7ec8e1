"""What a player name may hold, character by character (`errors.clean_name` asks here).

A name is what the other players read, so it must look like what it is:

- Emoji sequences are names like any other: the zero-width joiner that builds a family or a
  profession emoji (U+200D), the variation selectors that pick the emoji or text form
  (U+FE00-FE0F, U+E0100-E01EF), the tag characters of subdivision flags (U+E0020-E007F),
  skin tones and regional indicators (ordinary symbols) are accepted; so is the zero-width
  non-joiner that Persian and Indic scripts need (U+200C).
- Bidirectional overrides, embeddings, isolates and marks (U+202A-202E, U+2066-2069,
  U+200E/200F, U+061C) are refused: they reorder what follows, so a name could pass for
  another or reverse the text beside it ("name_bidi").
- Zero-width spaces and other invisible characters (U+200B, U+2060-2064, U+FEFF, U+00AD,
  U+180E, U+3164, U+115F/1160, U+FFA0) are refused: two names that look the same would be
  different names ("name_invisible").
- Any other control or format character, and markup (``<``, ``>``), as before.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
INVISIBLE = frozenset(
    "\u200b\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u3164\u115f\u1160\uffa0"
)
ZWJ, ZWNJ = "\u200d", "\u200c"
CODES = ("name_markup", "name_bidi", "name_invisible", "name_control")  # the refusals' codes


def emoji_part(ch: str) -> bool:
    """A format character that belongs to an emoji sequence (or a script's joining)."""
    cp = ord(ch)
    return (
        ch in (ZWJ, ZWNJ)
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF  # variation selectors supplement
        or 0xE0020 <= cp <= 0xE007F  # tags (subdivision flags)
    )


def name_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` (whitespace already collapsed) is refused, as (message, code), or None."""
    if any(ch in "<>" for ch in name):
        return "name may not contain < or > (no markup in names)", "name_markup"
    if any(ch in BIDI_CONTROLS for ch in name):
        return (
            "name may not contain bidirectional-text controls (they reorder the text and "
            "disguise a name)",
            "name_bidi",
        )
    if any(ch in INVISIBLE for ch in name):
        return (
            "name may not contain zero-width spaces or other invisible characters",
            "name_invisible",
        )
    for ch in name:
        if ch.isprintable() or emoji_part(ch):
            continue
        return "name may not contain control characters", "name_control"
    if all(emoji_part(ch) or unicodedata.category(ch).startswith("M") for ch in name):
        return "name has no visible character", "name_invisible"
    return None


__all__ = ["BIDI_CONTROLS", "CODES", "INVISIBLE", "emoji_part", "name_problem"]
