"""Export a trained MaskablePPO policy: numpy weights (`.npz` + manifest) or ONNX.

The exported network is the policy's action head only: observation -> hidden layers ->
action logits; the player takes the argmax over legal actions. It reproduces the SB3 policy's
deterministic action exactly (the parity test checks it on recorded states).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from yahtzee_env.fileio import atomic_write
from yahtzee_env.game.observation import INPUT_SIZES
from yahtzee_env.game.rules import UPPER_BONUS_THRESHOLD
from yahtzee_env.policies.models import MLPPolicy, save_policy


def policy_weights(model: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """(W [in, out], b) pairs of the policy path of an SB3 ActorCriticPolicy, and activation."""
    import torch.nn as nn

    policy = model.policy if hasattr(model, "policy") else model
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    acts = {type(m) for m in policy.mlp_extractor.policy_net if not isinstance(m, nn.Linear)}
    if acts - {nn.ReLU, nn.Tanh} or len(acts) > 1:
        raise ValueError(f"unsupported activations in the policy network: {acts}")
    activation = "tanh" if nn.Tanh in acts else "relu"
    weights = [
        (m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy())
        for m in [*layers, policy.action_net]
    ]
    if weights[0][0].shape[0] not in INPUT_SIZES.values():
        raise ValueError(
            f"policy takes {weights[0][0].shape[0]} inputs, expected one of "
            f"{sorted(INPUT_SIZES.values())}"
        )
    return weights, activation


def check_input_version(weights: list[tuple[np.ndarray, np.ndarray]], input_version: int) -> int:
    """``input_version`` (the run config's ``env.observation_version``) if the first layer
    reads that many inputs, else `ValueError`: the version is never guessed from the width
    (two versions may one day have the same width)."""
    if input_version not in INPUT_SIZES:
        raise ValueError(
            f"unknown network input version {input_version} (known: {sorted(INPUT_SIZES)})"
        )
    width = weights[0][0].shape[0]
    if width != INPUT_SIZES[input_version]:
        raise ValueError(
            f"the run's config says input version {input_version} "
            f"({INPUT_SIZES[input_version]} inputs), but the network reads {width}"
        )
    return input_version


def numpy_policy(
    model: Any,
    name: str = "policy",
    canonical_holds: bool = True,
    threshold: int = UPPER_BONUS_THRESHOLD,
    *,
    input_version: int,
) -> MLPPolicy:
    """The numpy player of an SB3 model; ``input_version`` comes from the run's config."""
    weights, activation = policy_weights(model)
    return MLPPolicy(
        weights,
        activation,
        name=name,
        canonical_holds=canonical_holds,
        input_version=check_input_version(weights, input_version),
        threshold=threshold,
    )


def export_npz(
    model: Any,
    out_dir: str | Path,
    name: str,
    *,
    rules: str,
    config_sha256: str,
    input_version: int,
    level: str | None = None,
    canonical_holds: bool = True,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``NAME.npz`` + ``NAME.json``; ``input_version`` is the run config's, recorded as
    it is; ``level`` only when the model is exported as a level."""
    weights, activation = policy_weights(model)
    return save_policy(
        out_dir,
        name,
        weights,
        activation,
        rules=rules,
        config_sha256=config_sha256,
        level=level,
        canonical_holds=canonical_holds,
        input_version=check_input_version(weights, input_version),
        extra=extra,
    )


ONNX_INTERFACE = "obs[N,72] float32, mask[N,45] bool -> action[N] int64, logits[N,45] float32"


class _Graph:
    """A small builder of ONNX nodes with constant initializers (names made unique)."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        name = self.name("c")
        self.inits.append(self.numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        out = out or self.name(op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def cols(self, x: str, start: int, stop: int) -> str:
        """x[:, start:stop]"""
        return self.op(
            "Slice", x, self.const([start], np.int64), self.const([stop], np.int64),
            self.const([1], np.int64),
        )  # fmt: skip

    def clip(self, x: str, lo: float, hi: float) -> str:
        return self.op("Clip", x, self.const(lo), self.const(hi))


def _strategy_features_graph(g: _Graph, obs: str, threshold: int) -> str:
    """`yahtzee_env.game.observation.strategy_features` as ONNX ops (float32, same order of
    operations; the export test holds the two equal on recorded states)."""
    from yahtzee_env.game.observation import (
        COUNTS_SLICE,
        OPEN_SLICE,
        POINTS_SLICE,
        STRATEGY_SIZE,
        UPPER_INDEX,
    )

    faces = g.const(np.arange(1, 7, dtype=np.float32).reshape(6, 1))
    t = float(threshold)
    upper = g.op("Round", g.op("Mul", g.op("Min", g.cols(obs, UPPER_INDEX, UPPER_INDEX + 1),
                                           g.const(1.0)), g.const(t)))  # fmt: skip
    open_upper = g.cols(obs, OPEN_SLICE.start, OPEN_SLICE.start + 6)
    filled_faces = g.op("MatMul", g.op("Sub", g.const(1.0), open_upper), faces)
    open_faces = g.op("MatMul", open_upper, faces)
    f0 = g.clip(g.op("Div", g.op("Sub", upper, g.op("Mul", g.const(3.0), filled_faces)),
                     g.const(21.0)), -1.0, 1.0)  # fmt: skip
    par = g.op("Sub", g.op("Add", upper, g.op("Mul", g.const(3.0), open_faces)), g.const(t))
    f1 = g.clip(g.op("Div", par, g.const(21.0)), -1.0, 1.0)
    reach = g.op("Sub", g.op("Add", upper, g.op("Mul", g.const(5.0), open_faces)), g.const(t))
    f2 = g.op("Cast", g.op("GreaterOrEqual", reach, g.const(0.0)), to=1)
    f3 = g.clip(g.op("Div", reach, g.const(42.0)), -1.0, 1.0)
    counts = g.op("Round", g.op("Mul", g.cols(obs, COUNTS_SLICE.start, COUNTS_SLICE.stop),
                                g.const(5.0)))  # fmt: skip
    most = g.clip(g.op("ReduceMax", counts, axes=[1], keepdims=1), 1.0, 5.0)
    f4_8 = g.op("Cast", g.op("Equal", most, g.const([[1, 2, 3, 4, 5]])), to=1)
    present = g.op("Cast", g.op("Greater", counts, g.const(0.0)), to=1)

    def runs(length: int) -> str:
        windows = 6 - length + 1
        product = g.cols(present, 0, windows)
        for k in range(1, length):
            product = g.op("Mul", product, g.cols(present, k, k + windows))
        return g.op("ReduceMax", product, axes=[1], keepdims=1)

    def has(count: float) -> str:
        hit = g.op("Cast", g.op("Equal", counts, g.const(count)), to=1)
        return g.op("ReduceMax", hit, axes=[1], keepdims=1)

    f11 = g.op("Mul", has(3.0), has(2.0))
    lower_open = g.cols(obs, OPEN_SLICE.start + 6, OPEN_SLICE.stop)
    f12 = g.op("Div", g.op("ReduceSum", lower_open, g.const([1], np.int64), keepdims=1),
               g.const(7.0))  # fmt: skip
    f13 = g.op("ReduceMax", g.cols(obs, POINTS_SLICE.start, POINTS_SLICE.stop), axes=[1],
               keepdims=1)  # fmt: skip
    parts = [f0, f1, f2, f3, f4_8, runs(4), runs(5), f11, f12, f13]
    assert STRATEGY_SIZE == 4 + 5 + 5
    return g.op("Concat", *parts, axis=1)


def _canonical_mask_graph(g: _Graph, obs: str, mask: str) -> str:
    """The env's mask with only the canonical hold of each kept multiset left (as
    `MLPPolicy._allowed`): the sorted dice's faces index a [6^5, 32] table."""
    from yahtzee_env.game.dice import CANONICAL_HOLDS, DICE, NUM_HOLDS

    table = np.zeros((6**5, NUM_HOLDS), dtype=bool)
    powers = 6 ** np.arange(5)
    table[(DICE.astype(np.int64) - 1) @ powers] = CANONICAL_HOLDS
    dice = g.op("Reshape", g.cols(obs, 0, 30), g.const([-1, 5, 6], np.int64))
    faces = g.op("ArgMax", dice, axis=2, keepdims=0)  # int64 [N, 5], face - 1
    key = g.op("ReduceSum", g.op("Mul", faces, g.const(powers, np.int64)),
               g.const([1], np.int64), keepdims=0)  # fmt: skip
    canonical = g.op("Gather", g.const(table, bool), key, axis=0)  # bool [N, 32]
    holds = g.op("And", g.cols(mask, 0, NUM_HOLDS), canonical)
    return g.op("Concat", holds, g.cols(mask, NUM_HOLDS, 45), axis=1)


def export_onnx(
    policy: MLPPolicy,
    path: str | Path,
    opset: int = 17,
    *,
    rules: str = "official",
    level: str | None = None,
    knew: dict[str, str] | None = None,
) -> Path:
    """Write a numpy `MLPPolicy` as one standalone ONNX file that plays on its own: inputs
    ``obs`` float32[N, 72] (the env's observation) and ``mask`` bool[N, 45] (any mask the env
    gives, default or canonical holds); the graph computes the network's input features
    (input version 2), applies the canonical-holds restriction of a canonical-holds model,
    and outputs ``action`` int64[N] (the masked argmax) and ``logits`` float32[N, 45]
    (unmasked). ``metadata_props`` hold the holds mode, rules, observation version, level
    (only when exported as one), weights digest, and what the agent knew (``knew``: given,
    else the policy's own where it states it), checked by `load_onnx_policy`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from yahtzee_env.game.observation import OBS_SIZE
    from yahtzee_env.policies.sources import onnx_metadata

    g = _Graph()
    x = "obs"
    if policy.input_version == 2:
        x = g.op("Concat", "obs", _strategy_features_graph(g, "obs", policy.threshold), axis=1)
    elif policy.input_version != 1:
        raise ValueError(f"no ONNX graph for network input version {policy.input_version}")
    for i, (w, b) in enumerate(policy.weights):
        g.inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        last = i == len(policy.weights) - 1
        z = g.op("Gemm", x, f"w{i}", f"b{i}", out="logits" if last else f"z{i}")
        x = z if last else g.op("Relu" if policy.activation == "relu" else "Tanh", z, out=f"h{i}")
    allowed = _canonical_mask_graph(g, "obs", "mask") if policy.canonical_holds else "mask"
    masked = g.op("Where", allowed, "logits", g.const(-np.inf))
    g.op("ArgMax", masked, axis=1, keepdims=0, out="action")
    actions = policy.weights[-1][0].shape[1]
    graph = helper.make_graph(
        g.nodes,
        "yahtzee_policy",
        [
            helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", OBS_SIZE]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", actions]),
        ],
        [
            helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", actions]),
        ],
        g.inits,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx_model.ir_version = min(onnx_model.ir_version, 9)
    if knew is None:
        from yahtzee_env.policies.knowledge import UNKNOWN, knowledge_of

        knew = knowledge_of(policy)
        knew = None if knew == UNKNOWN else knew
    meta = onnx_metadata(policy, rules=rules, level=level, knew=knew)
    helper.set_model_props(onnx_model, meta)
    onnx.checker.check_model(onnx_model)
    return atomic_write(path, onnx_model.SerializeToString())
