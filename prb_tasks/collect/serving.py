"""How ``prb collect serve`` runs the app: waitress with limits that keep slow clients
from locking participants out.

waitress by default accepts 100 connections and closes one only after 120 s without a
byte, so about a hundred connections that send a header one byte at a time (or nothing)
would hold every slot. Here a request must arrive whole within :data:`REQUEST_SECONDS`
of its first byte, a connection that sends nothing is closed after :data:`IDLE_SECONDS`,
the checks run every second, and up to :data:`CONNECTION_LIMIT` connections are open at
once (``poll`` instead of ``select``, which stops at 1,024 descriptors), no more than
:data:`PER_ADDRESS_LIMIT` of them from one client address (a connection beyond that is
closed as soon as it is accepted, so one address reopening connections as fast as they
are closed cannot take every slot). Beyond one machine, a reverse proxy in front (TLS,
limits on request rates, many addresses) is still the place for anything more hostile:
see docs/your-data.md.
"""

from __future__ import annotations

import time
from typing import Any

REQUEST_SECONDS = 10  # first byte to last byte of one request (headers and a 32 KB body at most)
IDLE_SECONDS = 15  # a connection with no request in progress and no byte sent
CONNECTION_LIMIT = 500
#: Open connections one client address may hold: a fifth of the slots (a room of people
#: behind one NAT, six browser connections each, fits); behind a reverse proxy every
#: connection comes from the proxy's address, so ``--connections-per-address`` raises it.
PER_ADDRESS_LIMIT = 100


def create_bounded_server(app: Any, host: str, port: int, max_body: int,
                          per_address: int = PER_ADDRESS_LIMIT) -> Any:
    """A waitress server for ``app`` with the limits above.

    Args:
        app: the WSGI app.
        host: address to listen on.
        port: port (0: any free one).
        max_body: largest request body in bytes.
        per_address: open connections one client address may hold (0: no cap but
            :data:`CONNECTION_LIMIT`).
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
                           ident="prb-collect", connection_limit=CONNECTION_LIMIT, channel_timeout=IDLE_SECONDS,
                           cleanup_interval=1, asyncore_use_poll=True)
    def admit(owner: Any, conn: Any, addr: Any, adj: Any, map: Any = None) -> BoundedChannel | None:
        # waitress calls channel_class(server, conn, addr, adj, map=...) for each accepted
        # connection; one over its address's share is closed before it takes a slot.
        if per_address and _held_by(owner, addr) >= per_address:
            conn.close()
            return None
        return BoundedChannel(owner, conn, addr, adj, map=map)

    server.channel_class = admit
    idle_check = server.maintenance

    def maintenance(now: float) -> None:
        idle_check(now)  # waitress's own: no byte for IDLE_SECONDS and nothing being answered
        cutoff = time.monotonic() - REQUEST_SECONDS
        for channel in list(server.active_channels.values()):
            began = getattr(channel, "request_began", None)
            if began is not None and began < cutoff:
                channel.will_close = True  # a header (or body) sent too slowly: free the slot

    server.maintenance = maintenance
    return server


def _host(addr: Any) -> Any:
    """The client address without its port (waitress keeps ``(host, port)`` for TCP)."""
    return addr[0] if isinstance(addr, tuple) and addr else addr


def _held_by(server: Any, addr: Any) -> int:
    """Open connections of ``server`` from the same client address as ``addr``."""
    host = _host(addr)
    return sum(1 for channel in list(server.active_channels.values()) if _host(channel.addr) == host)
