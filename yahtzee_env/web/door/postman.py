"""The mail of the server (issue 62): `Postman`, one worker thread that sends through the SMTP
server of ``yahtzee serve --smtp URL`` (or ``$YAHTZEE_SMTP``), and `MailDesk`, the intents
of an account's e-mail and the hooks that post "your turn" and invitation mails.

    GET  /api/email                      the account's address, confirmed, choices; available
    POST /api/email         {address, lang}   a new address: its confirmation mail goes
    POST /api/email/resend               a new confirmation link
    POST /api/email/choices {turns, invites, lang}
    POST /api/email/remove
    GET  /email/confirm?t=TOKEN          a page with a Confirm button (POST: confirms)
    GET  /email/unsubscribe?u=ID&k=KEY   a page with an Unsubscribe button; POST (RFC 8058's
                                         one-click, form-encoded, no session) unsubscribes

Sending never slows a move: the event loop only puts a job (a function that makes the
message, reading the database, in the worker thread) on a bounded queue; past
``Limits.mail_queue`` a job is dropped and logged; the connection times out after
``Limits.smtp_timeout_s``; a failure is logged and the next job goes. Without ``--smtp``
there is no postman: the page says e-mail is not available, and nothing is queued.

The URL: ``smtp://USER:PASSWORD@HOST:PORT`` (STARTTLS when the server offers it; port 25 by
default), ``smtps://...`` (TLS from the start; port 465), ``?from=ADDRESS`` (the sender;
default ``yatzy@HOST``).
"""

from __future__ import annotations

import functools
import html
import logging
import queue
import smtplib
import ssl
import threading
from collections import OrderedDict
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from yahtzee_env.web.door.asks import account_of
from yahtzee_env.web.errors import WebError
from yahtzee_env.web.limits import Limits, RateLimiter
from yahtzee_env.web.people.mail import Mail, clean_lang, say

log = logging.getLogger("yahtzee.web")
Job = Callable[[], EmailMessage | None]


def parse_smtp(url: str) -> dict[str, Any]:
    """The parts of an SMTP URL (ValueError if it is not one)."""
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("the SMTP URL is smtp://USER:PASSWORD@HOST:PORT or smtps://...")
    tls = parts.scheme == "smtps"
    sender = parse_qs(parts.query).get("from", [f"yatzy@{parts.hostname}"])[0]
    return {
        "host": parts.hostname,
        "port": parts.port or (465 if tls else 25),
        "tls": tls,
        "user": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "sender": sender,
    }


class Postman:
    """Sends the jobs' messages through one SMTP server, from one worker thread."""

    def __init__(self, url: str, limits: Limits) -> None:
        self.server = parse_smtp(url)
        self.sender = self.server["sender"]
        self.timeout = limits.smtp_timeout_s
        self.jobs: queue.Queue[Job | None] = queue.Queue(maxsize=limits.mail_queue)
        self.thread: threading.Thread | None = None
        self.sent = self.dropped = self.failed = 0
        self.guard = threading.Lock()

    def post(self, job: Job) -> bool:
        """Queue ``job`` (never waits); False, and logged, if the queue is full."""
        with self.guard:
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="postman", daemon=True)
                self.thread.start()
        try:
            self.jobs.put_nowait(job)
        except queue.Full:
            self.dropped += 1
            log.warning("mail queue full (%s): a mail was dropped", self.jobs.maxsize)
            return False
        return True

    def run(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                msg = job()
                if msg is not None:
                    self.send(msg)
                    self.sent += 1
            except Exception as err:  # a dead server, a refused address: the next job goes
                self.failed += 1
                log.warning("a mail was not sent: %s", str(err)[:200])

    def send(self, msg: EmailMessage) -> None:
        s = self.server
        if s["tls"]:
            context = ssl.create_default_context()
            smtp = smtplib.SMTP_SSL(s["host"], s["port"], timeout=self.timeout, context=context)
        else:
            smtp = smtplib.SMTP(s["host"], s["port"], timeout=self.timeout)
        with smtp:
            smtp.ehlo()
            if not s["tls"] and smtp.has_extn("starttls"):
                smtp.starttls(context=ssl.create_default_context())
                smtp.ehlo()
            if s["user"]:
                smtp.login(s["user"], s["password"] or "")
            smtp.send_message(msg)

    def close(self, wait_s: float = 1.0) -> None:
        """Stop the thread after the jobs queued (waits at most ``wait_s``)."""
        if self.thread is None:
            return
        try:
            self.jobs.put(None, timeout=wait_s)
        except queue.Full:
            return
        self.thread.join(wait_s)


class MailDesk:
    """The intents of an account's e-mail, and the hooks that post mails. ``postman``: None
    without ``--smtp`` (nothing is ever queued); ``sets``: the accounts' bucket of
    addresses set and confirmations resent; ``refuse_past``: the server object's."""

    def __init__(
        self,
        mail: Mail,
        postman: Postman | None,
        sets: RateLimiter,
        refuse_past: Callable[..., None],
        max_keys: int,
    ) -> None:
        self.mail, self.postman, self.sets, self.refuse_past = mail, postman, sets, refuse_past
        self.turns: OrderedDict[str, tuple] = OrderedDict()  # code -> the last turn posted
        self.max_keys = max_keys

    def available(self) -> None:
        if self.postman is None:
            raise WebError("e-mail is not available on this server", 503, "no_smtp")

    async def settings(self, session) -> dict[str, Any]:
        player = account_of(session)
        if self.postman is None:
            return {"available": False}
        return {"available": True, **await run_in_threadpool(self.mail.view, player)}

    def budget(self, player: int) -> None:
        message = "too many e-mail changes: try again later"
        self.refuse_past(self.sets, ("email", player), message, "email_budget")

    async def set_address(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        self.available()
        self.budget(player)
        msg = await run_in_threadpool(self.mail.set_address, player, body)
        self.postman.post(lambda: msg)
        return await run_in_threadpool(self.mail.view, player)

    async def resend(self, session) -> dict[str, Any]:
        player = account_of(session)
        self.available()
        self.budget(player)
        msg = await run_in_threadpool(self.mail.resend, player)
        self.postman.post(lambda: msg)
        return await run_in_threadpool(self.mail.view, player)

    async def choices(self, body: dict[str, Any], session) -> dict[str, Any]:
        player = account_of(session)
        self.available()
        return await run_in_threadpool(self.mail.choices, player, body)

    async def remove(self, session) -> dict[str, Any]:
        return await run_in_threadpool(self.mail.remove, account_of(session))

    # ------------------------------------------------------------------ the links' pages
    async def confirm_page(self, request) -> HTMLResponse:
        """The confirmation link: GET shows a button (a mail scanner's visit confirms
        nothing), its POST confirms (once, before the link expires)."""
        token, lang = request.query_params.get("t"), clean_lang(request.query_params.get("lang"))
        if request.method != "POST":
            return link_page(lang, "confirm_title", "confirm_button")
        done = await run_in_threadpool(self.mail.confirm, token)
        return link_page(lang, "confirmed" if done else "link_refused", None, 200 if done else 400)

    async def unsubscribe_page(self, request) -> HTMLResponse:
        """The unsubscribe link: GET shows a button; POST (RFC 8058's one-click too) stops
        every mail of the account (no session needed: the link's key is the proof)."""
        q, lang = request.query_params, clean_lang(request.query_params.get("lang"))
        if request.method != "POST":
            return link_page(lang, "unsubscribe_title", "unsubscribe_button")
        done = await run_in_threadpool(self.mail.unsubscribe, q.get("u"), q.get("k"))
        key = "unsubscribed" if done else "link_refused"
        return link_page(lang, key, None, 200 if done else 400)

    # ------------------------------------------------------------------ the hooks
    def turn_state(self, state: dict[str, Any]) -> None:
        """(The event loop, each state published) post a "your turn" mail when the turn
        passed to a human seat whose player has no socket open at the table."""
        if self.postman is None or not state.get("online") or not state.get("started"):
            return
        seat = state.get("current")
        if state.get("over") or state.get("duplicate") or not isinstance(seat, int):
            return
        seats = state.get("seats", ())
        view = seats[seat] if 0 <= seat < len(seats) else None
        if view is None or view["kind"] != "human" or view.get("away") or view.get("connected"):
            return
        code, key = state["code"], (state.get("game"), seat)
        if self.turns.get(code) == key:
            return
        self.turns[code] = key
        self.turns.move_to_end(code)
        while len(self.turns) > self.max_keys:
            self.turns.popitem(last=False)
        self.postman.post(functools.partial(self.mail.turn_mail, code, seat))

    def invited(self, reply: dict[str, Any], from_id: int) -> None:
        """(After an invitation) post its mail to the invited account."""
        if self.postman is None:
            return
        job = functools.partial(self.mail.invite_mail, reply["invited"], from_id, reply["code"])
        self.postman.post(job)


def link_page(lang: str, title: str, button: str | None, status: int = 200) -> HTMLResponse:
    """A small page of its own (no script: the page's CSP holds), with a form posting back."""
    text = html.escape(say(lang, title))
    form = ""
    if button is not None:
        label = html.escape(say(lang, button))
        form = (
            '<form method="post"><button type="submit" data-testid="email-link-button">'
            f"{label}</button></form>"
        )
    body = (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>Yatzy</title></head><body><main><h1 data-testid="email-link-title">{text}</h1>'
        f'{form}<p><a href="/">Yatzy</a></p></main></body></html>'
    )
    return HTMLResponse(body, status_code=status)


__all__ = ["MailDesk", "Postman", "link_page", "parse_smtp"]
