"""Sign-ins that strangers cannot use to lock an account: a growing delay, and known devices.

A refusal after N wrong passwords would let anyone lock anyone out (ten wrong passwords
from ten addresses, repeated every minute). Instead:

- `LoginThrottle` counts the failed sign-ins of each user name (one failure is forgotten
  every ``Limits.login_forget_s``) and, past ``login_free_failures`` of them, makes the next
  sign-in of that name wait before its password is checked: ``login_delay_s`` doubling with
  each failure, at most ``login_delay_max_s``. Nothing is refused: the owner's right
  password still signs in, a guesser gets a few guesses a minute per name.
- A browser that signed in to the account before carries a device cookie
  (`DEVICE_COOKIE`, a random token stored hashed with its player, set at every successful
  sign-in or sign-up) and is never slowed: an attacker cannot slow the owner's own devices.
- `NameTurns`: one sign-in (or recovery) per user name is checked at a time; the others
  wait their turn behind it, so the delay above caps the guesses at one account at a few
  a minute however many addresses send them (at most ``Limits.login_waiting`` wait; past
  that, 429 ``name_busy``). A known device skips the line as it skips the delay.
- `HashGate`: every argon2 run (a sign-in, a sign-up, a password change, a recovery code,
  the dummy hash of an unknown name) waits for one of ``Limits.hash_workers`` slots, at most
  ``Limits.hash_queue`` of them waiting; past that the server answers 503 ``busy`` with a
  ``Retry-After``. A burst of sign-ins costs at most that many argon2 buffers (19 MiB each)
  at once, not one per worker thread.
- Per address there is only a large backstop (`Limits.logins_per_minute`), for a network.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from yahtzee_env.web.errors import WebError

T = TypeVar("T")

DEVICE_COOKIE = "yz_device"
DEVICE_DAYS = 365


class LoginThrottle:
    """Failed sign-ins per user name, and the delay they earn (a bounded map)."""

    def __init__(
        self,
        free: int = 3,
        delay_s: float = 0.5,
        max_delay_s: float = 8.0,
        forget_s: float = 60.0,
        max_keys: int = 50_000,
        clock=time.monotonic,
    ) -> None:
        self.free, self.delay_s, self.max_delay_s = free, delay_s, max_delay_s
        self.forget_s, self.max_keys, self.clock = forget_s, max_keys, clock
        self.failures: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _count(self, name: str, now: float) -> float:
        count, last = self.failures.get(name, (0.0, now))
        return max(0.0, count - (now - last) / self.forget_s)

    def delay(self, name: str) -> float:
        """Seconds the next sign-in of ``name`` waits (0 while it has few failures)."""
        over = self._count(name, self.clock()) - self.free
        if over < 0:
            return 0.0
        return min(self.max_delay_s, self.delay_s * 2 ** int(over))

    def failed(self, name: str) -> None:
        now = self.clock()
        self.failures[name] = (self._count(name, now) + 1, now)
        self.failures.move_to_end(name)
        while len(self.failures) > self.max_keys:
            self.failures.popitem(last=False)


class NameTurns:
    """One sign-in per user name at a time: `turn` waits for the ones before it. A name's
    line holds at most ``max_waiting``; an entry lives only while someone is in it."""

    def __init__(self, max_waiting: int = 16) -> None:
        self.max_waiting = max_waiting
        self.lines: dict[str, list[Any]] = {}  # name -> [lock, people in line]

    def waiting(self, name: str) -> int:
        line = self.lines.get(name)
        return 0 if line is None else line[1]

    @contextlib.asynccontextmanager
    async def turn(self, name: str, retry_after: float = 60.0) -> AsyncIterator[None]:
        line = self.lines.get(name)
        if line is None:
            line = self.lines[name] = [anyio.Lock(), 0]
        if line[1] >= self.max_waiting:
            raise WebError(
                "too many sign-ins to this account are waiting: try again in a minute",
                429,
                "name_busy",
                retry_after=max(1, math.ceil(retry_after)),
            )
        line[1] += 1
        try:
            async with line[0]:
                yield
        finally:
            line[1] -= 1
            if line[1] == 0 and self.lines.get(name) is line:
                del self.lines[name]


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


__all__ = ["DEVICE_COOKIE", "DEVICE_DAYS", "HashGate", "LoginThrottle", "NameTurns"]
