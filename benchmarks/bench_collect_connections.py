"""``prb collect serve`` under the two connection patterns of issue 63 item 6, measured from
the participants' side (a real server subprocess, real loopback sockets).

* ``nat``: ``--participants`` people behind one address (all from 127.0.0.1), each a browser
  holding ``--connections`` keep-alive connections, all starting at once: profile, then
  ``--answers`` answers. A connection that fails before its first reply is a reset (the person
  sees an error page and reloads after ``--pause`` s); a used keep-alive connection found closed is
  resent on a new one without a word, as browsers do.
* ``many``: a client holds one idle connection from each of ``--addresses`` loopback addresses
  (127.0.1.1, 127.0.1.2, ...) and reopens each at once when the server closes it, while
  ``--participants`` people (from 127.0.0.1) walk the same pages.

Prints one line per scenario and ``RESULT {json}``: pages, resets, resends, seconds a page
(median, 95th percentile, largest). Extra arguments after ``--`` go to ``prb collect serve``.

    python -m benchmarks.bench_collect_connections nat --participants 200 --connections 3
    python -m benchmarks.bench_collect_connections many --addresses 600 --participants 5
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from benchmarks.audit_reliability import Server, free_port, write_pairs
from prb_tasks.testing.browser import Browser, BrowserError


def walk_all(links: list[str], connections: int, answers: int, tries: int, pause: float) -> dict:
    """Every participant walks their pages at once; their counts and seconds a page."""
    start = threading.Barrier(len(links))
    seconds: list[float] = []
    failed: list[str] = []
    browsers: list[Browser] = []
    lock = threading.Lock()

    def one(link: str) -> None:
        address = urllib.parse.urlsplit(link)
        browser = Browser(address.hostname or "127.0.0.1", address.port or 80, connections=connections,
                          tries=tries, pause=pause)
        with lock:
            browsers.append(browser)
        start.wait()
        try:
            took = browser.walk(link, answers)
        except BrowserError as exc:
            with lock:
                failed.append(str(exc))
            return
        finally:
            browser.close()
        with lock:
            seconds.extend(took)

    threads = [threading.Thread(target=one, args=(link,)) for link in links]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ordered = sorted(seconds)
    return {"pages": len(seconds), "failed": len(failed), "resets": sum(b.resets for b in browsers),
            "resent": sum(b.resent for b in browsers), "opened": sum(b.opened for b in browsers),
            "median_s": round(statistics.median(ordered), 3) if ordered else None,
            "p95_s": round(ordered[int(0.95 * (len(ordered) - 1))], 3) if ordered else None,
            "max_s": round(ordered[-1], 3) if ordered else None, "wall_s": round(time.monotonic() - began, 1),
            "first_failure": failed[0] if failed else None}


class Reopener:
    """One idle connection from each of ``count`` addresses, reopened at once when closed."""

    def __init__(self, host: str, port: int, count: int) -> None:
        first = ipaddress.IPv4Address("127.0.1.1")
        self.sources = [str(first + i) for i in range(count)]
        self.target = (host, port)
        self.reopened = 0
        self.stop = threading.Event()
        self.socks: dict[int, tuple[socket.socket, str]] = {}
        for source in self.sources:
            self._open(source)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self, source: str) -> None:
        try:
            sock = socket.create_connection(self.target, timeout=30, source_address=(source, 0))
        except OSError:
            return  # the backlog is full: tried again on the next round
        self.socks[sock.fileno()] = (sock, source)

    def _run(self) -> None:
        missing: list[str] = []
        while not self.stop.is_set():
            poller = select.poll()  # not select(): it stops at 1,024 descriptors
            for fd in self.socks:
                poller.register(fd, select.POLLIN)
            ready = [fd for fd, _ in poller.poll(200)]
            for fd in ready:
                sock, source = self.socks.pop(fd)
                sock.close()
                missing.append(source)
            while missing and not self.stop.is_set():
                source = missing.pop()
                self._open(source)
                self.reopened += 1

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for sock, _ in self.socks.values():
            sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", choices=["nat", "many"])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--connections", type=int, default=3, help="keep-alive connections per browser")
    parser.add_argument("--answers", type=int, default=3)
    parser.add_argument("--addresses", type=int, default=600, help="many: addresses the idle connections come from")
    parser.add_argument("--tries", type=int, default=1000, help="reloads before a participant gives up on a page")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds before a reload after a reset")
    parser.add_argument("serve_args", nargs="*", help="extra arguments for prb collect serve (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pairs = write_pairs(root, max(args.answers, 1))
        names = [f"p{i + 1}" for i in range(args.participants)]
        server = Server(pairs, root / "prefs.json", names, free_port(), *args.serve_args)
        reopener = None
        try:
            links = [server.links[name] for name in names]
            if args.scenario == "many":
                address = urllib.parse.urlsplit(links[0])
                reopener = Reopener(address.hostname or "127.0.0.1", address.port or 80, args.addresses)
                time.sleep(2.0)  # the idle connections are accepted and hold their slots
            result = walk_all(links, args.connections, args.answers, args.tries, args.pause)
            if reopener is not None:
                result["reopened"] = reopener.reopened
        finally:
            if reopener is not None:
                reopener.close()
            server.stop()
    what = (f"{args.participants} participants behind one address, {args.connections} keep-alive connections each"
            if args.scenario == "nat" else
            f"{args.participants} participants while {args.addresses} addresses hold idle connections and reopen "
            "them at once")
    print(f"{args.scenario}: {what}: {result['pages']} pages ({result['failed']} participants gave up), "
          f"{result['resets']} resets, {result['resent']} resent on a new connection; seconds a page: median "
          f"{result['median_s']}, p95 {result['p95_s']}, max {result['max_s']}; {result['wall_s']} s in all",
          flush=True)
    print("RESULT " + json.dumps({"scenario": args.scenario, **vars(args), **result}), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
