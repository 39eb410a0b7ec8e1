"""Achievements (issue 62): a dozen Yatzy feats that reward good play, not grinding, each
computed from the games stored (nothing is counted on the side, so nothing a client sends
can earn one) and shown with the date of the game that first earned it.

Which games count: those the server dealt (``results.offline`` 0: a game played in the page
was dealt by the page, so it earns nothing, as it counts nowhere but its own rows of My
statistics, `stats`) and that the player played alone (``results.assisted`` 0: no coach, no
move made by the computer for the seat; NULL, a result stored before the column, counts
neither). A rated game is one `ratings` rated (so a player's seats against each other,
which it never rates, earn no win against people).

=================  ===========================================================
id                 earned by
=================  ===========================================================
yatzy              a Yatzy in a game
two_yatzys         two Yatzys in one game
upper_bonus        the upper section's bonus
bonus_and_yatzy    the upper bonus and a Yatzy in the same game
score_250          250 points or more in a game
score_300          300 points or more in a game
clean_game         a game with no error in its review (``results.errors`` 0)
beat_LEVEL         a win at a table with computer level LEVEL (`BEATEN_LEVELS`)
beat_people        a win in a rated game against people only
three_in_a_row     three wins in a row (among the server's games: one with help ends it)
rating_1100        a rating of 1100 or more after a rated game
tournament_won     a tournament won, knockout or Swiss (the stored tournaments)
=================  ===========================================================

A clean game is one whose review (`tables.review`, the solver's grade of every decision)
labels none of the player's decisions an error (a ``mistake`` or a ``blunder``:
`review.ERROR_LABELS`, more than 3 expected points given up). The server grades each
unaided game once after it ends and keeps the count with the result (``results.errors``;
NULL, not graded, earns nothing), so a profile grades nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

# the computer levels with an achievement for beating them, easiest first (the shipped
# levels; the strongest calibrated one, expert, is the last)
BEATEN_LEVELS = ("easy", "medium", "hard", "expert")
RATING_GOAL = 1100  # shown rating (`ratings.shown`)
STREAK = 3

Row = dict[str, Any]


def counts(row: Row) -> bool:
    """Whether a result row can earn achievements: dealt by the server, played unaided."""
    return not row.get("offline") and row.get("assisted") == 0


def _game_rules(levels: Iterable[str]) -> list[tuple[str, Callable[[Row], bool]]]:
    """The achievements one game earns on its own: ``(id, test of its result row)``."""
    rules: list[tuple[str, Callable[[Row], bool]]] = [
        ("yatzy", lambda r: r["yahtzees"] >= 1),
        ("two_yatzys", lambda r: r["yahtzees"] >= 2),
        ("upper_bonus", lambda r: bool(r["upper_bonus"])),
        ("bonus_and_yatzy", lambda r: bool(r["upper_bonus"]) and r["yahtzees"] >= 1),
        ("score_250", lambda r: r["score"] >= 250),
        ("score_300", lambda r: r["score"] >= 300),
        ("clean_game", lambda r: r.get("errors") == 0),
    ]
    for level in (lv for lv in BEATEN_LEVELS if lv in set(levels)):
        rules.append(
            (
                f"beat_{level}",
                lambda r, lv=level: r["outcome"] == "win" and lv in r["opponents"].split("+"),
            )
        )
    return rules


def achievement_ids(levels: Sequence[str]) -> list[str]:
    """Every achievement's id, in the order shown."""
    games = [key for key, _ in _game_rules(levels)]
    return [*games, "beat_people", "three_in_a_row", "rating_1100", "tournament_won"]


def earned(
    rows: Sequence[Row],
    rated: Sequence[Row],
    levels: Sequence[str],
    shown: Callable[[float], int],
    won: Sequence[Row] = (),
) -> list[dict[str, Any]]:
    """Every achievement (`achievement_ids`'s order): ``{id, earned, game_id}``, ``earned``
    the time of the first game that earned it (None: not yet). ``rows``: the player's
    results, oldest first (`storage.players.PlayerStore.results_of`); ``rated``: the
    player's rated games, oldest first (``code``, ``idx``, ``mu_after``, ``finished``);
    ``shown``: a ``mu`` as the page shows it; ``won``: the tournaments the player won,
    first won first (`storage.tournaments.TournamentStore.wins_of`: ``finished``)."""
    first: dict[str, Row] = {}

    def mark(key: str, row: Row) -> None:
        first.setdefault(key, row)

    rated_keys = {(g["code"], g["idx"]) for g in rated}
    rules = _game_rules(levels)
    streak = 0
    for r in (r for r in rows if not r.get("offline")):  # the server's games, in order
        # a game with help ends a streak as a loss does (leaving a game that goes badly,
        # which hands the seat to the computer, must not keep a streak alive)
        streak = streak + 1 if counts(r) and r["outcome"] == "win" else 0
        if not counts(r):
            continue
        if streak >= STREAK:
            mark("three_in_a_row", r)
        for key, test in rules:
            if key not in first and test(r):
                mark(key, r)
        people_win = r["opponents"] == "humans" and r["outcome"] == "win"
        if people_win and (r["code"], r["idx"]) in rated_keys:
            mark("beat_people", r)
    for g in rated:
        if shown(g["mu_after"]) >= RATING_GOAL:
            mark("rating_1100", g)
            break
    out = []
    for key in achievement_ids(levels):
        row = first.get(key)
        out.append(
            {
                "id": key,
                "earned": None if row is None else row["finished"],
                "game_id": None if row is None else f"{row['code']}-{row['idx']}",
            }
        )
    if won:  # a tournament, not a game: its date, and no game to review
        out[-1].update(earned=won[0]["finished"])
    return out


__all__ = ["BEATEN_LEVELS", "RATING_GOAL", "achievement_ids", "counts", "earned"]
