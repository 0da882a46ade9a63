"""The batch ledger: which requests were submitted in which provider batch.

It lives in the cache folder (``<cache_dir>/batches/``, a JSON-only diskcache like the
answer cache), so every process and machine that shares the cache folder shares it:
a killed run, a second machine or a later identical command finds the batches already
submitted and collects them instead of submitting the requests again.

Entries (all JSON text):

* ``job:<id>``: one submission (:class:`Job`): provider, model, batch id, state, counts;
* ``ids:<id>``: its custom id -> answer-cache key map, written once;
* ``fail:<cache key>``: a request that failed inside a batch (:class:`Failure`);
* ``lease:<name>``: a short lease, so only one process at a time decides what to
  submit or records a finished batch.

A job is written *before* anything is sent (state ``submitting``), so a process
killed in the middle of a submission leaves a record that the next run resolves: it
finds the batch at the provider (by its input file, or for Anthropic by creation time
and size) or, if none was created, releases the requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from prb_tasks.common.jsonstore import UnsafeCacheEntry
from prb_tasks.judge.answer_cache import open_store
from prb_tasks.judge.errors import JudgeError

# A job still ``submitting`` after this many seconds belongs to a process that died.
SUBMIT_GRACE = 600.0

ACTIVE_STATES = ("submitting", "submitted")


@dataclass
class Job:
    """One batch submission.

    Attributes:
        job_id: our id (also in the batch's metadata where the provider keeps it).
        provider: ``openai`` or ``anthropic``.
        model: litellm model id.
        api_base: server URL (None: the provider's).
        api_key_env: name of the variable holding the key (None: the provider's usual
            one); never the key itself.
        requests: how many requests it holds.
        created: Unix time the record was written.
        updated: Unix time of the last change.
        state: ``submitting`` (being sent), ``submitted`` (at the provider), ``collected``
            (results stored), ``abandoned`` (never reached the provider).
        batch_id: the provider's batch id.
        input_file_id: OpenAI's id of the uploaded input file.
        status: the provider's last reported status.
        counts: the provider's last reported request counts.
        end: how it ended: ``completed``, ``expired``, ``cancelled`` or ``failed``.
        answered: answers stored in the cache from it.
        failed: requests that failed inside it.
        unfinished: requests it never ran (expired or cancelled).
        cost: dollars of its answers at batch prices (None: unknown).
        note: a short remark (e.g. why it failed).
    """

    job_id: str
    provider: str
    model: str
    api_base: str | None
    api_key_env: str | None
    requests: int
    created: float
    updated: float
    state: str = "submitting"
    batch_id: str | None = None
    input_file_id: str | None = None
    status: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    end: str | None = None
    answered: int = 0
    failed: int = 0
    unfinished: int = 0
    cost: float | None = None
    note: str | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Failure:
    """A request that failed inside a batch.

    Attributes:
        attempts: batches in which it failed.
        kind: error kind (as :class:`~prb_tasks.judge.client.CallError`), or ``empty`` /
            ``refused`` for such answers.
        name: error class name shown in the outcome.
        message: short description (no secrets).
        retryable: whether a later batch may try it again.
        text: for ``empty`` / ``refused``: the completion received.
    """

    attempts: int
    kind: str
    name: str
    message: str
    retryable: bool
    text: str | None = None


class Ledger:
    """The ledger of one cache folder.

    Args:
        cache_dir: the judge cache folder (the ledger is its ``batches`` subfolder).
    """

    def __init__(self, cache_dir: Path) -> None:
        self.directory = cache_dir / "batches"
        self._store = open_store(self.directory)

    def close(self) -> None:
        self._store.close()

    # -- raw JSON

    def _get(self, key: str) -> Any:
        try:
            raw = self._store.get(key, retry=True)
        except UnsafeCacheEntry:
            return None
        if not isinstance(raw, str):
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _set(self, key: str, value: Any) -> None:
        self._store.set(key, json.dumps(value, ensure_ascii=False), retry=True)

    # -- jobs

    def new_job(self, provider: str, model: str, api_base: str | None, api_key_env: str | None,
                ids: dict[str, str]) -> Job:
        """Record a submission about to be sent, with its custom id -> cache key map."""
        now = time.time()
        job = Job(job_id=uuid.uuid4().hex[:16], provider=provider, model=model, api_base=api_base,
                  api_key_env=api_key_env, requests=len(ids), created=now, updated=now)
        self._set(f"ids:{job.job_id}", ids)
        self.save(job)
        return job

    def save(self, job: Job) -> None:
        job.updated = time.time()
        self._set(f"job:{job.job_id}", asdict(job))

    def job(self, job_id: str) -> Job | None:
        data = self._get(f"job:{job_id}")
        return Job.from_dict(data) if isinstance(data, dict) else None

    def jobs(self) -> list[Job]:
        """Every job, oldest first."""
        out = []
        for key in list(self._store.iterkeys()):
            if isinstance(key, str) and key.startswith("job:"):
                job = self.job(key[4:])
                if job is not None:
                    out.append(job)
        return sorted(out, key=lambda j: j.created)

    def ids(self, job: Job) -> dict[str, str]:
        """Custom id -> answer-cache key of a job's requests."""
        data = self._get(f"ids:{job.job_id}")
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def find(self, batch_id: str) -> Job | None:
        """The job of a provider batch id (or of our own job id)."""
        for job in self.jobs():
            if batch_id in (job.batch_id, job.job_id):
                return job
        return None

    # -- failures

    def failure(self, key: str) -> Failure | None:
        data = self._get(f"fail:{key}")
        if not isinstance(data, dict):
            return None
        try:
            return Failure(**data)
        except TypeError:
            return None

    def record_failure(self, key: str, failure: Failure) -> None:
        self._set(f"fail:{key}", asdict(failure))

    def clear_failure(self, key: str) -> None:
        self._store.delete(f"fail:{key}", retry=True)

    # -- lease

    @asynccontextmanager
    async def lease(self, name: str = "ledger", ttl: float = 300.0, wait: float = 900.0) -> AsyncIterator[None]:
        """Hold ``name`` while deciding what to submit or recording a finished batch.

        Args:
            name: lease name.
            ttl: seconds after which a lease left by a dead process expires.
            wait: seconds to wait for another process before giving up.
        """
        key = f"lease:{name}"
        token = uuid.uuid4().hex
        owner = json.dumps({"token": token, "host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})
        deadline = time.monotonic() + wait
        delay = 0.02
        while not self._store.add(key, owner, expire=ttl, retry=True):
            if time.monotonic() > deadline:
                raise JudgeError(
                    f"prb-judge: another prb process has held the batch ledger in {self.directory} for "
                    f"{wait:.0f}s; try again later"
                )
            await asyncio.sleep(delay)
            delay = min(0.5, delay * 2)
        try:
            yield
        finally:
            with self._store.transact(retry=True):
                current = self._get(key)
                if isinstance(current, dict) and current.get("token") == token:
                    self._store.delete(key, retry=True)
