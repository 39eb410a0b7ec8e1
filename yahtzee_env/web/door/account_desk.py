"""Account care behind the door (issue 32): `AccountDesk`, the intents that check a
password or a recovery code; the server object holds one (``service.desk``) and `routes`
reaches each in one line (the route sets or clears the session cookie).

    POST /api/account/password {current, password}   a new password; the other sessions end
    POST /api/account/recovery-codes {password}      a new set of recovery codes (shown once)
    POST /api/account/recover {username, code, password}  back in with a recovery code
    POST /api/account/delete {password}              the account and its data go
    GET  /api/account/export                         every row about the player, as JSON

A password is hashed in the bounded gate (`logins.HashGate`: slow on purpose); what an
account's deletion changes at a table runs under the table's lock (`locks`) and is
published to its sockets like any other change (`fanout`).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from yahtzee_env.web.door.asks import login_name, pid, who
from yahtzee_env.web.door.fanout import Fanout
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import RateLimiter
from yahtzee_env.web.people.account_care import AccountCare, forget_seats
from yahtzee_env.web.people.accounts import Accounts
from yahtzee_env.web.people.logins import RECOVERY, HashGate
from yahtzee_env.web.storage import Storage
from yahtzee_env.web.tables.authority import Tables
from yahtzee_env.web.tables.locks import TableLocks


class AccountDesk:
    """The account-care intents. ``login_budget`` (an address's sign-in budget),
    ``checking`` (a user name's turn to have a secret checked, `logins.LoginGate`) and
    ``spend`` (the per-token budget) are the server object's (`Service`)."""

    def __init__(
        self,
        care: AccountCare,
        accounts: Accounts,
        storage: Storage,
        tables: Tables,
        locks: TableLocks,
        fanout: Fanout,
        hash_gate: HashGate,
        logins: RateLimiter,
        login_budget: Callable[..., None],
        checking: Callable[..., Any],
        spend: Callable[[Any], None],
    ) -> None:
        self.care, self.accounts, self.storage, self.tables = care, accounts, storage, tables
        self.locks, self.fanout, self.hash_gate = locks, fanout, hash_gate
        self.logins = logins
        self.login_budget, self.checking, self.spend = login_budget, checking, spend

    def budget(self, address: str, session, cookie: str | None) -> None:
        """A password checked for a session spends the sign-in budget of the address and a
        budget of that session (``cookie``: a stolen session cannot guess the password at
        leisure, and spends only its own budget: nobody else's session or sign-in is slowed)."""
        self.login_budget(address)
        if session is not None and isinstance(cookie, str):
            key = ("care-session", hashlib.sha256(cookie.encode()).hexdigest())
            if not self.logins.allow(key):
                wait = max(1, math.ceil(self.logins.retry_after(key)))
                raise WebError(
                    "too many password attempts from this session: wait a little",
                    429,
                    "login_budget",
                    retry_after=wait,
                )

    def profile(self, player_id: int, username: str) -> dict[str, Any]:
        name = self.storage.players.player_by_id(player_id)["name"]
        return {"player": {"id": player_id, "name": name}, "account": username}

    async def change_password(
        self, body: dict[str, Any], session, address: str, cookie: str | None
    ) -> tuple[dict[str, Any], str]:
        """A new password: the reply and the new session's token (the others end)."""
        self.budget(address, session, cookie)
        reply, token = await self.hash_gate.run(self.changed, body, session)
        return {**reply, "changed": True}, token

    def changed(self, body: dict[str, Any], session) -> tuple[dict[str, Any], str]:
        username = self.care.change_password(pid(session), body)
        return self.profile(session["id"], username), self.accounts.new_session(session["id"])

    async def recovery_codes(
        self, body: dict[str, Any], session, address: str, cookie: str | None
    ) -> dict[str, Any]:
        """A new set of recovery codes (shown once)."""
        self.budget(address, session, cookie)
        codes = await self.hash_gate.run(self.care.regenerate, pid(session), body)
        return {"recovery_codes": codes}

    async def recover(
        self, body: dict[str, Any], address: str, device: str | None
    ) -> tuple[dict[str, Any], str]:
        """Back in with a recovery code (``device``: this browser's id cookie, as sent). A
        recovery has its own address backstop and its own counts (`logins`: per address, no
        per-name budget), so it never waits behind password guesses."""
        self.login_budget(address, RECOVERY)
        async with self.checking(login_name(body), address, device, RECOVERY):
            return await self.hash_gate.run(self.recovered, body)

    def recovered(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        player_id, username, left = self.care.recover(body)
        token = self.accounts.new_session(player_id)
        return {**self.profile(player_id, username), "recovery_codes_left": left}, token

    async def delete(
        self, body: dict[str, Any], session, address: str, cookie: str | None
    ) -> dict[str, Any]:
        """The account and its data go; its seats at live tables become nameless."""
        self.budget(address, session, cookie)
        codes = await self.hash_gate.run(self.care.check_delete, pid(session), body)
        player_id = session["id"]
        for code in codes:
            try:
                state = await self.locks.run(
                    code, functools.partial(self.forget, player_id=player_id)
                )
            except WebError:
                continue  # the table expired meanwhile
            self.fanout.publish(state)
        await run_in_threadpool(self.care.delete, player_id)
        return {"player": None, "account": None, "deleted": True}

    def forget(self, code: str, player_id: int) -> dict[str, Any]:
        """Under the table's lock: the deleted player's seats there lose their name."""
        tables = self.tables
        with tables.locked(code) as table:
            changed = forget_seats(table, player_id)
            if changed:
                self.storage.tables.update_seats(code, [table.seats[i].row() for i in changed])
                if table.started and table.game is not None and not table.game.over:
                    tables.run_cpus(table)
                    tables.timer.arm(table)
            return tables.state(table)

    async def export(self, session) -> dict[str, Any]:
        """Every row about the session's player."""
        self.spend(who({}, session))
        return await run_in_threadpool(self.care.export, pid(session))


__all__ = ["AccountDesk"]
