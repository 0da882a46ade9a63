"""Data-parallel scoring under ``accelerate launch``: lm-eval's own mechanism.

lm-eval splits the documents of every task between processes by the model's ``rank``
and ``world_size`` (process *r* of *n* builds the requests of documents r, r+n, ...),
pads the shorter shares so every process runs as many requests, and gathers the
per-document results on rank 0, which alone computes the metrics and writes the
results and samples files. Its ``hf`` model takes part by reporting its rank and world
size from an ``accelerate.Accelerator`` and answering ``all_gather``, ``gather_object``
and ``barrier``; :class:`Ranks` does the same for ``prb-rm``, so each process scores
only its share (``accelerate launch --multi_gpu --num_processes N -m prb_tasks eval ...``,
one process per GPU; on a machine without CUDA the same command shares the CPU).

Nothing here is imported or started in an ordinary single-process run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


def launched() -> bool:
    """True when this process is one of several started by ``accelerate launch`` (or torchrun)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


@dataclass
class Ranks:
    """This process's place among the launched ones, and the collectives lm-eval calls.

    Attributes:
        accelerator: the ``accelerate.Accelerator`` that joined the process group.
    """

    accelerator: Any

    @property
    def rank(self) -> int:
        """This process's index (0 writes the results)."""
        return int(self.accelerator.process_index)

    @property
    def world_size(self) -> int:
        """How many processes share the documents."""
        return int(self.accelerator.num_processes)

    @property
    def device(self) -> Any:
        """The device accelerate gave this process (``cuda:<local rank>``, or the CPU)."""
        return self.accelerator.device

    def all_gather(self, tensor: Any) -> Any:
        """Every process's ``tensor``, concatenated (lm-eval pads the shares with it)."""
        return self.accelerator.gather(tensor)

    def gather_object(self, obj: Any, dst: int = 0) -> list[Any] | None:
        """Every process's ``obj`` on rank ``dst`` (None on the others)."""
        import torch.distributed as dist

        gathered: list[Any] | None = [None] * self.world_size if self.rank == dst else None
        dist.gather_object(obj, object_gather_list=gathered, dst=dst)
        return gathered

    def barrier(self) -> None:
        """Wait until every process gets here."""
        self.accelerator.wait_for_everyone()


def join() -> Ranks | None:
    """Join the launched process group (None when this is a single-process run).

    On a machine without CUDA the processes share the CPU (accelerate's multi-CPU mode,
    gloo): accelerate would otherwise not join them, and every process would score
    every document and write its own results.
    """
    if not launched():
        return None
    import torch
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=not torch.cuda.is_available())
    return Ranks(accelerator) if accelerator.num_processes > 1 else None
