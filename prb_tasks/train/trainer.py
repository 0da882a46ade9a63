"""transformers' ``Trainer`` with the Bradley-Terry loss: no training loop of our own.

The Trainer runs through accelerate, so ``accelerate launch -m prb_tasks.train ...``
trains data-parallel on every GPU (a DeepSpeed config goes in with ``--deepspeed``).
"""

from __future__ import annotations

from typing import Any

import torch.nn.functional as F
from transformers import Trainer


class BradleyTerryTrainer(Trainer):
    """``-log sigmoid(r_chosen - r_rejected)`` averaged over the batch, plus the
    architecture's own term (the latent model's KL).

    Args:
        user_learning_rate: the learning rate of the model's per-user parameters
            (``RewardModel.USER_PARAMETERS``; the mixture's user logits), which see only
            their own user's pairs and would barely move at the backbone's rate; None: the
            backbone's.
        *args, **kwargs: ``Trainer``'s.
    """

    def __init__(self, *args: Any, user_learning_rate: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user_learning_rate = user_learning_rate

    def create_optimizer(self, model: Any = None) -> Any:
        """The Trainer's optimizer, with the per-user parameters in a group of their own rate."""
        optimizer = super().create_optimizer(model)
        target = self.model if model is None else model
        prefixes = getattr(self.accelerator.unwrap_model(target), "USER_PARAMETERS", ())
        if self.user_learning_rate is None or not prefixes:
            return optimizer
        own = {id(p) for n, p in target.named_parameters() if n.startswith(prefixes) and p.requires_grad}
        user = [p for group in optimizer.param_groups for p in group["params"] if id(p) in own]
        for group in optimizer.param_groups:
            group["params"] = [p for p in group["params"] if id(p) not in own]
        # Before the scheduler exists, so it records this group's own starting rate.
        optimizer.add_param_group({"params": user, "lr": self.user_learning_rate, "weight_decay": 0.0})
        return optimizer

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        out = model(**inputs)
        loss = -F.logsigmoid(out["chosen"] - out["rejected"]).mean()
        extra = self.accelerator.unwrap_model(model).aux_loss()
        if extra is not None:
            loss = loss + extra
        return (loss, out) if return_outputs else loss


def arguments(options: Any, folder: str, cpu: bool) -> Any:
    """``TrainingArguments`` for ``options`` (see :class:`~prb_tasks.train.options.TrainOptions`).

    Args:
        options: validated options.
        folder: the Trainer's scratch folder (logs; no intermediate checkpoints are kept).
        cpu: train on the CPU.
    """
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=folder, per_device_train_batch_size=options.batch_size, num_train_epochs=options.epochs,
        max_steps=options.max_steps, learning_rate=options.learning_rate, seed=options.seed,
        data_seed=options.seed, save_strategy="no", report_to=[], logging_steps=10,
        remove_unused_columns=False, use_cpu=cpu, bf16=options.bf16, deepspeed=options.deepspeed,
        # A batch whose rows have no support pairs leaves the latent encoder unused.
        ddp_find_unused_parameters=True, dataloader_num_workers=0, disable_tqdm=True,
        lr_scheduler_type="constant", warmup_steps=0,
    )
