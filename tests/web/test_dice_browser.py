"""Issues 49 and 58 in Chromium: a game shows its dice commitment (table head and move log)
from before the first roll; its review reveals the seed, and "Check the dice" recomputes
every roll in the page, refusing an edited record; /verify checks any record, offline too.
The page's dice checker is a twin of ``yahtzee verify-game``: where Chromium or Playwright
is missing this test fails, not skips (tests/web/twins.py)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

import twins
from browsing import more_options, score_best, table_when, tid, wait_my_dice


@pytest.fixture(scope="module", autouse=True)
def _chromium():
    """Before the ``browser`` fixture (which skips where its tools are missing): fail."""
    twins.require_chromium()


CHECK = """async ([record]) => {
  const dice = await import('/static/js/fair_dice.js');
  return dice.verifyRecord(record);
}"""


def test_commitment_before_the_first_roll_then_the_seed_checked_in_the_page(open_page, server):
    page = open_page(1280, 900, False, "en-US")
    page.goto(f"{server.url}/?pace=0")
    more_options(page)
    if not page.input_value(tid("name")):
        page.fill(tid("name"), "Ada")
    page.select_option(tid("seat-kind-1"), "greedy")
    page.click(tid("play"))
    page.wait_for_selector('#tray[data-cup="true"]')  # our dice still in the cup
    # before any move of ours: the commitment in the head and in the move log
    commitment = page.get_attribute(tid("dice-commitment"), "data-commitment")
    assert re.fullmatch(r"[0-9a-f]{64}", commitment) and page.is_visible(tid("dice-commitment"))
    assert commitment[:12] in page.text_content(tid("dice-commitment"))
    assert commitment in page.text_content(tid("log-commitment"))
    wait_my_dice(page)
    for _ in range(13):
        score_best(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    page.click(f"{tid('result')} {tid('review-link')}")
    page.wait_for_selector(tid("dice-seed"))
    seed = page.text_content(tid("dice-seed"))
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment
    assert page.text_content(tid("review-commitment")) == commitment
    page.click(tid("verify-dice"))
    page.wait_for_selector(f"{tid('verify-result')}[data-ok]")
    assert page.get_attribute(tid("verify-result"), "data-ok") == "true"
    assert "These dice follow from the seed" in page.text_content(tid("verify-result"))
    # the page's check refuses an edited die, naming the roll, as `yahtzee verify-game` does
    gid = page.url.rsplit("/", 1)[-1]
    record = page.request.post(f"{server.url}/api/games/{gid}", data={}).json()["dice"]
    from yahtzee_env.game.fair_dice import verify_record

    assert verify_record(record).ok
    record["rolls"][6]["dice"][0] = record["rolls"][6]["dice"][0] % 6 + 1
    verdict = page.evaluate(CHECK, [record])
    assert verdict["ok"] is False and verdict["key"] == "dice.check_roll"
    assert verdict["params"]["n"] == 7 == verify_record(record).roll
    record["seed"] = "00" * 32
    assert page.evaluate(CHECK, [record])["key"] == "dice.check_commitment"
    # My statistics: the faces rolled against fair dice, in words
    page.goto(f"{server.url}/stats?pace=0")
    page.wait_for_selector(tid("roll-test"))
    counts = [
        int(page.text_content(f"{tid('roll-faces')} td[data-face='{f}']")) for f in range(1, 7)
    ]
    assert sum(counts) >= 13 * 5
    p = float(page.get_attribute(tid("roll-test"), "data-p"))
    words = page.text_content(tid("roll-test"))
    assert "Chi-square" in words and ("nothing here suggests" in words) == (p >= 0.05)


# ------------------------------------------------------------------ issue 58: /verify
def played_record(page, url: str) -> dict:
    """A real game's record: an online table against greedy, made and played over the API
    (v2: the host sends its client seed before the start), and its review's record."""
    made = page.request.post(
        f"{url}/api/tables", data={"seats": ["human", "greedy"], "online": True}
    )
    body = made.json()
    code, token = body["code"], body["tokens"]["0"]
    seed = {"seat": 0, "token": token, "client_seed": "ada-seed-1"}
    assert page.request.post(f"{url}/api/tables/{code}/client-seed", data=seed).ok
    state = page.request.post(
        f"{url}/api/tables/{code}/start", data={"seat": 0, "token": token}
    ).json()
    while not state["over"]:
        if state["cup"]:  # the turn starts with the dice in the cup: the tap on Roll
            action = {"type": "roll", "hold": []}
        else:
            action = {"type": "score", "box": max(state["options"], key=state["options"].get)}
        move = {"seat": 0, "token": token, "seq": state["seq"], "game": state["game"],
                "action": action}  # fmt: skip
        state = page.request.post(f"{url}/api/tables/{code}/act", data=move).json()
    gid = state["result"]["game_id"]
    return page.request.post(f"{url}/api/games/{gid}", data={"tokens": {"0": token}}).json()["dice"]


def check_on_page(page, record) -> tuple[str | None, str, str | None]:
    page.fill(tid("verify-record"), json.dumps(record))
    page.click(tid("verify-check"))
    page.wait_for_selector(
        f"{tid('verify-verdict')}[data-ok='true'], {tid('verify-verdict')}[data-ok='false']"
    )
    node = tid("verify-verdict")
    return (
        page.get_attribute(node, "data-ok"),
        page.text_content(node),
        page.get_attribute(node, "data-seat"),
    )


def test_attack_edited_client_seed_is_named_by_the_verify_page_offline(browser, server, tmp_path):
    """Adversary: whoever hands a player a record with a seat's client seed changed after
    the game (an operator claiming the player's seed was another, or a forged copy). /verify
    accepts the real record and refuses the edited one naming the seat, in both languages,
    and does so with the server gone (after one visit, from the service worker's cache)."""
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium"),
        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        service_workers="allow",
        viewport={"width": 900, "height": 1100},
    )
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        record = played_record(page, server.url)
        assert record["dice"] == "hmac-sha256-v2" and record["client_seeds"][0] == "ada-seed-1"
        page.goto(f"{server.url}/verify?lang=en")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        assert page.is_visible(tid("verify-check")) and page.is_visible(tid("verify-file"))
        ok, text, _ = check_on_page(page, record)
        assert ok == "true" and "These dice follow from the seed" in text
        edited = copy.deepcopy(record)
        edited["client_seeds"][0] = "ada-seed-2"
        ok, text, seat = check_on_page(page, edited)
        assert (
            ok == "false" and seat == "1" and "Seat 1's client seed (ada-seed-2) was edited" in text
        )
        # the file input reads a record too
        path = tmp_path / "game.json"
        path.write_text(json.dumps(record))
        page.fill(tid("verify-record"), "")
        page.set_input_files(tid("verify-file"), str(path))
        page.wait_for_function("() => document.getElementById('verify-record').value !== ''")
        assert json.loads(page.input_value(tid("verify-record"))) == record
        # the server goes away: the checker still opens and checks, in Italian too
        server.kill()
        page.goto(f"{server.url}/verify?lang=it")
        page.wait_for_selector(f"{tid('verify-check')}:has-text('Controlla')")
        ok, text, seat = check_on_page(page, edited)
        assert ok == "false" and seat == "1" and "posto 1" in text and "modificato" in text
        ok, text, _ = check_on_page(page, record)
        assert ok == "true"
        assert not errors, errors
    finally:
        context.close()


def test_the_page_sends_its_client_seed_before_the_first_roll_and_shows_the_commitment(
    open_page, server
):
    """The table's head shows the whole commitment on a tap, with a copy button; before the
    start the page has made a client seed (hook ``client-seed``), sent it by itself, and
    sends the one the person types instead; after the first roll the seed is fixed."""
    page = open_page(1280, 900, False, "en-US")
    page.goto(f"{server.url}/?pace=0")
    page.fill(tid("name"), "Ada")
    more_options(page)
    page.select_option(tid("seats"), "2")
    page.select_option(tid("seat-kind-1"), "greedy")
    page.click(tid("create-online"))
    page.wait_for_selector(f"{tid('table-code')}:not(:empty)")
    code = page.text_content(tid("table-code"))
    page.wait_for_selector(f"{tid('dice-commitment')}:not([hidden])")
    commitment = page.get_attribute(tid("dice-commitment"), "data-commitment")
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    assert page.is_hidden(tid("dice-panel"))
    page.click(tid("dice-commitment"))
    assert page.is_visible(tid("dice-panel"))
    assert page.text_content(tid("dice-commitment-full")) == commitment
    page.click(tid("dice-commitment-copy"))
    page.wait_for_selector(f"{tid('dice-commitment-copy')}:has-text('Copied')")
    # the page's own seed, made at random and sent by itself
    try:
        page.wait_for_selector(f"{tid('client-seed-status')}:has-text('In the dice')")
    except Exception as err:  # say what the page shows instead
        shown = page.evaluate(
            "() => [...document.querySelectorAll('#client-seed-row, #client-seed-status,"
            " #client-seed')].map((n) => [n.id, n.hidden, n.textContent, n.value])"
        )
        raise AssertionError(shown) from err
    made = page.input_value(tid("client-seed"))
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    state = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert state["client_seeds"] == [made, None] and state["client_seeds_open"] is True
    # the person types another: it replaces it, until the first roll
    page.fill(tid("client-seed"), "a,b")
    page.click(tid("client-seed-send"))
    page.wait_for_selector(f"{tid('client-seed-status')}:has-text('1 to 64')")
    page.fill(tid("client-seed"), "ada-typed-7")
    page.click(tid("client-seed-send"))
    page.wait_for_selector(f"{tid('client-seed-status')}:has-text('ada-typed-7')")
    state = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert state["client_seeds"] == ["ada-typed-7", None]
    page.click(tid("start"))
    page.wait_for_selector("#board:not([hidden])")
    # the host's turn starts with the dice in the cup: the game has not rolled until its tap
    page.wait_for_selector('#tray[data-cup="true"]')
    assert page.is_enabled(tid("client-seed"))
    wait_my_dice(page)  # the tap on Roll: the first roll, and the seeds are fixed
    page.wait_for_selector(f"{tid('client-seed')}:disabled")
    assert page.get_attribute(tid("dice-commitment"), "data-commitment") == commitment
    state = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert state["client_seeds"] == ["ada-typed-7", None] and not state["client_seeds_open"]


def test_the_page_sends_its_seed_for_a_game_the_cpu_starts_before_its_vote(open_page, server):
    """A best-of-five's second game is the CPU's to start, and it rolls as it starts: when
    the first game ends the page sends a new seed of its own for the next one (its seeds
    are open from then on), before the Play again that starts it; the CPU's first roll of
    that game is made with it."""
    page = open_page(1280, 900, False, "en-US")
    page.goto(f"{server.url}/?pace=0")
    more_options(page)
    if not page.input_value(tid("name")):
        page.fill(tid("name"), "Ada")
    page.select_option(tid("seat-kind-1"), "greedy")
    page.check(tid("match"))
    page.click(tid("play"))
    page.wait_for_selector('#tray[data-cup="true"]')
    code = page.text_content(tid("table-code"))
    page.wait_for_selector(f"{tid('client-seed-status')}:has-text('In the dice')", state="attached")
    first_seed = page.input_value(tid("client-seed"))
    for _ in range(13):
        score_best(page)
    page.wait_for_selector(f"{tid('result')}:not([hidden])")
    state = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert state["over"] and state["client_seeds_game"] == 1
    state = table_when(
        page, server.url, code, lambda s: s["client_seeds_game"] == 1 and s["client_seeds"][0]
    )
    next_seed = state["client_seeds"][0]
    assert re.fullmatch(r"[0-9a-f]{32}", next_seed) and next_seed != first_seed  # a new one
    assert page.input_value(tid("client-seed")) == next_seed
    page.click(tid("play-again"))
    state = table_when(page, server.url, code, lambda s: s["game"] == 1)
    assert state["first"] == 1 and state["client_seeds"] == [next_seed, None]
    assert not state["client_seeds_open"]  # the CPU has rolled, with the page's seed in


def test_the_first_roll_is_the_tap_on_roll_and_gives_the_committed_dice(open_page, server):
    """Issue 58, item 2: a person's turn starts with the dice in the cup (no faces, nothing
    to hold or score, the tray says to roll); the page's own client seed goes in first, and
    the tap on Roll brings out the dice the commitment and the seeds give for roll 0."""
    from yahtzee_env.game.fair_dice import DEFAULT_CLIENT_SEED, roll_values_v2
    from yahtzee_env.web.storage import open_storage
    from yahtzee_env.web.tables.deal import game_dice_seed

    page = open_page(1280, 900, False, "en-US")
    page.goto(f"{server.url}/?pace=0")
    more_options(page)
    if not page.input_value(tid("name")):
        page.fill(tid("name"), "Ada")
    page.select_option(tid("seat-kind-1"), "greedy")
    page.click(tid("play"))
    page.wait_for_selector('#tray[data-cup="true"]')
    code = page.text_content(tid("table-code"))
    assert [page.get_attribute(tid(f"die-{i}"), "data-value") for i in range(5)] == [""] * 5
    assert all(page.is_disabled(tid(f"die-{i}")) for i in range(5))  # nothing to hold
    assert page.query_selector('button[data-testid^="box-0-"]') is None  # nor to score
    assert page.text_content(tid("status")) == "Your turn: roll the dice"
    assert page.is_enabled(tid("roll")) and "(3 left)" in page.text_content(tid("roll"))
    # the page's own seed is in before the tap; the server has dealt nothing it shows
    status = f"{tid('client-seed-status')}:has-text('In the dice')"
    page.wait_for_selector(status, state="attached")  # (in the dice panel, folded)
    made = page.input_value(tid("client-seed"))
    before = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert before["cup"] and before["dice"] == [] and before["client_seeds"] == [made, None]
    old = page.get_attribute("#table", "data-version")
    page.click(tid("roll"))  # the tap
    page.wait_for_function(
        "old => document.querySelector('#table').dataset.version !== old", arg=old
    )
    page.wait_for_selector('#tray[data-cup="false"]')
    page.wait_for_selector('button[data-testid^="box-0-"]')
    shown = [int(page.get_attribute(tid(f"die-{i}"), "data-value")) for i in range(5)]
    # one short line says what the tap rolled (a phone's tray keeps its height)
    rolled_line = f"You rolled {' '.join(map(str, shown))} (roll 1 of 3)"
    assert page.text_content(tid("status")) == rolled_line
    storage = open_storage(server.db, migrate=False)
    secret = bytes.fromhex(storage.tables.load_table(code)["dice_secret"])
    storage.close()
    seeds = [made, DEFAULT_CLIENT_SEED]
    committed = sorted(roll_values_v2(game_dice_seed(secret, 0), seeds, 0, 0, 0, 0))
    assert sorted(shown) == committed
    after = page.request.get(f"{server.url}/api/tables/{code}").json()
    assert after["dice"] == committed and after["rolls_left"] == 2 and not after["cup"]
    assert after["client_seeds_open"] is False and "(2 left)" in page.text_content(tid("roll"))


def test_a_seed_chosen_in_the_lobby_is_the_next_tables_client_seed(browser, open_page, server):
    """Issue 58: the hook ``client-seed`` is in the lobby's More options too (one such hook a
    page: the lobby's, or the table's dice panel's). A seed typed there before a table is made
    or joined is that seat's client seed, sent once the table has shown its commitment; it is
    used once (the next table gets a new one), and one that is no seed says so."""
    from browsing import new_player

    url = server.url
    page = open_page(390, 844, True, "en-US")
    page.goto(f"{url}/?pace=0")
    page.fill(tid("name"), "Ada")
    more_options(page)
    assert page.locator(tid("client-seed")).count() == 1
    assert page.get_attribute(tid("client-seed"), "id") == "lobby-client-seed"
    assert page.input_value(tid("client-seed")) == ""  # none chosen: a new one per table
    page.fill(tid("client-seed"), "no spaces")
    page.wait_for_selector(f"{tid('lobby-client-seed-error')}:has-text('1 to 64')")
    page.fill(tid("client-seed"), "ada-lobby-1")
    assert page.text_content(tid("lobby-client-seed-error")) == ""
    page.select_option(tid("seat-kind-1"), "friend")
    page.click(tid("create-online"))
    page.wait_for_selector(f"{tid('table-code')}:not(:empty)")
    code = page.text_content(tid("table-code"))
    # a guest chooses theirs in the lobby too, then joins by the code
    ctx, guest, errors = new_player(browser, {"width": 390, "height": 844}, "it-IT")
    try:
        guest.goto(f"{url}/?pace=0")
        guest.fill(tid("name"), "Bea")
        more_options(guest)
        guest.fill(tid("client-seed"), "bea_seed_2")
        guest.fill(tid("join-code"), code)
        guest.click(tid("join"))
        guest.wait_for_selector(f"{tid('table-code')}:not(:empty)")
        assert guest.locator(tid("client-seed")).count() == 1  # the table's, now
        assert guest.get_attribute(tid("client-seed"), "id") == "client-seed"
        table_when(guest, url, code, lambda s: s["client_seeds"][1] == "bea_seed_2")
        assert not errors, errors
    finally:
        ctx.close()
    state = table_when(page, url, code, lambda s: s["client_seeds"][0] == "ada-lobby-1")
    assert state["client_seeds"] == ["ada-lobby-1", "bea_seed_2"] and not state["started"]
    assert page.input_value(tid("client-seed")) == "ada-lobby-1"  # the table's field says so
    # used once: back in the lobby, the field is empty again (the next table gets a new one)
    page.goto(f"{url}/?pace=0")
    more_options(page)
    assert page.locator(tid("client-seed")).count() == 1
    assert page.input_value(tid("client-seed")) == ""
