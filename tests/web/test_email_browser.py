"""E-mail (issue 62) in Chromium against ``yahtzee serve`` (its SMTP server in
``$YAHTZEE_SMTP``: one the test starts on loopback): on a phone in Italian an account adds
its address, follows the link it was mailed, and sees it confirmed with its choices; on a
desktop in English an address waits for confirmation; a server without ``--smtp`` says
e-mail is not available.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots there."""

from __future__ import annotations

import os
import re

import pytest
from browsing import DESKTOP, PHONE, new_player, shot, sign_up, tid

pytest.importorskip("aiosmtpd", reason="needs aiosmtpd (dev extra)")

from test_email import local_smtp

from yahtzee_env.web.door.local_server import LocalServer


@pytest.fixture
def mail_server(tmp_path):
    """``yahtzee serve`` with ``$YAHTZEE_SMTP`` set (the password kept off the command
    line) to a local SMTP server: the server and the inbox."""
    smtp, url, inbox = local_smtp()
    srv = LocalServer(tmp_path / "web.sqlite3", env={**os.environ, "YAHTZEE_SMTP": url})
    srv.args = ["--site-url", srv.url]
    try:
        srv.start()
        yield srv, inbox
    finally:
        srv.kill()
        smtp.stop()


def test_a_phone_in_italian_adds_and_confirms_its_address(browser, mail_server, tmp_path):
    server, inbox = mail_server
    ctx, page, errors = new_player(browser, PHONE, "it-IT")
    try:
        sign_up(page, server.url, "it", "ada_m")
        page.fill(tid("email-address"), "ada@example.com")
        page.click(tid("email-save"))
        page.wait_for_selector(f"{tid('email-state')}:has-text('Non ancora confermato')")
        page.locator(tid("email")).scroll_into_view_if_needed()
        shot(page, tmp_path, "email-phone-it-sent")
        (msg,) = inbox.wait(1)
        assert msg["To"] == "ada@example.com" and "Conferma" in msg["Subject"]
        link = re.search(r"http://\S+/email/confirm\?t=\S+", msg.get_content()).group(0)
        page.goto(link)
        page.click(tid("email-link-button"))
        page.wait_for_selector(f"{tid('email-link-title')}:has-text('confermato')")
        page.goto(f"{server.url}/?pace=0&lang=it")
        page.wait_for_selector(f"{tid('email-state')}:has-text('Indirizzo confermato')")
        assert page.is_checked(tid("email-turns")) and page.is_checked(tid("email-invites"))
        page.click(tid("email-turns"))
        page.wait_for_selector(f"{tid('email-status')}:has-text('Salvato')")
        assert not page.is_checked(tid("email-turns"))
        page.locator(tid("email")).scroll_into_view_if_needed()
        shot(page, tmp_path, "email-phone-it-confirmed")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], width  # nothing wider than the phone
        assert not errors, errors
    finally:
        ctx.close()


def test_a_desktop_in_english_waits_for_confirmation(browser, mail_server, server, tmp_path):
    with_mail, inbox = mail_server
    ctx, page, errors = new_player(browser, DESKTOP, "en-US")
    try:
        sign_up(page, with_mail.url, "en", "bo_m")
        page.fill(tid("email-address"), "bo@example.com\nBcc: x@example.com")
        page.click(tid("email-save"))  # the browser's own check, else the server's
        page.fill(tid("email-address"), "bo@example.com")
        page.click(tid("email-save"))
        page.wait_for_selector(f"{tid('email-state')}:has-text('Not confirmed yet')")
        page.wait_for_selector(tid("email-resend"))
        page.locator(tid("email")).scroll_into_view_if_needed()
        shot(page, tmp_path, "email-desktop-en-waiting")
        assert [m["To"] for m in inbox.wait(1)] == ["bo@example.com"]
        assert not errors, errors
    finally:
        ctx.close()
    ctx, page, errors = new_player(browser, DESKTOP, "en-US")  # (the cookies: by host)
    try:
        sign_up(page, server.url, "en", "cy_m")  # a server without --smtp
        page.wait_for_selector(f"{tid('email-unavailable')}:has-text('not available')")
        assert page.locator(tid("email-address")).count() == 0
        assert not errors, errors
    finally:
        ctx.close()
