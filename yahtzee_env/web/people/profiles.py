"""Profiles (issue 62): ``/p/NAME``, what an account shows of its play to others.

A profile holds the account's rating and its chart over time (the rating after each rated
game, ``rated_games``), its games, wins, best score and Yatzys overall, by level and by
kind (solo, online), its dice against fair dice, its recent games and its achievements
(`achievements`). The owner's own view links each game to its review; nobody else gets a
game's id, since it holds the table's code, which lets one watch and join the table.
Only games the server dealt count, as in My statistics (`stats`): a game played in the
page shows nowhere on a profile.

Who sees it is the owner's choice (`VISIBILITIES`, ``accounts.profile_visibility``,
'public' by default, as the leaderboard already shows the name and rating), and one
function says it (`may_see_profile`). A profile that the asker may not see answers exactly
as a name without an account (404 ``no_profile``), so a hidden profile does not tell that
its account exists; a deleted account has no account row, results or rated games left, so
its profile is gone with it (`account_care`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yahtzee_env.web.errors import WebError
from yahtzee_env.web.people.accounts import USERNAME
from yahtzee_env.web.people.achievements import counts, earned
from yahtzee_env.web.people.ratings import Ratings, shown
from yahtzee_env.web.people.stats import in_level_order, player_statistics
from yahtzee_env.web.storage import Storage

VISIBILITIES = ("public", "friends", "nobody")
MAX_NAME = 24  # a user name's length at most (`accounts.USERNAME`)
RECENT_GAMES = 10
CHART_GAMES = 100  # rated games in the rating chart (the latest)


def may_see_profile(
    viewer_id: int | None,
    owner_id: int,
    visibility: str,
    are_friends: Callable[[int | None, int], bool] | None = None,
) -> bool:
    """Whether the player ``viewer_id`` (None: no session) may see the profile of the
    account ``owner_id`` whose setting is ``visibility``: the owner always; 'public':
    everyone; 'friends': the owner's friends (``are_friends``: the friends store's mutual
    follows with no block, `storage.friends.FriendStore.are_friends`; without it, the owner
    alone); 'nobody' (or any other value): the owner alone. The one place this rule is
    written."""
    if viewer_id is not None and viewer_id == owner_id:
        return True
    if visibility == "friends":
        known = are_friends is not None and viewer_id is not None
        return known and are_friends(viewer_id, owner_id)
    return visibility == "public"


def profile_name(value: Any) -> str:
    """The user name in a profile's address, checked (400 ``bad_username``), case-folded
    as stored."""
    if not isinstance(value, str) or len(value) > MAX_NAME or not USERNAME.fullmatch(value):
        raise WebError(
            "a profile's name is a user name: 3 to 24 letters, digits, '_', '.' or '-'",
            400,
            "bad_username",
        )
    return value.casefold()


def no_profile(name: str) -> WebError:
    """The one answer for a name without an account and for a profile hidden from the asker."""
    return WebError(f"no profile to show for {name!r}", 404, "no_profile")


class Profiles:
    """The profiles of one storage's accounts (call from worker threads)."""

    def __init__(self, storage: Storage, ratings: Ratings) -> None:
        self.storage, self.ratings = storage, ratings

    def profile(self, name: Any, viewer_id: int | None, levels: list[str]) -> dict[str, Any]:
        """The profile of account ``name`` as ``viewer_id`` may see it (404: not at all)."""
        username = profile_name(name)
        account = self.storage.profiles.account_named(username)
        if account is None or not may_see_profile(
            viewer_id, account["player_id"], account["visibility"], self.storage.friends.are_friends
        ):
            raise no_profile(username)
        owner = account["player_id"]
        rows = self.storage.players.results_of(owner)
        rated = self.storage.profiles.rating_history(owner)
        wins = self.storage.tournaments.wins_of(owner)
        stats = player_statistics(rows, levels)
        dealt = [r for r in rows if not r.get("offline")]
        out = {
            "name": account["username"],
            "since": account["created"],
            "mine": viewer_id == owner,
            "rating": self.ratings.of(owner),
            "chart": [
                {"rating": shown(g["mu_after"]), "at": g["finished"]} for g in rated[-CHART_GAMES:]
            ],
            "overall": stats["overall"],
            "by_level": stats["by_opponents"],
            "by_kind": {k: stats["by_mode"][k] for k in ("solo", "online")},
            "rolls": stats["rolls"],
            "recent": [
                {
                    "game_id": f"{r['code']}-{r['idx']}",
                    "score": r["score"],
                    "outcome": r["outcome"],
                    "opponents": in_level_order(r["opponents"], levels),
                    "online": bool(r["online"]),
                    "finished": r["finished"],
                    "counted": counts(r),
                }
                for r in reversed(dealt[-RECENT_GAMES:])
            ],
            "achievements": earned(rows, rated, levels, shown, wins),
            "tournaments_won": len(wins),  # knockout and Swiss (issue 62)
        }
        if out["mine"]:
            out["visibility"] = account["visibility"]
        else:  # a game's id holds its table's code, the key to the table: the owner's only
            for entry in (*out["recent"], *out["achievements"]):
                entry["game_id"] = None
        return out

    def set_visibility(self, player_id: int, value: Any) -> dict[str, Any]:
        """Who sees the account's profile from now on (400 for another value)."""
        if value not in VISIBILITIES:
            raise WebError(f"visibility is one of {', '.join(VISIBILITIES)}", 400, "bad_visibility")
        if self.storage.profiles.visibility(player_id) is None:
            raise WebError("sign in first: this needs an account", 403, "no_account")
        self.storage.profiles.set_visibility(player_id, value)
        return {"visibility": value}


__all__ = ["MAX_NAME", "VISIBILITIES", "Profiles", "may_see_profile", "no_profile", "profile_name"]
