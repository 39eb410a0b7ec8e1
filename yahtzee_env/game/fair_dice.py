"""Dice anyone can check: a game's dice derived from a 32-byte seed, committed to before the
first roll (the SHA-256 of the seed) and revealed after the game, and duplicate games, where
every seat draws the same dice.

The derivation, ``sha256-ctr-v1``, in full (a reader can re-implement it from this)::

    from hashlib import sha256

    def values(seed: bytes, seat: int, turn: int, roll: int):
        "The die values (1..6) of one roll's stream."
        counter = 0
        while True:
            message = seed + bytes([seat, turn, roll]) + counter.to_bytes(4, "big")
            for byte in sha256(message).digest():
                if byte < 252:           # 252 = 6 * 42: bytes 252..255 are skipped, so
                    yield byte % 6 + 1   # every face has probability exactly 1/6
            counter += 1

* ``seed`` is 32 bytes; its commitment is ``sha256(seed).hexdigest()``.
* ``seat`` is the seat 0..N-1, and 0 for every seat in a duplicate game; ``turn`` is the
  seat's own turn, 0..12 (the boxes it had filled when the turn began); ``roll`` is 0 for the
  turn's first roll and 1, 2 for its re-rolls.
* A roll that re-rolls ``n`` dice (all five on a first roll) takes the first ``n`` values of
  its stream; the dice after it are the kept dice and those ``n`` values, shown sorted. Held
  dice draw nothing, and which dice were held does not matter, only how many were re-rolled
  (the engine keeps its dice sorted, so a die has no fixed place to draw for). In a duplicate
  game, two seats that re-roll as many dice at the same turn and roll get the same new
  values, and a seat that re-rolls fewer gets the first ones of the other's: with the same
  holds two seats see the same dice.

Most rolls use the first block: 5 values need 5 bytes below 252 among 32.

**Version 2, ``hmac-sha256-v2``** (issue 58: new tables; ``sha256-ctr-v1`` records still
check). Commit-reveal alone proves the dice were fixed before the game, not that the server
did not try many seeds and commit to one it liked. In v2 every seat adds a *client seed*
after the commitment is shown and before the game's first roll (the page makes one; a CPU
seat, or a seat that sent none, has `DEFAULT_CLIENT_SEED`), and every roll mixes them all in::

    import hmac
    from hashlib import sha256

    def values_v2(seed: bytes, client_seeds: list[str], game: int, seat: int, turn: int,
                  roll: int):
        "The die values (1..6) of one roll's stream."
        counter = 0
        while True:
            message = f"{','.join(client_seeds)}:{game}:{seat}:{turn}:{roll}:{counter}"
            for byte in hmac.new(seed, message.encode("ascii"), sha256).digest():
                if byte < 252:
                    yield byte % 6 + 1
            counter += 1

``client_seeds`` in seat order, each 1..64 of ``A-Z a-z 0-9 _ -``; ``game`` the table's game
(0, 1, ...); ``seat``, ``turn``, ``roll`` as in v1. The seeds are fixed at the game's first
roll: a seed sent later is refused (a late seed would change dice already drawn, and in a
duplicate game every seat draws the same dice). The first-player draw is derived from the
committed seed alone (it is made before the seeds are in): the first byte ``b`` of
``HMAC(seed, f"first:{game}:{counter}")``, counter 0, 1, ..., below ``256 - 256 % seats``,
gives seat ``b % seats`` (`first_draw`). Each client seed has a *mark*,
``HMAC(seed, f"client-seed:{game}:{seat}:{client_seed}")``'s first 16 hex digits, sent to the
seat when the server takes its seed and kept in the record, so a record whose client seed
was changed afterwards is refused naming the seat.

A game's record (``GAME.json``, `game_record`, checked by `verify_record` and
``yahtzee verify-game``) is a JSON object::

    {"format": "yahtzee-dice-v1", "dice": "sha256-ctr-v1",
     "commitment": "<64 hex>", "seed": "<64 hex, once revealed>",
     "duplicate": false, "seats": 2,
     "rolls": [{"seat": 0, "turn": 0, "roll": 0, "kept": [], "dice": [1, 2, 4, 4, 6]},
               {"seat": 0, "turn": 0, "roll": 1, "kept": [4, 4], "dice": [2, 4, 4, 4, 5]},
               ...]}

``rolls`` lists every roll of the game in the order it was made; ``kept`` the faces held
before it (empty on a first roll), ``dice`` the five dice after it, sorted. Other keys (the
players, the boxes, the scores a server adds for its review) are allowed and not checked.
A v2 record (format ``yahtzee-dice-v2``, dice ``hmac-sha256-v2``) adds ``"game"``,
``"client_seeds"`` (seat order), ``"client_seed_marks"`` and ``"first_draw"``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yahtzee_env.game.dice import (
    DICE,
    KEEP_COUNTS,
    KEEP_SIZE,
    NUM_DICE,
    NUM_FACES,
    roll_index_from_counts,
)

DICE_ALGORITHM = "sha256-ctr-v1"
RECORD_FORMAT = "yahtzee-dice-v1"
DICE_V2 = "hmac-sha256-v2"  # issue 58: the seats' client seeds mixed in (new tables)
RECORD_FORMAT_V2 = "yahtzee-dice-v2"
RECORD_FORMATS = {DICE_ALGORITHM: RECORD_FORMAT, DICE_V2: RECORD_FORMAT_V2}
DEFAULT_CLIENT_SEED = "server"  # a CPU seat's client seed, and a seat's that sent none
CLIENT_SEED_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MARK_HEX = 16  # hex digits of a client seed's mark
SEED_BYTES = 32
NUM_TURNS = 13
ROLLS_PER_TURN = 3
MAX_SEATS = 256  # the seat is one byte of the message
_ACCEPT = 252  # the largest multiple of 6 that fits a byte


def new_seed() -> bytes:
    """32 bytes from the operating system's cryptographic source (`secrets`)."""
    return secrets.token_bytes(SEED_BYTES)


def check_seed(seed: bytes) -> bytes:
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != SEED_BYTES:
        raise ValueError(f"a dice seed is {SEED_BYTES} bytes, got {seed!r:.80}")
    return bytes(seed)


def commitment(seed: bytes) -> str:
    """The seed's commitment, shown before the first roll: SHA-256 of the seed, in hex."""
    return hashlib.sha256(check_seed(seed)).hexdigest()


def stream(seed: bytes, seat: int, turn: int, roll: int) -> Iterator[int]:
    """The die values (1..6) of one roll's stream (the module docstring's ``values``)."""
    prefix = check_seed(seed) + bytes([seat, turn, roll])
    counter = 0
    while True:
        for byte in hashlib.sha256(prefix + counter.to_bytes(4, "big")).digest():
            if byte < _ACCEPT:
                yield byte % NUM_FACES + 1
        counter += 1


def roll_values(seed: bytes, seat: int, turn: int, roll: int) -> tuple[int, ...]:
    """The first five values of a roll's stream: a roll that re-rolls ``n`` dice takes the
    first ``n``."""
    values = stream(seed, seat, turn, roll)
    return tuple(next(values) for _ in range(NUM_DICE))


# ------------------------------------------------------------------------------ version 2
def check_client_seed(value: Any) -> str:
    """A client seed: 1..64 of ``A-Z a-z 0-9 _ -`` (ValueError otherwise)."""
    if not isinstance(value, str) or not CLIENT_SEED_RE.fullmatch(value):
        raise ValueError(
            f"a client seed is 1..64 letters, digits, '_' or '-', got {str(value)[:80]!r}"
        )
    return value


def _hmac(seed: bytes, message: str) -> bytes:
    return hmac.digest(check_seed(seed), message.encode("ascii"), "sha256")  # OpenSSL's one-shot


def stream_v2(
    seed: bytes, client_seeds: Sequence[str], game: int, seat: int, turn: int, roll: int
) -> Iterator[int]:
    """The die values (1..6) of one roll's stream in ``hmac-sha256-v2`` (the module
    docstring's ``values_v2``)."""
    joined = ",".join(check_client_seed(c) for c in client_seeds)
    counter = 0
    while True:
        for byte in _hmac(seed, f"{joined}:{game}:{seat}:{turn}:{roll}:{counter}"):
            if byte < _ACCEPT:
                yield byte % NUM_FACES + 1
        counter += 1


def roll_values_v2(
    seed: bytes, client_seeds: Sequence[str], game: int, seat: int, turn: int, roll: int
) -> tuple[int, ...]:
    """The first five values of a v2 roll's stream (`stream_v2`'s, without its generators:
    every web roll draws here)."""
    joined = ",".join(check_client_seed(c) for c in client_seeds)
    values: list[int] = []
    counter = 0
    while True:
        for byte in _hmac(seed, f"{joined}:{game}:{seat}:{turn}:{roll}:{counter}"):
            if byte < _ACCEPT:
                values.append(byte % NUM_FACES + 1)
                if len(values) == NUM_DICE:
                    return tuple(values)
        counter += 1


def first_draw(seed: bytes, game: int, seats: int) -> int:
    """The v2 draw for first player: the first byte ``b`` of ``HMAC(seed,
    "first:{game}:{counter}")`` (counter 0, 1, ...) below ``256 - 256 % seats``, mod
    ``seats``; from the committed seed alone, so it is fixed before the game."""
    accept = 256 - 256 % seats
    counter = 0
    while True:
        for byte in _hmac(seed, f"first:{game}:{counter}"):
            if byte < accept:
                return byte % seats
        counter += 1


def client_seed_mark(seed: bytes, game: int, seat: int, client_seed: str) -> str:
    """The mark of seat ``seat``'s client seed (sent to the seat when the server takes the
    seed; kept in the record): the first 16 hex digits of ``HMAC(seed,
    "client-seed:{game}:{seat}:{client_seed}")``."""
    text = f"client-seed:{game}:{seat}:{check_client_seed(client_seed)}"
    return _hmac(seed, text).hex()[:MARK_HEX]


def faces_table(seed: bytes, seat: int = 0) -> np.ndarray:
    """int8 ``[13, 3, 5]``: every roll's first five values for one seat (seat 0: a
    duplicate game's shared stream)."""
    return np.array(
        [
            [roll_values(seed, seat, turn, roll) for roll in range(ROLLS_PER_TURN)]
            for turn in range(NUM_TURNS)
        ],
        dtype=np.int8,
    )


def batch_seed(key: bytes, slot: int, game: int) -> bytes:
    """The seed of the ``game``-th game (0, 1, ...) of slot ``slot`` of a batch of games with
    the 32-byte ``key`` (the vector env's dealt dice): SHA-256 of key ‖ slot ‖ game, each a
    4-byte big-endian integer."""
    return hashlib.sha256(
        check_seed(key) + slot.to_bytes(4, "big") + game.to_bytes(4, "big")
    ).digest()


_FACE_IDS = np.arange(1, NUM_FACES + 1, dtype=np.int8)
_SLOTS = np.arange(NUM_DICE)


def dealt_rolls(values: np.ndarray, keeps: np.ndarray) -> np.ndarray:
    """Roll indices (`yahtzee_env.game.dice.DICE`) after re-rolling: per row, the dice of keep
    ``keeps[i]`` plus the first ``5 - size`` of ``values[i]`` (int ``[m, 5]``, faces 1..6)."""
    keeps = np.asarray(keeps, dtype=np.intp)
    drawn = _SLOTS[None, :] < (NUM_DICE - KEEP_SIZE[keeps])[:, None]  # [m, 5]
    onehot = (np.asarray(values)[:, :, None] == _FACE_IDS) & drawn[:, :, None]  # [m, 5, 6]
    counts = KEEP_COUNTS[keeps].astype(np.int64) + onehot.sum(axis=1)
    return roll_index_from_counts(counts)


# one roll's scalar path (a web move's: `SeededDice.roll`), beside `dealt_rolls`'s batches
_KEEP_FACES = tuple(
    tuple(face for face, c in enumerate(row, start=1) for _ in range(c))
    for row in KEEP_COUNTS.tolist()
)
_ROLL_OF_DICE = {tuple(row): index for index, row in enumerate(DICE.tolist())}  # sorted dice


def keep_faces(keep: int) -> list[int]:
    """The faces of keep ``keep`` (a keep index), ascending."""
    return list(_KEEP_FACES[keep])


# ------------------------------------------------------------------------------ a game's dice
@dataclass
class SeededDice:
    """The dice of one game from its seed, with the log of every roll (`game_record`).

    `yahtzee_env.game.engine.Game` rolls with it when reset with a ``seed`` (or built with
    ``duplicate=True``). ``algorithm`` `DICE_ALGORITHM` (v1) or `DICE_V2`; in v2 ``game`` is
    the table's game and ``client_seeds`` the seats' client seeds (None: none sent yet, the
    `DEFAULT_CLIENT_SEED` at the first roll), which `set_client_seed` takes until the
    game's first roll."""

    seed: bytes
    duplicate: bool = False
    seats: int = 1
    log: list[dict[str, Any]] = field(default_factory=list)
    algorithm: str = DICE_ALGORITHM
    game: int = 0
    client_seeds: list[str | None] | None = None

    def __post_init__(self) -> None:
        self.seed = check_seed(self.seed)
        if not 1 <= self.seats <= MAX_SEATS:
            raise ValueError(f"seats must be 1..{MAX_SEATS}, got {self.seats}")
        if self.algorithm not in RECORD_FORMATS:
            raise ValueError(f"unknown dice algorithm {self.algorithm!r}")
        if self.algorithm == DICE_V2:
            seeds = list(self.client_seeds or [])
            seeds += [None] * (self.seats - len(seeds))
            if len(seeds) != self.seats:
                raise ValueError(f"{len(seeds)} client seeds for {self.seats} seats")
            self.client_seeds = [None if c is None else check_client_seed(c) for c in seeds]

    @functools.cached_property
    def commitment(self) -> str:
        """`commitment` of the seed (which never changes): worked out once, as every state
        of the game shows it."""
        return commitment(self.seed)

    @property
    def seeds_fixed(self) -> bool:
        """The client seeds can no longer change: the game has rolled."""
        return bool(self.log)

    def set_client_seed(self, seat: int, client_seed: str) -> str:
        """Take seat ``seat``'s client seed (v2, before the game's first roll); return its
        mark (`client_seed_mark`). ValueError after the first roll or in v1."""
        if self.algorithm != DICE_V2:
            raise ValueError(f"the dice of this game ({self.algorithm}) take no client seed")
        if self.seeds_fixed:
            raise ValueError("the game has rolled: its client seeds are fixed")
        self.client_seeds[seat] = check_client_seed(client_seed)
        return client_seed_mark(self.seed, self.game, seat, client_seed)

    def used_client_seeds(self) -> list[str]:
        """The client seeds the rolls use (v2): each seat's, or `DEFAULT_CLIENT_SEED`."""
        return [DEFAULT_CLIENT_SEED if c is None else c for c in self.client_seeds or []]

    def first_draw(self) -> int | None:
        """The v2 draw for first player (`first_draw`); None in v1."""
        return first_draw(self.seed, self.game, self.seats) if self.algorithm == DICE_V2 else None

    def roll(self, keep: int, seat: int, turn: int, roll: int) -> int:
        """The roll index after re-rolling the dice not in ``keep`` at (seat, turn, roll)."""
        stream_seat = 0 if self.duplicate else seat
        if self.algorithm == DICE_V2:
            seeds = self.used_client_seeds()
            values = roll_values_v2(self.seed, seeds, self.game, stream_seat, turn, roll)
        else:
            values = roll_values(self.seed, stream_seat, turn, roll)
        kept = keep_faces(keep)
        dice = sorted(kept + list(values[: NUM_DICE - len(kept)]))
        self.log.append({"seat": seat, "turn": turn, "roll": roll, "kept": kept, "dice": dice})
        return _ROLL_OF_DICE[tuple(dice)]

    def record(self, *, reveal: bool = True) -> dict[str, Any]:
        """The game's record (the module docstring's ``GAME.json``); without the seed unless
        ``reveal``."""
        v2 = {}
        if self.algorithm == DICE_V2:
            seeds = self.used_client_seeds()
            v2 = {
                "game": self.game,
                "client_seeds": seeds,
                "client_seed_marks": [
                    client_seed_mark(self.seed, self.game, seat, c) for seat, c in enumerate(seeds)
                ],
                "first_draw": self.first_draw(),
            }
        return game_record(
            self.commitment,
            self.log,
            seats=self.seats,
            duplicate=self.duplicate,
            seed=self.seed if reveal else None,
            algorithm=self.algorithm,
            **v2,
        )


def game_record(
    commitment_hex: str,
    rolls: Sequence[Mapping[str, Any]],
    *,
    seats: int,
    duplicate: bool = False,
    seed: bytes | None = None,
    algorithm: str = DICE_ALGORITHM,
    **v2: Any,
) -> dict[str, Any]:
    """A ``GAME.json`` object (see the module docstring); ``v2``: a v2 record's ``game``,
    ``client_seeds``, ``client_seed_marks`` and ``first_draw``."""
    return {
        "format": RECORD_FORMATS[algorithm],
        "dice": algorithm,
        "commitment": commitment_hex,
        "seed": None if seed is None else check_seed(seed).hex(),
        **v2,
        "duplicate": bool(duplicate),
        "seats": int(seats),
        "rolls": [dict(r) for r in rolls],
    }


# ------------------------------------------------------------------------------ statistics
@dataclass(frozen=True)
class RollCounts:
    """What one seat rolled in a game: ``faces[f - 1]`` dice freshly rolled showing ``f``
    (kept dice are not counted again), ``rolls``, ``yatzy_rolls`` rolls that showed five of a
    kind, and ``yatzy_expected`` the number fair dice give for the same holds (per roll: 1/1296
    with nothing kept, (1/6)^n with the kept dice all one face and ``n`` re-rolled, else 0)."""

    faces: tuple[int, ...]
    rolls: int
    yatzy_rolls: int
    yatzy_expected: float


def roll_counts(log: Sequence[Mapping[str, Any]], seat: int) -> RollCounts:
    """`RollCounts` of ``seat`` from a game's roll log (`SeededDice.log`, the record's rolls)."""
    faces = [0] * NUM_FACES
    rolls = yatzies = 0
    expected = 0.0
    for entry in log:
        if entry["seat"] != seat:
            continue
        kept, dice = list(entry["kept"]), list(entry["dice"])
        new = list(dice)
        for face in kept:
            new.remove(face)
        for face in new:
            faces[face - 1] += 1
        rolls += 1
        yatzies += len(set(dice)) == 1
        if not kept:
            expected += NUM_FACES * (1 / NUM_FACES) ** NUM_DICE
        elif len(set(kept)) == 1:
            expected += (1 / NUM_FACES) ** len(new)
    return RollCounts(tuple(faces), rolls, yatzies, expected)


def chi_square_uniform(faces: Sequence[int]) -> tuple[float, float]:
    """(statistic, p-value) of Pearson's chi-square test of six face counts against fair dice
    (5 degrees of freedom; the p-value in closed form: Q(x) = erfc(sqrt(x/2)) + sqrt(2x/pi)
    e^(-x/2) (1 + x/3)). NaN for no dice."""
    n = sum(faces)
    if n == 0:
        return float("nan"), float("nan")
    expected = n / NUM_FACES
    x = sum((c - expected) ** 2 / expected for c in faces)
    p = math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)
    return x, min(1.0, max(0.0, p))


# ------------------------------------------------------------------------------ checking
@dataclass(frozen=True)
class Verdict:
    """`verify_record`'s answer: ``ok``, a sentence, the 1-based number of the first roll
    that does not follow (None when none is to blame), and the seat (0-based) whose client
    seed does not match its mark (v2; None when none)."""

    ok: bool
    message: str
    roll: int | None = None
    seat: int | None = None


FOLLOWS = "these dice follow from the seed"


def _faces(value: Any, what: str, size: int | None = None) -> list[int]:
    if not isinstance(value, list) or not all(
        type(v) is int and 1 <= v <= NUM_FACES for v in value
    ):
        raise ValueError(f"{what} must be a list of faces 1..6, got {value!r:.80}")
    if size is not None and len(value) != size:
        raise ValueError(f"{what} must hold {size} dice, got {len(value)}")
    return value


def _small_int(entry: Mapping[str, Any], key: str, limit: int, where: str) -> int:
    value = entry.get(key)
    if type(value) is not int or not 0 <= value < limit:
        raise ValueError(f"{where}: {key!r} must be an integer 0..{limit - 1}, got {value!r:.40}")
    return value


def _describe(n: int, seat: int, turn: int, roll: int) -> str:
    which = "first roll" if roll == 0 else f"re-roll {roll}"
    return f"roll {n} (seat {seat + 1}, turn {turn + 1}, {which})"


def verify_record(record: Any) -> Verdict:
    """Check a game's record: the seed matches the commitment, and every roll is the kept
    dice plus the values its stream gives. The first roll that does not follow is named."""
    if not isinstance(record, Mapping):
        return Verdict(False, "the record is not a JSON object")
    algorithm = record.get("dice")
    if algorithm not in RECORD_FORMATS:
        return Verdict(
            False,
            f"unknown dice algorithm {algorithm!r:.60} "
            f"(expected one of {', '.join(map(repr, RECORD_FORMATS))})",
        )
    if record.get("format") != RECORD_FORMATS[algorithm]:
        return Verdict(
            False,
            f"unknown record format {record.get('format')!r:.60} "
            f"(expected {RECORD_FORMATS[algorithm]!r} for {algorithm!r})",
        )
    committed, seed_hex = record.get("commitment"), record.get("seed")
    if not isinstance(committed, str) or len(committed) != 64:
        return Verdict(False, "the record has no commitment (64 hex digits)")
    if seed_hex is None:
        return Verdict(False, "the seed is not revealed yet: the game is not over")
    try:
        seed = bytes.fromhex(seed_hex) if isinstance(seed_hex, str) else b""
        check_seed(seed)
    except ValueError:
        return Verdict(False, f"the seed must be {2 * SEED_BYTES} hex digits, got {seed_hex!r:.80}")
    if not hmac.compare_digest(commitment(seed), committed.lower()):
        return Verdict(
            False,
            "the seed does not match the commitment: "
            f"sha256(seed) is {commitment(seed)}, the game committed to {committed}",
        )
    duplicate, seats, rolls = record.get("duplicate"), record.get("seats"), record.get("rolls")
    if not isinstance(duplicate, bool):
        return Verdict(False, f"'duplicate' must be true or false, got {duplicate!r:.40}")
    if type(seats) is not int or not 1 <= seats <= MAX_SEATS:
        return Verdict(False, f"'seats' must be an integer 1..{MAX_SEATS}, got {seats!r:.40}")
    if not isinstance(rolls, list) or not rolls:
        return Verdict(False, "the record has no rolls")
    if algorithm == DICE_V2:
        checked = _check_v2(record, seed, seats)
        if isinstance(checked, Verdict):
            return checked
        game, client_seeds = checked

        def values_of(seat: int, turn: int, roll: int) -> tuple[int, ...]:
            return roll_values_v2(seed, client_seeds, game, seat, turn, roll)
    else:

        def values_of(seat: int, turn: int, roll: int) -> tuple[int, ...]:
            return roll_values(seed, seat, turn, roll)

    last: dict[tuple[int, int], tuple[int, list[int]]] = {}  # (seat, turn) -> (roll, dice)
    for n, entry in enumerate(rolls, start=1):
        try:
            if not isinstance(entry, Mapping):
                raise ValueError(f"roll {n} is not a JSON object")
            seat = _small_int(entry, "seat", seats, f"roll {n}")
            turn = _small_int(entry, "turn", NUM_TURNS, f"roll {n}")
            roll = _small_int(entry, "roll", ROLLS_PER_TURN, f"roll {n}")
            kept = _faces(entry.get("kept"), f"roll {n}: 'kept'")
            dice = _faces(entry.get("dice"), f"roll {n}: 'dice'", NUM_DICE)
        except ValueError as err:
            return Verdict(False, str(err), n)
        name = _describe(n, seat, turn, roll)
        before = last.get((seat, turn))
        if roll == 0:
            if before is not None:
                return Verdict(False, f"{name}: this turn was already rolled", n)
            if kept:
                return Verdict(
                    False, f"{name}: a first roll keeps no dice, the record keeps {kept}", n
                )
        else:
            if before is None or before[0] != roll - 1:
                return Verdict(False, f"{name}: it does not follow roll {roll - 1} of the turn", n)
            if not _is_sub_multiset(kept, before[1]):
                return Verdict(
                    False, f"{name}: kept {kept} are not among the dice on the table {before[1]}", n
                )
        values = values_of(0 if duplicate else seat, turn, roll)
        expected = sorted(kept + list(values[: NUM_DICE - len(kept)]))
        if sorted(dice) != expected:
            return Verdict(
                False,
                f"{name} does not follow from the seed{'s' if algorithm == DICE_V2 else ''}: "
                "the record shows "
                f"{_show(dice)}, the seed gives {_show(expected)}",
                n,
            )
        last[(seat, turn)] = (roll, sorted(dice))
    return Verdict(True, f"{FOLLOWS} ({len(rolls)} rolls, {algorithm}, commitment {committed})")


def _check_v2(record: Mapping[str, Any], seed: bytes, seats: int) -> Verdict | tuple:
    """A v2 record's game, client seeds (each against its mark: an edited one is named) and
    first-player draw; ``(game, client_seeds)`` when they hold."""
    game, seeds, marks = (
        record.get("game"),
        record.get("client_seeds"),
        record.get("client_seed_marks"),
    )
    if type(game) is not int or not 0 <= game < 1 << 31:
        return Verdict(False, f"'game' must be a game number 0, 1, ..., got {game!r:.40}")
    for key, value in (("client_seeds", seeds), ("client_seed_marks", marks)):
        if not isinstance(value, list) or len(value) != seats:
            return Verdict(False, f"{key!r} must list one per seat ({seats}), got {value!r:.80}")
    for seat, (client, mark) in enumerate(zip(seeds, marks, strict=True)):
        try:
            expected = client_seed_mark(seed, game, seat, client)
        except ValueError as err:
            return Verdict(False, f"seat {seat + 1}'s client seed: {err}", seat=seat)
        if not isinstance(mark, str) or not hmac.compare_digest(expected, mark.lower()):
            return Verdict(
                False,
                f"seat {seat + 1}'s client seed {client!r} was edited: it does not match its "
                f"mark {str(mark)[:MARK_HEX]!r} (that seed's mark is {expected})",
                seat=seat,
            )
    drawn = first_draw(seed, game, seats)
    if record.get("first_draw") != drawn:
        return Verdict(
            False,
            f"the draw for first player does not follow from the seed: the record shows "
            f"{record.get('first_draw')!r:.20}, the seed gives {drawn}",
        )
    return game, list(seeds)


def _is_sub_multiset(small: Sequence[int], big: Sequence[int]) -> bool:
    return all(small.count(face) <= list(big).count(face) for face in set(small))


def _show(dice: Sequence[int]) -> str:
    return " ".join(str(d) for d in dice)


__all__ = [
    "DEFAULT_CLIENT_SEED",
    "DICE_ALGORITHM",
    "DICE_V2",
    "FOLLOWS",
    "RECORD_FORMAT",
    "RECORD_FORMATS",
    "RECORD_FORMAT_V2",
    "SEED_BYTES",
    "RollCounts",
    "SeededDice",
    "Verdict",
    "batch_seed",
    "check_client_seed",
    "chi_square_uniform",
    "client_seed_mark",
    "commitment",
    "dealt_rolls",
    "faces_table",
    "first_draw",
    "game_record",
    "keep_faces",
    "new_seed",
    "roll_counts",
    "roll_values",
    "roll_values_v2",
    "stream",
    "stream_v2",
    "verify_record",
]
