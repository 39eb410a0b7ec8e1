"""The levels that read the table at a web table: the `duelist` (issue 34) and the `winner`
(issue 61). Picked for a seat, each is shown every card (`cpu_move` passes them to a policy
that `reads_table`) and plays the game to its end."""

from __future__ import annotations

from yahtzee_env.policies.duel import DuelPolicy
from yahtzee_env.policies.models import MLPPolicy


def test_a_two_seat_table_with_the_duelist_shows_it_both_cards(
    client, db, new_table, play_out, monkeypatch
):
    seen = []
    act_table = DuelPolicy.act_table

    def spy(self, observation, mask, cards):
        seen.append([tuple(c) for c in cards])
        return act_table(self, observation, mask, cards)

    monkeypatch.setattr(DuelPolicy, "act_table", spy)
    code, tokens, state = new_table(client, seats=("human", "duelist"))
    final = play_out(client, code, tokens["0"], state=state)
    assert final["over"] and all(None not in c["scores"].values() for c in final["cards"])
    assert seen and all(len(cards) == 2 for cards in seen)
    own, other = seen[-1]  # its last move: its own card first, then the human's (finished)
    assert other[0] == (1 << 13) - 1 and other[3] == final["cards"][0]["total"]
    assert own[0].bit_count() == 12
    assert "duelist" in client.get("/api/config").text


def test_the_winner_plays_its_table_network_at_two_seats_and_its_prior_at_three(
    client, db, new_table, play_out, monkeypatch
):
    seen = []
    act_table = MLPPolicy.act_table

    def spy(self, observation, mask, cards):
        seen.append((self.name, len(cards)))
        return act_table(self, observation, mask, cards)

    monkeypatch.setattr(MLPPolicy, "act_table", spy)
    for seats in (("human", "winner"), ("human", "winner", "winner")):
        seen.clear()
        code, tokens, state = new_table(client, seats=seats)
        final = play_out(client, code, tokens["0"], state=state)
        assert final["over"] and all(None not in c["scores"].values() for c in final["cards"])
        if len(seats) == 2:  # every CPU move through the table network, shown both cards
            assert seen and set(seen) == {("winner (table)", 2)}
        else:  # three seats: the network it started from, which reads no table
            assert seen == []
    assert "winner" in client.get("/api/config").json()["levels"]
