"""Best-of-five matches, with no I/O: scoring a match from its games' totals
(`match_winners`), the state of a match in progress (`Match`) and the one loop that plays
one (`run_match`), which the tournaments' `play_match`, the terminal and the web tables run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from yahtzee_env.game.engine import top_seats


@dataclass(frozen=True)
class MatchResult:
    """A best-of-five match between two or more players."""

    game_totals: tuple[tuple[int, ...], ...]  # per game, every player's final total
    wins: tuple[int, ...]  # games won per player (draws count for nobody)
    points: tuple[int, ...]  # points over all games per player
    winners: tuple[int, ...]  # the match winner(s); more than one only if wins and points tie


MATCH_GAMES = 5
MATCH_WINS_NEEDED = 3


def match_winners(game_totals: Sequence[Sequence[int]]) -> MatchResult:
    """Score a best-of-five from each game's totals (stop feeding games once decided).

    A game's sole top scorer wins it; a tie on top is a draw and counts for nobody. The match
    goes to the first player to win three games; if five games leave no one with three wins,
    the most wins take it and a tie on wins is broken by total points over all games.
    """
    if not game_totals:
        raise ValueError("a match needs at least one game")
    num_players = len(game_totals[0])
    wins = [0] * num_players
    points = [0] * num_players
    for totals in game_totals:
        top = top_seats(totals)
        if len(top) == 1:
            wins[top[0]] += 1
        for p, t in enumerate(totals):
            points[p] += t
    if max(wins) >= MATCH_WINS_NEEDED:
        winners = [p for p in range(num_players) if wins[p] == max(wins)]
    else:
        most = [p for p in range(num_players) if wins[p] == max(wins)]
        best_points = max(points[p] for p in most)
        winners = [p for p in most if points[p] == best_points]
    return MatchResult(
        tuple(tuple(t) for t in game_totals), tuple(wins), tuple(points), tuple(winners)
    )


def match_is_decided(game_totals: Sequence[Sequence[int]]) -> bool:
    """True once someone has three game wins, or five games have been played."""
    if len(game_totals) >= MATCH_GAMES:
        return True
    return bool(game_totals) and max(match_winners(game_totals).wins) >= MATCH_WINS_NEEDED


@dataclass
class Match:
    """The state of a best-of-five match, with no I/O: which seat starts the next game, the
    results so far, and whether (and how) it is decided. A loop (`run_match`), a terminal
    or a web server drives it: ``while not m.decided: m.record(<play a game from
    m.next_start>)``.

    The roll for first player (or a choice) gives ``first``, the seat that starts game 1;
    the start then passes to the next seat each game.
    """

    num_players: int
    first: int = 0
    game_totals: list[tuple[int, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.num_players < 2 or not 0 <= self.first < self.num_players:
            raise ValueError(f"a match needs 2+ players and a first seat among them: {self}")

    @property
    def decided(self) -> bool:
        return match_is_decided(self.game_totals)

    @property
    def next_start(self) -> int:
        """The seat that starts the next game."""
        return (self.first + len(self.game_totals)) % self.num_players

    @property
    def standing(self) -> MatchResult:
        """Wins, points and leaders so far (the result once `decided`)."""
        return match_winners(self.game_totals)

    def record(self, totals: Sequence[int]) -> MatchResult:
        """Add a finished game's totals (seat order); return the standing after it."""
        if self.decided:
            raise ValueError("the match is already decided")
        if len(totals) != self.num_players:
            raise ValueError(f"{len(totals)} totals for {self.num_players} players")
        self.game_totals.append(tuple(int(t) for t in totals))
        return self.standing


def run_match(
    play_game: Callable[[int, int], Sequence[int]],
    num_players: int,
    first: int = 0,
    on_game: Callable[[MatchResult], None] | None = None,
) -> MatchResult:
    """The one best-of-five loop (the library's `match.play_match` and the terminal's match
    both run it): ``play_game(start_seat, game_number)`` plays game 1, 2, ... and returns the
    totals in seat order; ``on_game(standing)`` hears each result. Returns the result."""
    match = Match(num_players, first)
    while not match.decided:
        standing = match.record(play_game(match.next_start, len(match.game_totals) + 1))
        if on_game is not None:
            on_game(standing)
    return match.standing
