"""``batch=true``: judge through the OpenAI Batch API or Anthropic's Message Batches API.

Data flow, one module per job:

* :mod:`.bodies` -- each request as the provider body litellm would send;
* :mod:`.providers` -- the two batch APIs (submit, status, results, cancel);
* :mod:`.ledger` -- which requests are in which batch, kept in the cache folder;
* :mod:`.driver` -- submit, wait, collect into the answer cache, retry failures;
* :mod:`.commands` -- ``prb batch status`` and ``prb batch cancel``.
"""

from prb_tasks.judge.batch.driver import run_batches, run_unsettled

__all__ = ["run_batches", "run_unsettled"]
