"""What the dry run and the batch driver read from a judge: its settings, its prices
and its cache folder.

:class:`prb_tasks.judge.model.JudgeLM` has these attributes and hands itself to
:func:`prb_tasks.judge.dryrun.run_dry_run` and :func:`prb_tasks.judge.batch.run_batches`.
Typing those arguments with this protocol, instead of with ``JudgeLM``, keeps the
model the only module that imports both sides (no import circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from prb_tasks.judge.options import JudgeSettings
from prb_tasks.judge.pricing import Pricer


class JudgeSetup(Protocol):
    """A configured judge, as far as planning or batching its requests needs it.

    Attributes:
        settings: the validated ``--model_args`` (merged over a judge config).
        pricer: the judge's prices (listed by litellm or given in the settings).
        cache_dir: the folder of the judge's answer cache.
    """

    settings: JudgeSettings
    pricer: Pricer
    cache_dir: Path
