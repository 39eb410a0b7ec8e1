"""The ``winner`` level (issue 61): two networks in one manifest (`models.TABLE_MLP`). At a
2-seat table its table network (the duelist distilled, then PPO with the result as reward)
reads both cards; alone and at 3-4 seats it plays the network it started from (expert's).
No search, no torch; each file it names is checked as strictly as a one-network level's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from yahtzee_env.analysis.verify import RowError, check_model
from yahtzee_env.game.cpu import cpu_action, table_cards
from yahtzee_env.game.engine import Game
from yahtzee_env.game.observation import encode_seat
from yahtzee_env.policies.models import (
    LEVELS,
    LEVELS_DIR,
    TABLE_MLP,
    MLPPolicy,
    ModelFormatError,
    TablePlay,
    level_manifest,
    load_opponent,
)

ROOT = Path(__file__).resolve().parents[1]
PRIOR = "expert"  # the level whose weights the table network started from; it plays alone


def test_the_winner_is_a_shipped_level_that_plays_to_win_with_no_search():
    assert "winner" in LEVELS
    manifest = level_manifest("winner")
    assert manifest.kind == TABLE_MLP and manifest.objective == "win"
    assert manifest.raw["teacher"] == "duelist" and manifest.raw["builds_on"]["prior"] == PRIOR
    assert manifest.weights_sha256 == level_manifest(PRIOR).weights_sha256  # alone: expert
    assert manifest.table is not None and manifest.table.input_version == 3
    assert manifest.raw["knew"]["teacher"].startswith("solver (distilled from the duelist")
    winner = load_opponent("winner")
    assert isinstance(winner, TablePlay) and winner.reads_table and not winner.table_only
    assert not hasattr(winner, "plays_with")  # no code around the weights: no search


def _games(seats: int, count: int):
    """Every decision of ``count`` games at ``seats`` seats, winner in every seat."""
    winner = load_opponent("winner")
    for seed in range(count):
        game = Game("official", num_players=seats, canonical_holds=True)
        game.reset(np.random.default_rng(seed))
        while not game.over:
            seat = game.current
            obs, mask = encode_seat(game, seat), game.legal_action_mask()
            cards = table_cards(game, seat)
            action = cpu_action(game, seat, winner)
            yield obs, mask, cards, action
            game.step(action)


def test_at_two_seats_the_table_network_moves_and_elsewhere_its_priors():
    winner, prior = load_opponent("winner"), load_opponent(PRIOR)
    table = winner.table
    assert isinstance(table, MLPPolicy) and table.reads_table
    differ = 0
    for obs, mask, cards, action in _games(2, 12):
        batch = table.act_batch_table(obs[None], mask[None], np.array(cards)[None])
        assert action == int(batch[0])  # the one-row path is the batch's choice
        differ += action != prior.act(obs, mask)
    assert differ > 0  # it reads the table: not its prior's moves throughout
    for obs, mask, _cards, action in _games(3, 4):
        assert action == prior.act(obs, mask)
    obs_batch = np.array([o for o, *_ in _games(2, 2)])
    masks = np.array([m for _, m, *_ in _games(2, 2)])
    alone = winner.act_batch(obs_batch, masks)
    np.testing.assert_array_equal(alone, prior.act_batch(obs_batch, masks))


def test_a_move_at_the_table_is_one_forward_pass_of_the_table_network(monkeypatch):
    """No search: each move at a 2-seat table runs the table network once and the other not
    at all (the time it takes is `experiments/bench_levels.py`'s, not a test's)."""
    winner = load_opponent("winner")
    calls = []
    for name, net in (("table", winner.table), ("alone", winner.alone)):
        logits = net.logits
        monkeypatch.setattr(net, "logits", lambda x, f=logits, n=name: calls.append(n) or f(x))
    rows = [(o, m, c) for o, m, c, _ in _games(2, 1)]
    calls.clear()  # the games above were played by the same networks
    for obs, mask, cards in rows:
        winner.act_table(obs, mask, cards)
    assert calls == ["table"] * len(rows)


def _copy_level(tmp_path: Path) -> Path:
    for name in ("winner.json", "winner.npz", f"{PRIOR}.npz"):
        shutil.copyfile(LEVELS_DIR / name, tmp_path / name)
    return tmp_path / "winner.json"


def _edit(path: Path, change) -> None:
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


def test_a_tampered_table_network_is_refused_naming_it(tmp_path):
    path = _copy_level(tmp_path)
    assert isinstance(load_opponent(path), TablePlay)
    blob = bytearray((tmp_path / "winner.npz").read_bytes())
    blob[-100] ^= 1
    (tmp_path / "winner.npz").write_bytes(bytes(blob))
    with pytest.raises(ModelFormatError, match=r"winner\.npz: sha256 .* does not match"):
        load_opponent(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw.pop("table"), "manifest has no 'table'"),
        (lambda raw: raw["table"].update(observation_version=2), "reads observation version 3"),
        (lambda raw: raw["table"].update(weights_file=f"{PRIOR}.npz"), "a weights file of its own"),
        (lambda raw: raw["table"].update(weights_file=f"../{PRIOR}.npz"), "a bare file name"),
        (lambda raw: raw["table"].update(inputs=86), "expected 107 -> 45"),
        (lambda raw: raw["table"].update(hidden=[4096]), "hidden must be at most"),
        (lambda raw: raw["table"].update(weights_sha256="0" * 64), "does not match"),
    ],
)
def test_a_malformed_table_section_is_refused_naming_the_field(tmp_path, change, message):
    path = _copy_level(tmp_path)
    _edit(path, change)
    with pytest.raises(ModelFormatError, match=message):
        load_opponent(path)


def test_verify_refuses_a_row_whose_table_network_differs():
    row = json.loads((ROOT / "results" / "versus-2p-winner.json").read_text())
    assert row["model"]["table_sha256"] == level_manifest("winner").table.weights_sha256
    assert check_model(row, "winner", load_opponent("winner"), replay=False) is None
    row["model"]["table_sha256"] = "0" * 64
    with pytest.raises(RowError, match=r"model\.table_sha256"):
        check_model(row, "winner", load_opponent("winner"), replay=False)


def test_the_even_table_check_reads_the_winner():
    """`experiments/win_even_table.py winner`: the level shown an even table at 2 seats."""
    from yahtzee_env.analysis.table_decisions import table_reading

    report = table_reading(load_opponent("winner"), "greedy", deals=4, seed=3)
    assert report["games"] == 8 and report["seed"] == 3


def test_export_copies_both_networks_and_the_copy_plays_as_the_level(tmp_path):
    from yahtzee_env.commands.cli import main

    assert main(["export", "winner", "--out", str(tmp_path), "--name", "mine"]) in (0, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine-table.npz", "mine.json", "mine.npz"]
    copy = load_opponent(tmp_path / "mine.json")
    for obs, mask, cards, action in _games(2, 2):
        assert copy.act_table(obs, mask, cards) == action
    assert main(["export", "winner", "--format", "web", "--out", str(tmp_path / "web")]) == 2
