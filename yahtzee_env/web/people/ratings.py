"""Ratings of accounts for games of 2-4 seats: openskill's Plackett-Luce model (issue 32).

Each account has openskill's ``mu`` and ``sigma`` (a new one: 25 and 25/3); the page shows
``round(SCALE * mu)`` (so a new account is at 1000) and marks it provisional for its first
`PROVISIONAL_GAMES` games. The computer levels take part at fixed ratings, calibrated from
the ladder's games against each other (`cpu_ratings.json`, written by
``experiments/calibrate_ratings.py`` from the committed ``results/versus-2p-*.json``): a game
against them moves the account's rating and never theirs.

Which games are rated (`Ratings.game_over`, called by `tables.Tables` when a game ends,
inside the transaction that stores its last moves, so a game is rated once or not at all):

- the seats of accounts and of CPU levels take part; a guest's seat does not (guests are not
  rated) and a coach's table is not rated at all (its hints would be in the rating);
- seats of one account, or of one browser (the hashed ``yz_device`` cookie the seat was taken
  with, ``seat_devices``), never rate each other: such seats are left out;
- abandoning a rated game counts as a loss: a player who leaves (`Ratings.left`, called by
  `tables.Tables.leave`) is rated at once, last against every other seat, and the game's
  end rates the others without them; a seat that the computer plays at the game's end (its
  player timed out and did not come back, or the host handed it over) is ranked last;
- a game is rated when at least one account and two seats in all take part, and every CPU
  level at the table has a calibrated rating. ``rated_games`` records it (one row per
  account), so that a replay or a second process never rates it twice.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from yahtzee_env.web.storage import Storage
from yahtzee_env.web.storage.ratings import RatedGame

SCALE = 40.0  # shown rating = SCALE * mu: openskill's new player (mu 25) shows 1000
PROVISIONAL_GAMES = 10  # an account is provisional for its first games
LEADERBOARD_SIZE = 20
CPU_RATINGS = Path(__file__).with_name("cpu_ratings.json")


@lru_cache(maxsize=1)
def model():
    """openskill's Plackett-Luce model (imported on first use)."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


@lru_cache(maxsize=1)
def cpu_ratings() -> dict[str, dict[str, float]]:
    """The CPU levels' fixed ``{level: {mu, sigma}}`` (`CPU_RATINGS`)."""
    try:
        data = json.loads(CPU_RATINGS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {
        k: {"mu": float(v["mu"]), "sigma": float(v["sigma"])} for k, v in data["levels"].items()
    }


def shown(mu: float) -> int:
    return round(SCALE * mu)


def view(row: dict[str, Any] | None) -> dict[str, Any]:
    """An account's rating as the page shows it (a new account: the model's start)."""
    if row is None:
        m = model()
        row = {"mu": m.mu, "sigma": m.sigma, "games": 0}
    games = int(row["games"])
    return {
        "rating": shown(row["mu"]),
        "mu": round(float(row["mu"]), 3),
        "sigma": round(float(row["sigma"]), 3),
        "games": games,
        "provisional": games < PROVISIONAL_GAMES,
        "provisional_games": PROVISIONAL_GAMES,
    }


def ranks_of(totals: list[int], abandoned: set[int]) -> list[int]:
    """Each seat's place (1 first; ties share one): by points, but the seats that abandoned
    the game last of all (tied among themselves)."""
    ranks = []
    for s, total in enumerate(totals):
        if s in abandoned:
            ranks.append(len(totals) + 1)
        else:
            ahead = sum(t > total for i, t in enumerate(totals) if i not in abandoned)
            ranks.append(1 + ahead)
    return ranks


def fit_levels(games: list[tuple[str, str, float]], seed: int = 0, passes: int = 3):
    """Ratings of the agents of ``games`` (``(a, b, score of a)``: 1 a win, 0.5 a draw, 0 a
    loss), all starting at the model's start: the games in a seeded random order, ``passes``
    times over; ``{agent: {mu, sigma}}`` at the end. openskill's ``tau`` keeps each sigma
    from vanishing, so the last games still count and the order matters little (the command
    reports the spread over seeds)."""
    import numpy as np

    m = model()
    rng = np.random.default_rng(seed)
    agents = sorted({x for a, b, _ in games for x in (a, b)})
    now = {a: m.rating(name=a) for a in agents}
    for _ in range(passes):
        for i in rng.permutation(len(games)):
            a, b, score = games[i]
            ranks = [1, 1] if score == 0.5 else ([1, 2] if score == 1 else [2, 1])
            [[ra], [rb]] = m.rate([[now[a]], [now[b]]], ranks=ranks)
            now[a], now[b] = ra, rb
    return {a: {"mu": r.mu, "sigma": r.sigma} for a, r in now.items()}


def enough(entrants: list[tuple[int, Any]] | None) -> bool:
    """A game is rated with one account and two seats taking part, at least."""
    return bool(entrants) and len(entrants) >= 2 and any(isinstance(w, int) for _, w in entrants)


class Ratings:
    """The ratings of one storage: read, shown, updated after each rated game."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    # ----------------------------------------------------------------- reading
    def of(self, player_id: int) -> dict[str, Any] | None:
        """The account's rating and place, or None if ``player_id`` is no account."""
        s = self.storage
        if s.accounts.account(player_id=player_id) is None:
            return None
        row = s.ratings.of(player_id)
        out = view(row)
        if row is not None:
            out["place"] = s.ratings.place(row["mu"])
        return out

    def leaderboard(self, player_id: int | None = None) -> dict[str, Any]:
        """The top `LEADERBOARD_SIZE` accounts, the asker's own place, the CPU levels."""
        top = []
        for place, r in enumerate(self.storage.ratings.top(LEADERBOARD_SIZE), 1):
            entry = {"place": place, "name": r["username"], **view(r)}
            entry["me"] = r["player_id"] == player_id
            top.append(entry)
        levels = [{"level": k, "rating": shown(v["mu"])} for k, v in cpu_ratings().items()]
        levels.sort(key=lambda x: -x["rating"])
        me = self.of(player_id) if player_id is not None else None
        return {"top": top, "me": me, "cpu": levels, "provisional_games": PROVISIONAL_GAMES}

    # ----------------------------------------------------------------- rating a game
    @staticmethod
    def _entrants(game: RatedGame, table) -> list[tuple[int, Any]] | None:
        """The seats that take part: ``(seat, player_id or CPU level)``; None when the
        game is not rated (a coach, a CPU level without a rating)."""
        cpus = cpu_ratings()
        if table.coach:
            return None
        humans = [x for x in table.seats if x.kind == "human" and x.player_id is not None]
        accounts = game.accounts(sorted({x.player_id for x in humans}))
        devices = game.devices()
        mine = [x for x in humans if x.player_id in accounts]
        out: list[tuple[int, Any]] = []
        for x in mine:
            same_account = sum(o.player_id == x.player_id for o in mine) > 1
            device = devices.get(x.seat)
            same_browser = device is not None and any(
                o is not x and devices.get(o.seat) == device for o in mine
            )
            if not (same_account or same_browser):
                out.append((x.seat, x.player_id))
        for x in table.seats:
            if x.is_cpu:
                if x.kind not in cpus:
                    return None
                out.append((x.seat, x.kind))
        return sorted(out) if enough(out) else None

    @staticmethod
    def _still_in(game: RatedGame, entrants) -> list[tuple[int, Any]]:
        """``entrants`` but the accounts already rated for this game (they left it)."""
        done = game.rated()
        return [(seat, who) for seat, who in entrants if who not in done]

    def game_over(self, table) -> list[dict[str, Any]]:
        """Rate the finished current game of ``table`` (inside the transaction of its last
        moves); the accounts' changes ``{player_id, before, after}`` (empty: not rated)."""
        with self.storage.ratings.game(table.code, table.idx) as game:
            entrants = self._entrants(game, table)
            entrants = self._still_in(game, entrants) if entrants else []
            if not enough(entrants):
                return []
            abandoned = {x.seat for x in table.seats if x.kind == "human" and x.away is not None}
            ranks = ranks_of(table.game.totals(), abandoned)
            return self._rate(game, entrants, [ranks[seat] for seat, _ in entrants])

    def left(self, table, seats: list[int]) -> list[dict[str, Any]]:
        """The players of ``seats`` left the rated game of ``table`` before its end (under
        the table's lock, in the transaction of their leaving): their loss is rated now,
        against every other seat taking part (tied among themselves), and the game's end
        rates the others without them. Leaving and coming back does not undo it."""
        if table.game is None or table.game.over:
            return []
        with self.storage.ratings.game(table.code, table.idx) as game:
            entrants = self._entrants(game, table)
            entrants = self._still_in(game, entrants) if entrants else []
            leavers = {seat for seat, who in entrants if isinstance(who, int) and seat in seats}
            if not leavers or not enough(entrants):
                return []
            ranks = [2 if seat in leavers else 1 for seat, _ in entrants]
            return self._rate(game, entrants, ranks, recorded=leavers)

    def leave_cost(self, table, player_id: int | None) -> dict[str, Any]:
        """What leaving the current game would cost ``player_id`` now, as `left` would rate
        it (nothing is stored): ``{"rated": False}`` for a game that does not rate them,
        else ``{"rated": True, "before": R, "after": R'}`` (the shown ratings)."""
        if player_id is None or table.game is None or table.game.over:
            return {"rated": False}
        with self.storage.ratings.reading(table.code, table.idx) as game:
            entrants, mine = self._taking_part(game, table, player_id)
            if not mine:
                return {"rated": False}
            current, ratings = self._ratings(game, entrants)
        new = model().rate(ratings, ranks=[2 if seat in mine else 1 for seat, _ in entrants])
        after = next(r for (seat, _), [r] in zip(entrants, new, strict=True) if seat in mine)
        old = current[player_id]
        before = old["mu"] if old else model().mu
        return {"rated": True, "before": shown(before), "after": shown(after.mu)}

    def rates(self, table, player_id: int | None) -> bool:
        """Whether the table's game under way changes ``player_id``'s rating: the lobby's
        "rated" tag in "Your open tables" (False before the start and between games)."""
        if player_id is None or table.game is None or table.game.over:
            return False
        with self.storage.ratings.reading(table.code, table.idx) as game:
            return bool(self._taking_part(game, table, player_id)[1])

    def _taking_part(self, game: RatedGame, table, player_id: int) -> tuple[list, set[int]]:
        """The entrants still in the game and ``player_id``'s seats among them (empty when
        the game does not rate them)."""
        entrants = self._entrants(game, table)
        entrants = self._still_in(game, entrants) if entrants else []
        mine = {seat for seat, who in entrants if who == player_id}
        return entrants, (mine if enough(entrants) else set())

    @staticmethod
    def _ratings(game: RatedGame, entrants) -> tuple[dict[int, Any], list[list[Any]]]:
        """The accounts' stored rating rows (None: never rated) and every entrant's rating."""
        m, current, ratings = model(), {}, []
        for _seat, who in entrants:
            if isinstance(who, int):
                current[who] = game.rating(who)
                row = current[who] or {"mu": m.mu, "sigma": m.sigma}
            else:
                row = cpu_ratings()[who]
            ratings.append([m.rating(mu=row["mu"], sigma=row["sigma"])])
        return current, ratings

    @staticmethod
    def _rate(game: RatedGame, entrants, ranks, recorded=None) -> list[dict[str, Any]]:
        """Rate ``entrants`` at ``ranks`` and store the accounts' new ratings; the game is
        recorded as rated for the seats in ``recorded`` (None: every account's)."""
        m = model()
        current, ratings = Ratings._ratings(game, entrants)
        new = m.rate(ratings, ranks=ranks)
        now, changes = time.time(), []
        for (seat, who), [rating] in zip(entrants, new, strict=True):
            if not isinstance(who, int):
                continue  # a CPU level's rating is fixed
            old = current[who]
            before = old["mu"] if old else m.mu
            games = (old["games"] if old else 0) + 1
            game.store(who, rating.mu, rating.sigma, games, now)
            if recorded is None or seat in recorded:
                game.record(who, before, rating.mu, now)
            changes.append({"player_id": who, "before": shown(before), "after": shown(rating.mu)})
        return changes


__all__ = ["PROVISIONAL_GAMES", "SCALE", "Ratings", "cpu_ratings", "ranks_of", "shown", "view"]
