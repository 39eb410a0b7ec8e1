"""The server's front door: security headers, cross-site checks, per-address rate limits and
a rate-bounded log of refused requests (one ASGI middleware and the helpers the WebSocket
handshake shares).

- Every response gets a strict Content-Security-Policy (the page has no inline script or
  handler), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (the share
  link's code never leaks through ``Referer``); the API adds ``Cache-Control: no-store``.
- A state-changing request (any method but GET/HEAD/OPTIONS) must be ``application/json``
  (a cross-site form or ``text/plain`` POST needs no CORS preflight: 415) and come from the
  server's own origin or one of ``--allowed-origin`` (403). A request without ``Origin``
  (curl, scripts) passes unless ``Sec-Fetch-Site`` says it is cross-site. The mails' links
  (`FORM_PATHS`) are the exception: their token, not a session, is the proof.
- Every HTTP request, GETs and static files included, spends a token of its client
  address's bucket (429 with ``Retry-After`` when empty).
- With ``allowed_hosts``, a request (or socket) whose ``Host`` is not one of them gets 400, GETs
  included (DNS rebinding: a hostile name that resolves to this loopback server
  would otherwise count as the server's own origin). ``yahtzee serve`` on a loopback address
  allows only the loopback names (and the hosts of ``--allowed-origin``) by default.
"""

from __future__ import annotations

import json
import logging

from yahtzee_env.web.limits import RateLimiter

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# The mails' links (issue 62, `postman`): their pages post a plain form (whose Origin is
# "null" under no-referrer), and a mail client's one-click unsubscribe (RFC 8058) posts one
# from no page at all; the link's token is the proof, not a session or an origin
FORM_PATHS = frozenset(("/email/confirm", "/email/unsubscribe"))
logger = logging.getLogger("yahtzee_env.web")


class RefusalLog:
    """One log line per refused request, at most ``rate`` lines a second (bursts of
    ``burst``); the lines left out are counted and reported with the next one."""

    def __init__(self, rate: float = 5.0, burst: int = 20) -> None:
        self.bucket = RateLimiter(rate, burst, max_keys=1)
        self.suppressed = 0

    def refused(self, status: int, what: str, address: str, reason: str) -> None:
        if not self.bucket.allow("log"):
            self.suppressed += 1
            return
        extra = f" ({self.suppressed} more refusals not logged)" if self.suppressed else ""
        self.suppressed = 0
        logger.warning("refused %d %s from %s: %s%s", status, what, address, reason[:120], extra)


def header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def client_address(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def own_origin(scope) -> str:
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"), scope.get("scheme"))
    return f"{scheme}://{header(scope, b'host') or ''}"


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str:
    """The name of a ``Host`` header's value, without its port: ``[::1]:8000`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def host_refused(scope, allowed_hosts: frozenset[str] | None) -> str | None:
    """Why this request's ``Host`` is refused (None if it is allowed, or any is).
    ``allowed_hosts`` holds names (``game.example``) and suffix patterns (``*.example``)."""
    if allowed_hosts is None or "*" in allowed_hosts:
        return None
    name = host_name(header(scope, b"host") or "")
    if name in allowed_hosts or any(
        pattern.startswith("*.") and name.endswith(pattern[1:]) for pattern in allowed_hosts
    ):
        return None
    return f"host {name[:60]!r} is not served here" if name else "the request has no Host"


def cross_site(scope, allowed_origins: frozenset[str]) -> str | None:
    """Why this request counts as cross-site (None if it does not)."""
    origin = header(scope, b"origin")
    if origin is None:
        if header(scope, b"sec-fetch-site") == "cross-site":
            return "a cross-site request"
        return None
    origin = origin.rstrip("/")
    if origin == own_origin(scope) or origin in allowed_origins:
        return None
    return f"origin {origin[:60]!r} is not allowed"


def json_response(status: int, message: str, code: str, extra_headers=()) -> tuple[dict, dict]:
    body = json.dumps({"error": message, "code": code}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra_headers,
    ]
    return (
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    )


def is_page_file(path: str) -> bool:
    """Whether ``path`` is one of the page's own files (its HTML, scripts, styles,
    catalogues, its service worker and the offline levels' weights): the same for everyone,
    cheap, and revalidated by the browser."""
    return path.startswith(("/static/", "/levels/")) or path in PAGE_PATHS


PAGE_PATHS = frozenset({"/", "/stats", "/sw.js"})


class GuardMiddleware:
    """Security headers, cross-site checks and the per-address rate limit (HTTP only: the
    WebSocket handler does its own checks, so that a refused socket is told why).

    The page's own files (`is_page_file`) do not spend the address's request budget (a
    first visit fetches about 30 of them, and a school's first visits share one address):
    they have a bucket of their own, ``page_limiter``, many times larger. They are sent with
    ``Cache-Control: no-cache`` and their ETag, so a browser revalidates them (a 304 with
    no body) instead of fetching them again."""

    def __init__(
        self,
        app,
        limiter: RateLimiter,
        allowed_origins: frozenset[str],
        refusals: RefusalLog,
        allowed_hosts: frozenset[str] | None = None,
        page_limiter: RateLimiter | None = None,
    ) -> None:
        self.app, self.limiter = app, limiter
        self.page_limiter = page_limiter or limiter
        self.allowed_origins, self.refusals = allowed_origins, refusals
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        api = path.startswith("/api/")
        page_file = scope.get("method", "GET") in SAFE_METHODS and is_page_file(path)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                if api:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                elif page_file and b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-cache"))  # revalidate (ETag)
                message = {**message, "headers": headers}
            await send(message)

        refusal = self.refuse(scope, self.page_limiter if page_file else self.limiter)
        if refusal is not None:
            status, message, code, extra = refusal
            what = f"{scope.get('method', '')} {path[:60]}"
            self.refusals.refused(status, what, client_address(scope), message)
            start, body = json_response(status, message, code, extra)
            await send_with_headers(start)
            await send_with_headers(body)
            return
        await self.app(scope, receive, send_with_headers)

    def refuse(self, scope, limiter: RateLimiter):
        """(status, message, code, extra headers) if the request is refused here."""
        if not limiter.allow(("addr", client_address(scope))):
            retry = max(1, round(1 / limiter.rate))
            return (
                429,
                "too many requests from your network: slow down",
                "rate_limited",
                [(b"retry-after", str(retry).encode())],
            )
        bad_host = host_refused(scope, self.allowed_hosts)
        if bad_host is not None:
            return 400, f"request refused: {bad_host}", "bad_host", []
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        if scope.get("path") in FORM_PATHS:
            return None  # the mails' links: their token is the proof, their body is not read
        why = cross_site(scope, self.allowed_origins)
        if why is not None:
            return 403, f"cross-site request refused: {why}", "cross_site", []
        ctype = (header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return (
                415,
                "state-changing requests must be application/json",
                "unsupported_media_type",
                [],
            )
        return None


__all__ = [
    "CSP",
    "LOOPBACK_HOSTS",
    "GuardMiddleware",
    "RefusalLog",
    "client_address",
    "cross_site",
    "host_name",
    "host_refused",
    "is_page_file",
]
