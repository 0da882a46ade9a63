"""Throughput of prb-judge against lm-eval's built-in API backends.

A fake OpenAI-compatible server (``prb_tasks.testing.fake_server``, own process) answers
every request after a fixed latency. Each backend judges the same requests -- the
``personalized_rb_sample`` prompts (both orders, 72 distinct) cycled -- at the same
concurrency, and we time its ``generate_until``. With latency L, concurrency C and N
requests the ideal time is ``N * L / C``; efficiency is ideal time / measured time.

Backends (each trial of each backend runs in a fresh process that builds the model and
its requests, then times one ``generate_until`` call -- as lm-eval makes it -- so opening
connections is counted; ``--warm`` first sends C untimed requests through the same model
object, which helps prb-judge, which keeps its connection pool between calls, and not
lm-eval's API backends, which open a new pool per call):

* ``prb-judge`` -- default transport (``auto``: direct OpenAI protocol for an
  ``openai/`` model with ``api_base``), cache off so every request is really sent;
* ``prb-judge[litellm]`` -- the same through ``litellm.acompletion`` (``transport=litellm``);
* ``local-chat-completions`` -- lm-eval's aiohttp chat backend;
* ``litellm`` -- lm-eval's litellm backend (pointed at the server via ``OPENAI_BASE_URL``).

Run::

    python benchmarks/bench_judge.py                        # 640 requests, C=64, 0.2 s, 3 trials
    python benchmarks/bench_judge.py --requests 640 --concurrency 64 --latency 0.2 --trials 5
    python benchmarks/bench_judge.py --warm                 # untimed warm-up call first
    python benchmarks/bench_judge.py --fault 429=0.05 --retry-after 0.05   # a provider that rate-limits
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from measure import Server, server_reset, server_stats

BACKENDS = ("prb-judge", "prb-judge[litellm]", "local-chat-completions", "litellm")


# --------------------------------------------------------------------------- worker side


def _messages(count: int) -> list[list[dict[str, str]]]:
    from prb_tasks.documents.personalized_rb import build_docs

    docs = []
    for subset in ("Art_and_Entertainment", "Lifestyle_and_Personal_Development", "Society_and_Culture"):
        docs.extend(build_docs(subset, "both", source="sample"))
    out: list[list[dict[str, str]]] = []
    for copy in range(-(-count // len(docs))):
        for doc in docs:
            # Distinct text per copy, so no backend could serve a repeat from memory.
            out.append([
                {"role": "system", "content": doc["system_prompt"]},
                {"role": "user", "content": f"{doc['prompt']}\n\n(copy {copy})"},
            ])
    return out[:count]


def _build_lm(backend: str, base: str, concurrency: int) -> Any:
    import lm_eval.models  # noqa: F401 - load built-ins before registering ours
    from lm_eval.api.registry import get_model

    from prb_tasks.plugin import register_models

    register_models()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    if backend.startswith("prb-judge"):
        transport = "litellm" if backend.endswith("[litellm]") else "auto"
        return get_model("prb-judge")(
            model="openai/fake", api_base=f"{base}/v1", cache="off", num_concurrent=concurrency,
            transport=transport, input_cost_per_mtok=0.15, output_cost_per_mtok=0.6,
        )
    if backend == "local-chat-completions":
        return get_model("local-chat-completions")(
            model="fake", base_url=f"{base}/v1/chat/completions", num_concurrent=concurrency,
            tokenized_requests=False, max_retries=3,
        )
    if backend == "litellm":
        os.environ["OPENAI_BASE_URL"] = f"{base}/v1"
        return get_model("litellm")(
            model="openai/fake", num_concurrent=concurrency, tokenized_requests=False, max_retries=3,
        )
    raise SystemExit(f"unknown backend {backend}")


def _instances(lm: Any, chats: list[list[dict[str, str]]]) -> list[Any]:
    from lm_eval.api.instance import Instance

    gen = {"until": [], "max_gen_toks": 512, "temperature": 0.0, "do_sample": False}
    return [
        Instance("generate_until", {}, (lm.apply_chat_template(chat), dict(gen)), i)
        for i, chat in enumerate(chats)
    ]


def worker(backend: str, base: str, concurrency: int, count: int, warm: bool) -> None:
    """Time one backend once; print one JSON line."""
    import logging

    logging.disable(logging.WARNING)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    chats = _messages(count)
    lm = _build_lm(backend, base, concurrency)
    if warm:
        lm.generate_until(_instances(lm, [[{"role": "user", "content": f"warm-up {i}"}] for i in range(concurrency)]))
    requests = _instances(lm, chats)
    server_reset(base)
    started = time.perf_counter()
    out = lm.generate_until(requests)  # each backend with its default progress bar
    elapsed = time.perf_counter() - started
    stats = server_stats(base)
    answered = sum(isinstance(o, str) and "Result:" in o for o in out)
    print("RESULT " + json.dumps({
        "backend": backend, "requests": len(requests), "answered": answered,
        "server_requests": stats["total_requests"], "elapsed": elapsed,
    }), flush=True)


# --------------------------------------------------------------------------- driver side


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=640,
                        help="requests per run, cycling through the 72 sample prompts (default 640: a multiple "
                             "of the concurrency, so the ideal time is reachable)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency per request, seconds")
    parser.add_argument("--trials", type=int, default=3, help="timed runs per backend (median reported)")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated subset of " + ", ".join(BACKENDS))
    parser.add_argument("--warm", action="store_true", help="send one untimed warm-up call first")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND=P",
                        help="inject server faults, e.g. 429=0.05 (see the fake server's --fault)")
    parser.add_argument("--retry-after", type=float, default=0.05, help="Retry-After of injected 429s, seconds")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--worker", nargs=2, metavar=("BACKEND", "BASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args.concurrency, args.requests, args.warm)
        return 0

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    server = Server(args.latency, args.fault, args.retry_after)
    base = server.url
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
    try:
        for trial in range(args.trials):
            for backend in backends:  # interleaved, so drift hits every backend alike
                cmd = [sys.executable, __file__, "--worker", backend, base, "--requests", str(args.requests),
                       "--concurrency", str(args.concurrency), *(["--warm"] if args.warm else [])]
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
                line = next((out for out in done.stdout.splitlines() if out.startswith("RESULT ")), None)
                if line is None:
                    print(done.stdout[-2000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
                    raise SystemExit(f"{backend} failed (exit {done.returncode})")
                result = json.loads(line[len("RESULT "):])
                runs[backend].append(result)
                print(f"trial {trial + 1} {backend:24s} {result['elapsed']:.3f}s "
                      f"({result['answered']}/{result['requests']} answered, {result['server_requests']} sent)",
                      flush=True)
    finally:
        server.close()

    n = next(iter(runs.values()))[0]["requests"]
    ideal = n * args.latency / args.concurrency
    setup = ("warm" if args.warm else "cold") + (f", faults {' '.join(args.fault)}" if args.fault else "")
    print(f"\n{n} requests, concurrency {args.concurrency}, server latency {args.latency}s ({setup}), "
          f"ideal {ideal:.3f}s, {args.trials} trials (median)")
    print(f"{'backend':26s} {'median s':>9s} {'req/s':>8s} {'efficiency':>10s}")
    table = {}
    for backend, results in runs.items():
        median = statistics.median(r["elapsed"] for r in results)
        table[backend] = {"median_s": median, "req_per_s": n / median, "efficiency": ideal / median,
                          "trials_s": [r["elapsed"] for r in results]}
        print(f"{backend:26s} {median:9.3f} {n / median:8.1f} {ideal / median:9.1%}")
    if args.json:
        args.json.write_text(json.dumps({"requests": n, "concurrency": args.concurrency, "latency": args.latency,
                                         "warm": args.warm, "faults": args.fault, "ideal_s": ideal,
                                         "backends": table}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
