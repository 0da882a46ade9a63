"""A collection's folder beside the output file: who takes part, what they answer.

``prefs.json`` (the export) gets ``prefs.collect/`` next to it, holding
``session.json`` (the pairs, the form, the participants with their private link tokens,
a secret for form tokens; readable by the owner only) and ``journals/<name>.jsonl``.
``export`` and ``status`` need nothing else, and a restarted server resumes from it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
from dataclasses import asdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from prb_tasks.collect.form import FormConfig
from prb_tasks.collect.journal import ParticipantState, replay
from prb_tasks.collect.pairs import Pair, pairs_digest
from prb_tasks.common.atomic import fsync_dir
from prb_tasks.common.errors import PRBError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
VERSION = 1


class StoreError(PRBError):
    """A collection folder or participant list that cannot be used."""


class Participant(BaseModel):
    """A participant: the name exported as ``user_id`` and the token of their private link."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    token: str


class StoredPair(BaseModel):
    """A pair as the session keeps it (so export works without the PAIRS file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pair_id: str
    prompt: str
    response_A: str
    response_B: str


class Session(BaseModel):
    """``session.json``."""

    model_config = ConfigDict(extra="forbid")
    version: int = VERSION
    pairs_file: str
    pairs_digest: str
    pairs: list[StoredPair]
    form: FormConfig
    seed: int
    secret: str
    participants: list[Participant]


def state_folder(out: Path) -> Path:
    """The collection folder of an output file (``prefs.json`` -> ``prefs.collect``)."""
    return out.with_suffix(".collect")


def participant_names(spec: str) -> list[str]:
    """Participant names from ``--participants``: a count (``3`` -> p1..p3) or names (``ana,ben``).

    Args:
        spec: the option's value.
    """
    text = spec.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= 1000:
            raise StoreError("prb collect: --participants takes 1 to 1000 (or comma-separated names)")
        return [f"p{i}" for i in range(1, count + 1)]
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if not _NAME.match(name):
            raise StoreError(f"prb collect: participant name {name!r}: use letters, digits, '.', '_' or '-' "
                             "(up to 40, starting with a letter or digit)")
    if not names or len(set(names)) != len(names):
        raise StoreError("prb collect: --participants needs distinct names (e.g. ana,ben) or a count (e.g. 5)")
    return names


class CollectStore:
    """One collection on disk.

    Args:
        out: the export file (``.json`` or ``.jsonl``).
        session: the loaded ``session.json``.
    """

    def __init__(self, out: Path, session: Session) -> None:
        self.out = out
        self.folder = state_folder(out)
        self.session = session
        self.pairs = [Pair(p.pair_id, p.prompt, p.response_A, p.response_B) for p in session.pairs]
        self._lock_fd: int | None = None

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def open(cls, out: Path) -> "CollectStore":
        """An existing collection (for ``export`` and ``status``).

        Args:
            out: the export file given to ``serve --out``.
        """
        if out.suffix not in (".json", ".jsonl"):
            raise StoreError(f"prb collect: {out}: give the .json or .jsonl file that `prb collect serve --out` wrote")
        path = state_folder(out) / "session.json"
        if not path.is_file():
            raise StoreError(f"prb collect: no collection for {out} (expected {path}); "
                             "start one with `prb collect serve PAIRS --out FILE`")
        try:
            session = Session.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, OSError) as exc:
            first = str(exc).splitlines()[0]
            raise StoreError(f"prb collect: {path} is damaged or unreadable ({first})") from None
        return cls(out, session)

    @classmethod
    def open_or_create(cls, out: Path, pairs_file: Path, pairs: list[Pair], form: FormConfig,
                       names: list[str], seed: int) -> "CollectStore":
        """Resume the collection for ``out``, adding new participants, or start it.

        Args:
            out: the export file (``.json`` or ``.jsonl``).
            pairs_file: where the pairs came from (recorded for ``status``).
            pairs: the pairs to ask about (must match a resumed collection's).
            form: profile fields and value tags (a resumed collection keeps its own).
            names: participants wanted; existing ones keep their links.
            seed: seeds the left/right order (a resumed collection keeps its own).
        """
        if out.suffix not in (".json", ".jsonl"):
            raise StoreError(f"prb collect: --out {out}: name a .json or .jsonl file "
                             "(the format personalized_custom reads)")
        digest = pairs_digest(pairs)
        if (state_folder(out) / "session.json").is_file():
            store = cls.open(out)
            if store.session.pairs_digest != digest:
                raise StoreError(f"prb collect: {pairs_file} differs from the pairs this collection started with "
                                 f"({store.session.pairs_file}); use the same file, or a new --out for new pairs")
            known = {p.name for p in store.session.participants}
            added = [Participant(name=n, token=secrets.token_urlsafe(24)) for n in names if n not in known]
            if added:
                store.session.participants.extend(added)
                store.save()
            return store
        if out.exists():  # never overwrite a file this collection did not write
            raise StoreError(f"prb collect: {out} already exists and no collection started it "
                             f"(no {state_folder(out)}); "
                             "choose another --out, or move the file away")
        session = Session(pairs_file=str(pairs_file), pairs_digest=digest,
                          pairs=[StoredPair(**asdict(p)) for p in pairs], form=form, seed=seed,
                          secret=secrets.token_hex(32),
                          participants=[Participant(name=n, token=secrets.token_urlsafe(24)) for n in names])
        store = cls(out, session)
        try:
            (store.folder / "journals").mkdir(parents=True, exist_ok=True)
            os.chmod(store.folder, 0o700)
        except OSError as exc:
            raise StoreError(f"prb collect: cannot create {store.folder}: {exc.strerror or exc}") from None
        store.save()
        return store

    def save(self) -> None:
        """Write ``session.json`` atomically, readable by the owner only (it holds the link tokens)."""
        path = self.folder / "session.json"
        tmp = path.with_name(f".session.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(self.session.model_dump_json(indent=1))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fsync_dir(self.folder)

    def lock(self) -> None:
        """Hold the collection for one server: a second ``serve`` on it stops with one line."""
        fd = os.open(self.folder / ".serve.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(f"prb collect: another `prb collect serve` is using {self.folder}; "
                             "stop it first (or use its links)") from None
        self._lock_fd = fd

    # -- reading ---------------------------------------------------------------------

    @property
    def participants(self) -> list[Participant]:
        """Everyone with a link, in the order they were added."""
        return list(self.session.participants)

    def by_token(self, token: str) -> Participant | None:
        """The participant whose link carries ``token`` (compared in constant time)."""
        found = None
        for person in self.session.participants:
            if secrets.compare_digest(person.token.encode(), token.encode()):
                found = person
        return found

    def journal_path(self, name: str) -> Path:
        """Where a participant's journal lives."""
        return self.folder / "journals" / f"{name}.jsonl"

    def state(self, name: str) -> ParticipantState:
        """A participant's answers so far, replayed from their journal."""
        return replay(self.journal_path(name))

    def left_of(self, name: str, pair_id: str) -> str:
        """Which answer (``response_A`` or ``response_B``) this participant sees on the left.

        Seeded by the collection's seed, the participant and the pair, so a reload or a
        restarted server shows the same order, and different people get different orders.
        """
        digest = hashlib.sha256(f"{self.session.seed}\0{name}\0{pair_id}".encode()).digest()
        return "response_A" if digest[0] % 2 == 0 else "response_B"
