"""E-mail of an account (issue 62): an address confirmed by a one-time link, the choices of
mail ("your turn", invitations), the one-click unsubscribe, and the mails themselves.

Nothing is sent to an address before its confirmation link was followed; the confirmation
mails to one address are capped per day whoever asks (``Limits.confirmations_per_address``:
a stranger cannot make the server mail-bomb someone); a "your turn" or invitation mail goes
at most once per player, table and kind per ``Limits.mail_every_s``. The address is the
account's only: no other player ever reads it. Each mail is in the account's language (the
page's catalogue, ``static/i18n/<lang>.json``, keys ``mail.*``) and carries an RFC 8058
one-click unsubscribe (``List-Unsubscribe`` and ``List-Unsubscribe-Post``).

`Mail` makes the messages (`email.message.EmailMessage`); `door.postman.Postman` sends them.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import quote

from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import Limits
from yahtzee_env.web.storage import Storage, token_hash

MAX_ADDRESS = 254  # RFC 5321's longest path
# An address as this server takes it: ASCII, no space, no control character (no CR/LF: no
# header injection), one "@", a dotted domain
ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
CATALOGUES = Path(__file__).resolve().parent.parent / "static" / "i18n"
LANGS = ("en", "it")


def clean_address(value: Any) -> str:
    """``value`` as an e-mail address (lower-cased domain), or 400 ``bad_email``."""
    if not isinstance(value, str) or len(value) > MAX_ADDRESS or not ADDRESS.fullmatch(value):
        raise WebError("that is not an e-mail address this server can send to", 400, "bad_email")
    local, domain = value.rsplit("@", 1)
    return f"{local}@{domain.lower()}"


def clean_lang(value: Any) -> str:
    return value if value in LANGS else "en"


def address_hash(address: str) -> str:
    """The key of an address's cap (its hash: the cap outlives the address's removal)."""
    return token_hash(address.lower())


@functools.cache
def words(lang: str) -> dict[str, str]:
    """The ``mail.*`` words of the page's catalogue of ``lang``."""
    cat = json.loads((CATALOGUES / f"{clean_lang(lang)}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in cat.items() if k.startswith("mail.")}


def say(lang: str, key: str, **values: str) -> str:
    text = words(lang)[f"mail.{key}"]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


class Mail:
    """An account's address and choices, and the mails made for it. ``site``: the server's
    public address (the links' base); ``sender``: the From address."""

    def __init__(self, storage: Storage, limits: Limits, site: str, sender: str) -> None:
        self.storage, self.limits = storage, limits
        self.site, self.sender = site.rstrip("/"), sender

    # ------------------------------------------------------------------ the account's side
    def need_account(self, player_id: int) -> None:
        if self.storage.accounts.account(player_id=player_id) is None:
            raise WebError("sign in first: this needs an account", 403, "no_account")

    def view(self, player_id: int) -> dict[str, Any]:
        """What the account's page shows: its address (its own only), confirmed, choices."""
        self.need_account(player_id)
        row = self.storage.mail.of(player_id)
        if row is None:
            return {"address": None, "confirmed": False, "turns": True, "invites": True}
        return {k: row[k] for k in ("address", "confirmed", "turns", "invites")}

    def set_address(self, player_id: int, body: dict[str, Any]) -> EmailMessage:
        """A new address (unconfirmed until its link is followed): its confirmation mail."""
        self.need_account(player_id)
        address, lang = clean_address(body.get("address")), clean_lang(body.get("lang"))
        self.cap(address)
        token = secrets.token_urlsafe(24)
        expires = self.storage.clock() + self.limits.confirm_ttl_s
        key = secrets.token_urlsafe(24)
        self.storage.mail.set_address(player_id, address, token_hash(token), expires, key, lang)
        return self.confirmation(address, token, lang)

    def resend(self, player_id: int) -> EmailMessage:
        """A new confirmation link for the unconfirmed address (the old one stops working)."""
        self.need_account(player_id)
        row = self.storage.mail.of(player_id)
        if row is None or row["confirmed"]:
            raise WebError("there is no address waiting for confirmation", 409, "no_email")
        self.cap(row["address"])
        token = secrets.token_urlsafe(24)
        expires = self.storage.clock() + self.limits.confirm_ttl_s
        self.storage.mail.renew_confirmation(player_id, token_hash(token), expires)
        return self.confirmation(row["address"], token, row["lang"])

    def cap(self, address: str) -> None:
        """Count a confirmation mail to ``address``, or 429 ``email_cap`` past the day's cap."""
        lim = self.limits
        if not self.storage.mail.claim_confirmation(
            address_hash(address), lim.confirmations_per_address, 86_400.0
        ):
            raise WebError("that address has had enough confirmation mails today", 429, "email_cap")

    def choices(self, player_id: int, body: dict[str, Any]) -> dict[str, Any]:
        self.need_account(player_id)
        turns, invites = body.get("turns"), body.get("invites")
        if not isinstance(turns, bool) or not isinstance(invites, bool):
            raise WebError("turns and invites must be true or false")
        row = self.storage.mail.of(player_id)
        if row is None:
            raise WebError("add an address first", 409, "no_email")
        # A mail turned back on gets a new unsubscribe key: the links of the mails before
        # (an unsubscribe done, replayed) no longer turn it off; the next mails carry the key.
        renew = (turns and not row["turns"]) or (invites and not row["invites"])
        key = secrets.token_urlsafe(24) if renew else None
        self.storage.mail.set_choices(player_id, turns, invites, clean_lang(body.get("lang")), key)
        return self.view(player_id)

    def remove(self, player_id: int) -> dict[str, Any]:
        self.need_account(player_id)
        self.storage.mail.remove(player_id)
        return self.view(player_id)

    # ------------------------------------------------------------------ the links
    def confirm(self, token: Any) -> bool:
        """Follow a confirmation link (once, before it expires)."""
        if not isinstance(token, str) or not 16 <= len(token) <= 64:
            return False
        return self.storage.mail.confirm(token_hash(token)) is not None

    def unsubscribe(self, player: Any, key: Any) -> bool:
        """The one-click unsubscribe: every mail of ``player`` off, if ``key`` is its key."""
        if not isinstance(player, str) or not player.isdigit() or len(player) > 19:
            return False
        if not isinstance(key, str) or not 16 <= len(key) <= 64:
            return False
        return self.storage.mail.unsubscribe(int(player), key)

    # ------------------------------------------------------------------ the mails
    def message(self, to: str, lang: str, subject: str, lines: list[str]) -> EmailMessage:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = self.sender, to, subject
        msg.set_content("\n\n".join([*lines, say(lang, "signature")]) + "\n")
        return msg

    def confirmation(self, address: str, token: str, lang: str) -> EmailMessage:
        link = f"{self.site}/email/confirm?t={quote(token)}&lang={lang}"  # the page's words
        lines = [say(lang, "confirm_body"), link, say(lang, "confirm_ignore")]
        return self.message(address, lang, say(lang, "confirm_subject"), lines)

    def subscribed(self, player_id: int, kind: str, code: str) -> dict[str, Any] | None:
        """``player_id``'s confirmed address row if it wants mail of ``kind`` ("turns",
        "invites") and none went about table ``code`` lately (then one is noted)."""
        row = self.storage.mail.of(player_id)
        if row is None or not row["confirmed"] or not row[kind]:
            return None
        if not self.storage.mail.claim(player_id, code, kind, self.limits.mail_every_s):
            return None
        return row

    def with_unsubscribe(self, msg: EmailMessage, player_id: int, row: dict) -> EmailMessage:
        key, lang = quote(row["unsubscribe"]), row["lang"]
        link = f"{self.site}/email/unsubscribe?u={player_id}&k={key}&lang={lang}"
        msg["List-Unsubscribe"] = f"<{link}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        body = msg.get_content() + "\n" + say(row["lang"], "unsubscribe") + "\n" + link + "\n"
        msg.set_content(body)
        return msg

    def turn_mail(self, code: str, seat: int) -> EmailMessage | None:
        """(A worker thread) the "your turn" mail to the player of seat ``seat`` at table
        ``code``, or None (no account, no confirmed address, not wanted, sent lately)."""
        owner = self.storage.friends.seat_owner(code, seat)
        if owner is None or self.storage.accounts.account(player_id=owner) is None:
            return None
        row = self.subscribed(owner, "turns", code)
        if row is None:
            return None
        lang, link = row["lang"], f"{self.site}/t/{code}"
        lines = [say(lang, "turn_body", code=code), link]
        msg = self.message(row["address"], lang, say(lang, "turn_subject", code=code), lines)
        return self.with_unsubscribe(msg, owner, row)

    def invite_mail(self, to_name: str, from_id: int, code: str) -> EmailMessage | None:
        """(A worker thread) the invitation mail from ``from_id`` to the account ``to_name``,
        or None."""
        account = self.storage.accounts.account(username=to_name)
        inviter = self.storage.accounts.account(player_id=from_id)
        if account is None or inviter is None:
            return None
        from_name = inviter["username"]
        to_id = account["player_id"]
        row = self.subscribed(to_id, "invites", code)
        if row is None:
            return None
        lang, link = row["lang"], f"{self.site}/t/{code}"
        lines = [say(lang, "invite_body", name=from_name, code=code), link]
        subject = say(lang, "invite_subject", name=from_name)
        msg = self.message(row["address"], lang, subject, lines)
        return self.with_unsubscribe(msg, to_id, row)

    def sweep(self) -> None:
        self.storage.mail.sweep(max(self.limits.mail_every_s, 86_400.0))


__all__ = ["LANGS", "MAX_ADDRESS", "Mail", "address_hash", "clean_address", "clean_lang", "words"]
