"""Sign-ins that strangers cannot use to lock the owner out (issue 31, issue 57; OWASP
ASVS V2.2): whatever a stranger does, the owner's right password from a new device is
answered within a hash's time, and the guesses at one account stay a few a minute however
many addresses send them.

A refusal after N wrong passwords of a name would let anyone lock anyone out, and so does a
line of waiting sign-ins that a stranger keeps full (issue 57: twenty looping guesses kept a
name's line full and the owner's right password got 429). So nothing waits in a line: a
check is made at once or refused at once with a ``Retry-After``, and what refuses it is
counted per address and per user name, in the database (``storage.logins``), so that every
process (``--workers``, several instances) sees the same counts:

- **One address pays for its own failures.** Per (user name, client address, kind) the
  failed checks are counted (one forgotten every ``Limits.login_forget_s``); past
  ``login_free_failures`` of them, that address's next check of that name is refused until
  ``login_retry_s`` (doubling with each failure, at most ``login_retry_max_s``) after its
  last failure: 429 ``login_wait``. One address gets a few guesses a minute at a name, and
  nobody else is slowed by them.
- **At most one check per name and address in flight**: a second one at the same time gets
  429 ``name_busy`` at once (its lease, ``login_lease_s``, outlives a process that died).
  A stranger's requests never hold a place that others wait behind.
- **Each name has two budgets** (token buckets kept as a "theoretical arrival time", GCRA):
  checks from addresses *new* to the name draw from ``new`` (``name_checks_burst``, then
  ``name_checks_per_minute``); addresses that *tried* it within ``login_remember_s`` draw
  from ``returning`` (``name_retries_burst``, ``name_retries_per_minute``). Past either:
  429 ``name_budget`` with the Retry-After of the budget's next token. An address has
  tried a name when one of its checks was made, or when it came back before the
  Retry-After of a refusal (a loop, not a person); an address refused by ``new`` that waits
  as told stays new, so an owner caught in a burst still gets in at the next token. So a
  stranger looping from any number of addresses soon draws only from ``returning`` and
  cannot empty what the owner's new device draws from, and the checks of one account
  stay at about five a minute whatever the number of addresses (a stranger who keeps
  ``new`` empty must bring a few never-seen addresses a minute, each spent for an hour).
- **Recovery codes have rows of their own** (kind ``recovery``) and no per-name budget:
  a code has 31^12 (about 2^59) values, so guessing one is hopeless at any rate the server's
  hashing allows (`HashGate`), and a budget a stranger could empty would only lock the owner
  out. They never wait behind password guesses, nor password guesses behind them.
- **A known device skips all of this**: a browser that signed in to the account before
  carries a device cookie (`DEVICE_COOKIE`, a random token stored hashed with its player,
  set at every successful sign-in or sign-up); its checks are neither refused nor counted.
- A right password or code forgets its address's failures at that name.
- `HashGate`: every argon2 run (a sign-in, a sign-up, a password change, a recovery code,
  the dummy hash of an unknown name) waits for one of ``Limits.hash_workers`` slots, at most
  ``Limits.hash_queue`` of them waiting; past that the server answers 503 ``busy`` with a
  ``Retry-After``. A burst of sign-ins costs at most that many argon2 buffers (19 MiB each)
  at once, not one per worker thread.
- Per address there is only a large backstop (`Limits.logins_per_minute`, in memory), for a
  network; recovery codes have a backstop bucket of their own.

Where a stranger shares the owner's address (one NAT), the owner's new device pays for the
stranger's failures there; its known devices and recovery codes still get in.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import token_hash

T = TypeVar("T")

DEVICE_COOKIE = "yz_device"
DEVICE_DAYS = 365
PASSWORD, RECOVERY = "password", "recovery"  # the kinds of secret checked
NEW, RETURNING = "new", "returning"  # a name's budgets: for addresses new to it, and the rest
FAILED = frozenset({"bad_login", "bad_recovery"})  # the answers that count as a failure
EARLY_S = 1.0  # back this much before a Retry-After (whole seconds, rounded up) is early


def failures_now(row: dict[str, float], now: float, forget_s: float) -> float:
    """The failures of a row as of ``now`` (one forgotten every ``forget_s``)."""
    return max(0.0, row["failures"] - max(0.0, now - row["updated"]) / forget_s)


def wait_after(failures: float, limits: Limits) -> float:
    """Seconds an address waits after its last failure at a name, with ``failures`` of them."""
    over = math.ceil(failures - 1e-9) - limits.login_free_failures
    if over <= 0:
        return 0.0
    return min(limits.login_retry_max_s, limits.login_retry_s * 2 ** min(over - 1, 30))


def refusal(message: str, code: str, wait: float) -> WebError:
    return WebError(message, 429, code, retry_after=max(1, math.ceil(wait)))


def admit(
    row: dict[str, float], tats: dict[str, float], now: float, *, limits: Limits, kind: str
) -> tuple[dict[str, float], dict[str, float], WebError | None]:
    """The rule of a check (`storage.logins.LoginStore.change`'s ``decide``): the row of
    (name, address, kind) and the name's budgets as they become, and the refusal (None: the
    check goes ahead, its lease taken)."""
    row["seen"] = now  # an attempt, checked or refused
    if row["busy_until"] > now:
        message = "this account is being checked from your network: wait for its answer"
        return row, tats, refusal(message, "name_busy", 1)
    failures = failures_now(row, now, limits.login_forget_s)
    ready = row["updated"] + wait_after(failures, limits)
    if ready > now:
        message = "too many wrong attempts at this account from your network: wait a little"
        return row, tats, refusal(message, "login_wait", ready - now)
    if kind == PASSWORD:
        if row["retry_at"] > now + EARLY_S:  # back before its Retry-After: a loop
            row["tried"] = now
        tried = row["tried"] > 0 and row["tried"] > now - limits.login_remember_s
        returning = failures > 0 or tried
        if returning:
            pool, per_minute = RETURNING, limits.name_retries_per_minute
            burst = limits.name_retries_burst
        else:
            pool, per_minute = NEW, limits.name_checks_per_minute
            burst = limits.name_checks_burst
        interval = 60.0 / per_minute
        tat, tolerance = max(tats[pool], now), (burst - 1) * interval
        if tat - now > tolerance:
            wait = tat - now - tolerance
            row["retry_at"] = now + wait
            message = "too many sign-ins to this account: wait a little"
            return row, tats, refusal(message, "name_budget", wait)
        tats[pool] = tat + interval
    row["tried"], row["retry_at"] = now, 0.0
    row["busy_until"] = now + limits.login_lease_s
    return row, tats, None


def settle(
    row: dict[str, float], tats: dict[str, float], now: float, *, limits: Limits, outcome: str
) -> tuple[dict[str, float] | None, dict[str, float], None]:
    """A check's end (``outcome``: ``ok``, ``failed`` or ``none``, a request refused before
    any secret was checked): its lease given back; a failure counted; a success forgets the
    address's row (None: deleted)."""
    if outcome == "ok":
        return None, tats, None
    row["busy_until"] = 0.0
    if outcome == "failed":
        row["failures"] = failures_now(row, now, limits.login_forget_s) + 1
        row["updated"] = now
    return row, tats, None


class LoginGate:
    """The checks of user names' secrets, counted in ``storage.logins`` (the rules above).
    `turn` is one check: refused at once, or let through and its outcome counted."""

    def __init__(self, storage, limits: Limits) -> None:
        self.store, self.limits = storage.logins, limits

    @contextlib.asynccontextmanager
    async def turn(self, name: str, address: str, kind: str = PASSWORD) -> AsyncIterator[None]:
        """The turn of user name ``name``, asked from ``address``, to have a secret of
        ``kind`` checked in the block: 429 (`admit`) or the block runs; a `WebError` out of
        it whose code is in `FAILED` counts as a failure, a clean exit as a success."""
        addr = token_hash(f"login:{address}")
        pools = (NEW, RETURNING) if kind == PASSWORD else ()
        check = functools.partial(admit, limits=self.limits, kind=kind)
        refused = await anyio.to_thread.run_sync(self.store.change, name, addr, kind, pools, check)
        if refused is not None:
            raise refused
        outcome = "none"
        try:
            yield
            outcome = "ok"
        except WebError as err:
            if err.code in FAILED:
                outcome = "failed"
            raise
        finally:
            end = functools.partial(settle, limits=self.limits, outcome=outcome)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.store.change, name, addr, kind, (), end)

    def sweep(self) -> None:
        """Forget the rows and budgets that hold nothing any more (a worker thread)."""
        lim = self.limits
        self.store.forget(self.store.db.clock() - lim.login_remember_s, lim.login_forget_s)


class HashGate:
    """At most ``workers`` password hashes or verifications run at once (in worker threads),
    at most ``queue`` more wait for a slot; past that, 503 ``busy`` with a Retry-After from
    the line's length and ``seconds`` (one run's cost)."""

    def __init__(self, workers: int = 2, queue: int = 64, seconds: float = 0.2) -> None:
        self.workers, self.queue, self.seconds = workers, queue, seconds
        self.limiter = anyio.CapacityLimiter(workers)
        self.pending = 0  # running and waiting

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread once a slot is free."""
        if self.pending >= self.workers + self.queue:
            wait = self.pending / self.workers * self.seconds
            raise WebError(
                "the server is busy signing people in: try again in a few seconds",
                503,
                "busy",
                retry_after=max(1, math.ceil(wait)),
            )
        self.pending += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)
        finally:
            self.pending -= 1


__all__ = [
    "DEVICE_COOKIE",
    "DEVICE_DAYS",
    "PASSWORD",
    "RECOVERY",
    "HashGate",
    "LoginGate",
    "admit",
    "settle",
]
