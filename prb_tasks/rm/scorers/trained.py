"""``scorer=trained``: a ``prb train`` context (or plain) checkpoint as a scalar RM.

``--model prb-rm --model_args pretrained=DIR`` where DIR is a ``prb train --out`` folder
(its ``manifest.json`` picks this scorer). On Personalized RewardBench's scalar tasks the
context model reads the row's profile posts (behind the document's ``profile_key``) as
the user's text, retrieved for the question and cut to the checkpoint's budget, exactly as
in training; the bare question is the request. Scores are not cached (a checkpoint folder
has no revision to key them by).
"""

from __future__ import annotations

from collections.abc import Sequence

from prb_tasks.fewshot.method import Pair, Post, Response, User
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.scorers.base import Report, Scorer
from prb_tasks.rm.scorers.lexical import profile_posts


class TrainedScorer(Scorer):
    """Scores with a ``context`` or ``plain`` checkpoint of ``prb train``.

    Args:
        folder: the checkpoint folder.
        device: where to run it (``auto``: the first GPU, else the CPU).
        batch_size: responses per forward pass.
        device_from_harness: ``device`` is lm-eval's default, not the user's choice.
    """

    name = "trained"

    def __init__(self, folder: str, device: str = "auto", batch_size: int = 8,
                 device_from_harness: bool = False) -> None:
        from prb_tasks.common.devices import resolve_device
        from prb_tasks.train import checkpoint
        from prb_tasks.train.collate import Collator, prepare_tokenizer
        from prb_tasks.train.options import TrainError

        self.device = resolve_device(device, device_from_harness)
        try:
            self.model, tokenizer, self.manifest = checkpoint.load(folder, "prb-rm", accept=("context", "plain"),
                                                                   device=self.device)
        except TrainError as exc:
            raise RMError(str(exc)) from None
        self.tokenizer = prepare_tokenizer(tokenizer)
        self.options = self.manifest["options"]
        self.collator = Collator(self.tokenizer, self.options["max_length"], self.options.get("input_format") == "chat")
        self.batch_size = max(1, batch_size)

    def formatted(self, item: RMInput) -> str:
        from prb_tasks.train.collate import render_pair

        user = User("row", family="personalized_rb")
        if self.manifest["architecture"] == "context":
            posts = profile_posts(item.profile_key, "trained")
            if "profile" not in self.options["context_parts"]:
                raise RMError(f"prb-rm: the checkpoint reads {', '.join(self.options['context_parts'])}, which "
                              "Personalized RewardBench rows do not have; train it with --context-parts profile")
            user = User("row", profile=tuple(Post(text) for text in posts), family="personalized_rb")
        pair = Pair("q", item.bare_question, Response(item.response), Response(item.response))
        return render_pair(pair, user, (), self.manifest["architecture"], self.options, self.tokenizer).chosen

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        import torch

        texts = [self.formatted(item) for item in items]
        out: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            ids, mask = self.collator.tokens(texts[start:start + self.batch_size])
            with torch.no_grad():
                h = self.model.embed(ids.to(self.device), mask.to(self.device))
                rewards = self.model.reward(h, {}).float().cpu().tolist()
            out += rewards
            if report is not None:
                report(list(range(start, start + len(rewards))), rewards)
        return out
