"""Sessions and sign-ins behind the door (issue 18, issue 57): `SignIns`, the intents that
name a guest session, sign in, sign up and sign out; the server object holds one
(``service.sign_ins``) and `routes` reaches each in one line (the route sets or clears the
cookies). `checking` is the one turn of a user name to have a secret checked (a password
here, a recovery code at `account_desk.AccountDesk`): a known device goes at once, anyone
else by the counts in the database (`logins.LoginGate`). Every password is hashed in the
bounded gate (`logins.HashGate`).
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import login_name, who
from yahtzee_env.web.errors import WebError, clean_name
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.people.account_care import AccountCare
from yahtzee_env.web.people.accounts import Accounts
from yahtzee_env.web.people.logins import PASSWORD, HashGate, LoginGate
from yahtzee_env.web.storage import Storage


class SignIns:
    """The session and sign-in intents. ``refuse_past`` (spend a token or 429),
    ``new_player_budget`` and ``spend`` (the per-token budget) are the server object's
    (`service.Service`)."""

    def __init__(
        self,
        storage: Storage,
        accounts: Accounts,
        care: AccountCare,
        hash_gate: HashGate,
        login_gate: LoginGate,
        logins: RateLimiter,
        refuse_past: Callable[..., None],
        new_player_budget: Callable[[str], None],
        spend: Callable[[Any], None],
    ) -> None:
        self.storage, self.accounts, self.care = storage, accounts, care
        self.hash_gate, self.login_gate, self.logins = hash_gate, login_gate, logins
        self.refuse_past, self.new_player_budget, self.spend = refuse_past, new_player_budget, spend

    def login_budget(self, address: str, kind: str = PASSWORD) -> None:
        """Sign-ins and sign-ups (``kind`` password) or recoveries (``kind`` recovery: a
        bucket apart) spend a token of the address's bucket, a backstop sized for a shared
        network (429 ``login_budget``); a user name's checks are bounded by `checking`."""
        message = "too many sign-in attempts from your network: wait a little"
        self.refuse_past(self.logins, (f"login-addr-{kind}", address), message, "login_budget")

    @contextlib.asynccontextmanager
    async def checking(
        self, name: str, address: str, device: str | None, kind: str = PASSWORD
    ) -> AsyncIterator[None]:
        """The turn of user name ``name`` to have a secret of ``kind`` checked (a password,
        a recovery code) for a request from ``address``: a browser that signed in to it
        before (its ``device`` cookie) goes at once; anyone else is checked at once or
        refused at once with a Retry-After, by the counts in the database
        (`logins.LoginGate`: per address, per name, whatever process asks)."""
        if device and await run_in_threadpool(self.accounts.known_device, device, name):
            yield
            return
        async with self.login_gate.turn(name, address, kind):
            yield

    async def name_session(
        self, body: dict[str, Any], session, address: str
    ) -> tuple[dict, str | None]:
        """A guest session with a name, or the session's new name: the profile, and the new
        session's token (None when the session was there)."""
        self.spend(who(body, session))
        name = clean_name(body.get("name"))
        if session is None:
            self.new_player_budget(address)
        player_id, token, account = await run_in_threadpool(self.named, name, session)
        return {"player": {"id": player_id, "name": name}, "account": account}, token

    def named(self, name: str, session) -> tuple[int, str | None, str | None]:
        """`name_session`'s work (a worker thread): the player id, the new session's token
        (None for a session that was there) and its account's user name."""
        if session is not None:
            self.storage.players.rename_player(session["id"], name)
            return session["id"], None, self.accounts.account_name(session["id"])
        player_id = self.storage.players.create_player(name, secrets.token_urlsafe(24))
        return player_id, self.accounts.new_session(player_id), None

    async def sign_in(
        self,
        body: dict[str, Any],
        session,
        address: str,
        old: str | None,
        device: str | None,
        new: bool = False,
    ) -> tuple[dict, str, str]:
        """Sign in (``new``: sign up, the session's profile becoming an account): the
        profile, the new session's token and the browser's id. The old session ``old`` ends
        (a new session id at every sign-in: no session fixation). A user name with failed
        sign-ins waits first (`logins`), unless this browser (``device``, its id cookie as
        sent; None: a new id is made) signed in to it before; a successful sign-in remembers
        the browser."""
        known = device is not None
        device = device or secrets.token_urlsafe(24)  # this browser's id from now on
        self.login_budget(address)
        if new and session is None:
            self.new_player_budget(address)
        run = functools.partial(self.signed_in, body, session, old, device, new)
        if new:
            player_id, username, token, name, codes = await self.hash_gate.run(run)
        else:
            async with self.checking(login_name(body), address, device if known else None):
                player_id, username, token, name, codes = await self.hash_gate.run(run)
        reply = {"player": {"id": player_id, "name": name}, "account": username}
        if codes:
            reply["recovery_codes"] = codes
        return reply, token, device

    def signed_in(
        self, body: dict[str, Any], session, old: str | None, device: str, new: bool
    ) -> tuple[int, str, str, str, list[str] | None]:
        """`sign_in`'s work (a hash slot's thread): the player id, the user name, the new
        session's token, the player's name and (``new``) the recovery codes, shown once."""
        work = self.accounts.sign_up if new else self.accounts.sign_in
        player_id, username = work(body, session)
        if old:
            self.storage.accounts.delete_sessions(token=old)
        token = self.accounts.new_session(player_id)
        self.accounts.remember_device(device, player_id)
        codes = self.care.new_codes(player_id) if new else None  # shown once
        name = self.storage.players.player_by_id(player_id)["name"]
        return player_id, username, token, name, codes

    async def sign_out(self, body: dict[str, Any], session, token: str | None) -> dict:
        """End this session (``everywhere``: every session of the profile)."""
        everywhere = body.get("everywhere", False)
        if not isinstance(everywhere, bool):
            raise WebError("everywhere must be true or false")
        if session is not None:
            if everywhere:
                await run_in_threadpool(
                    self.storage.accounts.delete_sessions, player_id=session["id"]
                )
            else:
                await run_in_threadpool(self.storage.accounts.delete_sessions, token=token)
        return {"player": None, "account": None}


__all__ = ["SignIns"]
