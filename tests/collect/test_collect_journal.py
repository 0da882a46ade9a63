"""``prb collect``'s journal under failure: a torn tail is cut (and kept) before the next
append, a short or failed write never leaves half a line, and a REAL full disk (a small
tmpfs, mounted when the tests run as root) gives the participant "not saved, try again"
and loses nothing acknowledged."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("flask")
pytest.importorskip("waitress")

from prb_tasks.collect.app import Collection, create_app
from prb_tasks.collect.form import load_form
from prb_tasks.collect.journal import append_event, heal, replay, torn_copy
from prb_tasks.collect.pairs import read_pairs
from prb_tasks.collect.store import CollectStore
from prb_tasks.data.custom.reader import read_users
from tests.collect_fixture import PAIRS, Participant, serve, write_pairs
from tests.runner import run_cli


def answer_event(pair: str, choice: str, reason: str = "") -> dict:
    return {"event": "answer", "pair": pair, "left": "response_A", "choice": choice, "reason": reason, "tags": []}


def test_a_torn_tail_is_cut_and_kept_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "ana.jsonl"
    append_event(path, {"event": "profile", "fields": {"region": "Lisbon"}})
    append_event(path, answer_event("egg", "response_A", reason="kept"))
    fragment = b'{"event": "answer", "pair": "python", "le'
    with path.open("ab") as handle:  # a crash mid-write
        handle.write(fragment)
    append_event(path, answer_event("tea", "response_B", reason="after the crash"))
    state = replay(path)  # before the fix the new line was glued to the fragment: "line 3 is damaged"
    assert not state.torn_tail
    assert {k: a.reason for k, a in state.answers.items()} == {"egg": "kept", "tea": "after the crash"}
    assert path.read_bytes().endswith(b"\n") and fragment not in path.read_bytes()
    assert torn_copy(path).read_bytes() == fragment + b"\n"
    assert stat.S_IMODE(torn_copy(path).stat().st_mode) == 0o600
    assert heal(path) == b"" and heal(tmp_path / "missing.jsonl") == b""


def test_a_short_write_then_a_failure_leaves_the_journal_as_it_was(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ana.jsonl"
    append_event(path, answer_event("egg", "response_A"))
    before = path.read_bytes()
    real_write = os.write
    calls = []

    def full_disk(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:10]))  # the disk took 10 bytes, then filled up
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        append_event(path, answer_event("tea", "response_B", reason="lost to a full disk"))
    monkeypatch.setattr(os, "write", real_write)
    assert len(calls) == 2  # the short write was continued, not taken as done
    assert path.read_bytes() == before  # cut back: no half line for the next append to land after

    def short_writes(fd: int, data: bytes) -> int:
        return real_write(fd, bytes(data[:7]))  # a disk that takes a few bytes at a time

    monkeypatch.setattr(os, "write", short_writes)
    append_event(path, answer_event("tea", "response_B", reason="written in pieces"))
    monkeypatch.setattr(os, "write", real_write)
    assert replay(path).answers["tea"].reason == "written in pieces"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted under ``tmp_path`` (a real file system that fills up)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for the full-disk test needs root (run the tests as root to include it)")
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here ({proc.stderr.strip() or proc.returncode}); "
                    "the full-disk test needs a container or machine that allows it")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte; the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_a_real_full_disk_says_not_saved_and_loses_nothing_acknowledged(tmp_path: Path, small_disk: Path) -> None:
    pairs_file = write_pairs(tmp_path)
    out = small_disk / "prefs.json"
    store = CollectStore.open_or_create(out, pairs_file, read_pairs(pairs_file), load_form(None), ["ana"], 0)
    collection = Collection(store)
    person = store.participants[0]
    client = create_app(collection).test_client()
    token, csrf = person.token, collection.form_token(person)
    reply = client.post(f"/p/{token}/profile", data={"csrf": csrf, "region": "Lisbon"})
    assert reply.status_code == 303

    filler = fill(small_disk)
    acknowledged: dict[str, str] = {}
    refused = None
    for n in range(40):  # long reasons reach the end of the journal's last page within a few answers
        position = n % len(PAIRS) + 1
        reason = f"answer {n} " + "x" * 3000
        reply = client.post(f"/p/{token}/pair/{position}", data={"csrf": csrf, "choice": "left", "reason": reason})
        if reply.status_code == 303:
            acknowledged[PAIRS[position - 1]["id"]] = reason
            continue
        refused = reply
        break
    assert refused is not None, "the disk never filled up"
    assert refused.status_code == 503, refused.status_code
    page = refused.get_data(as_text=True)
    assert "was not saved" in page and "send it again" in page
    journal = store.journal_path("ana")
    assert journal.read_bytes().endswith(b"\n")
    assert {k: a.reason for k, a in replay(journal).answers.items()} == acknowledged
    assert not list((small_disk).glob(".prefs.json.*.tmp"))  # the failed export left no partial copy

    filler.unlink()  # space again: the same answer goes through, then a restart replays everything
    reply = client.post(f"/p/{token}/pair/1", data={"csrf": csrf, "choice": "right", "reason": "after"})
    assert reply.status_code == 303
    acknowledged[PAIRS[0]["id"]] = "after"
    restarted = Collection(CollectStore.open(out))
    assert {k: a.reason for k, a in restarted.states["ana"].answers.items()} == acknowledged
    assert not restarted.healed
    assert {p.reason for p in read_users(out)[0].preferences} == set(acknowledged.values())
    proc = run_cli(["collect", "status", str(out)], cwd=tmp_path)
    assert proc.returncode == 0 and f"{len(acknowledged)}/{len(PAIRS)}" in proc.stdout, proc.stderr


def test_serve_heals_a_torn_tail_at_start_up_and_writes_the_export_owner_only(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.json"
    first = serve(pairs, out, "--participants", "ana,ben")
    ana = Participant(first.links["ana"])
    ana.profile(region="Oslo")
    ana.answer("left", reason="one")
    first.kill9()
    journal = CollectStore.open(out).journal_path("ana")
    with journal.open("ab") as handle:  # killed mid-write
        handle.write(b'{"event": "answer", "pair": "hos')

    second = serve(pairs, out, "--participants", "ana,ben")
    try:
        assert any("ana's journal ended in a line cut short" in line and "ana.torn" in line
                   for line in second.banner), second.banner
        again = Participant(second.links["ana"])
        again.get()
        again.answer("right", reason="two")
    finally:
        second.stop()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # every reason and profile answer: owner only
    proc = run_cli(["collect", "export", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [p.reason for p in read_users(out)[0].preferences] == ["one", "two"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
