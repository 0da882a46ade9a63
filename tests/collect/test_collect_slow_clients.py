"""``prb collect serve`` under slow clients: 105 loopback connections that trickle a
header a byte at a time (or send nothing) neither lock a participant out nor keep their
slots for long (a real server subprocess over real sockets)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("flask")
pytest.importorskip("waitress")

from prb_tasks.collect.serving import IDLE_SECONDS, REQUEST_SECONDS
from prb_tasks.data.custom.reader import read_users
from tests.collect_fixture import Participant, serve, write_pairs

SLOW = 105
CAP = 100  # --connections-per-address, the option's old default
# Hang bounds, not speed limits: before the fix a participant waited for ever and the slots were
# held for the ~2,000 s a trickled header takes; a loaded machine takes far less than these.
ANSWER_BOUND = 300
CLOSE_SLACK = 300


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (EOF or reset), without blocking."""
    sock.setblocking(False)
    try:
        return sock.recv(1024) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@pytest.mark.slow  # waits for the server's limits on slow connections (~20 s)
def test_105_slow_connections_neither_lock_a_participant_out_nor_hold_their_slots(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.json"
    # The slow connections stand for many clients but all come from 127.0.0.1, as the participant
    # does: the cap per address (which would refuse her; tested below) is lifted here.
    server = serve(pairs, out, "--participants", "ana", "--connections-per-address", "0")
    address = urlsplit(server.links["ana"])
    sockets: list[socket.socket] = []
    stop = threading.Event()

    def trickle() -> None:  # one more header byte on each trickling connection every 0.5 s
        header = b"GET /p/nobody/ HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096
        sent = 0
        while not stop.wait(0.5):
            for sock in sockets[:SLOW - 5]:
                try:
                    sock.send(header[sent:sent + 1])
                except OSError:
                    pass  # closed by the server: what the test waits for
            sent += 1

    trickler = threading.Thread(target=trickle, daemon=True)
    try:
        for _ in range(SLOW):  # 100 trickle a header, 5 send nothing at all
            sockets.append(socket.create_connection((address.hostname, address.port), timeout=120))
        trickler.start()
        time.sleep(1.0)  # every slow connection is accepted and holding its slot
        started = time.monotonic()
        ana = Participant(server.links["ana"])
        ana.profile(region="Oslo")  # before: waitress's 100 slots were all taken; this waited for ever
        ana.answer("left", reason="answered while 105 connections were trickling")
        answered_in = time.monotonic() - started
        assert answered_in < ANSWER_BOUND, answered_in
        deadline = time.monotonic() + IDLE_SECONDS + CLOSE_SLACK
        still_open = list(sockets)
        while still_open and time.monotonic() < deadline:
            time.sleep(0.5)
            still_open = [s for s in still_open if not closed_by_server(s)]
        waited = time.monotonic() - started
        assert not still_open, f"{len(still_open)} of {SLOW} slow connections still open after {waited:.0f} s"
        assert waited < max(REQUEST_SECONDS, IDLE_SECONDS) + CLOSE_SLACK
    finally:
        stop.set()
        trickler.join(timeout=120) if trickler.is_alive() else None
        for sock in sockets:
            sock.close()
        server.stop()
    assert [p.reason for p in read_users(out)[0].preferences] == ["answered while 105 connections were trickling"]


def test_with_a_cap_one_address_cannot_hold_more_than_its_share_of_the_connections(tmp_path: Path) -> None:
    # Issue 48 item 6 (now the option --connections-per-address; by default there is no cap and
    # idle connections are evicted instead): past the cap a connection from that address is
    # closed at once, and a participant from another address is answered.
    server = serve(write_pairs(tmp_path), tmp_path / "prefs.json", "--participants", "ana",
                   "--connections-per-address", str(CAP))
    address = urlsplit(server.links["ana"])
    flood: list[socket.socket] = []
    try:
        for _ in range(CAP):
            flood.append(socket.create_connection((address.hostname, address.port), timeout=10))
        time.sleep(1.0)  # every one is accepted and holding a slot
        extra = socket.create_connection((address.hostname, address.port), timeout=10)
        flood.append(extra)
        deadline = time.monotonic() + 5
        while not closed_by_server(extra) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert closed_by_server(extra), "a connection past the address's share was kept open"
        assert not any(closed_by_server(s) for s in flood[:CAP])  # its share is still served
        # Another address (the whole of 127/8 is this machine) is not counted against it.
        page = http.client.HTTPConnection(address.hostname, address.port, timeout=10,
                                          source_address=("127.0.0.2", 0))
        page.request("GET", address.path)
        assert page.getresponse().status in (200, 303)  # the page, or the redirect to the profile form
        page.close()
    finally:
        for sock in flood:
            sock.close()
        server.stop()


def test_by_default_one_address_may_hold_more_than_the_old_cap(tmp_path: Path) -> None:
    # A room behind one NAT address, or a reverse proxy: no cap per address unless asked for.
    server = serve(write_pairs(tmp_path), tmp_path / "prefs.json", "--participants", "ana")
    address = urlsplit(server.links["ana"])
    flood: list[socket.socket] = []
    try:
        for _ in range(CAP + 5):
            flood.append(socket.create_connection((address.hostname, address.port), timeout=10))
        time.sleep(1.0)
        assert not any(closed_by_server(s) for s in flood)
    finally:
        for sock in flood:
            sock.close()
        server.stop()
