"""How fast the fake judge server itself answers, so it can be shown not to be the bottleneck.

A minimal client (aiohttp, one connection pool, nothing else) sends ``--requests`` chat
requests with ``--concurrency`` in flight to a running server and prints
``RESULT {json}`` with the elapsed time. With the server's latency L the ideal is
``requests * L / concurrency``; a backend can only be judged against the server if the
server alone comes close to that.

    python benchmarks/server_ceiling.py URL --requests 2048 --concurrency 64
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time


async def _send(url: str, requests: int, concurrency: int) -> tuple[float, int]:
    import aiohttp

    body = {"model": "fake", "temperature": 0, "max_tokens": 512, "messages": [
        {"role": "system", "content": "You judge which answer fits this user. " * 30},
        {"role": "user", "content": "Question, Response A, Response B. " * 60},
    ]}
    gate = asyncio.Semaphore(concurrency)
    ok = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(n: int) -> None:
            nonlocal ok
            async with gate:
                async with session.post(f"{url}/v1/chat/completions", json={**body, "user": str(n)}) as reply:
                    await reply.read()
                    ok += reply.status == 200

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(requests)))
        return time.perf_counter() - started, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url", help="the server's base URL (http://127.0.0.1:PORT)")
    parser.add_argument("--requests", type=int, default=2048)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    elapsed, ok = asyncio.run(_send(args.url, args.requests, args.concurrency))
    print("RESULT " + json.dumps({"elapsed": elapsed, "ok": ok, "requests": args.requests}), flush=True)


if __name__ == "__main__":
    main()
