"""Issue 32 in Chromium, end to end against ``yahtzee serve`` (two contexts where it takes
two people): chat from A seen by B with its markup inert, emotes in each language, mute and
removing a player; a "your move" notice while the tab is hidden; a password changed and a
recovery code used once (and refused the second time); the move log and Share; the lobby's
"Your move"; the review's labels.

Set ``YAHTZEE_SCREENSHOTS=docs/img/screens`` to write the screenshots of docs/web.md there."""

from __future__ import annotations

from pathlib import Path

from browsing import more_options, new_player, shot, tid

PASSWORD = "correct horse battery"
NEW_PASSWORD = "staple gun orbit lamp"

# A hidden tab and a Notification API that records what it is asked to show (the test's
# stand-ins for a person looking elsewhere and for the operating system's notices).
HIDDEN_TAB = """
window.__vis = 'visible';
for (const [key, get] of [['visibilityState', () => window.__vis],
                          ['hidden', () => window.__vis === 'hidden']]) {
  Object.defineProperty(Document.prototype, key, { get, configurable: true });
}
window.__notices = [];
window.__asked = 0;
class FakeNotification {
  constructor(title, options) {
    window.__notices.push({ title, body: options && options.body });
  }
  addEventListener() {}
  static requestPermission() {
    window.__asked += 1;
    FakeNotification.permission = 'granted';
    return Promise.resolve('granted');
  }
}
FakeNotification.permission = 'default';
window.Notification = FakeNotification;
"""
NO_SHARE = """
Object.defineProperty(Navigator.prototype, 'share', { value: undefined, configurable: true });
window.__copied = null;
const clipboard = { writeText: async (text) => { window.__copied = text; } };
Object.defineProperty(Navigator.prototype, 'clipboard', {
  get: () => clipboard, configurable: true });
"""
SET_VISIBILITY = (
    "state => { window.__vis = state; document.dispatchEvent(new Event('visibilitychange')); }"
)


def person(browser, locale="en-US", viewport=None, init: str = ""):
    return new_player(browser, viewport or {"width": 1280, "height": 900}, locale, init)


def online_pair(host, guest, server, timer=0, lang_host="en", lang_guest="en"):
    """The host and a guest (two contexts) at a started online table of two seats."""
    host.goto(f"{server.url}/?pace=0&lang={lang_host}")
    host.fill(tid("name"), "Host")
    more_options(host)
    host.select_option(tid("seats"), "2")
    host.select_option(tid("seat-kind-1"), "friend")
    host.select_option(tid("turn-timer"), str(timer))
    host.click(tid("create-online"))
    host.wait_for_selector(f"{tid('table-code')}:not(:empty)")
    code = host.text_content(tid("table-code"))
    guest.goto(f"{server.url}/?pace=0&lang={lang_guest}&join={code}")
    more_options(guest)
    guest.fill(tid("name"), "Gina")
    guest.click(tid("join"))
    guest.wait_for_selector(f"{tid('table-code')}:has-text('{code}')")
    host.wait_for_selector(f'{tid("seat-status-1")}[data-connected="true"]')
    host.click(tid("start"))
    for pg in (host, guest):
        pg.wait_for_selector("#board:not([hidden])")
    return code


def api_score(page, server, code, seat) -> dict:
    """Score the best-paying box for ``seat`` with the page's session (quicker than clicks)."""
    ctx = page.context
    state = ctx.request.get(f"{server.url}/api/tables/{code}").json()
    if state["cup"]:  # the turn starts with the dice in the cup: the tap on Roll first
        tap = {"seat": seat, "seq": state["seq"], "game": state["game"]}
        tap["action"] = {"type": "roll", "hold": []}
        reply = ctx.request.post(f"{server.url}/api/tables/{code}/act", data=tap)
        assert reply.ok, reply.text()
        state = reply.json()
    box = max(state["options"], key=state["options"].get)
    body = {"seat": seat, "seq": state["seq"], "game": state["game"]}
    body["action"] = {"type": "score", "box": box}
    reply = ctx.request.post(f"{server.url}/api/tables/{code}/act", data=body)
    assert reply.ok, reply.text()
    return reply.json()


def test_chat_from_a_is_seen_by_b_with_markup_inert(browser, server, tmp_path):
    a_ctx, a, a_errors = person(browser, "it-IT")
    b_ctx, b, b_errors = person(browser, viewport={"width": 390, "height": 844})  # a phone
    try:
        code = online_pair(a, b, server, lang_host="it")
        a.wait_for_selector(tid("chat-input"))
        attack = '<img src=x onerror="window.__pwned=1"><b>bold</b> & ciao'
        a.fill(tid("chat-input"), attack)
        a.click(tid("chat-send"))
        b.wait_for_selector(f"{tid('chat-log')} li:has-text('ciao')")
        line = b.locator(f"{tid('chat-log')} li").last
        assert line.locator(".chat-body").text_content() == attack  # the characters, as typed
        assert b.locator(f"{tid('chat-log')} img, {tid('chat-log')} b").count() == 0
        assert b.evaluate("() => window.__pwned === undefined")
        assert a.input_value(tid("chat-input")) == ""
        # an emote, worded in each reader's language
        b.click(tid("emote-good_game"))
        a.wait_for_selector(f"{tid('chat-log')} li:has-text('Bella partita!')")
        b.wait_for_selector(f"{tid('chat-log')} li:has-text('Good game!')")
        assert a.text_content(tid("emote-good_game")) == "Bella partita!"
        # too long: the page says why, in its language
        b.fill(tid("chat-input"), "x" * 201)
        b.evaluate(
            "() => document.querySelector('[data-testid=chat-input]').removeAttribute('maxlength')"
        )
        b.fill(tid("chat-input"), "x" * 201)
        b.click(tid("chat-send"))
        b.wait_for_selector(f"{tid('chat-error')}:has-text('200')")
        assert b.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        b.locator("#people-panel").scroll_into_view_if_needed()
        shot(b, tmp_path, "chat-390x844-en")
        api_score(a, server, code, 0)  # a move, for the move log beside the card
        a.wait_for_selector(f"{tid('move-log')} li")
        a.locator("#people-panel").scroll_into_view_if_needed()
        shot(a, tmp_path, "chat-1280x900-it")
        # A mutes B: B's lines leave A's log (this device's choice), and come back
        a.click(tid("mute-1"))
        a.wait_for_function(
            "() => !document.querySelector('[data-testid=chat-log]').textContent.includes('Bella')"
        )
        assert a.get_attribute(tid("mute-1"), "aria-pressed") == "true"
        a.click(tid("mute-1"))
        a.wait_for_selector(f"{tid('chat-log')} li:has-text('Bella partita!')")
        # B reports A: stored with the last messages, and B is told so
        b.click(tid("report-0"))
        b.wait_for_selector(f"{tid('chat-error')}:has-text('You reported Host')")
        # the host removes B: the computer takes the seat, and B can no longer chat
        a.click(tid("kick-1"))
        b.wait_for_function(
            "() => !document.querySelector('[data-testid=chat-input]') || "
            "document.querySelector('#people-panel').hidden"
        )
        state = b_ctx.request.get(f"{server.url}/api/tables/{code}").json()
        assert state["seats"][1]["kind"] == "cpu"
        assert not a_errors and not b_errors, a_errors + b_errors
    finally:
        a_ctx.close()
        b_ctx.close()


def test_a_your_move_notice_fires_while_the_tab_is_hidden(browser, server):
    a_ctx, a, a_errors = person(browser, init=HIDDEN_TAB)
    b_ctx, b, b_errors = person(browser)
    try:
        code = online_pair(a, b, server)
        assert a.evaluate("() => window.__asked") == 0  # never asked at load
        a.click(tid("notify-toggle"))  # the tap asks for the permission
        a.wait_for_function("() => window.__asked === 1")
        assert a.get_attribute(tid("notify-toggle"), "aria-pressed") == "true"
        title = a.title()
        api_score(a, server, code, 0)  # the host's move: Gina's turn now
        b.wait_for_function(
            "() => document.querySelector('[data-testid=turn]').dataset.seat === '1'"
        )
        a.wait_for_function(
            "() => document.querySelector('[data-testid=turn]').dataset.seat === '1'"
        )
        assert a.evaluate("() => window.__notices.length") == 0
        a.evaluate(SET_VISIBILITY, "hidden")
        api_score(b, server, code, 1)  # Gina moves: the host's turn, in a hidden tab
        a.wait_for_function("() => window.__notices.length === 1")
        notice = a.evaluate("() => window.__notices[0]")
        assert notice["title"] == "Yatzy: your move" and code in notice["body"]
        assert a.title().startswith("● Your move")
        a.evaluate(SET_VISIBILITY, "visible")
        a.wait_for_function("t => document.title === t", arg=title)
        # a visible tab is not told (the page itself shows the turn)
        api_score(a, server, code, 0)
        api_score(b, server, code, 1)
        a.wait_for_function(
            "() => document.querySelector('[data-testid=turn]').dataset.seat === '0'"
        )
        assert a.evaluate("() => window.__notices.length") == 1
        assert not a_errors and not b_errors, a_errors + b_errors
    finally:
        a_ctx.close()
        b_ctx.close()


def test_a_password_changed_and_a_recovery_code_used_once(browser, server, tmp_path):
    ctx, page, errors = person(browser, viewport={"width": 390, "height": 844})
    try:
        page.goto(f"{server.url}/?lang=en")
        page.fill(tid("name"), "Ada")
        page.fill(tid("signup-name"), "ada_l")
        page.fill(tid("signup-password"), PASSWORD)
        page.click(tid("signup"))
        page.wait_for_selector(f"{tid('account-name')}:has-text('ada_l')")
        page.wait_for_selector(f"{tid('recovery-codes')}:visible")
        codes = page.locator(f"{tid('recovery-codes')} code").all_text_contents()
        assert len(codes) == 8
        page.locator(tid("recovery-codes")).scroll_into_view_if_needed()
        shot(page, tmp_path, "recovery-codes-390x844-en")
        page.click(tid("recovery-codes-done"))
        assert page.is_hidden(tid("recovery-codes"))
        # change the password
        page.fill(tid("password-change-current"), "not my password")
        page.fill(tid("password-change-new"), NEW_PASSWORD)
        page.click(tid("password-change-submit"))
        page.wait_for_selector(f"{tid('care-status')}:has-text('not your password')")
        page.fill(tid("password-change-current"), PASSWORD)
        page.fill(tid("password-change-new"), NEW_PASSWORD)
        page.click(tid("password-change-submit"))
        page.wait_for_selector(f"{tid('care-status')}:has-text('Password changed')")
        page.click(tid("signout"))
        page.wait_for_selector(f"{tid('signin')}:visible")
        page.fill(tid("signin-name"), "ada_l")
        page.fill(tid("signin-password"), PASSWORD)  # the old one no longer works
        page.click(tid("signin"))
        page.wait_for_selector(f"{tid('account-error')}:has-text('wrong user name or password')")
        # forgotten: a recovery code brings the account back, once
        page.fill(tid("recover-name"), "ada_l")
        page.fill(tid("recover-code"), codes[0])
        page.fill(tid("recover-password"), "a third long password")
        page.click(tid("recover"))
        page.wait_for_selector(f"{tid('account-name')}:has-text('ada_l')")
        page.wait_for_selector(f"{tid('care-status')}:has-text('Recovery codes left: 7')")
        page.click(tid("signout"))
        page.wait_for_selector(f"{tid('recover')}:visible")
        page.fill(tid("recover-name"), "ada_l")
        page.fill(tid("recover-code"), codes[0])
        page.fill(tid("recover-password"), "a fourth long password")
        page.click(tid("recover"))
        page.wait_for_selector(f"{tid('care-status')}:has-text('recovery code')")
        assert page.is_hidden(tid("account-name"))
        page.fill(tid("signin-name"), "ada_l")
        page.fill(tid("signin-password"), "a third long password")
        page.click(tid("signin"))
        page.wait_for_selector(f"{tid('account-name')}:has-text('ada_l')")
        # export: a JSON file is downloaded
        with page.expect_download() as download:
            page.click(tid("account-export"))
        assert download.value.suggested_filename == "yatzy-account.json"
        data = Path(download.value.path()).read_text(encoding="utf-8")
        assert '"username": "ada_l"' in data
        # delete
        page.fill(tid("account-delete-password"), "a third long password")
        page.click(tid("account-delete"))
        page.wait_for_selector(f"{tid('care-status')}:has-text('deleted player')")
        page.wait_for_selector(f"{tid('signin')}:visible")
        assert not errors, errors
    finally:
        ctx.close()


def test_the_move_log_share_and_your_move(browser, server, tmp_path):
    ctx, page, errors = person(browser, init=NO_SHARE)
    try:
        page.goto(f"{server.url}/?pace=0&lang=en")
        page.fill(tid("name"), "Ada")
        more_options(page)
        page.select_option(tid("seats"), "3")
        page.select_option(tid("seat-kind-1"), "friend")
        page.select_option(tid("seat-kind-2"), "friend")
        page.select_option(tid("turn-timer"), str(3 * 86_400))
        page.click(tid("create-online"))
        page.wait_for_selector(f"{tid('table-code')}:not(:empty)")
        code = page.text_content(tid("table-code"))
        page.click(tid("start"))  # the free seats go to the computer
        page.wait_for_selector("#board:not([hidden])")
        page.wait_for_function(
            "() => /\\d d \\d+ h/.test(document.querySelector('[data-testid=timer]').textContent)"
        )
        # labelled icons: their names (and titles) from the catalogue
        assert page.get_attribute(tid("share"), "aria-label") == "Share the table’s link"
        assert page.get_attribute(tid("share"), "title") == "Share the table’s link"
        assert (
            page.get_attribute(tid("notify-toggle"), "aria-label") == "Tell me when it is my move"
        )
        page.click(tid("share"))  # no navigator.share here: the clipboard
        page.wait_for_selector(f"{tid('share-status')}:has-text('Link copied')")
        assert page.evaluate("() => window.__copied") == f"{server.url}/?join={code}"
        page.evaluate("() => window.scrollTo(0, 0)")
        shot(page, tmp_path, "share-1280x900-en")
        for _ in range(3):
            api_score(page, server, code, 0)
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=move-log] li').length >= 6"
        )
        seqs = [
            int(x)
            for x in page.eval_on_selector_all(
                f"{tid('move-log')} li", "ls => ls.map(l => l.dataset.seq)"
            )
        ]
        assert (
            seqs == sorted(seqs, reverse=True) == list(range(seqs[0], -1, -1))
        )  # newest first, all
        first = page.locator(f"{tid('move-log')} li").first.text_content()
        assert first and (
            "scores" in first or "keeps" in first or "rolls" in first or "re-rolls" in first
        )
        page.locator(tid("move-log")).scroll_into_view_if_needed()
        shot(page, tmp_path, "move-log-1280x900-en")
        # Italian: the log is narrated again in the page's language
        page.select_option(tid("lang"), "it")
        page.wait_for_function(
            "() => /segna|tiene|ritira|tira/"
            ".test(document.querySelector('[data-testid=move-log]').textContent)"
        )
        page.select_option(tid("lang"), "en")
        # a second table with a shorter clock: the lobby lists both, soonest deadline first
        body = {"seats": ["human", "easy"], "online": True, "turn_timer": 86_400}
        second = ctx.request.post(f"{server.url}/api/tables", data=body).json()["code"]
        started = ctx.request.post(f"{server.url}/api/tables/{second}/start", data={"seat": 0})
        assert started.ok, started.text()
        page.goto(f"{server.url}/?lang=en")
        page.wait_for_selector(tid(f"your-move-{code}"))
        page.wait_for_selector(tid(f"your-move-{second}"))
        order = page.eval_on_selector_all(
            f"{tid('your-move')} li", "ls => ls.map(l => l.dataset.testid)"
        )
        assert order == [f"your-move-{second}", f"your-move-{code}"]
        page.locator(tid("your-move")).scroll_into_view_if_needed()
        shot(page, tmp_path, "your-move-1280x900-en")
        assert not errors, errors
    finally:
        ctx.close()


def test_the_review_labels_each_decision_beside_the_best_move(browser, server, tmp_path):
    ctx, page, errors = person(browser, "it-IT", viewport={"width": 1280, "height": 900})
    try:
        page.goto(f"{server.url}/?pace=0&lang=it")
        page.fill(tid("name"), "Ada")
        more_options(page)
        page.select_option(tid("seats"), "2")
        page.select_option(tid("seat-kind-1"), "easy")
        page.click(tid("play"))
        page.wait_for_selector("#table[data-version]")
        code = page.text_content(tid("table-code"))
        state = ctx.request.get(f"{server.url}/api/tables/{code}").json()
        while not state["over"]:
            state = api_score(page, server, code, 0)
        page.goto(f"{server.url}/games/{code}-0?lang=it")
        page.wait_for_selector(tid("review-label-0"), state="attached", timeout=120_000)
        page.wait_for_selector(f"{tid('review-thresholds')}:has-text('imprecisione')")
        labels = page.eval_on_selector_all(
            "[data-testid^=review-label-]", "ls => ls.map(l => l.dataset.label)"
        )
        assert (
            set(labels) <= {"best", "good", "inaccuracy", "mistake", "blunder"} and len(labels) > 13
        )
        counts = page.eval_on_selector_all(
            f"{tid('review-labels-0')} [data-label]", "ls => ls.map(l => +l.dataset.count)"
        )
        seat0 = page.eval_on_selector_all(
            f"{tid('turns-0')} [data-testid^=review-label-]", "ls => ls.length"
        )
        assert sum(counts) == seat0
        # beside a decision that was not the best: the solver's move and its expected score
        lost = [i for i, lab in enumerate(labels) if lab != "best"]
        if lost:
            n = page.eval_on_selector_all(
                "[data-testid^=review-label-]", "ls => ls.map(l => l.dataset.testid)"
            )[lost[0]]
            best = page.text_content(tid(n.replace("label", "best")))
            assert "→" in best
        page.locator(tid("review-thresholds")).scroll_into_view_if_needed()
        shot(page, tmp_path, "review-grades-1280x900-it")
        assert not errors, errors
    finally:
        ctx.close()
