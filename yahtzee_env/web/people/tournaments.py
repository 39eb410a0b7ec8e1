"""Tournaments (issue 62), knockout or Swiss: a player creates one, others join, the server
plays it round by round, each match an ordinary online table.

A tournament has a name, a format (`FORMATS`), a rules preset, 4 to 32 places, best-of-one
or best-of-five matches, a start (``start_in`` seconds from now, or when full) and
optionally a CPU level that fills the places nobody took at the start. Its state is in the
database (`storage.tournaments`), so a restart or another server process on the same
PostgreSQL database carries it on: `Tournaments.advance` reads it and takes the next step,
each step a guarded write that only one process wins.

A knockout's bracket: at the start the entrants are shuffled by the tournament's seed; the
bracket is the next power of two, and the places short of it are byes for the first
entrants of the shuffle (a bye wins at once). Each later round pairs the winners of the one
before in order. A match between people (or a person and a CPU) is an online table of two
seats with the coach off and the turn timer on (an absent player's turns are played, so
every match ends); best-of-five uses the table's match. A match of two CPU levels is played
out by the server with the engine, a real game (or match) from the tournament's seed. One
waiting to fill that has not in `UNFILLED_S` closes with no winner (its places free again).
A match's winner is its table's (the game's top score; the match's by
`game.match.match_winners`); a tie is broken by the higher total over the match, then by a
coin drawn from the tournament's seed. The last winner wins the tournament
(``tournaments.winner_slot``; a profile counts them, `TournamentStore.won_by`).

A Swiss tournament (`swiss`) plays ``ceil(log2(entrants))`` rounds in which everyone plays:
each round is paired from the standings of the rounds before (points, then the Buchholz
tie-break, then the seed's order), with no rematch while one can be avoided and a bye for
the lowest-ranked entrant without one when the entrants are odd. Its matches are played as
a knockout's, but a match both sides won on the same total is drawn (½ point each; no
coin). The top of the standings after the last round wins it.
"""

from __future__ import annotations

import logging
import random
import secrets
from typing import Any

from yahtzee_env.game.cpu import cpu_move
from yahtzee_env.game.match import match_is_decided, match_winners
from yahtzee_env.game.rules import PRESETS, RuleSet
from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.names import name_problem
from yahtzee_env.web.people.swiss import DRAW, drawn, next_pairs, standings
from yahtzee_env.web.people.swiss import swiss_rounds as rounds_for
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.deal import new_game
from yahtzee_env.web.tables.table import Table, cpu_levels, new_code

FORMATS = ("knockout", "swiss")  # the first is the default (and every older tournament's)
PLACES_RANGE = (4, 32)  # places of a tournament
BEST_OF = (1, 5)  # games a match: one, or a best-of-five
START_RANGE = (60, 7 * 86_400)  # seconds from now a tournament may be set to start
MAX_TITLE = 40  # characters of a tournament's name
MATCH_TURN_TIMER = 60  # seconds a turn at a tournament's table (absent players are played)
CLAIM_STALE_S = 60.0  # a match whose table a process claimed this long ago and never made
LISTED = 30  # tournaments the lobby lists
UNFILLED_S = 7 * 86_400  # a tournament waiting to fill closes after this, with no winner
DUE_BATCH = 200  # tournaments one background step advances (the least recently moved)
log = logging.getLogger("yahtzee.web")


def clean_title(value: Any) -> str:
    """A tournament's name: 1 to `MAX_TITLE` characters, none that disguises it."""
    if not isinstance(value, str) or not " ".join(value.split()):
        raise WebError("name is empty", 400, "name_empty", field="name")
    title = " ".join(value.split())
    if len(title) > MAX_TITLE:
        raise WebError(
            f"name is longer than {MAX_TITLE} characters", 400, "name_long", max=MAX_TITLE
        )
    problem = name_problem(title)
    if problem is not None:
        raise WebError(problem[0], 400, problem[1], field="name")
    return title


def parse_tournament(body: dict[str, Any]) -> dict[str, Any]:
    """A new tournament's choices, checked (WebError names the field): ``name``,
    ``format`` (`FORMATS`), ``rules``, ``places``, ``best_of``, ``fill`` (a CPU level, or
    None: no CPU places) and ``start_in`` (seconds from now, or None: when full)."""
    title = clean_title(body.get("name"))
    form = body.get("format", FORMATS[0])
    if not isinstance(form, str) or form not in FORMATS:
        raise WebError(
            f"format must be one of {', '.join(FORMATS)}", 400, "bad_format", field="format"
        )
    rules = body.get("rules", "official")
    if not isinstance(rules, str) or rules not in PRESETS:
        raise WebError(
            f"unknown rules {str(rules)[:30]!r}; presets: {', '.join(PRESETS)}",
            400,
            "bad_rules",
            field="rules",
        )
    places = body.get("places")
    low, high = PLACES_RANGE
    if isinstance(places, bool) or not isinstance(places, int) or not low <= places <= high:
        raise WebError(
            f"places must be a whole number from {low} to {high}", 400, "bad_places", field="places"
        )
    best_of = body.get("best_of", 1)
    if isinstance(best_of, bool) or best_of not in BEST_OF:
        raise WebError("best_of must be 1 or 5", 400, "bad_best_of", field="best_of")
    fill = body.get("fill")
    levels = cpu_levels()
    if fill is not None and (not isinstance(fill, str) or fill not in levels):
        raise WebError(
            f"fill must be null or a CPU level: {', '.join(levels)}", 400, "bad_fill", field="fill"
        )
    start_in = body.get("start_in")
    low, high = START_RANGE
    if start_in is not None and (
        isinstance(start_in, bool) or not isinstance(start_in, int) or not low <= start_in <= high
    ):
        raise WebError(
            f"start_in must be null (when full) or {low} to {high} seconds",
            400,
            "bad_start",
            field="start_in",
        )
    return {
        "name": title,
        "format": form,
        "rules": rules,
        "places": places,
        "best_of": best_of,
        "fill_level": fill,
        "start_in": start_in,
    }


def first_round(slots: list[int], seed: int) -> list[tuple[int, int | None]]:
    """Round one of a knockout of the entrants ``slots``: shuffled by ``seed``, the first
    ones given the byes that fill the bracket up to a power of two."""
    order = list(slots)
    random.Random(seed).shuffle(order)
    size = 1
    while size < len(order):
        size *= 2
    byes = size - len(order)
    pairs: list[tuple[int, int | None]] = [(order[i], None) for i in range(byes)]
    rest = order[byes:]
    pairs += [(rest[i], rest[i + 1]) for i in range(0, len(rest), 2)]
    return pairs


def decide(games: list[list[int]], seed: int, where: str) -> tuple[int, tuple[int, int]]:
    """The winning side (0: a, 1: b) of a finished match of ``games`` (each game's two
    totals) and the totals over the match: the match's winner, else the higher total,
    else a coin drawn from the tournament's ``seed`` and the match (``where``)."""
    result = match_winners(games)
    points = (result.points[0], result.points[1])
    if len(result.winners) == 1:
        return result.winners[0], points
    if points[0] != points[1]:
        return (0 if points[0] > points[1] else 1), points
    return random.Random(f"{seed}:{where}").randrange(2), points


def match_games(table: Table, best_of: int) -> list[list[int]] | None:
    """The finished games of the tournament's match at ``table`` (its first match), or
    None while it is on."""
    done = [
        table.finished[g["idx"]]
        for g in table.games
        if g["match_no"] == 0 and g["idx"] < len(table.finished)
    ]
    if best_of == 1:
        return [list(done[0])] if done else None
    games = [list(t) for t in done]
    return games if games and match_is_decided(games) else None


class Tournaments:
    """The tournaments of the server (their state is in the database)."""

    def __init__(self, storage: Storage, tables: Tables, limits: Limits) -> None:
        self.storage, self.tables, self.limits = storage, tables, limits
        self.store = storage.tournaments

    def clock(self) -> float:
        return self.tables.clock()  # the tables' wall clock (tests move it)

    # ----------------------------------------------------------------- the intents
    def create(self, player: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A new tournament created by ``player`` (an account), who takes its first place."""
        choice = parse_tournament(body)
        cap = self.limits.tournaments_per_account
        if self.store.open_of(player["id"]) >= cap:
            raise WebError(
                f"you have {cap} unfinished tournaments: let one finish first",
                409,
                "too_many_tournaments",
                max=cap,
            )
        code = new_code()
        while self.store.get(code) is not None:
            code = new_code()
        start_in = choice.pop("start_in")
        row = {
            **choice,
            "code": code,
            "starts": None if start_in is None else self.clock() + start_in,
            "seed": secrets.randbits(62),
        }
        self.store.create(row, {"player_id": player["id"], "name": player["name"]})
        return self.view(code, player["id"])

    def join(self, code: Any, player: dict[str, Any]) -> dict[str, Any]:
        """``player`` takes a free place of open tournament ``code``."""
        code = clean_code(code)
        refused = self.store.join(code, player["id"], player["name"])
        if refused == "unknown":
            raise WebError(f"no tournament has the code {code!r}", 404, "unknown_tournament")
        if refused == "started":
            raise WebError("this tournament has started: no place is free", 409, "tourney_started")
        if refused == "full":
            raise WebError("this tournament is full", 409, "tourney_full")
        if refused == "already_entered":
            raise WebError("you are already in this tournament", 409, "already_entered")
        self.advance(code)  # the last place taken: it starts
        return self.view(code, player["id"])

    def start_now(self, code: Any, player: dict[str, Any]) -> dict[str, Any]:
        """(Its creator) start open tournament ``code`` now: the CPU level, if it has one,
        fills the empty places; without one, two people at least must have joined."""
        code = clean_code(code)
        t = self.store.get(code)
        if t is None:
            raise WebError(f"no tournament has the code {code!r}", 404, "unknown_tournament")
        if t["creator_id"] != player["id"]:
            raise WebError("only its creator starts a tournament early", 403, "not_creator")
        if t["fill_level"] is None and len(self.store.entrants(code)) < 2:
            raise WebError("two players at least must have joined", 409, "too_few_entrants")
        if not self.store.start_now(code):
            raise WebError("this tournament has already started", 409, "tourney_started")
        self.advance(code)
        return self.view(code, player["id"])

    def listing(self) -> dict[str, Any]:
        """The open and running tournaments, newest first."""
        return {"tournaments": self.store.listed(LISTED)}

    def view(self, code: Any, player_id: int | None = None) -> dict[str, Any]:
        """The tournament's bracket: its choices, entrants, rounds and their matches."""
        code = clean_code(code)
        t = self.store.get(code)
        if t is None:
            raise WebError(f"no tournament has the code {code!r}", 404, "unknown_tournament")
        entrants = self.store.entrants(code)
        names = {e["slot"]: e["name"] for e in entrants}
        matches = self.store.matches(code)
        rounds: list[dict[str, Any]] = []
        for m in matches:
            while len(rounds) < m["round"]:
                rounds.append({"round": len(rounds) + 1, "matches": []})
            rounds[m["round"] - 1]["matches"].append(match_view(m, names))
        ranking = None
        if t["format"] == "swiss" and t["round"] > 0:  # (a closed one never started)
            done = [m for m in matches if m["winner_slot"] is not None]
            ranking = [{**r, "name": names[r["slot"]]} for r in standings(names, done, t["seed"])]
        mine = [
            e["slot"] for e in entrants if player_id is not None and e["player_id"] == player_id
        ]
        return {
            "code": code,
            "name": t["name"],
            "format": t["format"],
            "rules": t["rules"],
            "places": t["places"],
            "best_of": t["best_of"],
            "fill": t["fill_level"],
            "starts_in": None if t["starts"] is None else max(0, round(t["starts"] - self.clock())),
            "state": t["state"],
            "round": t["round"],
            # the rounds it plays: ceil(log2) of its entrants (of its places until it starts)
            "rounds_total": rounds_for(t["places"] if t["state"] == "open" else len(entrants)),
            "standings": ranking,  # a Swiss tournament's (None: a knockout, or not started)
            "entrants": [
                {"slot": e["slot"], "name": e["name"], "cpu": e["kind"] != "human"}
                for e in entrants
            ],
            "rounds": rounds,
            "winner": None if t["winner_slot"] is None else names.get(t["winner_slot"]),
            "mine": mine[0] if mine else None,
            "creator": t["creator_id"] == player_id if player_id is not None else False,
        }

    # ----------------------------------------------------------------- the server's steps
    def advance_due(self) -> list[str]:
        """Take the next steps of the tournaments that have one (the server's background
        task); their codes."""
        done = []
        for code in self.store.due(self.clock(), DUE_BATCH):
            try:
                self.advance(code)
            except Exception:  # one tournament's failure must not stop the others
                log.exception("tournament %s: its step failed (tried again later)", code)
            done.append(code)
        return done

    def sweep(self) -> int:
        """Close the tournaments that waited `UNFILLED_S` to fill (the server's sweep):
        no place is held for ever; how many."""
        return self.store.close_unfilled(self.clock() - UNFILLED_S)

    def advance(self, code: str) -> None:
        """Every step tournament ``code`` can take now: its start, its matches' tables
        and results, the next round, the winner. Each is a guarded write, so two processes
        stepping it at once take each step once."""
        t = self.store.get(code)
        if t is None or t["state"] == "over":
            return
        if t["state"] == "open":
            if not self.start(t):
                return
            t = self.store.get(code)
        for _ in range(8):  # rounds a step may finish at once (CPU matches, byes): log2(32)+3
            entrants = {e["slot"]: e for e in self.store.entrants(code)}
            matches = [m for m in self.store.matches(code) if m["round"] == t["round"]]
            for m in matches:
                if m["winner_slot"] is None:
                    self.play(t, m, entrants)
            every = self.store.matches(code)
            matches = [m for m in every if m["round"] == t["round"]]
            if not matches or any(m["winner_slot"] is None for m in matches):
                return  # (none: another process is drawing the round)
            pairs, winner = self.next_round(t, list(entrants), every)
            if not pairs:
                self.store.finish(code, winner)
                return
            self.store.open_round(code, t["round"], pairs)
            t = self.store.get(code)

    @staticmethod
    def next_round(
        t: dict[str, Any], slots: list[int], matches: list[dict[str, Any]]
    ) -> tuple[list[tuple[int, int | None]], int | None]:
        """After a finished round (``matches``: every match so far): the next round's pairs,
        or none and the tournament's winner. A knockout pairs the round's winners in order
        (one left: it won); a Swiss tournament pairs by the standings (`swiss.next_pairs`)
        until its last round, then the top of the standings wins."""
        if t["format"] == "swiss":
            if t["round"] >= rounds_for(len(slots)):
                return [], standings(slots, matches, t["seed"])[0]["slot"]
            return next_pairs(slots, matches, t["seed"]), None
        winners = [m["winner_slot"] for m in matches if m["round"] == t["round"]]
        if len(winners) == 1:
            return [], winners[0]
        return [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)], None

    def start(self, t: dict[str, Any]) -> bool:
        """Start an open tournament that is full, or whose start time came: the CPU level
        fills the empty places, and round one is drawn. False: not yet."""
        code = t["code"]
        entrants = self.store.entrants(code)
        full = len(entrants) >= t["places"]
        if not full and (t["starts"] is None or t["starts"] > self.clock()):
            return False
        cpus = []
        if t["fill_level"] is not None:
            level = t["fill_level"]
            for n, slot in enumerate(range(len(entrants), t["places"])):
                cpus.append((slot, level, level if n == 0 else f"{level} #{n + 1}"))
        if not self.store.begin(code, cpus):
            return True  # another process started it
        slots = [e["slot"] for e in entrants] + [c[0] for c in cpus]
        if len(slots) < 2:  # nobody to play: it closes, and nobody wins it
            self.store.finish(code, None)
            return False
        if t["format"] == "swiss":  # round one: in the seed's order, each with the next
            pairs = next_pairs(slots, [], t["seed"])
        else:
            pairs = first_round(slots, t["seed"])
        self.store.open_round(code, 0, pairs)
        return True

    def play(self, t: dict[str, Any], m: dict[str, Any], entrants: dict[int, Any]) -> None:
        """A match's next step: its table made (or its CPU game played), or its result read."""
        a, b = entrants[m["a_slot"]], entrants[m["b_slot"]]
        where = f"{m['round']}:{m['idx']}"
        table_code = m["table_code"]
        if table_code and not table_code.startswith("~"):
            if not self.store.table_moved_on(table_code):
                return  # its first game is on: nothing to read yet (no table loaded)
            games = match_games(self.tables.load(table_code), t["best_of"])
            if games is not None:
                if a["kind"] != "human":  # seat 0 is the person who hosts it: a, else b
                    games = [[g[1], g[0]] for g in games]
                self.finish_match(t, m, games)
            return
        claim = "~" + secrets.token_hex(8)
        stale = self.clock() - CLAIM_STALE_S
        if not self.store.claim_match(t["code"], m["round"], m["idx"], claim, stale):
            return  # another process is making it
        if a["kind"] != "human" and b["kind"] != "human":
            self.finish_match(t, m, self.cpu_match(t, a, b, where))
            return
        table_code = self.make_table(t, a, b)
        self.store.place_match(t["code"], m["round"], m["idx"], claim, table_code)

    def finish_match(self, t: dict[str, Any], m: dict[str, Any], games: list[list[int]]) -> None:
        """Keep a finished match's result (``games``: each game's totals, a's first): its
        winner by `decide`, or in a Swiss tournament `DRAW` for a match both sides won on
        the same total."""
        side, totals = decide(games, t["seed"], f"{m['round']}:{m['idx']}")
        winner = (m["a_slot"], m["b_slot"])[side]
        if t["format"] == "swiss" and drawn(games):
            winner = DRAW
        self.store.finish_match(t["code"], m["round"], m["idx"], winner, totals)

    def make_table(self, t: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> str:
        """The table of a match with a person: the person (a, else b) hosts seat 0, the
        other person joins seat 1 (or the CPU level sits there), and it starts at once."""
        host, other = (a, b) if a["kind"] == "human" else (b, a)
        body = {
            "seats": ["human", "friend" if other["kind"] == "human" else other["kind"]],
            "online": True,
            "rules": t["rules"],
            "match": t["best_of"] == 5,
            "coach": False,
            "turn_timer": MATCH_TURN_TIMER,
            "name": host["name"],
        }
        person = {"id": host["player_id"], "name": host["name"]}
        table, _ = self.tables.create(body, None, person)
        if other["kind"] == "human":
            guest = {"id": other["player_id"], "name": other["name"]}
            self.tables.seating.join(table.code, {"name": other["name"]}, guest)
        self.tables.seating.start(table.code, 0, None, host["player_id"])
        return table.code

    def cpu_match(
        self, t: dict[str, Any], a: dict[str, Any], b: dict[str, Any], where: str
    ) -> list[list[int]]:
        """A match of two CPU levels, played out with the engine from the tournament's
        seed: each game's two totals."""
        rules = RuleSet.from_spec(t["rules"])
        seed = random.Random(f"{t['seed']}:{where}:dice").getrandbits(62)
        policies = [self.tables.policy(a["kind"], rules), self.tables.policy(b["kind"], rules)]
        games: list[list[int]] = []
        for idx in range(t["best_of"]):
            game, _ = new_game(rules, seed, idx, 2, None if idx == 0 else idx % 2)
            while not game.over:
                seat = game.current
                cpu_move(game, seat, policies[seat], (a, b)[seat]["name"])
            games.append(list(game.totals()))
            if t["best_of"] == 1 or match_is_decided(games):
                break
        return games


def match_view(m: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    """A match as the bracket shows it (``winner``: a place, `DRAW`, or None while on)."""
    table = m["table_code"]
    return {
        "idx": m["idx"],
        "a": {"slot": m["a_slot"], "name": names.get(m["a_slot"])},
        "b": None if m["b_slot"] is None else {"slot": m["b_slot"], "name": names.get(m["b_slot"])},
        "table": table if table and not table.startswith("~") else None,
        "winner": m["winner_slot"],
        "draw": m["winner_slot"] == DRAW,
        "totals": None if m["a_total"] is None else [m["a_total"], m["b_total"]],
    }


__all__ = [
    "BEST_OF",
    "FORMATS",
    "MAX_TITLE",
    "PLACES_RANGE",
    "START_RANGE",
    "Tournaments",
    "clean_title",
    "decide",
    "first_round",
    "match_view",
    "parse_tournament",
]
