"""Game reviews: who may open the review of a finished game, and the solver's review of it,
cached (`authority.Tables.reviews`; the grading itself is `review.review_game`)."""

from __future__ import annotations

import threading
from typing import Any

from yahtzee_env.game.fair_dice import DICE_ALGORITHM
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.tables.review import review_game
from yahtzee_env.web.tables.table import REVIEWS_KEPT, Table


class Reviews:
    """The reviews of the finished games of ``tables`` (the authority: `authority.Tables`)."""

    def __init__(self, tables) -> None:
        self.tables, self.storage = tables, tables.storage
        self._reviews: dict[tuple[str, int], dict[str, Any]] = {}  # solved in threads
        self._reviews_lock = threading.Lock()

    def review_request(
        self, game_id: Any, body: dict[str, Any], player_id: int | None = None
    ) -> dict[str, Any]:
        """Check that ``body`` may open the review of ``game_id`` (``CODE-IDX``): the table
        is public, or the session's ``player_id`` has a seat there, or ``body`` holds a seat
        token of it (``tokens: {seat: token}``) or the player token of a player seated there.
        Returns what `review_of` needs (read here, under the table's lock, so that the
        solver's work touches no live table); WebError 404 for no such finished game, 403 for
        no access."""
        text = str(game_id) if isinstance(game_id, str) else ""
        code, _, idx_text = text.rpartition("-")
        if not code or not idx_text.isdigit():
            raise WebError(f"no game has the id {text[:30]!r}", 404, "no_game")
        table = self.tables.load(code)
        idx = int(idx_text)
        if idx >= len(table.finished):
            raise WebError(f"no finished game has the id {text[:30]!r}", 404, "no_game")
        seated = player_id is not None and any(
            player_id in (s.player_id, s.owner_id) for s in table.seats
        )
        if not (table.public or seated or self._may_review(table, body)):
            raise WebError("only the players of this table can open its reviews", 403, "private")
        row = self.storage.tables.load_table(table.code)
        return {
            "code": table.code,
            "idx": idx,
            "rules": table.rules,
            "seed": table.seed,
            "first": table.games[idx]["first"],
            "coach": table.coach,
            "seats": table.state()["seats"],
            "actions": row["actions"].get(idx, []),
            "dice_secret": table.dice_secret,
            "duplicate": table.duplicate,
            "dice": table.dice,
            "client_seeds": table.client_seeds.get(idx),
        }

    def _may_review(self, table: Table, body: dict[str, Any]) -> bool:
        tokens = body.get("tokens")
        if isinstance(tokens, dict):
            for seat, token in tokens.items():
                try:
                    table.seat_of_token(int(seat), token)
                    return True
                except (WebError, ValueError):
                    continue
        player = body.get("player")
        if isinstance(player, str) and player:
            row = self.storage.players.player_by_token(player)
            if row is not None and any(s.player_id == row["id"] for s in table.seats):
                return True
        return False

    def review_of(self, game: dict[str, Any]) -> dict[str, Any]:
        """The solver's review of the finished game `review_request` described (cached;
        CPU-bound: call it in a thread, off the event loop)."""
        key = (game["code"], game["idx"])
        with self._reviews_lock:
            cached = self._reviews.get(key)
        if cached is None:
            coach = self.tables.coach(game["rules"])
            out = review_game(
                coach,
                game["rules"],
                game["seed"],
                game["idx"],
                game["first"],
                game["seats"],
                game["actions"],
                secret=game["dice_secret"],
                duplicate=game["duplicate"],
                dice=game.get("dice", DICE_ALGORITHM),
                client_seeds=game.get("client_seeds"),
            )
            out.update(id=f"{key[0]}-{key[1]}", code=key[0], game=key[1], coach=game["coach"])
            with self._reviews_lock:
                while len(self._reviews) >= REVIEWS_KEPT:  # forget the oldest
                    self._reviews.pop(next(iter(self._reviews)))
                self._reviews[key] = cached = out
        return cached
