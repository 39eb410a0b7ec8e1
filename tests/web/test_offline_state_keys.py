"""The page's table (offline.js, a game played in the page) and the server's (`Table.state`,
as ``GET /api/tables/CODE`` serves it) are twins that table.js draws alike: the same keys,
at every level where a key names a field (the state, a seat of each kind, a card, an event
of each type and its message, the result, its ranking and its message), while the game is on
and once it is over (STYLE.md 22: a key-set test, not a hope). Run in Chromium on the
page's own modules; where Chromium is missing it fails (tests/web/twins.py).

What differs is named here and nowhere else: the page's own keys (`offline`, `in_page`: what
kind of table it is) and the server's that only its API readers use (`rev`, the database's
revision; `text`, an English sentence beside each `msg`)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs the web extra: pip install 'yahtzee-rl[web]'")
pytest.importorskip("uvicorn", reason="needs the web extra: pip install 'yahtzee-rl[web]'")

import twins

PAGE_ONLY = {"": {"offline", "in_page"}}
SERVER_ONLY = {"": {"rev"}, "events[roll]": {"text"}, "events[score]": {"text"}, "result": {"text"}}
RULES = "free-joker"  # not what the levels learned: a CPU seat says what it was trained for
SEATS = ["human", "hard"]

PAGE_GAME = """async ([seats, rules]) => {
  const offline = await import('/static/js/offline.js');
  const net = await import('/static/js/net.js');
  await offline.startGame({ seats, rules, name: 'Ada', played: 'in_page' });
  const at = '/api/tables/OFFLINE';
  let state = await net.api(at);
  const states = [state];
  const act = async (action) => {
    state = await net.api(`${at}/act`, { action, seq: state.seq, game: state.game });
    states.push(state);
  };
  while (!state.over) {
    if (state.cup) await act({ type: 'roll', hold: [] });  // the dice out of the cup
    else if (state.rolls_left === 2) await act({ type: 'roll', hold: [0, 1] });
    else await act({ type: 'score', box: Object.keys(state.options)[0] });
  }
  return states;
}"""


@pytest.fixture(scope="module", autouse=True)
def _chromium():
    twins.require_chromium()


def shape(states: list[dict]) -> dict[tuple[str, str], set[str]]:
    """``(phase, path) -> keys``, over ``states``: a path names a level of the state ("" the
    state itself, "seats[cpu]", "events[roll].msg"...); the state's own keys by phase ("on"
    or "over"), the others' over the whole game ("any": an event is one whenever it comes)."""
    out: dict[tuple[str, str], set[str]] = {}

    def add(phase, path, obj):
        out.setdefault((phase if path == "" else "any", path), set()).update(obj)

    for state in states:
        phase = "over" if state["over"] else "on"
        add(phase, "", state)
        for seat in state["seats"]:
            add(phase, f"seats[{seat['kind']}]", seat)
        for card in state["cards"]:
            add(phase, "cards[]", card)
        for event in state["events"]:
            add(phase, f"events[{event['type']}]", event)
            add(phase, f"events[{event['type']}].msg", event.get("msg") or {})
        if state.get("result"):
            add(phase, "result", state["result"])
            add(phase, "result.msg", state["result"].get("msg") or {})
            for row in state["result"]["ranking"]:
                add(phase, "result.ranking[]", row)
    return out


def server_game(request, url: str) -> list[dict]:
    """A solo table of ``SEATS`` on the server, played to its end over HTTP (the page's
    session), its state after each move."""
    assert request.post(f"{url}/api/session", data={"name": "Ada"}).ok
    reply = request.post(
        f"{url}/api/tables", data={"seats": SEATS, "rules": RULES, "online": False}
    )
    assert reply.ok, reply.text()
    code, token = reply.json()["code"], (reply.json().get("tokens") or {}).get("0")
    state = request.get(f"{url}/api/tables/{code}").json()
    states = [state]

    def act(action):
        body = {
            "seat": 0,
            "token": token,
            "action": action,
            "seq": state["seq"],
            "game": state["game"],
        }
        answer = request.post(f"{url}/api/tables/{code}/act", data=body)
        assert answer.ok, answer.text()
        states.append(request.get(f"{url}/api/tables/{code}").json())
        return states[-1]

    while not state["over"]:
        if state["cup"]:  # a person's turn starts with the dice in the cup: its tap on Roll
            state = act({"type": "roll", "hold": []})
        elif state["rolls_left"] == 2:
            state = act({"type": "roll", "hold": [0, 1]})
        else:
            state = act({"type": "score", "box": next(iter(state["options"]))})
    return states


def test_the_page_table_has_the_server_table_keys(page, shared_server):
    page.goto(f"{shared_server.url}/?pace=0")
    page.wait_for_selector('[data-testid="play"]:not([disabled])')
    theirs = server_game(page.request, shared_server.url)
    ours = page.evaluate(PAGE_GAME, [SEATS, RULES])
    want, got = shape(theirs), shape(ours)
    assert {p for _, p in want} >= {"", "seats[cpu]", "events[score].msg", "result.ranking[]"}
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    differences = {}
    for (phase, path), keys in want.items():
        expected = (keys - SERVER_ONLY.get(path, set())) | PAGE_ONLY.get(path, set())
        if got[(phase, path)] != expected:
            differences[f"{phase}:{path}"] = {
                "page lacks": sorted(expected - got[(phase, path)]),
                "page adds": sorted(got[(phase, path)] - expected),
            }
    assert not differences, differences
    # the CPU seat's training, from the level's manifest as the server publishes it
    assert theirs[-1]["seats"][1]["trained_for"] is not None
    assert ours[-1]["seats"][1]["trained_for"] == theirs[-1]["seats"][1]["trained_for"]
