"""Batch mode: fill the answer cache through provider batches, then finish from the cache.

:func:`run_batches` runs before the ordinary judge run of ``generate_until``:

1. every request is keyed exactly like an interactive one; those already in the cache
   are done;
2. batches already in the ledger that hold our requests are polled; ended ones are
   collected (answers into the cache, failures into the ledger);
3. requests neither cached, nor waiting in a batch, nor failed for good are submitted
   in new batches (chunks within the provider's limits), recorded in the ledger first;
4. with ``batch_wait`` (default) this repeats every ``batch_poll`` seconds until no
   batch holds our requests; without it the run stops after one pass, saying which
   command collects.

Requests that failed inside a batch with a transient error go into a later batch, at
most ``batch_retries`` times; then, like requests rejected for good, they become error
outcomes. Empty or refused answers are not cached (as in interactive runs) and are
retried the same way; after the last try the answer received is used. Requests an
expired or cancelled batch never ran are reported; a run that was waiting for that
batch stops, and the next run resubmits them (answers already received are never
asked for again: they are in the cache).

The ordinary runner then finds every answer in the cache; :func:`run_unsettled` gives
it only the judgments not settled here.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from prb_tasks.common.retry import RetryPolicy
from prb_tasks.judge.answer_cache import CachedAnswer, JudgeCache
from prb_tasks.judge.batch.bodies import BodyBuilder
from prb_tasks.judge.batch.ledger import SUBMIT_GRACE, Failure, Job, Ledger
from prb_tasks.judge.batch.providers import (
    BatchStatus,
    ItemResult,
    batch_api,
    batch_key,
    provider_of,
)
from prb_tasks.judge.client import CallError, CallResult
from prb_tasks.judge.errors import JudgeError, JudgeFatalError, RunStopped
from prb_tasks.judge.request import (
    ChatRequest,
    answer_profile,
    cache_key,
    request_digest,
)
from prb_tasks.judge.runner import Outcome, run_sync
from prb_tasks.judge.usage import Money, UsageTracker
from prb_tasks.replies.verdict import ERROR_MARK

if TYPE_CHECKING:  # pragma: no cover
    from prb_tasks.judge.runner import JudgeRunner
    from prb_tasks.judge.setup import JudgeSetup

# Batch API calls move whole files: allow them more time than one chat call.
MIN_BATCH_TIMEOUT = 600.0


def custom_id_for(key: str) -> str:
    """The id a request carries inside a batch (Anthropic allows ``[A-Za-z0-9_-]{1,64}``)."""
    return "prb-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


def rerun_command() -> str:
    """The command line of this run, to repeat it (model_args never hold keys)."""
    from prb_tasks.common.harness_args import declared

    run = declared()
    if run is not None and run.argv:  # a `prb eval` run
        return shlex.join(["prb", "eval", *run.argv])
    argv = list(sys.argv)
    if argv and argv[0] == "prb eval":
        return shlex.join(["prb", "eval", *argv[2:]])
    return shlex.join([os.path.basename(argv[0]) if argv else "lm_eval", *argv[1:]])


@dataclass
class BatchReport:
    """What batches did in this run (saved in the usage summary)."""

    provider: str
    batches_submitted: list[str] = field(default_factory=list)
    requests_submitted: int = 0
    answers_collected: int = 0
    failed: int = 0
    unfinished: int = 0
    cost: Money = field(default_factory=Money)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON values (for the results file)."""
        return {"provider": self.provider, "batches_submitted": list(self.batches_submitted),
                "requests_submitted": self.requests_submitted, "answers_collected": self.answers_collected,
                "failed": self.failed, "unfinished": self.unfinished, "cost": self.cost.as_dict(),
                "cost_label": self.cost.label()}


class BatchDriver:
    """Runs batch mode for one ``generate_until`` call.

    Args:
        lm: the judge (settings, key, cache folder, prices).
        chats: the run's requests.
        sample_indices: for each request, how many identical ones precede it.
        usage: the run's usage tracker (gets the batch report).
        show_progress: draw the progress bar.
    """

    def __init__(self, lm: JudgeSetup, chats: Sequence[ChatRequest], sample_indices: Sequence[int],
                 usage: UsageTracker, show_progress: bool) -> None:
        s = lm.settings
        self.settings = s
        self.model = s.model_id
        self.api_base = s.api_base
        self.provider = provider_of(self.model)
        self.chats = chats
        self.cache_dir = lm.cache_dir
        self.usage = usage
        self.show_progress = show_progress
        self.price = lm.pricer.batch()
        self.retry = RetryPolicy(max_retries=s.max_retries, base=s.backoff_base, cap=s.backoff_max)
        key = batch_key(self.provider, self.api_base, s.api_key_env)
        self.api = batch_api(self.provider, self.api_base, key, max(s.timeout, MIN_BATCH_TIMEOUT), self.retry)
        self.bodies = BodyBuilder(self.model)
        self.report = BatchReport(self.provider)
        self.keys = [cache_key(request_digest(chats[i], self.model, self.api_base), sample_indices[i])
                     for i in range(len(chats))]
        self.done: set[str] = set()
        self.blocked: set[str] = set()
        self.final: dict[str, Failure] = {}
        self._ids: dict[str, dict[str, str]] = {}
        self._waited = False
        self._statuses: dict[str, BatchStatus] = {}
        self._last_waiting: list[Job] = []
        self._fresh = True  # todo was just read from the cache: no need to look again

    # -- the loop

    async def run(self) -> dict[int, Outcome]:
        """Submit, wait and collect into the answer cache; the outcomes by request position.

        With ``batch_wait`` off it stops at the first wait, naming the pending batches.
        """
        self.cache = JudgeCache(self.cache_dir, "on")
        self.ledger = Ledger(self.cache_dir)
        try:
            self.todo = {key: i for i, key in enumerate(self.keys) if self.cache.get(key) is None}
            if not self.todo:
                return {}
            self.bar = tqdm(total=len(self.todo), desc="prb-judge batches", unit="req",
                            disable=not self.show_progress, mininterval=0.25, dynamic_ncols=True, file=sys.stderr)
            try:
                await self._loop()
            finally:
                self._show(self._last_waiting)
                self.bar.close()
                self.usage.batch = self.report.as_dict()
        finally:
            await self.api.aclose()
            self.ledger.close()
            self.cache.close()
        if self.blocked - self.done:
            raise RunStopped(self._blocked_message())
        return self._settled()

    async def _loop(self) -> None:
        while True:
            await self._refresh()
            remaining = self._remaining()
            if remaining:
                await self._submit(remaining)
            waiting = self._last_waiting = self._our_jobs()
            self._show(waiting)
            if not waiting:
                return
            if not self.settings.batch_wait:
                raise RunStopped(self._pending_message(waiting))
            await asyncio.sleep(self.settings.batch_poll)
            self._waited = True

    # -- ledger views

    def _ids_of(self, job: Job) -> dict[str, str]:
        if job.job_id not in self._ids:
            self._ids[job.job_id] = self.ledger.ids(job)
        return self._ids[job.job_id]

    def _our_jobs(self) -> list[Job]:
        """Active jobs of this judge that hold some of our requests."""
        out = []
        for job in self.ledger.jobs():
            if not job.active or job.model != self.model or job.api_base != self.api_base:
                continue
            if any(key in self.todo for key in self._ids_of(job).values()):
                out.append(job)
        return out

    def _pending(self) -> set[str]:
        return {key for job in self._our_jobs() for key in self._ids_of(job).values()}

    # -- polling and collecting

    async def _refresh(self) -> None:
        known = {j.batch_id for j in self.ledger.jobs() if j.batch_id}
        for job in self._our_jobs():
            try:
                if job.state == "submitting":
                    await self._recover(job, known)
                    continue
                assert job.batch_id is not None
                status = await self.api.retrieve(job.batch_id)
            except CallError as err:
                if err.kind == "not_found" and job.state == "submitted":
                    self._forget(job)
                    continue
                raise self._api_error(err, f"checking batch {job.batch_id or job.job_id}") from None
            self._statuses[job.job_id] = status
            counts = {"total": status.total, "done": status.done, "failed": status.failed}
            if job.status != status.status or job.counts != counts:
                job.status, job.counts = status.status, counts
                self.ledger.save(job)
            if status.ended:
                await self._collect(job, status)

    def _forget(self, job: Job) -> None:
        """A batch the provider no longer knows (deleted, or another account): free its requests."""
        job.state = "abandoned"
        job.note = "the provider does not know this batch (404); its requests were released"
        self.ledger.save(job)
        tqdm.write(f"prb-judge: {self.provider} does not know batch {job.batch_id} (deleted, or another "
                   "account's key?); its unanswered requests will be submitted again", file=sys.stderr)

    async def _recover(self, job: Job, known: set[str]) -> None:
        """Resolve a submission left half-done by a process that died (or is still sending)."""
        if time.time() - job.updated < SUBMIT_GRACE:
            return  # another process is sending it right now
        found = None
        if job.provider == "anthropic" or job.input_file_id:
            found = await self.api.find(job.input_file_id, job.requests, job.created, known)
        async with self.ledger.lease():
            fresh = self.ledger.job(job.job_id)
            if fresh is None or fresh.state != "submitting":
                return
            if found:
                fresh.batch_id, fresh.state = found, "submitted"
                fresh.note = "found at the provider after an interrupted submission"
            else:
                fresh.state = "abandoned"
                fresh.note = "the submission was interrupted before the provider created a batch"
            self.ledger.save(fresh)
        tqdm.write(f"prb-judge: {fresh.note}: {found or job.job_id}", file=sys.stderr)

    async def _collect(self, job: Job, status: BatchStatus) -> None:
        """Store the answers of an ended batch; record its failures (once, under the lease)."""
        items: list[ItemResult] = []
        if status.end != "failed":
            try:
                items = await self.api.results(status)
            except CallError as err:
                raise self._api_error(err, f"downloading the results of batch {job.batch_id}") from None
        ids = self._ids_of(job)
        async with self.ledger.lease():
            fresh = self.ledger.job(job.job_id)
            if fresh is None or fresh.state != "submitted":
                # Another process collected it: its answers are in the cache already.
                self._count_done(ids.values())
                return
            seen: set[str] = set()
            skipped: set[str] = set()
            cost = Money()
            answered = failed = 0
            for item in items:
                key = ids.get(item.custom_id)
                if key is None or item.custom_id in seen:
                    continue
                seen.add(item.custom_id)
                if item.outcome == "ok" and item.result is not None:
                    item_cost = self.price.cost(item.result.input_tokens, item.result.output_tokens) \
                        if self.price else None
                    cost.add(item_cost)
                    if self._store(key, item.result, item_cost):
                        answered += 1
                    else:
                        failed += 1
                elif item.outcome == "error" and item.error is not None:
                    self._fail(key, item.error.kind, item.error.name, item.error.message, item.error.retryable)
                    failed += 1
                else:
                    skipped.add(item.custom_id)
            # Expired or cancelled before they ran, or missing from the results.
            unfinished = [key for cid, key in ids.items() if cid not in seen or cid in skipped]
            fresh.state, fresh.end, fresh.status = "collected", status.end, status.status
            fresh.answered, fresh.failed, fresh.unfinished = answered, failed, len(unfinished)
            fresh.cost = None if cost.unknown else round(cost.known, 6)
            fresh.note = status.message
            self.ledger.save(fresh)
        self.report.answers_collected += answered
        self.report.failed += failed
        self.report.unfinished += len(unfinished)
        self.report.cost.known += cost.known
        self.report.cost.unknown += cost.unknown
        self._count_done(ids.values())
        if status.end == "failed":
            raise JudgeFatalError(
                f"prb-judge: {self.provider} rejected batch {job.batch_id} as a whole ({status.message}); "
                "none of its requests ran. Fix the cause and run the same command again"
            )
        if unfinished:
            tqdm.write(f"prb-judge: batch {job.batch_id} {status.end}: {len(unfinished)} of {job.requests} "
                       "requests did not run; the next run of this command resubmits them", file=sys.stderr)
            if self._waited:
                # A run waiting for this batch stops instead of resubmitting at once.
                self.blocked.update(k for k in unfinished if k in self.todo)

    def _store(self, key: str, result: CallResult, cost: float | None) -> bool:
        """Cache one answer (True), or record an empty / refused one as a failure (False)."""
        if result.refused or not result.text.strip():
            kind = "refused" if result.refused else "empty"
            # A first-reply protocol scores the empty answer: final, never resubmitted.
            again = result.refused or not (key in self.todo and self.chats[self.todo[key]].ask_once)
            self._fail(key, kind, "RefusedCompletion" if result.refused else "EmptyCompletion",
                       f"the batch answer was {kind}", again, text=result.text)
            return False
        self.cache.put(key, CachedAnswer(
            text=result.text, model=self.model, input_tokens=result.input_tokens,
            output_tokens=result.output_tokens, reasoning_tokens=result.reasoning_tokens, cost=cost,
            latency=0.0, created=time.time(),
            profile=answer_profile(self.chats[self.todo[key]], self.model, self.api_base) if key in self.todo else None,
        ))
        self.ledger.clear_failure(key)
        return True

    def _fail(self, key: str, kind: str, name: str, message: str, retryable: bool, text: str | None = None) -> None:
        prior = self.ledger.failure(key)
        attempts = (prior.attempts if prior else 0) + 1
        self.ledger.record_failure(key, Failure(attempts, kind, name, message, retryable, text))

    def _count_done(self, keys: Any) -> None:
        for key in keys:
            if key in self.todo and key not in self.done and self.cache.get(key) is not None:
                self.done.add(key)

    # -- submitting

    def _remaining(self) -> list[str]:
        """Our requests to submit now, in request order."""
        pending = self._pending()
        out = []
        for key in self.todo:
            if key in self.done or key in pending or key in self.blocked or key in self.final:
                continue
            if not self._fresh and self.cache.get(key) is not None:
                self.done.add(key)
                continue
            failure = self.ledger.failure(key)
            if failure is not None and (not failure.retryable or failure.attempts > self.settings.batch_retries):
                self.final[key] = failure
                continue
            out.append(key)
        self._fresh = False
        return out

    async def _submit(self, keys: list[str]) -> None:
        max_requests, max_bytes = self.api.limits
        if self.settings.batch_max_requests:
            max_requests = min(max_requests, self.settings.batch_max_requests)
        planned: list[tuple[Job, list[bytes]]] = []
        async with self.ledger.lease():
            # Another process may have submitted some of them since we looked.
            pending = self._pending()
            chunk: dict[str, str] = {}
            lines: list[bytes] = []
            size = 0
            for key in keys:
                if key in pending or self.cache.get(key) is not None:
                    continue
                custom_id = custom_id_for(key)
                line = self.api.line(custom_id, self.bodies.body(self.chats[self.todo[key]]))
                if chunk and (len(chunk) >= max_requests or size + len(line) > max_bytes):
                    planned.append((self._new_job(chunk), lines))
                    chunk, lines, size = {}, [], 0
                chunk[custom_id] = key
                lines.append(line)
                size += len(line)
            if chunk:
                planned.append((self._new_job(chunk), lines))
        for number, (job, lines) in enumerate(planned):
            try:
                await self._send(job, lines)
            except BaseException:
                # The chunks not sent yet never reached the provider: free their requests now.
                for unsent, _ in planned[number + 1:]:
                    unsent.state, unsent.note = "abandoned", "not sent: an earlier submission failed"
                    self.ledger.save(unsent)
                raise

    def _new_job(self, ids: dict[str, str]) -> Job:
        job = self.ledger.new_job(self.provider, self.model, self.api_base, self.settings.api_key_env, ids)
        self._ids[job.job_id] = dict(ids)
        return job

    async def _send(self, job: Job, lines: list[bytes]) -> None:
        def on_file(file_id: str) -> None:
            job.input_file_id = file_id
            self.ledger.save(job)

        try:
            batch_id, status = await self.api.submit(lines, job.job_id, self.model, on_file)
        except CallError as err:
            if not err.retryable:
                # Rejected outright: no batch exists, so its requests are free again.
                job.state, job.note = "abandoned", f"{err.name}: {err.message}"
                self.ledger.save(job)
            raise self._api_error(err, f"submitting {job.requests} requests") from None
        job.batch_id, job.state = batch_id, "submitted"
        if status is not None:
            job.status = status.status
        self.ledger.save(job)
        self.report.batches_submitted.append(batch_id)
        self.report.requests_submitted += job.requests
        tqdm.write(f"prb-judge: submitted batch {batch_id} ({job.requests} requests) to {self.provider}",
                   file=sys.stderr)

    # -- reporting

    def _api_error(self, err: CallError, doing: str) -> JudgeError:
        where = f" at {self.api_base}" if self.api_base else ""
        detail = f"({err.name}: {err.message})"
        if err.kind == "auth":
            source = self.settings.api_key_env or "the provider's API key environment variable"
            return JudgeFatalError(f"prb-judge: {self.provider}{where} rejected the API key while {doing} {detail}; "
                                   f"check {source}")
        if err.retryable:
            return JudgeError(f"prb-judge: {self.provider}{where} kept failing while {doing} {detail}; "
                              "nothing is lost: run the same command again later")
        return JudgeFatalError(f"prb-judge: {self.provider}{where} refused {doing} {detail}")

    def _show(self, waiting: list[Job] | None = None) -> None:
        if not self.show_progress:
            return
        running = 0
        for job in waiting or []:
            status = self._statuses.get(job.job_id)
            running += job.requests - (status.done + status.failed if status else 0)
        self.bar.n = len(self.done)
        self.bar.set_postfix_str(
            f"batches={len(waiting or [])} submitted={self.report.requests_submitted} running={running} "
            f"answered={self.report.answers_collected} failed={self.report.failed} "
            f"cost={self.report.cost.label()}", refresh=False)
        self.bar.refresh()

    def _pending_message(self, waiting: list[Job]) -> str:
        held = sum(1 for job in waiting for key in self._ids_of(job).values() if key in self.todo)
        parts = []
        for job in waiting:
            status = self._statuses.get(job.job_id)
            state = status.status if status else job.status or job.state
            done = f", {status.done}/{job.requests} done" if status else ""
            parts.append(f"{job.batch_id or job.job_id}: {state}{done}")
        where = "" if self.settings.cache_dir is None else f" --cache-dir {shlex.quote(str(self.cache_dir))}"
        return "\n".join([
            (f"prb-judge: {len(waiting)} batch(es) at {self.provider} hold {held} requests not answered yet "
             f"({'; '.join(parts)}); no results were written."),
            ("Collect them by running the same command again (nothing is submitted twice; "
             "batch_wait=true waits until they end):"),
            f"  {rerun_command()}",
            f"Progress: prb batch status{where}",
        ])

    def _blocked_message(self) -> str:
        count = len(self.blocked - self.done)
        return (f"prb-judge: {count} requests were not run because their batch expired or was cancelled; "
                "answers received so far are cached. Run the same command again to resubmit them:\n"
                f"  {rerun_command()}")

    def _settled(self) -> dict[int, Outcome]:
        """Judgments decided here: requests that failed for good (and their last answer, if empty/refused)."""
        out: dict[int, Outcome] = {}
        for key, failure in self.final.items():
            if key in self.done:
                continue
            index = self.todo[key]
            if failure.kind in ("empty", "refused"):
                out[index] = Outcome(failure.text or "", "ok")
                if failure.kind == "refused":
                    self.usage.refused += 1
                else:
                    self.usage.empty += 1
            else:
                out[index] = Outcome(f"{ERROR_MARK} {failure.name}: {failure.message}", "error", failure.kind)
        return out


def run_batches(lm: JudgeSetup, chats: Sequence[ChatRequest], sample_indices: Sequence[int], usage: UsageTracker,
                show_progress: bool = True) -> dict[int, Outcome]:
    """Fill the cache through provider batches; return the judgments settled without an answer.

    Raises :class:`RunStopped` when results cannot be written yet (``batch_wait=false``
    with batches running, or batches that ended unfinished).
    """
    driver = BatchDriver(lm, chats, sample_indices, usage, show_progress)
    try:
        return run_sync(driver.run())
    except KeyboardInterrupt:
        raise RunStopped("prb-judge: stopped waiting (Ctrl-C). Submitted batches keep running at the provider; "
                         f"run the same command again to collect them:\n  {rerun_command()}", exit_code=130) from None


class _Subset(Sequence[ChatRequest]):
    def __init__(self, chats: Sequence[ChatRequest], keep: list[int]) -> None:
        self._chats = chats
        self._keep = keep

    def __len__(self) -> int:
        return len(self._keep)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._chats[self._keep[index]]


def run_unsettled(runner: JudgeRunner, chats: Sequence[ChatRequest], sample_indices: Sequence[int],
                  settled: dict[int, Outcome], usage: UsageTracker) -> list[str]:
    """Run the ordinary judge on the judgments not settled by batches; merge in the settled ones."""
    keep = [i for i in range(len(chats)) if i not in settled]
    answers = runner.run(_Subset(chats, keep), [sample_indices[i] for i in keep]) if keep else []
    results = [""] * len(chats)
    for i, text in zip(keep, answers):
        results[i] = text
    for i, outcome in settled.items():
        results[i] = outcome.text
        usage.finish_judgment(outcome.status, outcome.error_kind)
    return results
