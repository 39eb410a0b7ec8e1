"""`Storage`: the database (`base.Database`) with one named store per concern, the only
place the server's SQL is written."""

from __future__ import annotations

from yahtzee_env.web.storage.accounts import AccountStore
from yahtzee_env.web.storage.base import Database
from yahtzee_env.web.storage.friends import FriendStore
from yahtzee_env.web.storage.logins import LoginStore
from yahtzee_env.web.storage.mail import MailStore
from yahtzee_env.web.storage.people import PeopleStore
from yahtzee_env.web.storage.players import PlayerStore
from yahtzee_env.web.storage.profiles import ProfileStore
from yahtzee_env.web.storage.queue import QueueStore
from yahtzee_env.web.storage.ratings import RatingStore
from yahtzee_env.web.storage.tables import TableStore
from yahtzee_env.web.storage.tournaments import TournamentStore


class Storage(Database):
    """The database of the web game (both backends) and its stores: ``players``,
    ``accounts``, ``logins``, ``tables``, ``people``, ``friends``, ``queue``, ``ratings``,
    ``profiles``, ``mail``, ``tournaments``. Thread-safe;
    every store method commits before it returns, except inside `Database.lock_table`,
    whose block is one transaction. ``trips`` counts what it asks of the database (`base.Trips`)."""

    def __init__(self) -> None:
        super().__init__()
        self.players = PlayerStore(self)
        self.accounts = AccountStore(self)
        self.logins = LoginStore(self)
        self.tables = TableStore(self)
        self.people = PeopleStore(self)
        self.friends = FriendStore(self)
        self.queue = QueueStore(self)
        self.ratings = RatingStore(self)
        self.profiles = ProfileStore(self)
        self.mail = MailStore(self)
        self.tournaments = TournamentStore(self)
