"""Dice anyone can check (`yahtzee_env.game.fair_dice`): the derivation, the record and its
verifier (``yahtzee verify-game``), and duplicate games in the engine, the envs and the
multi-player protocol."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json

import numpy as np
import pytest

from yahtzee_env.commands.cli import main as cli_main
from yahtzee_env.game.dice import DICE
from yahtzee_env.game.engine import BOX_ACTION_OFFSET, Game
from yahtzee_env.game.fair_dice import (
    DEFAULT_CLIENT_SEED,
    DICE_V2,
    FOLLOWS,
    RECORD_FORMAT_V2,
    SeededDice,
    batch_seed,
    client_seed_mark,
    commitment,
    faces_table,
    first_draw,
    roll_values,
    roll_values_v2,
    verify_record,
)

SEED = bytes(range(32))


def reference_values(seed: bytes, seat: int, turn: int, roll: int, count: int) -> list[int]:
    """The derivation as docs/fair_dice.md and the module docstring write it, independently."""
    out, counter = [], 0
    while len(out) < count:
        message = seed + bytes([seat, turn, roll]) + counter.to_bytes(4, "big")
        out += [b % 6 + 1 for b in hashlib.sha256(message).digest() if b < 252]
        counter += 1
    return out[:count]


def test_derivation_is_the_documented_one():
    for seat, turn, roll in [(0, 0, 0), (1, 0, 0), (0, 12, 2), (3, 7, 1)]:
        assert list(roll_values(SEED, seat, turn, roll)) == reference_values(
            SEED, seat, turn, roll, 5
        )
    # Pinned: a change to the derivation breaks every stored game's check.
    assert roll_values(SEED, 0, 0, 0) == (3, 6, 5, 1, 5)
    assert roll_values(SEED, 1, 5, 2) == (2, 1, 5, 4, 1)
    assert commitment(SEED) == hashlib.sha256(SEED).hexdigest()
    with pytest.raises(ValueError, match="32 bytes"):
        commitment(b"short")


def test_faces_are_uniform():
    """Every face 1/6: 39 rolls x 5 values x 400 seeds = 78,000 values, each face's share
    within 5 standard errors of 1/6 (the mapping drops bytes 252..255, so no bias)."""
    faces = np.concatenate([faces_table(batch_seed(SEED, 0, g)).ravel() for g in range(400)])
    share = np.bincount(faces, minlength=7)[1:] / faces.size
    assert np.all(np.abs(share - 1 / 6) < 5 * np.sqrt(1 / 6 * 5 / 6 / faces.size))


def random_play(game: Game, rng: np.random.Generator) -> None:
    while not game.over:
        game.step(int(rng.choice(np.flatnonzero(game.legal_action_mask()))))


def played_record(seats: int = 2, duplicate: bool = False) -> dict:
    game = Game("official", seats, duplicate=duplicate)
    game.reset(np.random.default_rng(0), first=seats - 1, seed=SEED)
    random_play(game, np.random.default_rng(1))
    return game.seeded.record()


def test_a_played_game_verifies_and_an_edited_die_is_refused():
    record = json.loads(json.dumps(played_record()))  # through JSON, as GAME.json
    assert record["commitment"] == commitment(SEED) and record["seed"] == SEED.hex()
    assert 2 * 13 <= len(record["rolls"]) <= 2 * 13 * 3
    verdict = verify_record(record)
    assert verdict.ok and verdict.message.startswith(FOLLOWS), verdict

    edited = copy.deepcopy(record)
    n = 17  # 1-based
    entry = edited["rolls"][n - 1]
    entry["dice"][-1] = entry["dice"][-1] % 6 + 1
    verdict = verify_record(edited)
    assert not verdict.ok and verdict.roll == n
    assert f"roll {n} (seat {entry['seat'] + 1}, turn {entry['turn'] + 1}" in verdict.message
    assert "does not follow from the seed" in verdict.message


def test_the_record_is_checked_against_its_commitment_and_holds():
    record = played_record()
    other = dict(record, seed=bytes(32).hex())
    assert "does not match the commitment" in verify_record(other).message
    assert "not revealed" in verify_record(dict(record, seed=None)).message
    assert "format" in verify_record(dict(record, format="x")).message
    # A re-roll that claims to keep dice that were not on the table is refused.
    rolls = record["rolls"]
    i = next(k for k, r in enumerate(rolls) if r["roll"] == 1 and len(r["kept"]) < 5)
    before = rolls[i - 1]["dice"]
    absent = next(f for f in range(1, 7) if f not in before)
    bad = copy.deepcopy(record)
    bad["rolls"][i]["kept"] = bad["rolls"][i]["kept"] + [absent]
    verdict = verify_record(bad)
    assert not verdict.ok and verdict.roll == i + 1 and "not among the dice" in verdict.message
    # A turn rolled twice (a server re-rolling until it likes the dice) is refused.
    twice = copy.deepcopy(record)
    twice["rolls"].insert(1, twice["rolls"][0])
    assert "already rolled" in verify_record(twice).message
    assert verify_record([]).ok is False


def test_verify_game_command(tmp_path, capsys):
    path = tmp_path / "game.json"
    record = played_record(seats=3)
    path.write_text(json.dumps(record))
    assert cli_main(["verify-game", str(path)]) == 0
    assert FOLLOWS in capsys.readouterr().out
    record["rolls"][4]["dice"][0] = record["rolls"][4]["dice"][0] % 6 + 1
    path.write_text(json.dumps(record))
    assert cli_main(["verify-game", str(path)]) == 1
    assert "roll 5 (seat" in capsys.readouterr().out
    path.write_text("{not json")
    assert cli_main(["verify-game", str(path)]) == 2
    assert "error" in capsys.readouterr().err


def test_seeded_dice_match_the_record_and_the_stream():
    game = Game("official", 1)
    game.reset(np.random.default_rng(0), seed=SEED)
    first = list(game.dice)
    assert first == sorted(reference_values(SEED, 0, 0, 0, 5))
    game.step(0b00011)  # keep the two lowest, re-roll three: the stream's first three values
    kept = first[:2]
    assert list(game.dice) == sorted(kept + reference_values(SEED, 0, 0, 1, 3))


def test_one_rolls_index_is_the_batches_for_every_keep():
    """`SeededDice.roll`'s scalar path (a web move's) gives `dealt_rolls`'s roll index for
    every keep and the faces the keep holds."""
    from yahtzee_env.game.dice import KEEP_COUNTS, NUM_KEEPS
    from yahtzee_env.game.fair_dice import SeededDice, dealt_rolls, roll_values

    dice = SeededDice(SEED)
    for keep in range(NUM_KEEPS):
        turn, roll = keep % 13, keep % 3
        index = dice.roll(keep, 0, turn, roll)
        values = roll_values(SEED, 0, turn, roll)
        assert index == int(dealt_rolls(np.array([values]), np.array([keep]))[0])
        kept = dice.log[-1]["kept"]
        assert [kept.count(f) for f in range(1, 7)] == KEEP_COUNTS[keep].tolist()


def _same_moves(game: Game) -> int:
    """A deterministic choice from what the mover sees (its dice, rolls left, its card)."""
    mask = game.legal_action_mask()
    if game.rolls_left and sum(game.dice) < 20:
        hold = sum(1 << i for i, d in enumerate(game.dice) if d >= 4)
        if mask[hold]:
            return hold
    legal, points = game.box_options()
    return BOX_ACTION_OFFSET + int(np.argmax(np.where(legal, points, -1)))


def test_duplicate_seats_playing_the_same_moves_end_with_equal_cards():
    game = Game("official", 2, duplicate=True)
    game.reset(np.random.default_rng(5), first=1)
    while not game.over:
        game.step(_same_moves(game))
    a, b = game.players
    assert a.scores == b.scores and a.total == b.total
    assert verify_record(game.seeded.record()).ok
    # Without duplicate dice the two cards differ (on this seed).
    game = Game("official", 2)
    game.reset(np.random.default_rng(5), first=1, seed=SEED)
    while not game.over:
        game.step(_same_moves(game))
    assert game.players[0].scores != game.players[1].scores


def test_duplicate_rerolls_draw_by_count_not_by_which_dice():
    """Holds differ: a seat re-rolling fewer dice gets the first of the other's new values."""
    game = Game("official", 2, duplicate=True)
    game.reset(np.random.default_rng(0), seed=SEED)
    dice0 = list(game.dice)
    game.step(0b00111)  # seat 0 keeps three, re-rolls two
    game.step(BOX_ACTION_OFFSET + int(np.flatnonzero(game.box_options()[0])[0]))
    assert list(game.dice) == dice0  # seat 1's first roll: the same dice
    game.step(0b00011)  # seat 1 keeps two, re-rolls three
    log = game.seeded.log
    new0 = _minus(log[1]["dice"], log[1]["kept"])
    new1 = _minus(log[3]["dice"], log[3]["kept"])
    values = reference_values(SEED, 0, 0, 1, 3)
    assert sorted(new0) == sorted(values[:2]) and sorted(new1) == sorted(values)


def _minus(dice: list[int], kept: list[int]) -> list[int]:
    rest = list(dice)
    for face in kept:
        rest.remove(face)
    return rest


def test_pettingzoo_duplicate_env():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    from yahtzee_env.envs import multiplayer

    api_test(multiplayer.env(num_players=2, duplicate=True), num_cycles=40)
    env = multiplayer.raw_env(num_players=3, reward="score", duplicate=True)
    env.reset(seed=3)
    for _agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else _same_moves(env.game))
    totals = env.game.totals()
    assert len(set(totals)) == 1 and verify_record(env.game.seeded.record()).ok
    with pytest.raises(ValueError, match="duplicate"):
        multiplayer.raw_env(duplicate="yes")


def test_vector_duplicate_dice_are_the_seeded_games():
    """Slot i's k-th game in a duplicate vector env is `Game` with seed batch_seed(key, i, k),
    through autoresets, whatever the actions."""
    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    n = 6
    env = YahtzeeVectorEnv(num_envs=n, duplicate=True)
    env.reset(seed=11)
    key = bytes.fromhex(env.get_state()[1]["deal_key"])
    games = [0] * n
    mirrors = []
    for i in range(n):
        g = Game("official", 1)
        g.reset(np.random.default_rng(0), seed=batch_seed(key, i, 0))
        mirrors.append(g)
    rng = np.random.default_rng(2)
    for _ in range(120):  # about three games per slot
        for i in range(n):
            assert tuple(DICE[env._roll[i]]) == mirrors[i].dice
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        env.step(actions)
        for i in range(n):
            mirrors[i].step(int(actions[i]))
            if mirrors[i].over:
                games[i] += 1
                mirrors[i].reset(np.random.default_rng(0), seed=batch_seed(key, i, games[i]))
    assert min(games) >= 2
    # Two envs on the same seed deal the same first roll, and state round-trips.
    other = YahtzeeVectorEnv(num_envs=n, duplicate=True)
    other.reset(seed=11)
    arrays, facts = env.get_state()
    other.set_state(arrays, facts)
    actions = np.array([int(np.flatnonzero(m)[0]) for m in env.action_masks()])
    assert np.array_equal(env.step(actions)[0], other.step(actions)[0])
    plain = YahtzeeVectorEnv(num_envs=n)
    with pytest.raises(ValueError, match="duplicate"):
        plain.set_state(arrays, facts)


def test_vector_duplicate_under_next_step_autoreset():
    from gymnasium.vector import AutoresetMode

    from yahtzee_env.envs.vector import YahtzeeVectorEnv

    env = YahtzeeVectorEnv(num_envs=3, duplicate=True, autoreset_mode=AutoresetMode.NEXT_STEP)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(100):
        masks = env.action_masks()
        _, _, term, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        ended += int(term.sum())
    assert ended >= 3


def test_batched_duplicate_games_give_equal_seats_equal_totals():
    from yahtzee_env.analysis.tournament import play_batched_games
    from yahtzee_env.policies.baselines import make_policy

    greedy = make_policy("greedy")
    totals = play_batched_games([greedy, greedy], 50, seed=1, batch_size=32, duplicate=True)
    assert (totals[:, 0] == totals[:, 1]).all()
    plain = play_batched_games([greedy, greedy], 50, seed=1, batch_size=32)
    assert (plain[:, 0] != plain[:, 1]).any()


def test_versus_row_with_duplicate_dice():
    from yahtzee_env.analysis.multiplayer import benchmark_versus
    from yahtzee_env.analysis.protocol import versus_dice_digest

    row = benchmark_versus("greedy", players=2, vs=["greedy"], deals=30, duplicate=True)
    (o,) = row["opponents"]
    assert row["duplicate"] is True and row["standard"] is False
    assert o["draws"] == 60 and o["margin"] == 0.0  # the same policy on the same dice
    assert row["provenance"]["dice_sha256"] == versus_dice_digest(30, 2, duplicate=True)
    assert versus_dice_digest(30, 2, duplicate=True) != versus_dice_digest(30, 2)


def test_hold_masks_are_over_sorted_dice():
    """The record's ``kept`` is what the hold mask keeps of the sorted dice."""
    game = Game("official", 1)
    game.reset(np.random.default_rng(0), seed=SEED)
    before = list(game.dice)
    game.step(0b10101)
    assert game.seeded.log[1]["kept"] == [before[0], before[2], before[4]]


def test_roll_counts_and_the_chi_square_test():
    from yahtzee_env.game.fair_dice import chi_square_uniform, roll_counts

    log = [
        {"seat": 0, "turn": 0, "roll": 0, "kept": [], "dice": [2, 2, 3, 5, 6]},
        {"seat": 0, "turn": 0, "roll": 1, "kept": [2, 2], "dice": [2, 2, 2, 2, 4]},
        {"seat": 0, "turn": 0, "roll": 2, "kept": [2, 2, 2, 2], "dice": [2, 2, 2, 2, 2]},
        {"seat": 1, "turn": 0, "roll": 0, "kept": [], "dice": [1, 1, 1, 1, 1]},
    ]
    mine = roll_counts(log, 0)
    assert mine.faces == (0, 5, 1, 1, 1, 1) and sum(mine.faces) == 5 + 3 + 1
    assert mine.rolls == 3 and mine.yatzy_rolls == 1
    assert mine.yatzy_expected == pytest.approx(6 / 6**5 + 1 / 6**3 + 1 / 6)
    theirs = roll_counts(log, 1)
    assert theirs.faces == (5, 0, 0, 0, 0, 0) and theirs.yatzy_rolls == 1
    # the closed form against known quantiles of chi-square with 5 degrees of freedom
    for x, p in [(0.0, 1.0), (4.3515, 0.5), (11.0705, 0.05), (15.0863, 0.01)]:
        assert chi_square_uniform_p(x) == pytest.approx(p, abs=2e-4)
    assert chi_square_uniform([10] * 6) == (0.0, 1.0)
    statistic, p = chi_square_uniform([30, 10, 10, 10, 10, 10])
    assert statistic == pytest.approx(25.0) and p < 0.001
    # a record's counts equal the dice a seeded game drew (fresh dice only)
    game = Game("official", 1)
    game.reset(np.random.default_rng(0), seed=SEED)
    random_play(game, np.random.default_rng(3))
    counts = roll_counts(game.seeded.log, 0)
    fresh = sum(5 - len(r["kept"]) for r in game.seeded.log)
    assert sum(counts.faces) == fresh and counts.rolls == len(game.seeded.log)


def chi_square_uniform_p(x: float) -> float:
    """The p-value `chi_square_uniform` gives for statistic ``x``, via counts that make it."""
    from yahtzee_env.game.fair_dice import chi_square_uniform

    # counts (n + d, n - d, n, n, n, n) have statistic 2 d^2 / n; n = 6e6 keeps d an integer's
    # rounding error far below the tolerance
    n = 6_000_000
    d = (x * n / 2) ** 0.5
    stat, p = chi_square_uniform([n + d, n - d, n, n, n, n])
    assert stat == pytest.approx(x, abs=1e-6)
    return p


# ------------------------------------------------------------------ v2: the seats' client seeds
def reference_values_v2(
    seed: bytes, client_seeds: list[str], game: int, seat: int, turn: int, roll: int, count: int
) -> list[int]:
    """``hmac-sha256-v2`` as docs/fair_dice.md writes it, independently."""
    out, counter = [], 0
    while len(out) < count:
        message = f"{','.join(client_seeds)}:{game}:{seat}:{turn}:{roll}:{counter}"
        digest = hmac.new(seed, message.encode("ascii"), hashlib.sha256).digest()
        out += [b % 6 + 1 for b in digest if b < 252]
        counter += 1
    return out[:count]


# the documented example (docs/fair_dice.md): pinned, as a change breaks every stored game
V2_EXAMPLE = {"seed": SEED, "client_seeds": ["server", "my-seed-42"], "game": 0}


def played_record_v2(client_seeds=(None, "my-seed-42"), seats=2, duplicate=False, game_no=0):
    game = Game("official", seats, duplicate=duplicate)
    game.reset(
        np.random.default_rng(0), first=0, seed=SEED, dice=DICE_V2, game=game_no,
        client_seeds=list(client_seeds),
    )  # fmt: skip
    random_play(game, np.random.default_rng(1))
    return json.loads(json.dumps(game.seeded.record()))


def test_v2_derivation_is_the_documented_one():
    ex = V2_EXAMPLE
    for seat, turn, roll in [(0, 0, 0), (1, 0, 0), (0, 12, 2), (1, 7, 1)]:
        assert list(roll_values_v2(ex["seed"], ex["client_seeds"], 0, seat, turn, roll)) == (
            reference_values_v2(ex["seed"], ex["client_seeds"], 0, seat, turn, roll, 5)
        )
    # Pinned (docs/fair_dice.md's example)
    assert roll_values_v2(SEED, ["server", "my-seed-42"], 0, 0, 0, 0) == (3, 2, 6, 1, 4)
    assert roll_values_v2(SEED, ["server", "my-seed-42"], 0, 1, 12, 2) == (1, 1, 1, 2, 6)
    assert first_draw(SEED, 0, 2) == 1 and first_draw(SEED, 1, 4) == 0
    assert client_seed_mark(SEED, 0, 1, "my-seed-42") == "5508e7ebcdb0121a"
    assert (
        client_seed_mark(SEED, 0, 1, "my-seed-42")
        == hmac.new(SEED, b"client-seed:0:1:my-seed-42", hashlib.sha256).hexdigest()[:16]
    )
    for bad in ("", "a" * 65, "a,b", "a:b", "é", None, 7):
        with pytest.raises(ValueError, match="client seed"):
            roll_values_v2(SEED, [bad], 0, 0, 0, 0)


def test_v2_faces_are_uniform():
    faces = np.array(
        [v for g in range(300) for t in range(13) for v in roll_values_v2(SEED, ["x"], g, 0, t, 0)]
    )
    share = np.bincount(faces, minlength=7)[1:] / faces.size
    assert np.all(np.abs(share - 1 / 6) < 5 * np.sqrt(1 / 6 * 5 / 6 / faces.size))


def test_a_client_seed_changes_the_dice():
    mine = played_record_v2((None, "my-seed-42"))
    other = played_record_v2((None, "my-seed-43"))
    assert mine["rolls"][0]["dice"] != other["rolls"][0]["dice"] or (
        mine["rolls"][1]["dice"] != other["rolls"][1]["dice"]
    )
    assert roll_values_v2(SEED, ["server", "my-seed-42"], 0, 0, 0, 0) != roll_values_v2(
        SEED, ["server", "my-seed-43"], 0, 0, 0, 0
    )
    # ... and every seat's seed counts for every seat's rolls (seat 0's here, seat 1's seed)
    assert [r for r in mine["rolls"] if r["seat"] == 0] != [
        r for r in other["rolls"] if r["seat"] == 0
    ]


def test_cpu_seats_and_silent_seats_take_the_default_client_seed():
    record = played_record_v2((None, None))
    assert record["client_seeds"] == [DEFAULT_CLIENT_SEED] * 2 == ["server", "server"]
    assert record["rolls"][0]["dice"] == sorted(
        reference_values_v2(SEED, ["server", "server"], 0, 0, 0, 0, 5)
    )
    assert verify_record(record).ok


def test_a_v2_record_verifies_and_carries_the_version_and_the_seeds():
    for seats, duplicate, game_no in [(2, False, 0), (3, True, 5), (4, False, 2)]:
        seeds = [None] + [f"seed-{s}" for s in range(1, seats)]
        record = played_record_v2(seeds, seats, duplicate, game_no)
        assert record["format"] == RECORD_FORMAT_V2 and record["dice"] == DICE_V2
        assert record["client_seeds"] == ["server", *seeds[1:]] and record["game"] == game_no
        assert record["first_draw"] == first_draw(SEED, game_no, seats)
        verdict = verify_record(record)
        assert verdict.ok and "hmac-sha256-v2" in verdict.message, verdict
    # an edited die is named as in v1
    record["rolls"][9]["dice"][0] = record["rolls"][9]["dice"][0] % 6 + 1
    verdict = verify_record(record)
    assert (
        not verdict.ok
        and verdict.roll == 10
        and "does not follow from the seeds" in verdict.message
    )


def test_v1_records_still_verify():
    """A record stored before issue 58 (sha256-ctr-v1, format yahtzee-dice-v1) checks as
    it did: the versions are told apart by the record, not by the date."""
    record = json.loads(json.dumps(played_record()))
    assert record["dice"] == "sha256-ctr-v1" and record["format"] == "yahtzee-dice-v1"
    assert "client_seeds" not in record
    assert verify_record(record).ok
    # a v1 record relabelled v2 (or the reverse) does not check
    assert not verify_record(dict(record, dice=DICE_V2)).ok
    v2 = played_record_v2()
    assert not verify_record(dict(v2, dice="sha256-ctr-v1", format="yahtzee-dice-v1")).ok


def test_first_player_draw_follows_from_the_committed_seed():
    """The v2 draw for first player is fixed by the committed seed (and the game number),
    uniform over the seats, and a record that shows another draw is refused."""
    manual = next(b % 3 for b in hmac.new(SEED, b"first:4:0", hashlib.sha256).digest() if b < 255)
    assert first_draw(SEED, 4, 3) == manual
    counts = np.bincount([first_draw(batch_seed(SEED, 0, g), 0, 4) for g in range(2000)])
    assert counts.min() > 400  # 500 each expected
    record = played_record_v2()
    bad = dict(record, first_draw=1 - record["first_draw"])
    verdict = verify_record(bad)
    assert not verdict.ok and "first player" in verdict.message
    # the table deals it so (deal.new_game with no first given)
    from yahtzee_env.game.rules import RuleSet
    from yahtzee_env.web.tables.deal import game_dice_seed, new_game

    for idx in range(6):
        game, first = new_game(RuleSet.from_spec("official"), 7, idx, 3, secret=SEED, dice=DICE_V2)
        assert first == first_draw(game_dice_seed(SEED, idx), idx, 3) == game.first
        assert game.seeded.first_draw() == first


def test_attack_edited_client_seed_is_named_by_the_checker(tmp_path, capsys):
    """Adversary: whoever hands a player a record (an operator, or a forged copy) that
    changes a seat's client seed after the fact, say to claim the seat's own seed gave the
    dice: the checker refuses it and names the seat."""
    record = played_record_v2((None, "my-seed-42", "their-seed"), seats=3)
    edited = copy.deepcopy(record)
    edited["client_seeds"][1] = "my-seed-43"
    verdict = verify_record(edited)
    assert not verdict.ok and verdict.seat == 1
    assert verdict.message.startswith("seat 2's client seed 'my-seed-43' was edited")
    path = tmp_path / "game.json"
    path.write_text(json.dumps(edited))
    assert cli_main(["verify-game", str(path)]) == 1
    assert "seat 2's client seed" in capsys.readouterr().out
    # dropping a seat's seed, or a CPU seat's default, is refused as well
    assert not verify_record(dict(record, client_seeds=record["client_seeds"][:2])).ok
    cpu = copy.deepcopy(record)
    cpu["client_seeds"][0] = "chosen"
    assert verify_record(cpu).seat == 0


def test_attack_client_seed_after_the_first_roll_is_refused_by_the_dice():
    """Adversary: a player who sees the first dice and then tries to change the seeds (to
    steer the rolls still to come): once the game has rolled, its seeds are fixed."""
    dice = SeededDice(SEED, seats=2, algorithm=DICE_V2)
    assert dice.set_client_seed(1, "early") == client_seed_mark(SEED, 0, 1, "early")
    dice.roll(0, 0, 0, 0)
    with pytest.raises(ValueError, match="fixed"):
        dice.set_client_seed(1, "late")
    assert dice.used_client_seeds() == ["server", "early"]
    with pytest.raises(ValueError, match="take no client seed"):
        SeededDice(SEED, seats=2).set_client_seed(0, "x")
