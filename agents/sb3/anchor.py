"""MaskablePPO held near the network it started from: a KL anchor (``ppo.anchor_kl``).

A policy that starts from a strong network (``policy.init``, e.g. hard's) and learns from a
noisy reward (the game's result, ±1, at a 2-seat table) drifts: each update follows the noise
of its minibatch as much as the signal, and the drift costs the play it started with. The
anchor adds to PPO's loss

    anchor_kl * mean over the minibatch's states of KL(init(.|s) || policy(.|s)),

the KL divergence over the state's legal actions from the starting network's distribution to
the policy's (the penalty of KL-regularised fine-tuning, as in RLHF's PPO). With
``ppo.anchor_release`` N > 0 the states where the learner has N open boxes or fewer (its last
N turns) count 0 in that mean: the policy is held where the result says little about a move
and left free where it says most (the first run without anchor moved most in the first turns,
docs/win-level.md). Where the
advantages agree from batch to batch the policy still moves; where they are noise it stays
near the start. The starting network is frozen: it is rebuilt from ``policy.init`` (not
saved in a checkpoint), so a resumed run holds to the same network.

`AnchoredPPO.train` is sb3-contrib's `MaskablePPO.train` (2.9) with that one term added and
logged (``train/anchor_kl``: the minibatches' mean penalised KL; ``train/anchor_loss``;
``train/released_kl``: the mean KL of the released states, not in the loss); with
``anchor_kl`` 0 a run builds plain `MaskablePPO` instead (`model_class`).
"""

from __future__ import annotations

import copy

import numpy as np
import torch as th
import torch.nn as nn
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import explained_variance
from torch.nn import functional as F

from yahtzee_env.game.observation import OPEN_SLICE

from ..config import RunConfig
from .distribution import HUGE_NEG


def model_class(cfg: RunConfig) -> type[MaskablePPO]:
    """The PPO class a run of ``cfg`` builds and loads."""
    return AnchoredPPO if cfg.ppo.anchor_kl > 0 else MaskablePPO


def attach_anchor(model: MaskablePPO, cfg: RunConfig) -> None:
    """Give a model of an anchored run (``ppo.anchor_kl`` > 0; else nothing to do) its frozen
    anchor: a copy of its policy path holding ``policy.init``'s weights (widened as
    `init_policy` widens them)."""
    if cfg.ppo.anchor_kl <= 0:
        return
    from yahtzee_env.policies.models import load_opponent

    from .warm_start import copy_weights

    policy = model.policy
    if not policy.share_features_extractor:
        raise ValueError("ppo.anchor_kl: needs the policy's shared features extractor")
    anchor = nn.Sequential(
        copy.deepcopy(policy.mlp_extractor.policy_net), copy.deepcopy(policy.action_net)
    )
    layers = [m for m in anchor[0] if isinstance(m, nn.Linear)] + [anchor[1]]
    source = load_opponent(cfg.policy.init, cfg.env.rules)
    copy_weights(layers, source.weights, cfg.policy.init)
    for param in anchor.parameters():
        param.requires_grad_(False)
    model.anchor = anchor.eval()
    model.anchor_kl = cfg.ppo.anchor_kl
    model.anchor_release = cfg.ppo.anchor_release


def anchored_states(observations: th.Tensor, release: int) -> th.Tensor:
    """1.0 for the states the anchor holds, 0.0 for the learner's last ``release`` turns
    (its open boxes, the observation's ``[39:52]`` in every input version, ``release`` or
    fewer). With ``release`` 0 every state is held: a decision always has a box open."""
    open_boxes = th.round(observations[:, OPEN_SLICE].sum(dim=1))
    return (open_boxes > release).to(observations.dtype)


def masked_kl(anchor_logits: th.Tensor, logits: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """KL(anchor || policy) per state over the legal actions (``masks``); ``logits`` are the
    policy's normalised log-probabilities (illegal actions at about -1e8, probability 0)."""
    huge_neg = th.tensor(HUGE_NEG, dtype=anchor_logits.dtype, device=anchor_logits.device)
    anchor_log = th.log_softmax(th.where(masks, anchor_logits, huge_neg), dim=-1)
    anchor_p = anchor_log.exp()  # exactly 0 on illegal actions
    terms = th.where(masks, anchor_p * (anchor_log - logits), th.zeros_like(logits))
    return terms.sum(dim=-1)


class AnchoredPPO(MaskablePPO):
    """`MaskablePPO` with the KL anchor in its loss (module docstring)."""

    anchor: nn.Module | None = None
    anchor_kl: float = 0.0
    anchor_release: int = 0

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "anchor"]

    def train(self) -> None:  # sb3-contrib 2.9's MaskablePPO.train + the anchor term
        if self.anchor is None:
            raise RuntimeError("AnchoredPPO.train before attach_anchor()")
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        anchor_kls, released_kls = [], []
        continue_training = True
        for _epoch in range(self.n_epochs):
            approx_kl_divs = []
            for rollout_data in self.rollout_buffer.get(self.batch_size):
                actions = rollout_data.actions
                if isinstance(self.action_space, spaces.Discrete):
                    actions = rollout_data.actions.long().flatten()
                values, log_prob, entropy = self.policy.evaluate_actions(
                    rollout_data.observations, actions, action_masks=rollout_data.action_masks
                )
                # The distribution evaluate_actions just filled (LeanMaskedCategorical
                # returns itself): the policy's masked, normalised logits, with their graph.
                dist = self.policy.action_dist
                with th.no_grad():
                    features = self.policy.extract_features(rollout_data.observations)
                    anchor_logits = self.anchor(features)
                held = anchored_states(rollout_data.observations, self.anchor_release)
                kl = masked_kl(anchor_logits, dist.logits, dist.masks)
                anchor_kl = (kl * held).mean()  # a released state counts 0
                anchor_kls.append(anchor_kl.item())
                if (held == 0).any():
                    released_kls.append(kl[held == 0].mean().item())

                values = values.flatten()
                advantages = rollout_data.advantages
                if self.normalize_advantage:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                ratio = th.exp(log_prob - rollout_data.old_log_prob)
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
                pg_losses.append(policy_loss.item())
                clip_fractions.append(th.mean((th.abs(ratio - 1) > clip_range).float()).item())
                if self.clip_range_vf is None:
                    values_pred = values
                else:
                    values_pred = rollout_data.old_values + th.clamp(
                        values - rollout_data.old_values, -clip_range_vf, clip_range_vf
                    )
                value_loss = F.mse_loss(rollout_data.returns, values_pred)
                value_losses.append(value_loss.item())
                entropy_loss = -th.mean(-log_prob) if entropy is None else -th.mean(entropy)
                entropy_losses.append(entropy_loss.item())

                loss = (
                    policy_loss
                    + self.ent_coef * entropy_loss
                    + self.vf_coef * value_loss
                    + self.anchor_kl * anchor_kl
                )
                with th.no_grad():
                    log_ratio = log_prob - rollout_data.old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(approx_kl_div)
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    break
                self.policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += 1
            if not continue_training:
                break
        explained_var = explained_variance(
            self.rollout_buffer.values.flatten(), self.rollout_buffer.returns.flatten()
        )
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        self.logger.record("train/anchor_kl", np.mean(anchor_kls))
        self.logger.record("train/anchor_loss", self.anchor_kl * np.mean(anchor_kls))
        if released_kls:  # the KL where the anchor lets go (not in the loss)
            self.logger.record("train/released_kl", np.mean(released_kls))
        if self.clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)
