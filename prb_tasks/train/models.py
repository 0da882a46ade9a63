"""The reward-model architectures: small torch modules over any Hugging Face backbone.

Every architecture reads a response (its prompt and text, formatted by
:mod:`prb_tasks.train.text`) with the backbone (``AutoModel``: no LM head), pools the
hidden state of its last real token, and maps it to a reward:

- ``plain``: one linear head; the non-personalized RM (the baseline every personalized
  one is compared with, on the same backbone);
- ``context``: the same head; the user's text (demographics, history, profile) is
  prepended to the input, so personalization happens inside the backbone's attention;
- ``latent`` (VPL's idea): an encoder maps each of the user's support pairs (chosen and
  rejected pooled states) to a vector, averages them into the user's latent ``z``
  (optionally variational: a mean and log-variance, sampled in training, the mean at test
  time, with a KL term), and the reward is ``base(h) + <z, P h>``; with no support pair
  ``z`` is zero and the reward is the shared one;
- ``mixture`` (PAL's and LoRe's idea): ``K`` linear reward heads (a rank-``K`` basis)
  and per-user weights on the simplex (softmax of logits); a seen user's logits are
  trained with the heads, an unseen user's are fitted on its support pairs with
  everything else frozen (:meth:`MixtureRM.fit_weights`); no support gives uniform weights.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ARCHITECTURES = ("plain", "context", "latent", "mixture")


def pooled(backbone: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The backbone's last hidden state at each row's last real token (inputs right-padded).

    Args:
        backbone: an ``AutoModel`` (returns ``last_hidden_state``).
        input_ids: token ids, ``[rows, length]``.
        attention_mask: 1 for real tokens, ``[rows, length]``.
    """
    states = backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    last = attention_mask.long().sum(dim=1).clamp(min=1) - 1
    return states[torch.arange(states.shape[0], device=states.device), last]


class RewardModel(nn.Module):
    """The ``plain`` architecture, and the base of the others.

    Args:
        backbone: a Hugging Face ``AutoModel``.
        options: the architecture's options (see :class:`~prb_tasks.train.options.TrainOptions`).
        n_users: seen users (the mixture's weight table).
    """

    architecture = "plain"
    #: Name prefixes of the parameters that belong to one user each (their own learning rate).
    USER_PARAMETERS: tuple[str, ...] = ()

    def __init__(self, backbone: nn.Module, options: dict[str, Any], n_users: int = 0) -> None:
        super().__init__()
        self.backbone = backbone
        self.hidden = int(backbone.config.hidden_size)
        self.options = dict(options)
        self.head = nn.Linear(self.hidden, 1)
        nn.init.normal_(self.head.weight, std=0.02)

    def embed(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Pooled states of the inputs (see :func:`pooled`)."""
        return pooled(self.backbone, input_ids, attention_mask)

    def reward(self, h: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Rewards of pooled states ``h`` (``[rows, hidden]``) for the batch's users."""
        return self.head(h).squeeze(-1)

    def aux_loss(self) -> torch.Tensor | None:
        """A loss term besides Bradley-Terry from the last forward (the KL term), or None."""
        return None

    def forward(self, chosen_ids: torch.Tensor, chosen_mask: torch.Tensor, rejected_ids: torch.Tensor,
                rejected_mask: torch.Tensor, **batch: torch.Tensor) -> dict[str, torch.Tensor]:
        """Rewards of the chosen and rejected responses, ``{"chosen": [n], "rejected": [n]}``."""
        n = chosen_ids.shape[0]
        width = max(chosen_ids.shape[1], rejected_ids.shape[1])
        ids = torch.cat([F.pad(chosen_ids, (0, width - chosen_ids.shape[1])),
                         F.pad(rejected_ids, (0, width - rejected_ids.shape[1]))])
        mask = torch.cat([F.pad(chosen_mask, (0, width - chosen_mask.shape[1])),
                          F.pad(rejected_mask, (0, width - rejected_mask.shape[1]))])
        h = self.embed(ids, mask)
        doubled = {k: torch.cat([v, v]) for k, v in self._user_state(batch).items()}
        rewards = self.reward(h, doubled)
        return {"chosen": rewards[:n], "rejected": rewards[n:]}

    def _user_state(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """What ``reward`` needs per row of the batch (nothing for ``plain``)."""
        return {}


class ContextRM(RewardModel):
    """The ``context`` architecture: the plain model read with the user's text in its input."""

    architecture = "context"


class LatentRM(RewardModel):
    """The ``latent`` architecture (see the module's docstring)."""

    architecture = "latent"

    def __init__(self, backbone: nn.Module, options: dict[str, Any], n_users: int = 0) -> None:
        super().__init__(backbone, options, n_users)
        dim = int(options.get("latent_dim", 16))
        self.variational = bool(options.get("variational", False))
        self.kl_weight = float(options.get("kl_weight", 0.01))
        self.pair_encoder = nn.Sequential(nn.Linear(2 * self.hidden, self.hidden), nn.LeakyReLU(0.2),
                                          nn.Linear(self.hidden, 2 * dim if self.variational else dim))
        self.project = nn.Linear(self.hidden, dim, bias=False)
        self.dim = dim
        self._kl: torch.Tensor | None = None

    def encode_support(self, chosen: torch.Tensor, rejected: torch.Tensor, owner: torch.Tensor,
                       rows: int) -> torch.Tensor:
        """Each row's latent from its support pairs' pooled states.

        Args:
            chosen: pooled states of every support pair's chosen response, ``[pairs, hidden]``.
            rejected: the same for the rejected responses.
            owner: the row each support pair belongs to, ``[pairs]``.
            rows: rows in the batch (a row with no support pair gets zero).
        """
        codes = self.pair_encoder(torch.cat([chosen, rejected], dim=-1)) if len(owner) else \
            chosen.new_zeros((0, 2 * self.dim if self.variational else self.dim))
        total = codes.new_zeros((rows, codes.shape[1])).index_add(0, owner, codes)
        count = torch.bincount(owner, minlength=rows).clamp(min=1).to(codes.dtype).unsqueeze(1)
        mean = total / count
        has = (torch.bincount(owner, minlength=rows) > 0).to(codes.dtype).unsqueeze(1)
        if not self.variational:
            self._kl = None
            return mean * has
        mu, log_var = mean[:, :self.dim], mean[:, self.dim:].clamp(-6, 2)
        self._kl = (-0.5 * (1 + log_var - mu ** 2 - log_var.exp()).sum(-1) * has.squeeze(1)).mean()
        z = mu + torch.randn_like(mu) * (0.5 * log_var).exp() if self.training else mu
        return z * has

    def _user_state(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        if "latent" in batch:  # fixed beforehand (an adapted unseen user)
            return {"latent": batch["latent"]}
        rows = batch["support_owner_rows"].numel()
        owner = batch["support_owner"]
        if owner.numel():
            states = self.embed(torch.cat([batch["support_chosen_ids"], batch["support_rejected_ids"]]),
                                torch.cat([batch["support_chosen_mask"], batch["support_rejected_mask"]]))
            m = owner.numel()
            z = self.encode_support(states[:m], states[m:], owner, rows)
        else:
            z = self.project.weight.new_zeros((rows, self.dim))
            self._kl = None
        return {"latent": z}

    def reward(self, h: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(h).squeeze(-1) + (batch["latent"] * self.project(h)).sum(-1)

    def aux_loss(self) -> torch.Tensor | None:
        return None if self._kl is None else self.kl_weight * self._kl


class MixtureRM(RewardModel):
    """The ``mixture`` architecture (see the module's docstring)."""

    architecture = "mixture"
    USER_PARAMETERS = ("user_logits.",)

    def __init__(self, backbone: nn.Module, options: dict[str, Any], n_users: int = 0) -> None:
        super().__init__(backbone, options, n_users)
        self.k = int(options.get("heads", 4))
        self.heads = nn.Linear(self.hidden, self.k)
        nn.init.normal_(self.heads.weight, std=0.02)
        # Small random logits break the symmetry between heads (all-equal logits would
        # give every head the same gradient from every user).
        self.user_logits = nn.Embedding(max(n_users, 1), self.k)
        nn.init.normal_(self.user_logits.weight, std=0.1)

    def _user_state(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        if "weights" in batch:
            return {"weights": batch["weights"]}
        index = batch["user_index"]
        logits = self.user_logits(index.clamp(min=0))
        logits = torch.where((index >= 0).unsqueeze(1), logits, torch.zeros_like(logits))
        return {"weights": torch.softmax(logits, dim=-1)}

    def reward(self, h: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return (self.heads(h) * batch["weights"]).sum(-1)

    def fit_weights(self, chosen: torch.Tensor, rejected: torch.Tensor, steps: int = 200, lr: float = 0.1,
                    l2: float = 0.01) -> torch.Tensor:
        """An unseen user's simplex weights fitted on its support pairs' pooled states.

        Penalised Bradley-Terry over the logits (the heads frozen); no pair gives the
        uniform weights.

        Args:
            chosen: pooled states of the support pairs' chosen responses, ``[k, hidden]``.
            rejected: the same for the rejected ones.
            steps: Adam steps.
            lr: Adam's learning rate.
            l2: penalty on the logits (pulls towards uniform weights).
        """
        with torch.no_grad():
            margin = (self.heads(chosen) - self.heads(rejected)).float()
        logits = torch.zeros(self.k, requires_grad=True, device=margin.device)
        if len(margin):
            optimizer = torch.optim.Adam([logits], lr=lr)
            for _ in range(steps):
                optimizer.zero_grad()
                loss = -F.logsigmoid(margin @ torch.softmax(logits, -1)).mean() + l2 * (logits ** 2).sum()
                loss.backward()
                optimizer.step()
        return torch.softmax(logits.detach(), -1)


CLASSES: dict[str, type[RewardModel]] = {"plain": RewardModel, "context": ContextRM, "latent": LatentRM,
                                         "mixture": MixtureRM}
