"""Account care (issue 32): change the password, recovery codes, delete the account, export it.

There is no e-mail here, so a recovery code is the way back into an account whose password
is lost:

- `RECOVERY_CODES` codes are shown once, at sign-up (and again each time the player makes a
  new set, which ends the old one). A code is three groups of four letters and digits of the
  table codes' alphabet (``K7PM-3XQA-9FHT``: 31^12, about 2^59); its first group is its
  *selector*, stored in clear, so that a recovery verifies one hash, not every code's.
- Each code is stored as an argon2id hash (`argon2-cffi`, as the passwords are). A code is
  random, not chosen by a person, so the hash needs no cost against guessing: its profile is
  lighter than the passwords' (8 MiB, one pass) so that making a set stays quick; what the
  hash gives is that a copy of the database holds no working code.
- A code works once: it is marked used by one ``UPDATE ... WHERE used IS NULL`` (of two
  recoveries at once, one wins), and recovering ends every session of the account.
- A recovery for an unknown user name or with a wrong code gets the same 401 as a wrong
  password (a dummy hash is verified). Recoveries spend an address backstop of their own
  (`sign_ins.SignIns.login_budget`) and are counted apart from password guesses
  (`logins`): a stranger's guesses never hold up the owner's code.

Deleting an account needs its password: its statistics, sessions, recovery codes and blocks
go; the games stay, its seats and chat messages under `storage.people.DELETED_NAME`. The
export is every row about the player, as JSON (no hash, no token).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from yahtzee_env.web.errors import CODE_ALPHABET, WebError
from yahtzee_env.web.people.accounts import BAD_LOGIN, USERNAME, Accounts, check_password
from yahtzee_env.web.storage import token_hash
from yahtzee_env.web.storage.people import DELETED_NAME

RECOVERY_CODES = 8
CODE_GROUPS, GROUP = 3, 4
CODE_PATTERN = re.compile(rf"[{CODE_ALPHABET}]{{{CODE_GROUPS * GROUP}}}")


def new_code() -> str:
    """A recovery code as shown: ``XXXX-XXXX-XXXX``."""
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_GROUPS * GROUP))
    return "-".join(chars[i : i + GROUP] for i in range(0, len(chars), GROUP))


def clean_code(value: Any) -> str | None:
    """The code as typed (any case, with or without dashes or spaces), normalised; None if it
    cannot be one."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    text = re.sub(r"[\s-]", "", value).upper()
    return text if CODE_PATTERN.fullmatch(text) else None


class AccountCare:
    """The account-care intents over `Accounts` (call from worker threads: hashing is slow
    on purpose)."""

    def __init__(self, accounts: Accounts) -> None:
        from argon2 import PasswordHasher

        self.accounts, self.storage = accounts, accounts.storage
        self.code_hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)

    def account(self, player_id: int | None) -> dict[str, Any]:
        row = self.storage.accounts.account(player_id=player_id) if player_id is not None else None
        if row is None:
            raise WebError("sign in first: this needs an account", 403, "no_account")
        return row

    def verify_password(self, row: dict[str, Any], password: Any) -> None:
        from argon2.exceptions import InvalidHashError, VerificationError

        if not isinstance(password, str) or len(password) > 1024:
            raise WebError("password must be a string", 400, "bad_password")
        try:
            self.accounts.hasher.verify(row["password_hash"], password)
        except (VerificationError, InvalidHashError):
            raise WebError("that is not your password", 403, "wrong_password") from None

    # ----------------------------------------------------------------- recovery codes
    def new_codes(self, player_id: int) -> list[str]:
        """A new set of codes for the account (the old set stops working); the codes in
        clear, to show once."""
        codes: dict[str, str] = {}
        while len(codes) < RECOVERY_CODES:
            code = new_code()
            codes.setdefault(code[:GROUP], code)  # selectors unique within the account
        rows = [(sel, self.code_hasher.hash(code.replace("-", ""))) for sel, code in codes.items()]
        self.storage.accounts.replace_recovery_codes(player_id, rows)
        return list(codes.values())

    def regenerate(self, player_id: int | None, body: dict[str, Any]) -> list[str]:
        row = self.account(player_id)
        self.verify_password(row, body.get("password"))
        return self.new_codes(row["player_id"])

    def recover(self, body: dict[str, Any]) -> tuple[int, str, int]:
        """Sign in with a recovery code and set a new password: the player id, the user
        name and the codes left. The code is spent; the same 401 for any failure."""
        from argon2.exceptions import InvalidHashError, VerificationError

        username, code = body.get("username"), clean_code(body.get("code"))
        if not isinstance(username, str):
            raise WebError("username must be a string", 400, "bad_login")
        username = username.strip().casefold()[:64]
        row = (
            self.storage.accounts.account(username=username)
            if USERNAME.fullmatch(username)
            else None
        )
        password = check_password(body.get("password"), username)
        stored = None
        if row is not None and code is not None:
            stored = self.storage.accounts.recovery_code(row["player_id"], code[:GROUP])
        try:  # the same work whether or not the account and code exist
            self.code_hasher.verify(stored["code_hash"] if stored else self.dummy, code or "0" * 12)
        except (VerificationError, InvalidHashError):
            stored = None
        if stored is None or not self.storage.accounts.use_recovery_code(
            row["player_id"], stored["selector"]
        ):
            raise WebError(BAD_LOGIN.replace("password", "recovery code"), 401, "bad_recovery")
        player_id = row["player_id"]
        self.storage.accounts.set_password_hash(player_id, self.accounts.hasher.hash(password))
        self.storage.accounts.delete_sessions(player_id=player_id)  # whoever had it is signed out
        return player_id, row["username"], self.storage.accounts.recovery_codes_left(player_id)

    @property
    def dummy(self) -> str:
        if getattr(self, "_dummy", None) is None:
            self._dummy = self.code_hasher.hash(secrets.token_urlsafe(9))
        return self._dummy

    # ----------------------------------------------------------------- password, delete
    def change_password(self, player_id: int | None, body: dict[str, Any]) -> str:
        """Check the current password, set the new one; the account's other sessions end
        (the caller opens a new one for this device). Returns the user name."""
        row = self.account(player_id)
        self.verify_password(row, body.get("current"))
        password = check_password(body.get("password"), row["username"])
        if password == body.get("current"):
            raise WebError("the new password is the old one", 400, "password_same")
        self.storage.accounts.set_password_hash(
            row["player_id"], self.accounts.hasher.hash(password)
        )
        self.storage.accounts.delete_sessions(player_id=row["player_id"])
        return row["username"]

    def check_delete(self, player_id: int | None, body: dict[str, Any]) -> list[str]:
        """The password is right: the tables whose seats the caller renames (under each
        table's lock) before `delete`."""
        row = self.account(player_id)
        self.verify_password(row, body.get("password"))
        return self.storage.people.seat_tables(row["player_id"])

    def delete(self, player_id: int) -> None:
        self.storage.people.delete_account(player_id, token_hash(secrets.token_urlsafe(32)))

    def export(self, player_id: int | None) -> dict[str, Any]:
        self.account(player_id)
        return self.storage.people.export(player_id)


def forget_seats(table, player_id: int) -> list[int]:
    """Under the table's lock: the deleted player's seats at ``table`` keep their place under
    `DELETED_NAME`, nobody's; at an unfinished game the computer plays them. Returns them."""
    changed = []
    for s in table.seats:
        if player_id not in (s.player_id, s.owner_id):
            continue
        s.name, s.player_id, s.owner_id, s.token_hash = DELETED_NAME, None, None, None
        if s.kind == "human":
            s.away = "left"
        changed.append(s.seat)
    return changed


__all__ = ["RECOVERY_CODES", "AccountCare", "clean_code", "forget_seats", "new_code"]
