"""The `duelist` level at a web table (issue 34): picked for a seat, it is shown every card
(`cpu_move` passes them to a policy that `reads_table`) and plays the game to its end."""

from __future__ import annotations

from yahtzee_env.policies.duel import DuelPolicy


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
