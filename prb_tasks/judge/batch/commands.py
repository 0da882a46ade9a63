"""``prb batch status`` and ``prb batch cancel ID``: the ledger from the command line.

``status`` lists the batches recorded in a cache folder's ledger and, for those still
running, asks the provider for their current state (with the key from the provider's
usual variable, or the ``api_key_env`` the run used). ``cancel`` asks the provider to
stop one batch; the next run of the same ``prb eval`` command collects what it
answered and resubmits the rest.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from prb_tasks.common.retry import RetryPolicy
from prb_tasks.judge.batch.ledger import Job, Ledger
from prb_tasks.judge.batch.providers import BatchStatus, batch_api, batch_key
from prb_tasks.judge.client import CallError
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.runner import run_sync

# Collected jobs shown without --all.
_RECENT = 10


async def _ask(job: Job, cancel: bool) -> BatchStatus:
    try:
        key = batch_key(job.provider, job.api_base, job.api_key_env)
    except JudgeConfigError as exc:
        raise CallError("auth", "MissingKey", str(exc).removeprefix("prb-judge: "), retryable=False) from None
    api = batch_api(job.provider, job.api_base, key, 60.0, RetryPolicy(max_retries=2, base=0.5, cap=5.0))
    try:
        assert job.batch_id is not None
        return await (api.cancel(job.batch_id) if cancel else api.retrieve(job.batch_id))
    finally:
        await api.aclose()


def _when(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M")


def batch_status(cache_dir: Path, show_all: bool = False) -> int:
    """Print the ledger's batches, refreshing the running ones from their providers."""
    if not (cache_dir / "batches" / "cache.db").is_file():
        print(f"no batches recorded in {cache_dir} (batch=true runs record them there)")
        return 0
    ledger = Ledger(cache_dir)
    try:
        jobs = ledger.jobs()
        for job in jobs:
            if job.state != "submitted" or not job.batch_id:
                continue
            try:
                status = run_sync(_ask(job, cancel=False))
            except CallError as err:
                job.note = f"not refreshed: {err.message}"
                continue
            job.status = status.status
            job.counts = {"total": status.total, "done": status.done, "failed": status.failed}
            ledger.save(job)
        collected = [j for j in jobs if not j.active]
        shown = jobs if show_all else [j for j in jobs if j.active] + collected[-_RECENT:]
        shown.sort(key=lambda j: j.created)
        print(f"batch ledger: {ledger.directory}")
        header = ("batch", "provider", "model", "requests", "state", "done", "failed", "submitted", "note")
        rows = [header]
        for job in shown:
            if job.active:
                state = job.status or job.state
                done, failed = str(job.counts.get("done", 0)), str(job.counts.get("failed", 0))
            else:
                state = f"{job.state} ({job.end})" if job.end else job.state
                done, failed = str(job.answered), str(job.failed + job.unfinished)
            rows.append((job.batch_id or f"({job.job_id})", job.provider, job.model, str(job.requests), state,
                         done, failed, _when(job.created), job.note or ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        hidden = len(jobs) - len(shown)
        if hidden:
            print(f"({hidden} older collected batches not shown; --all shows them)")
        if any(j.active for j in jobs):
            print("Running batches are collected by running the same `prb eval ... batch=true` command again.")
    finally:
        ledger.close()
    return 0


def batch_cancel(cache_dir: Path, batch_id: str) -> int:
    """Ask the provider to cancel one batch of the ledger."""
    if not (cache_dir / "batches" / "cache.db").is_file():
        print(f"prb batch cancel: no batches recorded in {cache_dir}", file=sys.stderr)
        return 2
    ledger = Ledger(cache_dir)
    try:
        job = ledger.find(batch_id)
        if job is None:
            print(f"prb batch cancel: no batch {batch_id} in the ledger at {ledger.directory} "
                  "(`prb batch status` lists them)", file=sys.stderr)
            return 2
        if job.state != "submitted" or not job.batch_id:
            print(f"prb batch cancel: batch {batch_id} is not running (state: {job.state}); nothing to cancel",
                  file=sys.stderr)
            return 2
        try:
            status = run_sync(_ask(job, cancel=True))
        except CallError as err:
            print(f"prb batch cancel: {job.provider} did not cancel {job.batch_id}: {err.message}", file=sys.stderr)
            return 2
        job.status = status.status
        ledger.save(job)
    finally:
        ledger.close()
    print(f"cancel requested for batch {job.batch_id} ({job.provider}); it is now {status.status}. "
          "The next run of the same command collects the answers it produced and resubmits the rest.")
    return 0
