"""A turn-value player: a learned value of turn-start states, played by exact expectimax
through the rules (the ``master`` level; learned by `yahtzee_agents.model_based`).

The network ``V(filled, upper, ystate)`` reads only the scorecard at the start of a turn
(`state_features`). At load its value of every reachable turn start is computed once, with
numpy (`turn_value_table`, ~6 MB), and each turn is then played by exact expectimax over the
rolls and keeps of the turn with that table at the turn starts it reaches: the solver's
within-turn machinery (`yahtzee_env.solver.exact.OptimalValues`) on a learned table instead
of the solved one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from yahtzee_env.game.rules import ALL_FILLED, NUM_BOXES, NUM_FILLED_MASKS, RuleSet
from yahtzee_env.policies.baselines import OptimalPolicy

VALUE_SCALE = 100.0  # the network's output is in hundreds of points
TABLE_CHUNK = 16_384  # turn starts per block when the table is computed (16 MB a block)


# ------------------------------------------------------------------------------ the states
def all_states(rules: RuleSet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every reachable, not-final turn-start state: ``(filled, upper, ystate)`` arrays (the
    solver's own enumeration, layer by layer: 0 to 12 boxes filled)."""
    from yahtzee_env.solver.exact import _layer_states, _TurnModel

    model = _TurnModel(rules)
    layers = [_layer_states(model, n) for n in range(NUM_BOXES)]
    f, u, y = (np.concatenate(parts).astype(np.int64) for parts in zip(*layers, strict=True))
    return f, u, y


def feature_size(threshold: int) -> int:
    """The length of `state_features` for an upper-bonus ``threshold``."""
    return NUM_BOXES + 1 + threshold + 3


def state_features(
    filled: np.ndarray, upper: np.ndarray, ystate: np.ndarray, threshold: int
) -> np.ndarray:
    """``float32 [N, 13 + 1 + T + 3]``: the open boxes and the share of them still open
    (`card_features`), the upper total as a thermometer (``upper >= k`` for k = 1..T) and
    the yahtzee box's three states. Only what the scorecard shows; nothing about values."""
    return np.concatenate(
        [card_features(filled), _upper_features(upper, threshold), _yahtzee_features(ystate)],
        axis=1,
    ).astype(np.float32)


def card_features(filled: np.ndarray) -> np.ndarray:
    """The part of `state_features` that depends on the filled boxes alone."""
    open_boxes = ((np.asarray(filled, dtype=np.int64)[:, None] >> np.arange(NUM_BOXES)) & 1) == 0
    share = open_boxes.sum(axis=1, keepdims=True) / NUM_BOXES
    return np.concatenate([open_boxes, share], axis=1).astype(np.float32)


def _upper_features(upper: np.ndarray, threshold: int) -> np.ndarray:
    return (np.asarray(upper)[:, None] >= np.arange(1, threshold + 1)).astype(np.float32)


def _yahtzee_features(ystate: np.ndarray) -> np.ndarray:
    return (np.asarray(ystate)[:, None] == np.arange(3)).astype(np.float32)


# ------------------------------------------------------------------------------ the table
def turn_value_table(
    weights: Sequence[tuple[np.ndarray, np.ndarray]],
    rules: RuleSet,
    activation: str = "relu",
    states: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """``float32 [8192, T + 1, 3]`` turn-start values of the network ``weights`` ((W [in, out],
    b [out]) pairs, the value layer last): V where reachable, 0 at the end of the game
    (exactly), NaN elsewhere (never read: the rules never lead there).

    The first layer is linear in three separate parts of the input (card, upper total,
    yahtzee box), so it is computed once per part and summed per state: the network on
    `state_features` up to float rounding, without an [N, 80] input for all ~540 k states.
    ``states`` (default `all_states`) saves the enumeration when the caller has it."""
    t = rules.upper_bonus_threshold
    # In float64: float32 products summed in another order (BLAS with another thread count)
    # moved values by ~1e-5 points, enough to flip near-tied moves and change whole games.
    (w, b), *rest = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in weights]
    if w.shape[0] != feature_size(t):
        raise ValueError(
            f"the network reads {w.shape[0]} features, the rules give {feature_size(t)}"
        )
    cut = (NUM_BOXES + 1, NUM_BOXES + 1 + t)
    card = card_features(np.arange(NUM_FILLED_MASKS)) @ w[: cut[0]] + b
    upper = _upper_features(np.arange(t + 1), t) @ w[cut[0] : cut[1]]
    yahtzee = w[cut[1] :]  # one-hot: row y is the contribution
    f, u, y = states if states is not None else all_states(rules)
    table = np.full((NUM_FILLED_MASKS, t + 1, 3), np.nan, dtype=np.float32)
    for lo in range(0, f.size, TABLE_CHUNK):
        s = slice(lo, lo + TABLE_CHUNK)
        x = card[f[s]]
        x += upper[u[s]]
        x += yahtzee[y[s]]
        for w_next, b_next in rest:
            _activate(x, activation)
            x = x @ w_next
            x += b_next
        table[f[s], u[s], y[s]] = x[:, 0] * VALUE_SCALE
    table[ALL_FILLED] = 0.0
    return table


def _activate(x: np.ndarray, activation: str) -> None:
    if activation == "relu":
        np.maximum(x, 0.0, out=x)
    elif activation == "tanh":
        np.tanh(x, out=x)
    else:
        raise ValueError(f"unsupported activation {activation!r}")


# ------------------------------------------------------------------------------ the player
class TurnValuePolicy(OptimalPolicy):
    """Exact expectimax over each turn through ``rules``, with ``table`` (turn-start values,
    `turn_value_table`) at the turn starts it reaches. Deterministic; ties as the optimal
    policy's (`OptimalPolicy`), so a canonical-holds mask gets the canonical hold."""

    def __init__(
        self,
        rules: RuleSet,
        table: np.ndarray,
        name: str = "turn-value",
        trained_rules: str | None = None,
    ) -> None:
        from yahtzee_env.solver.exact import OptimalValues

        super().__init__(rules, table=OptimalValues(rules, table))
        self.name = name
        self.trained_rules = trained_rules  # the preset it learned (None: unknown)
        self.manifest = None  # set by `yahtzee_env.policies.models.load_opponent`

    def __repr__(self) -> str:
        return f"TurnValuePolicy({self.name!r}, rules={self.rules.name!r})"
