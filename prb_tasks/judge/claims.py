"""Claims on requests in flight, so processes sharing a cache folder do not pay twice.

Before a judge sends a request that is not cached it *claims* the request's cache key
in ``<cache_dir>/claims`` (a second JSON-only diskcache store: atomic across processes).
A claim is a lease: it expires ``lease`` seconds after it was last renewed, and the
owner renews its claims while it holds them, so the claims of a process that died
(``kill -9``, a lost machine) lapse on their own; on the same machine a claim whose
process is gone is taken over at once.

A second process that finds a key claimed waits for it -- without holding a slot --
and uses the answer once the owner stores it; if the owner releases the claim without
an answer (the request failed for good) or dies, the waiter claims it and sends it
itself. The owner stores the answer *before* releasing the claim, so a waiter that
then claims it always finds the answer on its re-check. What two processes send
twice is therefore at most what was already in flight when the second one started
(plus requests whose owner died).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from prb_tasks.common.jsonstore import UnsafeCacheEntry
from prb_tasks.judge.storage import storage_errors

LEASE_SECONDS = 30.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, but not ours to signal
    return True


class ClaimBoard:
    """This process's claims in a shared cache folder.

    Args:
        directory: the judge cache folder (claims live in its ``claims`` subfolder).
        lease: seconds a claim lives without renewal.
    """

    def __init__(self, directory: Path, lease: float = LEASE_SECONDS) -> None:
        from prb_tasks.judge.answer_cache import open_store

        self.lease = lease
        self.directory = directory / "claims"
        self.owner = uuid.uuid4().hex
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._store = open_store(self.directory)
        self._held: set[str] = set()
        self.waited = 0

    def _value(self) -> str:
        return json.dumps({"v": 1, "owner": self.owner, "pid": self.pid, "host": self.host})

    def _holder(self, key: str) -> dict[str, Any] | None:
        """The live claim on ``key``, or None (missing, expired or unreadable)."""
        try:
            raw = self._store.get(key, retry=True)
            data = json.loads(raw) if isinstance(raw, str) else None
        except (UnsafeCacheEntry, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def try_claim(self, key: str) -> bool:
        """Claim ``key``; False while another live process holds it.

        Raises:
            CacheStoreError: the claims store cannot be written (e.g. ``CacheDiskFull``).
        """
        with storage_errors(self.directory):
            return self._try_claim(key)

    def _try_claim(self, key: str) -> bool:
        if self._store.add(key, self._value(), expire=self.lease, retry=True):
            self._held.add(key)
            return True
        holder = self._holder(key)
        if holder is None or holder.get("owner") == self.owner:
            # Expired between the two reads, or ours already.
            if holder is None and not self._store.add(key, self._value(), expire=self.lease, retry=True):
                return False
            self._held.add(key)
            return True
        pid = holder.get("pid")
        if holder.get("host") == self.host and isinstance(pid, int) and pid != self.pid and not _pid_alive(pid):
            # Its owner died on this machine: take the claim over now, not at expiry.
            with self._store.transact(retry=True):
                if self._holder(key) == holder:
                    self._store.set(key, self._value(), expire=self.lease, retry=True)
                    self._held.add(key)
                    return True
        return False

    async def claim_or_wait(
        self,
        key: str,
        lookup: Callable[[], Any],
        stopped: Callable[[], bool],
        on_wait: Callable[[], None],
    ) -> tuple[Literal["claimed", "answered", "stopped"], Any]:
        """Claim ``key``, or wait until its owner's answer is stored.

        Args:
            key: the request's cache key.
            lookup: reads the stored answer (None while there is none).
            stopped: True when this run stopped sending (then stop waiting).
            on_wait: called once when waiting starts (the caller frees its slot).

        Returns:
            ``("claimed", None)``: send it; ``("answered", answer)``: another process
            answered it; ``("stopped", None)``: the run stopped meanwhile.
        """
        delay = 0.05
        waiting = False
        while not self.try_claim(key):
            if not waiting:
                waiting = True
                self.waited += 1
                on_wait()
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 1.5)
            answer = lookup()
            if answer is not None:
                return "answered", answer
            if stopped():
                return "stopped", None
        return "claimed", None

    def release(self, key: str) -> None:
        """Give a claim up (after storing the answer, or when the request failed)."""
        if key not in self._held:
            return
        self._held.discard(key)
        # A claim that cannot be deleted (full disk) lapses on its own: at its lease's
        # end, or at once for a waiter on this machine once this process is gone.
        with contextlib.suppress(sqlite3.Error, OSError), self._store.transact(retry=True):
            holder = self._holder(key)
            if holder is not None and holder.get("owner") == self.owner:
                self._store.delete(key, retry=True)

    def renew(self) -> None:
        """Extend every claim still held (call well within ``lease``)."""
        for key in list(self._held):
            # Not renewed (full disk): another process may then send it too, at worst.
            with contextlib.suppress(sqlite3.Error, OSError), self._store.transact(retry=True):
                holder = self._holder(key)
                if holder is not None and holder.get("owner") == self.owner:
                    self._store.touch(key, expire=self.lease, retry=True)
                else:
                    self._held.discard(key)

    async def keep_alive(self) -> None:
        """Renew claims every third of the lease until cancelled."""
        while True:
            await asyncio.sleep(self.lease / 3)
            self.renew()

    def close(self) -> None:
        """Release everything still held and close the store."""
        for key in list(self._held):
            self.release(key)
        self._store.close()

