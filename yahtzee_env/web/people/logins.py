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
- Per address there is only a large backstop (`Limits.logins_per_minute`), for a network.
"""

from __future__ import annotations

import time
from collections import OrderedDict

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


__all__ = ["DEVICE_COOKIE", "DEVICE_DAYS", "LoginThrottle"]
