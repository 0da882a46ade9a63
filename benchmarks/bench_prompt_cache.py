"""Input tokens a provider prompt cache can serve on ``personalized_rb_profile``, before and after.

Builds the task's judge requests (both orders, default profile retrieval) on synthetic
full-size data (``fullsize_data.py``), exactly as ``prb eval`` would, and estimates per
provider how many input tokens repeat a long enough prefix of an earlier request, with
the same arithmetic as the dry run (:func:`prb_tasks.judge.prompt_cache.cacheable_tokens`;
tokens = characters / 4, requests in task order):

* OpenAI / Gemini cache a repeated prefix of 1,024+ tokens by themselves: the same before
  and after, since our templates already put the shared part (rules, posts, question)
  first; the benchmark shows how much that is;
* Anthropic caches only at a ``cache_control`` breakpoint: before this change prb placed
  none (0 tokens cacheable); now one goes after the shared part when it reaches 1,024
  tokens (2,048 for Haiku models).

Dollars use litellm's listed standard and cached-input prices (cache writes at
Anthropic's write price). These are upper bounds: a request arriving before the one that
shares its prefix was answered misses the cache (see ``--served``).

``--served`` also runs the task through ``prb eval`` against the fake judge with an
OpenAI-style cache that, like a provider's, serves a prefix only to requests arriving
after the request that wrote it was answered (``prompt_cache_after_reply``; 1,024-word
minimum, ``--latency`` seconds per answer, ``--concurrency`` requests in flight) and
reports the input tokens the run's usage summary counted as read from the cache: what
the dispatch order (:mod:`prb_tasks.judge.dispatch`) gets of the upper bound.
``--baseline DIR`` runs an older checkout's ``prb_tasks`` the same way first.

    python benchmarks/bench_prompt_cache.py                  # 0.1x the published rows
    python benchmarks/bench_prompt_cache.py --scale 1 --json /tmp/prompt-cache.json
    python benchmarks/bench_prompt_cache.py --scale 0.05 --served --baseline DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from measure import BENCH, python, run

MODELS = {"OpenAI / Gemini (automatic)": ("openai/gpt-4.1", 1024),
          "Anthropic Sonnet (breakpoints)": ("anthropic/claude-sonnet-4-5", 1024),
          "Anthropic Haiku (breakpoints)": ("anthropic/claude-haiku-4-5", 2048)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=0.1, help="rows as a multiple of the published 2,830")
    parser.add_argument("--data", type=Path, help="existing synthetic data folder (default: generate)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--served", action="store_true",
                        help="also run prb eval against the fake judge's provider-like cache")
    parser.add_argument("--latency", type=float, default=0.3, help="with --served: seconds per answer")
    parser.add_argument("--concurrency", type=int, default=32, help="with --served: requests in flight")
    parser.add_argument("--baseline", type=Path, help="with --served: a folder holding an older prb_tasks, run first")
    args = parser.parse_args(argv)

    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.documents.personalized_rb import build_docs
    from prb_tasks.judge.pricing import litellm_price
    from prb_tasks.judge.prompt_cache import CHARS_PER_TOKEN, cacheable_tokens, request_text

    data = args.data
    if data is None:
        data = Path(tempfile.mkdtemp(prefix="prb-prompt-cache-")) / "data"
        run(python(str(BENCH / "fullsize_data.py"), str(data), "--scale", str(args.scale), "--seed", "0")).check()
    texts: list[str] = []
    for subset in SUBSETS:
        for doc in build_docs(subset.config, "profile", data_dir=str(data)):
            texts.append(request_text([{"role": "system", "content": doc["system_prompt"]},
                                       {"role": "user", "content": doc["prompt"]}]))
    tokens = [len(t) // CHARS_PER_TOKEN for t in texts]
    total = sum(tokens)
    print(f"personalized_rb_profile on {data} ({len(texts):,} requests, {total:,} input tokens, 4 chars/token)")
    print(f"{'provider':32s} {'before: cacheable':>18s} {'after: cacheable':>17s} {'written':>9s} "
          f"{'$ plain':>9s} {'$ after':>9s}")
    out: dict[str, dict[str, float]] = {}
    for label, (model, minimum) in MODELS.items():
        read, written = cacheable_tokens(texts, tokens, minimum)
        if "automatic" in label:
            written = 0  # OpenAI and Gemini do not bill cache writes
        before = read if "automatic" in label else 0
        price = litellm_price(model)
        plain = total * price.input_per_token if price else float("nan")
        after = plain
        if price is not None:
            after -= price.cache_saving(read)
            if price.cache_write_per_token is not None and "automatic" not in label:
                after += written * (price.cache_write_per_token - price.input_per_token)
        out[label] = {"model": model, "min_tokens": minimum, "input_tokens": total, "before": before,
                      "after": read, "written": written, "usd_plain": plain, "usd_after": after}
        print(f"{label:32s} {before:>10,} ({before / total:4.0%}) {read:>9,} ({read / total:4.0%}) {written:>9,} "
              f"{plain:>9.3f} {after:>9.3f}")
    print("$: input tokens only, at", ", ".join(f"{v['model']}" for v in out.values()), "listed prices")
    served = _served(data, args) if args.served else None
    if args.json:
        args.json.write_text(json.dumps({"requests": len(texts), "input_tokens": total, "providers": out,
                                         "served": served}, indent=2))
    return 0


def _served(data: Path, args: argparse.Namespace) -> dict[str, dict[str, int]]:
    """Run the task against the fake judge's provider-like cache; tokens it served, per code."""
    from prb_tasks.testing.fake_server import FakeLLMServer

    codes: dict[str, Path | None] = {"now": None}
    if args.baseline:
        codes = {"before": args.baseline.resolve(), **codes}
    print(f"\nserved from the cache in a run (OpenAI-style, written once answered; {args.latency:g} s per "
          f"answer, {args.concurrency} in flight):")
    result: dict[str, dict[str, int]] = {}
    for label, code in codes.items():
        out = Path(tempfile.mkdtemp(prefix=f"prb-served-{label}-"))
        with FakeLLMServer(prompt_cache_min=1024, prompt_cache_after_reply=True, latency=args.latency,
                           record_requests=False) as server:
            env = {"OPENAI_API_KEY": "sk-bench-not-a-real-key", "PRB_CACHE_DIR": str(out / "cache")}
            if code is not None:
                env["PYTHONPATH"] = str(code)
            run(python("-m", "prb_tasks", "eval", "--model", "prb-judge", "--model_args",
                       f"model=openai/fake,api_base={server.openai_base},cache=off,"
                       f"num_concurrent={args.concurrency}",
                       "--tasks", "personalized_rb_profile", "--metadata", json.dumps({"data_dir": str(data)}),
                       "--output_path", str(out / "run")), env=env, cwd=out).check()  # cwd: not this checkout
        usage = json.loads(sorted((out / "run").rglob("usage_*.json"))[-1].read_text())
        tokens = usage["tokens"]
        result[label] = {"input": tokens["input"], "cached_input": tokens["cached_input"]}
        print(f"  {label:7s} {tokens['cached_input']:>12,} of {tokens['input']:,} input tokens "
              f"({tokens['cached_input'] / max(tokens['input'], 1):.0%})", flush=True)
    return result


if __name__ == "__main__":
    sys.exit(main())
