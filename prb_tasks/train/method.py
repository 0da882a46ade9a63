"""A ``prb train`` checkpoint as a ``prb-method`` method (the few-shot protocol).

``--model prb-method --model_args method=trained,checkpoint=DIR`` on ``personalllm_fewshot``
or ``personalized_custom_fewshot`` (the same ``--metadata`` as training, so the unseen
users are the ones the model never saw). The model is trained already: ``learn`` only
loads it. ``adapt`` uses the evaluated user's k support pairs as the architecture does:
``context`` puts them (with demographics and profile) in the input, ``latent`` encodes
them into the user's latent, ``mixture`` fits the user's weights on them; ``plain``
ignores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prb_tasks.fewshot.method import Method, MethodError, Pair, Response, SeenUser, SplitFacts, User


class TrainedMethod(Method):
    """A trained reward model from ``prb train``.

    Args:
        checkpoint: the folder ``prb train --out`` wrote.
        device: where to run it (``cpu``, ``cuda``, ``cuda:1``).
        score_batch_size: responses embedded per forward pass when the evaluation asks for
            a user's query responses at once (``score_batch``).
    """

    name = "trained"

    def __init__(self, checkpoint: str = "", device: str = "cpu", score_batch_size: int = 32) -> None:
        from pathlib import Path

        from prb_tasks.train.checkpoint import read_manifest, verify
        from prb_tasks.train.options import TrainError

        if not checkpoint:
            raise ValueError("give checkpoint=<the folder prb train --out wrote>")
        try:
            self.manifest = read_manifest(checkpoint, "prb-method (trained)")
            verify(Path(checkpoint).expanduser(), self.manifest, "prb-method (trained)")
        except TrainError as exc:  # a wrong path or a damaged checkpoint: one line before any data loads
            raise ValueError(str(exc).removeprefix("prb-method (trained): ")) from None
        self.checkpoint, self.device = checkpoint, device
        self.score_batch_size = int(score_batch_size)
        if self.score_batch_size < 1:
            raise ValueError(f"score_batch_size={score_batch_size}: give a whole number of 1 or more")
        self.architecture = self.manifest["architecture"]
        self.model: Any = None
        self._cache: dict[str, Any] = {}
        self.state: dict[str, Any] = {}

    def check_split(self, facts: SplitFacts) -> None:
        """Refuse (one line) an evaluation whose unseen users include users the checkpoint trained
        on, or whose family, split settings (split_seed, unseen_share, the simulation's keys) or
        data (its digest) differ from the training's: :func:`prb_tasks.train.provenance.check`.

        Args:
            facts: the evaluation's split.
        """
        from prb_tasks.train.options import TrainError
        from prb_tasks.train.provenance import Scope, check

        scope = Scope(facts.family, users=facts.unseen, settings=facts.settings, split=True,
                      instead="evaluate with the --metadata it was trained with")
        try:
            check(self.manifest, self.checkpoint, scope, "prb-method (trained)")
        except TrainError as exc:
            raise MethodError(str(exc)) from None

    def learn(self, seen: Sequence[SeenUser]) -> None:
        from prb_tasks.train import checkpoint
        from prb_tasks.train.collate import Collator, prepare_tokenizer

        self.model, tokenizer, _ = checkpoint.load(self.checkpoint, "prb-method (trained)", device=self.device)
        self.tokenizer = prepare_tokenizer(tokenizer)
        options = self.manifest["options"]
        self.collator = Collator(self.tokenizer, options["max_length"], options.get("input_format") == "chat")

    def _pooled(self, texts: list[str]) -> Any:
        import torch

        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            ids, mask = self.collator.tokens(todo)
            with torch.no_grad():
                states = self.model.embed(ids.to(self.device), mask.to(self.device))
            # A response's pooled state depends only on its text: every k and (for the
            # latent and mixture models) every user reads the same one.
            self._cache.update(zip(todo, states))
        return torch.stack([self._cache[t] for t in texts])

    def adapt(self, user: User, support: Sequence[Pair]) -> None:
        from prb_tasks.train.collate import render_pair

        options = self.manifest["options"]
        # A part the user lacks is an empty part, as in training (render_pair reads what there is).
        self.state = {"user": user, "support": tuple(support)}
        if self.architecture == "latent" and support:
            shots = [render_pair(p, user, (), "plain", options, self.tokenizer) for p in support]
            chosen, rejected = self._pooled([s.chosen for s in shots]), self._pooled([s.rejected for s in shots])
            import torch

            with torch.no_grad():
                owner = torch.zeros(len(shots), dtype=torch.long, device=chosen.device)
                self.state["latent"] = self.model.encode_support(chosen, rejected, owner, 1)
        if self.architecture == "mixture":
            shots = [render_pair(p, user, (), "plain", options, self.tokenizer) for p in support]
            chosen = self._pooled([s.chosen for s in shots]) if shots else None
            rejected = self._pooled([s.rejected for s in shots]) if shots else None
            if shots:
                weights = self.model.fit_weights(chosen, rejected, options.get("adapt_steps", 200),
                                                 l2=options.get("adapt_l2", 0.01))
            else:
                import torch

                weights = torch.full((self.model.k,), 1.0 / self.model.k, device=self.device)
            self.state["weights"] = weights.unsqueeze(0)

    def score(self, user: User, prompt: str, response: Response) -> float:
        return self.score_batch(user, [(prompt, response)])[0]

    def score_batch(self, user: User, items: Sequence[tuple[str, Response]]) -> list[float]:
        """The rewards of ``items`` for ``user``, ``score_batch_size`` responses per forward pass.

        Right padding leaves a response's pooled state as it is alone (the mask covers the
        padding), so the numbers are ``score``'s, to float rounding.
        """
        import torch

        from prb_tasks.train.collate import render_pair

        texts = [render_pair(Pair("query", prompt, response, response), user, self.state["support"],
                             self.architecture, self.manifest["options"], self.tokenizer).chosen
                 for prompt, response in items]
        out: list[float] = []
        for start in range(0, len(texts), self.score_batch_size):
            h = self._pooled(texts[start:start + self.score_batch_size])
            batch: dict[str, Any] = {}
            # One user: its latent or weights (one row) broadcast over the responses.
            if self.architecture == "latent":
                batch["latent"] = self.state.get("latent", h.new_zeros((1, self.model.dim)))
            if self.architecture == "mixture":
                batch["weights"] = self.state["weights"]
            with torch.no_grad():
                out.extend(float(v) for v in self.model.reward(h, batch))
        return out
