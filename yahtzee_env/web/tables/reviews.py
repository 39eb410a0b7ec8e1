"""Game reviews: who may open the review of a finished game, and the solver's review of it,
cached (`authority.Tables.reviews`; the grading itself is `review.review_game`).

Each unaided game of an account is graded once after it ends (`Reviews.grade_pending`, the
server's background step, in a worker thread): the errors of each seat with a result
(`review.errors_of`) are stored with it (``results.errors``), which the achievement "a clean
game" reads, so a profile grades nothing. A review costs tens of milliseconds of CPU (the
solver's values of every decision), so each step grades within a CPU budget
(`Limits.grade_share` of the step's period) and leaves the rest for the next steps: at 1,000
players, a game ending every few milliseconds, grading them all would take most of a core
from the moves (issue 60). The grading rebuilds the game from the stored
rows alone (no live table, no lock: a finished game's log does not change), once the
rules' coach is ready (``yahtzee serve`` prepares them all at start-up).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from yahtzee_env.game.fair_dice import DICE_ALGORITHM
from yahtzee_env.game.rules import RuleSet
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.tables import seeds
from yahtzee_env.web.tables.review import errors_of, review_game
from yahtzee_env.web.tables.table import REVIEWS_KEPT, Table

GRADE_WINDOW_S = 86_400.0  # a game ended longer ago than this is not graded any more
GRADE_BATCH = 40  # results one grading step reads (a few games)


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

    # --------------------------------------------------------------- grading (issue 62)
    def stored_game(self, code: str, idx: int) -> dict[str, Any] | None:
        """What `review.review_game` needs of finished game ``idx`` of table ``code``, from
        the database's rows (None: the table or the game is gone)."""
        row = self.storage.tables.load_table(code)
        games = {g["idx"]: g for g in row["games"]} if row is not None else {}
        if idx not in games:
            return None
        return {
            "rules": RuleSet.from_spec(row["rules"]),
            "seed": row["seed"],
            "first": games[idx]["first"],
            "seats": [{"seat": s["seat"], "kind": s["kind"]} for s in row["seats"]],
            "actions": row["actions"].get(idx, []),
            "dice_secret": bytes.fromhex(row["dice_secret"]) if row.get("dice_secret") else None,
            "duplicate": bool(row.get("duplicate") or 0),
            "dice": row.get("dice") or DICE_ALGORITHM,
            "client_seeds": seeds.load(row.get("client_seeds")).get(idx),
        }

    def grade(self, code: str, idx: int, seats: list[int]) -> dict[int, int] | None:
        """The errors of ``seats`` in finished game ``idx`` of table ``code`` (-1 each: the
        game cannot be rebuilt), or None while the rules' coach is not ready (graded later:
        grading never asks for a solve; ``yahtzee serve`` prepares every preset's coach)."""
        game = self.stored_game(code, idx)
        if game is None:
            return {seat: -1 for seat in seats}
        if not self.tables.coach_ready(game["rules"].name):
            return None
        coach = self.tables.grader(game["rules"])
        try:
            review = review_game(
                coach,
                game["rules"],
                game["seed"],
                idx,
                game["first"],
                game["seats"],
                game["actions"],
                secret=game["dice_secret"],
                duplicate=game["duplicate"],
                dice=game["dice"],
                client_seeds=game["client_seeds"],
            )
        except ValueError:  # a log that does not replay to the game's end
            return {seat: -1 for seat in seats}
        return {seat: errors_of(review, seat) for seat in seats}

    def grade_pending(self, budget_s: float | None = None) -> int:
        """Grade the unaided games that ended in the last `GRADE_WINDOW_S` and are not
        graded yet, and store each seat's errors (CPU-bound: call it in a thread); how many
        games were graded. ``budget_s``: no game is begun once this thread has spent that
        much CPU time here (the first always is). Two processes grading one game store the
        same numbers once."""
        if not self.tables.coaches.ready:  # no coach to grade with yet: nothing read
            return 0
        since = self.storage.clock() - GRADE_WINDOW_S
        games: dict[tuple[str, int], list[int]] = {}
        for r in self.storage.players.ungraded(since, GRADE_BATCH):
            games.setdefault((r["code"], r["idx"]), []).append(r["seat"])
        done, began = 0, time.thread_time()
        for (code, idx), seats in games.items():
            if done and budget_s is not None and time.thread_time() - began >= budget_s:
                break
            errors = self.grade(code, idx, seats)
            if errors is not None:
                self.storage.players.set_errors(code, idx, errors)
                done += 1
        return done
