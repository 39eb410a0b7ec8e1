"""What the whole web refuses, in one place: `WebError` (a refused request, with its HTTP
status and a stable code the page translates) and the checks of what a person types that
every wing makes: a table's code (`clean_code`) and a player's name (`clean_name`, whose
characters `names.name_problem` judges).

The door, the people and the tables all raise and catch these; none of them reaches into
another wing for them.
"""

from __future__ import annotations

import re
from typing import Any

from yahtzee_env.web.names import name_problem

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: easy to read aloud
CODE_LENGTH = 8  # 31**8 ~ 2**39.6 codes
CODE_PATTERN = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
MAX_NAME = 24

ERROR_CODES = {
    400: "bad_request",
    403: "forbidden",
    404: "unknown_table",
    408: "timeout",
    409: "conflict",
    410: "gone",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


class WebError(Exception):
    """A refused request: ``status`` is the HTTP status, the message says why in English (for
    the API and the terminal) and ``code`` is a stable machine word for it, by default the
    status's (`ERROR_CODES`); the page translates it (``err.<code>`` in
    ``static/i18n/*.json``), with ``params`` as its placeholders."""

    status = 400

    def __init__(
        self, message: str, status: int | None = None, code: str | None = None, **params: Any
    ) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.code = code or ERROR_CODES.get(self.status, "error")
        self.params = params


def clean_code(code: Any) -> str:
    """A table code as typed (any case, dashes or spaces) in canonical form."""
    if not isinstance(code, str):
        raise WebError("table code must be a string", code="unknown_table")
    text = code.strip().upper().replace("-", "").replace(" ", "")
    if CODE_PATTERN.fullmatch(text) is None:
        raise WebError(f"no table has the code {code[:20]!r}", 404, "unknown_table")
    return text


def clean_name(name: Any, default: str | None = None) -> str:
    """A player name: 1..24 characters, none that disguises it (`names.name_problem`)."""
    if name is None and default is not None:
        return default
    if not isinstance(name, str):
        raise WebError("name must be a string", code="name_empty")
    name = " ".join(name.split())
    if not name:
        if default is not None:
            return default
        raise WebError("name is empty", code="name_empty")
    if len(name) > MAX_NAME:
        raise WebError(f"name is longer than {MAX_NAME} characters", code="name_long", max=MAX_NAME)
    problem = name_problem(name)
    if problem is not None:
        raise WebError(problem[0], code=problem[1])
    return name


__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "CODE_PATTERN",
    "ERROR_CODES",
    "MAX_NAME",
    "WebError",
    "clean_code",
    "clean_name",
]
