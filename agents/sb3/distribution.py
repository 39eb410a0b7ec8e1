"""The masked categorical distribution of MaskablePPO, computed with the work it needs only.

sb3-contrib's `MaskableCategoricalDistribution` builds a torch `Categorical` three times per
batch (its own, an unmasked one, then the masked one: three `logsumexp` passes) and validates
the arguments each time. The numbers that reach the loss are

    normalised = raw - logsumexp(raw)
    logits     = where(mask, normalised, -1e8) - logsumexp(where(mask, normalised, -1e8))

and `LeanMaskedCategorical` computes exactly these, in the same order, once (an unmasked
batch's second normalisation only when it is used). Actions, log probabilities, entropy and
gradients are the same bit for bit (``tests/test_distribution.py`` compares them with
sb3-contrib's), so a run is the same run, with two normalisations instead of three and no
checks. It replaces the policy's ``action_dist`` on a built or loaded model (`install`); a
saved model file still names sb3-contrib's classes only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

HUGE_NEG = -1e8  # sb3-contrib's value for a masked logit


class LeanMaskedCategorical(MaskableCategoricalDistribution):
    """`MaskableCategoricalDistribution` with the same results and less work."""

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self._normalised: th.Tensor | None = None
        self._logits: th.Tensor | None = None
        self.masks: th.Tensor | None = None
        self._probs: th.Tensor | None = None

    def proba_distribution(self, action_logits: th.Tensor) -> LeanMaskedCategorical:
        raw = action_logits.view(-1, self.action_dim)
        self._normalised = raw - raw.logsumexp(dim=-1, keepdim=True)
        self._logits, self.masks, self._probs = None, None, None  # until masked or asked for
        return self

    def apply_masking(self, masks: th.Tensor | np.ndarray | None) -> None:
        if self._normalised is None:
            raise RuntimeError("apply_masking() before proba_distribution()")
        if masks is None:
            self.masks = None
            logits = self._normalised
        else:
            normalised = self._normalised
            self.masks = th.as_tensor(masks, dtype=th.bool, device=normalised.device).reshape(
                normalised.shape
            )
            huge_neg = th.tensor(HUGE_NEG, dtype=normalised.dtype, device=normalised.device)
            logits = th.where(self.masks, normalised, huge_neg)
        self._logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._probs = None

    @property
    def logits(self) -> th.Tensor:
        if self._logits is None:  # never masked: sb3-contrib normalises a second time
            if self._normalised is None:
                raise RuntimeError("no logits before proba_distribution()")
            self._logits = self._normalised - self._normalised.logsumexp(dim=-1, keepdim=True)
        return self._logits

    @property
    def probs(self) -> th.Tensor:
        if self._probs is None:
            self._probs = th.softmax(self.logits, dim=-1)
        return self._probs

    def log_prob(self, actions: th.Tensor) -> th.Tensor:
        return self.logits.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> th.Tensor:
        if self.masks is None:  # torch's Categorical.entropy
            logits = th.clamp(self.logits, min=th.finfo(self.logits.dtype).min)
            return -(logits * self.probs).sum(-1)
        p_log_p = self.logits * self.probs
        p_log_p = th.where(self.masks, p_log_p, th.tensor(0.0, device=self.logits.device))
        return -p_log_p.sum(-1)

    def sample(self) -> th.Tensor:
        return th.multinomial(self.probs, 1, True).T.reshape(-1)

    def mode(self) -> th.Tensor:
        return th.argmax(self.probs, dim=1)


def install(model: Any) -> Any:
    """Give ``model`` (a `MaskablePPO` with a discrete action space) the lean distribution;
    returns the model."""
    current = model.policy.action_dist
    if not isinstance(current, MaskableCategoricalDistribution):
        raise TypeError(f"no masked categorical distribution to replace: {type(current)}")
    model.policy.action_dist = LeanMaskedCategorical(current.action_dim)
    return model
