"""Accounts and sessions of the web game: user names, argon2id password hashes, cookies.

Optional: a guest plays with a session of their own (a guest profile); signing up makes that
profile an account (its games and tables stay with it), and signing in on another device
opens a session for the same profile, so the statistics and open tables follow the account.

- Passwords are hashed with argon2id (`argon2-cffi`, OWASP's minimum profile: 19 MiB, two
  passes, one lane: about 0.1-0.2 s on a busy core, off the event loop), never by hand.
- A sign-in for an unknown user name verifies a dummy hash of the same cost, and every
  failure answers the same words (`BAD_LOGIN`), so the answer does not tell whether a user
  name exists. Failed sign-ins slow a user name down, but never on a browser that signed in
  to it before (a device cookie: `logins`); per address there is a large backstop (`limits`).
- Passwords have `MIN_PASSWORD` characters at least and are not one of `COMMON_PASSWORDS`
  (nor the user name).
- The session is a random token in an ``HttpOnly``, ``SameSite=Strict`` cookie (``Secure``
  over HTTPS), stored hashed; "sign out everywhere" deletes every session of the profile.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

from yahtzee_env.web.errors import WebError
from yahtzee_env.web.people.logins import DEVICE_COOKIE, DEVICE_DAYS

SESSION_COOKIE = "yz_session"
# The browser's id is the ``yz_device`` cookie (`logins.DEVICE_COOKIE`: a long-lived random
# id, stored only hashed, set with the first session cookie and kept across sign-ins): seats
# taken from one browser never rate each other (`ratings`), and a browser that signed in to an
# account before is never slowed by the failed sign-ins of strangers (`logins`).
SESSION_DAYS = 180
MIN_PASSWORD = 10
MAX_PASSWORD = 128
USERNAME = re.compile(r"[A-Za-z0-9_.-]{3,24}")
BAD_LOGIN = "wrong user name or password"

# A small list of the most common passwords of MIN_PASSWORD characters or more (the shorter
# ones fail the length test anyway); compared case-insensitively.
COMMON_PASSWORDS = frozenset(
    """
    1234567890 0123456789 12345678910 1234567891 123456789a 1q2w3e4r5t 1qaz2wsx3edc
    qwertyuiop password12 password123 password1234 passw0rd123 iloveyou12 qwerty1234
    qwerty12345 qwerty123456 abcdefghij abc1234567 a123456789 aa12345678 zaq12wsx12
    football12 baseball12 superman12 princess12 sunshine12 starwars12 whatever12
    trustno1234 letmein123 welcome123 welcome1234 monkey1234 dragon1234 master1234
    11111111111 1111111111 0000000000 2222222222 9876543210 1234554321 1122334455
    asdfghjkl1 asdfghjkl; zxcvbnm123 q1w2e3r4t5 1q2w3e4r5t6y passwordpassword yahtzee123
    yahtzee1234 yatzy12345 changeme123 administrator adminadmin
    """.split()  # noqa: SIM905 (a word list reads best as words)
)


def clean_username(value: Any) -> str:
    """A user name: 3-24 letters, digits, '_', '.' or '-' (compared case-insensitively)."""
    if not isinstance(value, str) or not USERNAME.fullmatch(value.strip()):
        raise WebError(
            "a user name is 3 to 24 letters, digits, '_', '.' or '-'", 400, "bad_username"
        )
    return value.strip().casefold()


def check_password(password: Any, username: str) -> str:
    """The password if it is long enough and not a common one; WebError otherwise."""
    if not isinstance(password, str):
        raise WebError("password must be a string", 400, "bad_password")
    if len(password) < MIN_PASSWORD:
        raise WebError(f"a password has {MIN_PASSWORD} characters at least", 400, "password_short")
    if len(password) > MAX_PASSWORD:
        raise WebError(f"a password has at most {MAX_PASSWORD} characters", 400, "bad_password")
    folded = password.casefold()
    if folded in COMMON_PASSWORDS or username in folded:
        raise WebError(
            "that password is too easy to guess (a common one, or it contains your user "
            "name): choose another",
            400,
            "password_common",
        )
    return password


class Accounts:
    """Sign up, sign in, sign out over `Storage` (call from worker threads: hashing is
    slow on purpose)."""

    def __init__(self, storage) -> None:
        from argon2 import PasswordHasher

        self.storage = storage
        self.hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
        self._dummy: str | None = None

    @property
    def dummy_hash(self) -> str:
        """A hash of the same cost to verify when the user name is unknown."""
        if self._dummy is None:
            self._dummy = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy

    def new_session(self, player_id: int) -> str:
        token = secrets.token_urlsafe(32)
        self.storage.accounts.create_session(token, player_id)
        return token

    def remember_device(self, token: str, player_id: int) -> None:
        """The browser ``token`` (its device cookie) just signed in as ``player_id``."""
        self.storage.accounts.add_device(token, player_id)

    def known_device(self, token: Any, username: str) -> bool:
        """Whether the device cookie ``token`` signed in to account ``username`` before."""
        if not isinstance(token, str) or not token or len(token) > 128:
            return False
        row = (
            self.storage.accounts.account(username=username)
            if USERNAME.fullmatch(username)
            else None
        )
        if row is None:
            return False
        return self.storage.accounts.device_signed_in(token, row["player_id"], DEVICE_DAYS * 86_400)

    def session_player(self, token: Any):
        if not isinstance(token, str) or not token or len(token) > 128:
            return None
        return self.storage.accounts.session_player(token, SESSION_DAYS * 86_400)

    def account_name(self, player_id: int) -> str | None:
        row = self.storage.accounts.account(player_id=player_id)
        return row["username"] if row else None

    def sign_up(self, body: dict[str, Any], session) -> tuple[int, str]:
        """Make the session's guest profile (or a new one) an account; returns the player
        id and the user name."""
        username = clean_username(body.get("username"))
        password = check_password(body.get("password"), username)
        if session is not None and self.account_name(session["id"]) is not None:
            raise WebError("you are signed in already: sign out first", 409, "signed_in")
        if self.storage.accounts.account(username=username) is not None:
            raise WebError("that user name is taken", 409, "username_taken")
        password_hash = self.hasher.hash(password)
        if session is not None:
            player_id = session["id"]  # the guest's games and tables come along
        else:
            from yahtzee_env.web.errors import clean_name

            name = clean_name(body.get("name"), default=body.get("username").strip())
            player_id = self.storage.players.create_player(name, secrets.token_urlsafe(24))
        if not self.storage.accounts.create_account(player_id, username, password_hash):
            raise WebError("that user name is taken", 409, "username_taken")
        return player_id, username

    def sign_in(self, body: dict[str, Any], session) -> tuple[int, str]:
        """The account's player id and user name if the password is right; the same 401
        for a wrong password and an unknown user (after the same work). A guest session's
        games and tables move to the account."""
        from argon2.exceptions import InvalidHashError, VerificationError

        username = body.get("username")
        password = body.get("password")
        if not isinstance(username, str) or not isinstance(password, str):
            raise WebError("username and password must be strings", 400, "bad_login")
        username = username.strip().casefold()[:64]
        row = (
            self.storage.accounts.account(username=username)
            if USERNAME.fullmatch(username)
            else None
        )
        try:
            self.hasher.verify(row["password_hash"] if row else self.dummy_hash, password)
        except (VerificationError, InvalidHashError):
            row = None
        else:
            if row is not None and self.hasher.check_needs_rehash(row["password_hash"]):
                self.storage.accounts.set_password_hash(
                    row["player_id"], self.hasher.hash(password)
                )
        if row is None:
            raise WebError(BAD_LOGIN, 401, "bad_login")
        player_id = row["player_id"]
        guest = session is not None and self.account_name(session["id"]) is None
        if guest and session["id"] != player_id:  # the guest's games come along
            self.storage.players.adopt(session["id"], player_id)
        return player_id, row["username"]


def device_token(conn) -> str | None:
    """The browser id cookie of a request or socket, as sent (None without a well-formed one)."""
    value = conn.cookies.get(DEVICE_COOKIE)
    if not isinstance(value, str) or not 16 <= len(value) <= 64:
        return None
    return value


def device_of(conn) -> str | None:
    """The hashed browser id of a request or socket (None without the cookie)."""
    value = device_token(conn)
    return None if value is None else hashlib.sha256(f"device:{value}".encode()).hexdigest()


__all__ = [
    "DEVICE_COOKIE",
    "SESSION_COOKIE",
    "Accounts",
    "check_password",
    "clean_username",
    "device_of",
    "device_token",
]
