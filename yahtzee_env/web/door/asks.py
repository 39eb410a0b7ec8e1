"""What every intent reads of its asker, whichever door it comes in by: the JSON body (or
socket message) `parse_json` accepts, the session's player id (`pid`, `account_of`), the
key of its per-token budget (`who`) and the user name a sign-in names (`login_name`)."""

from __future__ import annotations

import json
from typing import Any

from yahtzee_env.web.errors import WebError

try:  # the web extra's orjson: a move's message parsed in a tenth of json's time (issue 60)
    from orjson import loads as _loads
except ModuleNotFoundError:  # pragma: no cover - without the web extra's orjson

    def _not_json(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    def _loads(raw: bytes | str) -> Any:
        return json.loads(raw, parse_constant=_not_json)


MAX_BODY = 4096  # bytes: every legitimate request (or socket message) is far smaller
MAX_SINCE_DIGITS = 9  # `since` is an event number: a few digits at most


def parse_json(raw: bytes | str, limit: int = MAX_BODY) -> dict[str, Any]:
    """A request body or socket message: a JSON object of at most ``limit`` bytes, strict
    JSON (RFC 8259): NaN and Infinity are malformed, with orjson or without it."""
    if len(raw) > limit:
        raise WebError(f"payload too large: {len(raw)} bytes (at most {limit})", 413)
    try:
        data = _loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as err:
        raise WebError(f"malformed JSON: {str(err)[:80]}") from None
    except RecursionError:
        raise WebError("malformed JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise WebError("the JSON body must be an object")
    return data


def pid(session) -> int | None:
    """The session's player id (None without a session)."""
    return session["id"] if session is not None else None


def account_of(session) -> int:
    """The session's player id, for an intent that needs an account's session."""
    if session is None:
        raise WebError("sign in first: this needs an account", 403, "no_account")
    return session["id"]


def who(body: dict[str, Any], session, key: str = "token") -> Any:
    """The key of the per-token limit: the body's token, else the session."""
    return body.get(key) or (f"session:{session['id']}" if session is not None else None)


def login_name(body: dict[str, Any]) -> str:
    """The user name a sign-in (or recovery) names, as the throttle counts it."""
    name = body.get("username")
    return name.strip().casefold()[:64] if isinstance(name, str) else ""


def flag(body: dict[str, Any], key: str = "on") -> bool:
    """A true-or-false field of the body."""
    value = body.get(key)
    if not isinstance(value, bool):
        raise WebError(f"{key} must be true or false")
    return value


__all__ = [
    "MAX_BODY",
    "MAX_SINCE_DIGITS",
    "account_of",
    "flag",
    "login_name",
    "parse_json",
    "pid",
    "who",
]
