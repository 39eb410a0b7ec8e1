"""Swiss pairings (issue 62): the rules of a Swiss tournament, as plain functions of its
entrants and its stored matches (`people.tournaments` stores and plays them).

Every entrant plays every round; there are ``ceil(log2(entrants))`` rounds (`swiss_rounds`).
A match won earns 1 point, a drawn match (both players won as many games and scored the
same total: `drawn`) ½ each, and a bye 1. The standings (`standings`) rank by points, then
by the tie-break (Buchholz: the sum of the points of the opponents met; a bye adds none),
then by the order the tournament's seed drew (`seed_order`), so every rank is decided and
the same on every server. Each round (`pair_round`) the highest-ranked entrant not yet
paired meets the next highest it has not met; a rematch is allowed only when no pairing of
the round avoids every one. With an odd number of entrants the lowest-ranked entrant that
has had no bye sits the round out with its bye. The winner is the top of the standings after
the last round.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from yahtzee_env.game.match import match_winners

DRAW = -1  # a Swiss match's ``winner_slot`` when it was drawn (½ point each)
WIN, TIE, BYE = 1.0, 0.5, 1.0  # points of a match won, drawn, and of a bye
SEARCH_STEPS = 200_000  # the most pairings tried before a rematch is allowed


def swiss_rounds(entrants: int) -> int:
    """The rounds of a Swiss tournament of ``entrants`` (one at least): ceil(log2)."""
    return max(1, (max(2, entrants) - 1).bit_length())


def seed_order(slots: Iterable[int], seed: int) -> list[int]:
    """The entrants' places shuffled by the tournament's ``seed``: round one's ranking and
    every later tie's last break."""
    order = sorted(slots)
    random.Random(seed).shuffle(order)
    return order


def drawn(games: list[list[int]]) -> bool:
    """Whether a finished match of ``games`` (each game's two totals) is a draw: both
    sides won it (`game.match.match_winners`) on the same total."""
    result = match_winners(games)
    return len(result.winners) == 2 and result.points[0] == result.points[1]


def points_of(matches: Sequence[dict[str, Any]]) -> dict[int, float]:
    """Each place's points from the finished ``matches`` (``a_slot``, ``b_slot``: None for
    a bye, ``winner_slot``: None while on, `DRAW` for a draw)."""
    points: dict[int, float] = {}
    for m in matches:
        a, b, won = m["a_slot"], m["b_slot"], m["winner_slot"]
        if won is None:
            continue
        if b is None:
            points[a] = points.get(a, 0.0) + BYE
        elif won == DRAW:
            points[a] = points.get(a, 0.0) + TIE
            points[b] = points.get(b, 0.0) + TIE
        else:
            points[won] = points.get(won, 0.0) + WIN
    return points


def standings(
    slots: Iterable[int], matches: Sequence[dict[str, Any]], seed: int
) -> list[dict[str, Any]]:
    """The ranking of the places ``slots`` after the finished ``matches``: best first, each
    ``{rank, slot, points, tiebreak, games}`` (``games``: the matches played, a bye none)."""
    order = seed_order(slots, seed)
    points = points_of(matches)
    met: dict[int, list[int]] = {s: [] for s in order}
    for m in matches:
        if m["winner_slot"] is not None and m["b_slot"] is not None:
            met[m["a_slot"]].append(m["b_slot"])
            met[m["b_slot"]].append(m["a_slot"])
    rows = [
        {
            "slot": s,
            "points": points.get(s, 0.0),
            "tiebreak": sum(points.get(o, 0.0) for o in met[s]),
            "games": len(met[s]),
        }
        for s in order
    ]
    place = {s: i for i, s in enumerate(order)}
    rows.sort(key=lambda r: (-r["points"], -r["tiebreak"], place[r["slot"]]))
    return [{"rank": i + 1, **r} for i, r in enumerate(rows)]


def pair_round(
    ranked: Sequence[int], met: set[frozenset[int]], had_bye: set[int]
) -> list[tuple[int, int | None]]:
    """The next round's pairs ``(a, b)`` of the places ``ranked`` (best first): ``met`` the
    pairs that already played, ``had_bye`` the places that had a bye. ``b`` None: a bye
    (the first pair, when the entrants are odd). No rematch unless none can be avoided."""
    ranked = list(ranked)
    if len(ranked) % 2:  # the bye: the lowest-ranked entrant without one, if it can be
        candidates = [s for s in reversed(ranked) if s not in had_bye] or ranked[::-1]
        for bye in candidates:
            rest = [s for s in ranked if s != bye]
            pairs = _pairs(rest, met)
            if pairs is not None:
                return [(bye, None), *pairs]
        bye = candidates[0]
        return [(bye, None), *_pairs_allowing_rematches([s for s in ranked if s != bye], met)]
    pairs = _pairs(ranked, met)
    return pairs if pairs is not None else _pairs_allowing_rematches(ranked, met)


def _pairs(ranked: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]] | None:
    """A pairing of ``ranked`` with no rematch (the highest first, each with the next
    highest it has not met, backtracking), or None when there is none (or the search is
    longer than `SEARCH_STEPS`)."""
    steps = [0]

    def search(left: list[int]) -> list[tuple[int, int]] | None:
        if not left:
            return []
        top, rest = left[0], left[1:]
        for i, other in enumerate(rest):
            steps[0] += 1
            if steps[0] > SEARCH_STEPS:
                return None
            if frozenset((top, other)) in met:
                continue
            tail = search(rest[:i] + rest[i + 1 :])
            if tail is not None:
                return [(top, other), *tail]
        return None

    return search(ranked)


def _pairs_allowing_rematches(ranked: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]]:
    """The highest first, each with the next highest it has not met, else the next highest."""
    left, pairs = list(ranked), []
    while left:
        top = left.pop(0)
        other = next((o for o in left if frozenset((top, o)) not in met), left[0])
        left.remove(other)
        pairs.append((top, other))
    return pairs


def next_pairs(
    slots: Iterable[int], matches: Sequence[dict[str, Any]], seed: int
) -> list[tuple[int, int | None]]:
    """The pairs of a Swiss tournament's next round, from its finished ``matches``."""
    ranked = [r["slot"] for r in standings(slots, matches, seed)]
    met = {frozenset((m["a_slot"], m["b_slot"])) for m in matches if m["b_slot"] is not None}
    had_bye = {m["a_slot"] for m in matches if m["b_slot"] is None}
    return pair_round(ranked, met, had_bye)


__all__ = [
    "DRAW",
    "drawn",
    "next_pairs",
    "pair_round",
    "points_of",
    "seed_order",
    "standings",
    "swiss_rounds",
]
