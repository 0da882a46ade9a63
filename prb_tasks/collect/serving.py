"""How ``prb collect serve`` runs the app: waitress with limits that keep slow or idle clients
from locking participants out.

waitress by default accepts 100 connections, stops accepting while they are open, and closes
one only after 120 s without a byte, so about a hundred connections that send a header one
byte at a time (or nothing) would hold every slot. Here a request must arrive whole within
:data:`REQUEST_SECONDS` of its first byte, a connection that sends nothing is closed after
:data:`IDLE_SECONDS`, the checks run every second, and up to :data:`CONNECTION_LIMIT`
connections are open at once (``poll`` instead of ``select``, which stops at 1,024
descriptors).

When all of them are open, a new connection *evicts* the connection idle longest (no request
being read, none being answered, no byte waiting to be sent; one its client has already closed
goes first) instead of waiting for a slot: an idle keep-alive connection costs its browser
nothing to reopen, so idle connections, from any number of addresses, cannot hold a
participant out, and no cap per client address is needed (one refused the participants of a
room behind one NAT address). Only requests in progress hold a slot, each for at most
:data:`REQUEST_SECONDS` while it is read; while every slot holds one, new connections wait in
the listening socket's queue (backlog) and are accepted as slots free, rather than being
refused. An optional cap per address (``--connections-per-address``) is still there for a
server reached directly from an open network. Anything more hostile (many addresses sending
slow requests at once, floods of new connections) is a reverse proxy's or a firewall's job:
see docs/your-data.md.
"""

from __future__ import annotations

import time
from typing import Any

REQUEST_SECONDS = 10  # first byte to last byte of one request (headers and a 32 KB body at most)
IDLE_SECONDS = 15  # a connection with no request in progress and no byte sent
CONNECTION_LIMIT = 500
#: Open connections one client address may hold; 0: no cap. Eviction of idle connections
#: keeps any number of addresses from holding participants out, and a cap per address
#: refused rooms of participants behind one NAT address (issue 63), so there is none by
#: default; ``--connections-per-address`` sets one.
PER_ADDRESS_LIMIT = 0
# waitress's own connection limit counts every socket of its loop (the listening socket and
# its wake-up pipe too) and stops accepting there: a backstop above CONNECTION_LIMIT, which
# admit() and readable() below keep.
_BACKSTOP = 16


def create_bounded_server(app: Any, host: str, port: int, max_body: int, per_address: int = PER_ADDRESS_LIMIT, *,
                          slots: int = CONNECTION_LIMIT, request_seconds: float = REQUEST_SECONDS) -> Any:
    """A waitress server for ``app`` with the limits above.

    Args:
        app: the WSGI app.
        host: address to listen on.
        port: port (0: any free one).
        max_body: largest request body in bytes.
        per_address: open connections one client address may hold (0: no cap but ``slots``).
        slots: connections open at once; when all are open a new one evicts the one idle longest.
        request_seconds: seconds from a request's first byte to its last before its connection is closed.

    Returns:
        The waitress server; ``server.evicted`` counts the idle connections it has evicted.
    """
    from waitress.channel import HTTPChannel
    from waitress.server import create_server

    class BoundedChannel(HTTPChannel):
        """A channel that remembers when the request it is reading began."""

        request_began: float | None = None

        def received(self, data: bytes) -> bool:
            if data and self.request is None and self.request_began is None:
                self.request_began = time.monotonic()
            result = super().received(data)
            if self.request is None:  # every request read so far is whole
                self.request_began = None
            return result

    server = create_server(app, host=host, port=port, threads=8, max_request_body_size=max_body,
                           ident="prb-collect", connection_limit=slots + _BACKSTOP, channel_timeout=IDLE_SECONDS,
                           cleanup_interval=1, asyncore_use_poll=True)
    server.evicted = 0
    server.queueing = False

    def admit(owner: Any, conn: Any, addr: Any, adj: Any, map: Any = None) -> BoundedChannel | None:
        # waitress calls channel_class(server, conn, addr, adj, map=...) for each accepted
        # connection, in its loop's thread (the one that reads and closes channels too).
        if per_address and _held_by(owner, addr) >= per_address:
            conn.close()  # one over its address's share is closed before it takes a slot
            return None
        if len(owner.active_channels) >= slots:
            victim = idlest(owner)
            if victim is not None:
                victim.handle_close()
                owner.evicted += 1
        return BoundedChannel(owner, conn, addr, adj, map=map)

    server.channel_class = admit
    waitress_readable = server.readable

    def readable() -> bool:
        # The listening socket is polled (new connections accepted) while a slot is free or
        # an idle connection can give up its own; otherwise they wait in the backlog.
        if not waitress_readable():  # runs maintenance(); False past waitress's backstop
            return False
        channels = list(server.active_channels.values())
        free = len(channels) < slots or any(idle(channel) for channel in channels)
        if not free and not server.queueing:
            server.logger.warning("all %d connections have a request in progress: new connections wait to be "
                                  "accepted", slots)
        server.queueing = not free
        return free

    server.readable = readable
    idle_check = server.maintenance

    def maintenance(now: float) -> None:
        idle_check(now)  # waitress's own: no byte for IDLE_SECONDS and nothing being answered
        cutoff = time.monotonic() - request_seconds
        for channel in list(server.active_channels.values()):
            began = getattr(channel, "request_began", None)
            if began is not None and began < cutoff:
                channel.will_close = True  # a header (or body) sent too slowly: free the slot

    server.maintenance = maintenance
    return server


def idle(channel: Any) -> bool:
    """Whether a waitress channel may be evicted: no request being read, none being answered
    (queued or running), and no byte of a reply waiting to be sent."""
    return channel.request is None and not channel.requests and not channel.total_outbufs_len


def idlest(server: Any) -> Any:
    """The channel to evict: of the idle ones, one whose client has gone first, then the one
    with the oldest activity (waitress's ``last_activity``: its last byte read or sent); None
    when every channel has a request in progress."""
    candidates = [channel for channel in list(server.active_channels.values()) if idle(channel)]
    return min(candidates, key=lambda c: (bool(c.connected), c.last_activity), default=None)


def _host(addr: Any) -> Any:
    """The client address without its port (waitress keeps ``(host, port)`` for TCP)."""
    return addr[0] if isinstance(addr, tuple) and addr else addr


def _held_by(server: Any, addr: Any) -> int:
    """Open connections of ``server`` from the same client address as ``addr``."""
    host = _host(addr)
    return sum(1 for channel in list(server.active_channels.values()) if _host(channel.addr) == host)
