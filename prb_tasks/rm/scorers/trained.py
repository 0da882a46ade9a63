"""``scorer=trained``: a ``prb train`` context (or plain) checkpoint as a scalar RM.

``--model prb-rm --model_args pretrained=DIR`` where DIR is a ``prb train --out`` folder
(its ``manifest.json`` picks this scorer). On Personalized RewardBench's scalar tasks the
context model reads the row's profile posts (behind the document's ``profile_key``) as
the user's text, retrieved for the question and cut to the checkpoint's budget, exactly as
in training; the bare question is the request. Scores are not cached (a checkpoint folder
has no revision to key them by).

Before anything is scored, :meth:`TrainedScorer.check` refuses in one line the users and rows
the checkpoint was trained on (:mod:`prb_tasks.train.provenance`, the check every path that
loads a checkpoint makes), and a context checkpoint whose parts the task's rows do not give
as it was trained on them (a custom file's history arrives as text, its demographics not at all).
"""

from __future__ import annotations

from collections.abc import Sequence

from prb_tasks.fewshot.method import Pair, Post, Response, User
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.scorers.base import Report, Scorer
from prb_tasks.rm.scorers.lexical import profile_posts

#: The context parts prb-rm can give a context checkpoint as training gave them, by the family
#: of the task scored: Personalized RewardBench rows (scalar and Best-of-N tasks) carry the
#: asker's posts behind ``profile_key``; ``""`` is an input of no task (``prb rl``'s prompts,
#: Personalized RewardBench rows too). Other families' scalar rows give the user's text only
#: inside the prompt, which the checkpoint never read that way.
PARTS_BY_FAMILY: dict[str, tuple[str, ...]] = {"personalized_rb": ("profile",), "": ("profile",)}


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
        self.folder = folder
        try:
            self.model, tokenizer, self.manifest = checkpoint.load(folder, "prb-rm", accept=("context", "plain"),
                                                                   device=self.device)
        except TrainError as exc:
            raise RMError(str(exc)) from None
        self.tokenizer = prepare_tokenizer(tokenizer)
        self.options = self.manifest["options"]
        self.collator = Collator(self.tokenizer, self.options["max_length"], self.options.get("input_format") == "chat")
        self.batch_size = max(1, batch_size)

    def check(self, items: Sequence[RMInput]) -> None:
        """Refuse (one line) items of users or rows the checkpoint trained on, and a context
        checkpoint on a task whose rows do not give it the parts it was trained with.

        Args:
            items: every response of the call.
        """
        from prb_tasks.train.options import TrainError
        from prb_tasks.train.provenance import Scope, check, family_of_task

        by_task: dict[str | None, list[RMInput]] = {}
        for item in items:
            by_task.setdefault(item.group, []).append(item)
        for task, group in by_task.items():
            family = family_of_task(task)
            self._check_parts(task, family)
            scope = Scope(family, users={i.user_id for i in group if i.user_id is not None},
                          questions={i.bare_question for i in group}, instead=self._instead(family))
            try:
                check(self.manifest, self.folder, scope, "prb-rm")
            except TrainError as exc:
                raise RMError(str(exc)) from None

    def _instead(self, family: str) -> str:
        """What to run instead when a task's users leak: the users it never saw, with prb-method."""
        if self.manifest.get("split") is None:
            return ""
        from prb_tasks.train.hint import fewshot_task

        return (f"score the users it never saw: --model prb-method --model_args method=trained,checkpoint="
                f"{self.folder} --tasks {fewshot_task(family or str(self.manifest.get('family')))} with the "
                f"--metadata it was trained with")

    def _check_parts(self, task: str | None, family: str) -> None:
        """One line when a context checkpoint reads parts the task's rows cannot give it."""
        if self.manifest["architecture"] != "context":
            return
        parts = tuple(self.options.get("context_parts") or ())
        given = PARTS_BY_FAMILY.get(family, ())
        missing = [p for p in parts if p not in given]
        if missing:
            raise RMError(f"prb-rm: checkpoint '{self.folder}' reads {', '.join(parts)} (as it was trained); "
                          f"{task or 'these inputs'} gives prb-rm {', '.join(given) or 'none of them'} "
                          f"({', '.join(missing)} missing); evaluate it with prb-method on its family's few-shot "
                          "task (the hint prb train printed), or train one with --context-parts "
                          f"{','.join(given) or 'profile'} for this task")

    def formatted(self, item: RMInput) -> str:
        from prb_tasks.train.collate import render_pair

        user = User("row", family="personalized_rb")
        if self.manifest["architecture"] == "context" and "profile" in self.options["context_parts"]:
            posts = profile_posts(item.profile_key, "trained")
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
