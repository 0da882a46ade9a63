"""A participant's browser over plain sockets, for the ``prb collect serve`` connection tests
and benchmark: a few keep-alive connections from one source address, used in turn, with a
browser's rule for closed connections.

A browser resends a request once on a new connection when a connection it had already used
is found closed before any byte of the reply (the server may close an idle keep-alive
connection at any time); that is counted in :attr:`Browser.resent` and costs the person
nothing. A connection that fails before its *first* reply (refused, reset or closed as soon
as it opened) is what a person sees as an error page: counted in :attr:`Browser.resets`.
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse
from dataclasses import dataclass, field

#: The form's CSRF token on a collect page (the tests' participants read it here too).
CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


class BrowserError(RuntimeError):
    """A page that could not be loaded within the browser's number of tries."""


@dataclass
class Page:
    """The final reply of one navigation (after the server's redirects)."""

    status: int
    path: str
    text: str


@dataclass
class _Slot:
    conn: http.client.HTTPConnection | None = None
    answered: int = 0  # replies read on this connection


@dataclass
class Browser:
    """One participant's browser.

    Args:
        host: the server's address.
        port: the server's port.
        source: the local address connections come from (127.0.0.2 ... stand for other machines).
        connections: keep-alive connections held, used in turn (browsers hold up to six per server).
        timeout: seconds one connection waits for a reply (a hang bound, not a speed limit).
        tries: a page that met this many resets in a row raises :class:`BrowserError`.
        pause: seconds between tries after a reset (a person pressing reload).
    """

    host: str
    port: int
    source: str = "127.0.0.1"
    connections: int = 2
    timeout: float = 120.0
    tries: int = 1
    pause: float = 0.05
    resets: int = 0
    resent: int = 0
    opened: int = 0
    _slots: list[_Slot] = field(default_factory=list)
    _turn: int = 0

    def __post_init__(self) -> None:
        self._slots = [_Slot() for _ in range(self.connections)]

    def preconnect(self) -> None:
        """Open every connection now, as a browser opening a page does."""
        for slot in self._slots:
            if slot.conn is None:
                slot.conn, slot.answered = self._connect(), 0

    def close(self) -> None:
        """Close every connection."""
        for slot in self._slots:
            if slot.conn is not None:
                slot.conn.close()
            slot.conn = None

    def _connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout, source_address=(self.source, 0))
        self.opened += 1
        conn.connect()
        return conn

    def request(self, method: str, path: str,
                form: list[tuple[str, str]] | None = None) -> tuple[http.client.HTTPResponse, bytes]:
        """Send one request on the next connection in turn; the reply and its whole body."""
        slot = self._slots[self._turn]
        self._turn = (self._turn + 1) % len(self._slots)
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
        failures = 0
        while True:
            try:
                if slot.conn is None:
                    slot.conn, slot.answered = self._connect(), 0
                slot.conn.request(method, path, body=body, headers=headers)
                reply = slot.conn.getresponse()
                data = reply.read()
            except OSError as exc:  # refused, reset, closed before the status line (RemoteDisconnected)
                if slot.conn is not None:
                    slot.conn.close()
                reused = slot.conn is not None and slot.answered > 0
                slot.conn = None
                if reused:
                    self.resent += 1  # what a browser resends without a word
                    continue
                self.resets += 1
                failures += 1
                if failures >= self.tries:
                    raise BrowserError(f"{method} {path}: {type(exc).__name__}: {exc} ({failures} tries)") from None
                time.sleep(self.pause)
                continue
            slot.answered += 1
            if reply.will_close:
                slot.conn.close()
                slot.conn = None
            return reply, data

    def navigate(self, method: str, path: str, form: list[tuple[str, str]] | None = None) -> Page:
        """One navigation: the request, then the server's redirects, to the final page."""
        reply, data = self.request(method, path, form)
        while reply.status in (301, 302, 303, 307, 308):
            path = urllib.parse.urlsplit(reply.headers["Location"]).path
            reply, data = self.request("GET", path)
        return Page(reply.status, path, data.decode("utf-8"))

    def walk(self, link: str, answers: int, region: str = "Oslo") -> list[float]:
        """A participant's visit: open the link, send the profile, answer ``answers`` pairs.

        Returns:
            The seconds each page took (the link, the profile, each answer), redirects included.
        """
        seconds: list[float] = []

        def timed(method: str, path: str, form: list[tuple[str, str]] | None = None) -> Page:
            began = time.monotonic()
            page = self.navigate(method, path, form)
            seconds.append(time.monotonic() - began)
            if page.status != 200:
                raise BrowserError(f"{method} {path}: HTTP {page.status}")
            return page

        page = timed("GET", urllib.parse.urlsplit(link).path)
        page = timed("POST", page.path, [("csrf", _csrf(page)), ("region", region)])
        for n in range(answers):
            page = timed("POST", page.path, [("csrf", _csrf(page)), ("choice", "left"), ("reason", f"answer {n + 1}")])
        return seconds


def _csrf(page: Page) -> str:
    found = CSRF.search(page.text)
    if found is None:
        raise BrowserError(f"{page.path}: no form on the page")
    return found.group(1)
