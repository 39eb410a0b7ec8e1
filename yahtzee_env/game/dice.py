"""Combinatorial tables over dice: the 252 sorted multisets of five dice and the 462 keeps.

Everything the engine, the vector env and the solver need about dice is computed here once,
at import, as small numpy arrays (a few hundred KiB in all):

* ``DICE[i]``          the i-th sorted roll (ascending faces 1..6), ``i`` in ``range(252)``.
* ``COUNTS[i]``        how many of each face 1..6 roll ``i`` shows.
* ``KEEP_COUNTS[k]``   the face counts of keep ``k`` (a sub-multiset of 0..5 dice), ``k < 462``.
* ``HOLD_TO_KEEP[i, h]`` the keep made by holding dice ``{j : bit j of h}`` of ``DICE[i]``.
* ``KEEP_PROBS[k, i]`` probability that re-rolling the dice not in keep ``k`` gives roll ``i``.
* ``KEEP_CDF[k, i]``   the same as a cumulative count over 6**5 equally likely outcomes, so a
  uniform integer ``r`` in ``[0, 7776)`` picks the outcome ``bisect_right(KEEP_CDF[k], r)``
  exactly, in one lookup, with no loop over dice. ``FIRST_ROLL_KEEP`` is the empty keep.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import factorial

import numpy as np

NUM_DICE = 5
NUM_FACES = 6
NUM_HOLDS = 1 << NUM_DICE  # 32 hold masks over the sorted dice
ROLL_OUTCOMES = NUM_FACES**NUM_DICE  # 7776 equally likely ordered rolls of five dice


def _counts_code(counts: np.ndarray) -> np.ndarray:
    """Base-6 code of face counts (each 0..5): a dense integer key for a multiset."""
    return counts @ (NUM_FACES ** np.arange(NUM_FACES))


DICE = np.array(
    list(combinations_with_replacement(range(1, NUM_FACES + 1), NUM_DICE)), dtype=np.int8
)
NUM_ROLLS = len(DICE)  # 252
COUNTS = np.stack([(f == DICE).sum(axis=1) for f in range(1, NUM_FACES + 1)], axis=1).astype(
    np.int8
)

_keep_list = [
    np.bincount(np.asarray(c, dtype=np.int64) - 1, minlength=NUM_FACES)
    for n in range(NUM_DICE + 1)
    for c in combinations_with_replacement(range(1, NUM_FACES + 1), n)
]
KEEP_COUNTS = np.array(_keep_list, dtype=np.int8)
NUM_KEEPS = len(KEEP_COUNTS)  # 462
KEEP_SIZE = KEEP_COUNTS.sum(axis=1).astype(np.int8)
FIRST_ROLL_KEEP = 0  # the empty keep: roll all five dice

# Code -> index lookups (dense arrays; codes are < 6**6).
_ROLL_INDEX = np.full(NUM_FACES**NUM_FACES, -1, dtype=np.int16)
_ROLL_INDEX[_counts_code(COUNTS.astype(np.int64))] = np.arange(NUM_ROLLS)
_KEEP_INDEX = np.full(NUM_FACES**NUM_FACES, -1, dtype=np.int16)
_KEEP_INDEX[_counts_code(KEEP_COUNTS.astype(np.int64))] = np.arange(NUM_KEEPS)


def roll_index_from_counts(counts: np.ndarray) -> np.ndarray:
    """Roll indices of face counts ``[..., 6]`` (each row must sum to five)."""
    return _ROLL_INDEX[_counts_code(np.asarray(counts, dtype=np.int64))].astype(np.int64)


def roll_index(dice) -> int:
    """Index in ``DICE`` of five dice given in any order (faces 1..6)."""
    faces = np.asarray(dice, dtype=np.int64)
    if faces.shape != (NUM_DICE,) or faces.min() < 1 or faces.max() > NUM_FACES:
        raise ValueError(f"expected five dice with faces 1..6, got {dice!r}")
    return int(_ROLL_INDEX[_counts_code(np.bincount(faces - 1, minlength=NUM_FACES))])


def keep_index(counts) -> int:
    """Index in ``KEEP_COUNTS`` of a keep given as six face counts."""
    code = _counts_code(np.asarray(counts, dtype=np.int64))
    k = int(_KEEP_INDEX[code])
    if k < 0:
        raise ValueError(f"not a keep of at most five dice: {counts!r}")
    return k


def _hold_to_keep() -> np.ndarray:
    bits = (np.arange(NUM_HOLDS)[:, None] >> np.arange(NUM_DICE)) & 1  # [32, 5]
    onehot = DICE[:, :, None] == np.arange(1, NUM_FACES + 1)  # [252, 5, 6]
    kept = np.einsum("hd,rdf->rhf", bits, onehot.astype(np.int64))  # [252, 32, 6]
    return _KEEP_INDEX[_counts_code(kept)].astype(np.int16)


HOLD_TO_KEEP = _hold_to_keep()


def _keep_probs() -> np.ndarray:
    """Exact outcome distribution of every keep, as counts over the 6**n ordered re-rolls."""
    # Multinomial weight of each multiset of n dice: n! / prod(c_f!).
    weights = np.zeros((NUM_KEEPS, NUM_ROLLS), dtype=np.int64)
    roll_code = {int(c): i for i, c in enumerate(_counts_code(COUNTS.astype(np.int64)))}
    for k, kc in enumerate(KEEP_COUNTS.astype(np.int64)):
        n = NUM_DICE - int(kc.sum())
        for faces in combinations_with_replacement(range(NUM_FACES), n):
            rc = np.bincount(np.asarray(faces, dtype=np.int64), minlength=NUM_FACES)
            w = factorial(n) // int(np.prod([factorial(int(c)) for c in rc]))
            weights[k, roll_code[int(_counts_code(kc + rc))]] += w * NUM_FACES ** (NUM_DICE - n)
    return weights


_KEEP_WEIGHTS = _keep_probs()  # each row sums to 7776
assert (_KEEP_WEIGHTS.sum(axis=1) == ROLL_OUTCOMES).all()
KEEP_PROBS = _KEEP_WEIGHTS / ROLL_OUTCOMES
KEEP_CDF = np.cumsum(_KEEP_WEIGHTS, axis=1).astype(np.int32)
del _keep_list


def _canonical_holds() -> np.ndarray:
    """``[252, 32]`` True for the first hold of each distinct keep of a roll, keep-all excluded.

    Holding the first 3 of 2,2,2,5,6 and holding dice 0,1,2 of it is the same keep; a learner
    needs to see only one of them. Keep-all (hold 31) is a wasted roll and is left out too.
    """
    canonical = np.zeros((NUM_ROLLS, NUM_HOLDS), dtype=bool)
    for roll in range(NUM_ROLLS):
        _, first = np.unique(HOLD_TO_KEEP[roll], return_index=True)
        canonical[roll, first] = True
    canonical[:, NUM_HOLDS - 1] = False
    return canonical


CANONICAL_HOLDS = _canonical_holds()
for _table in (DICE, COUNTS, KEEP_COUNTS, KEEP_SIZE, HOLD_TO_KEEP, KEEP_PROBS, KEEP_CDF):
    _table.flags.writeable = False
CANONICAL_HOLDS.flags.writeable = False
