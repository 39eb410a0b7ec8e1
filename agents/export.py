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


def input_version_of(weights: list[tuple[np.ndarray, np.ndarray]]) -> int:
    """The network input version (`observation.INPUT_SIZES`) that the first layer reads."""
    return {size: v for v, size in INPUT_SIZES.items()}[weights[0][0].shape[0]]


def numpy_policy(
    model: Any,
    name: str = "policy",
    canonical_holds: bool = True,
    threshold: int = UPPER_BONUS_THRESHOLD,
) -> MLPPolicy:
    weights, activation = policy_weights(model)
    return MLPPolicy(
        weights,
        activation,
        name=name,
        canonical_holds=canonical_holds,
        input_version=input_version_of(weights),
        threshold=threshold,
    )


def export_npz(
    model: Any,
    out_dir: str | Path,
    name: str,
    *,
    rules: str,
    config_sha256: str,
    level: str | None = None,
    canonical_holds: bool = True,
    extra: dict[str, Any] | None = None,
) -> Path:
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
        input_version=input_version_of(weights),
        extra=extra,
    )


def level_facts(cfg: Any, env_steps: int) -> dict[str, Any]:
    """How a model was made, for its manifest: ``method`` (``"reward-only"``: PPO on the
    game's reward alone; ``"distilled"``: imitating ``teacher`` first), and ``env_steps``
    (PPO env-steps behind the weights; 0 for a distilled policy before PPO)."""
    teacher = cfg.warm_start.teacher
    return {
        "method": "reward-only" if teacher == "none" else "distilled",
        "teacher": None if teacher == "none" else teacher,
        "env_steps": int(env_steps),
    }


def export_onnx(
    policy: MLPPolicy,
    path: str | Path,
    opset: int = 17,
    *,
    rules: str = "official",
    level: str | None = None,
) -> Path:
    """Write the logits network of a numpy `MLPPolicy` as one ONNX file (input ``obs``
    float32[N, 72], output ``logits`` float32[N, 45]); mask and argmax are the caller's.
    ``metadata_props`` hold the holds mode, rules, observation version, level and weights
    digest (`yahtzee_env.policies.sources.onnx_metadata`), checked by `load_onnx_policy`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from yahtzee_env.policies.sources import onnx_metadata

    nodes, inits = [], []
    x = "obs"
    for i, (w, b) in enumerate(policy.weights):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        last = i == len(policy.weights) - 1
        y = "logits" if last else f"h{i}"
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [y if last else f"z{i}"]))
        if not last:
            op = "Relu" if policy.activation == "relu" else "Tanh"
            nodes.append(helper.make_node(op, [f"z{i}"], [y]))
        x = y
    graph = helper.make_graph(
        nodes,
        "yahtzee_policy",
        [
            helper.make_tensor_value_info(
                "obs", TensorProto.FLOAT, ["batch", policy.weights[0][0].shape[0]]
            )
        ],
        [
            helper.make_tensor_value_info(
                "logits", TensorProto.FLOAT, ["batch", policy.weights[-1][0].shape[1]]
            )
        ],
        inits,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx_model.ir_version = min(onnx_model.ir_version, 9)
    helper.set_model_props(onnx_model, onnx_metadata(policy, rules=rules, level=level))
    onnx.checker.check_model(onnx_model)
    return atomic_write(path, onnx_model.SerializeToString())
