"""Running totals of a judge run and the usage summary printed and saved at the end.

Money is split in two: what this run spent (new calls) and what the answers served
from the cache originally cost. A cost that could not be priced is counted as
unknown, never as zero.

The last finished run's summary is kept in this module (:func:`take_last_summary`) so
``prb eval`` can write it next to lm-eval's results file.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

_LAST: list[dict[str, Any]] = []


def take_last_summary() -> dict[str, Any] | None:
    """The summary of the most recent judge run in this process (then forgotten)."""
    return _LAST.pop() if _LAST else None


def remember_summary(summary: dict[str, Any]) -> None:
    """Keep a run's summary (keys redacted) for :func:`take_last_summary`."""
    from prb_tasks.common.redact import redact_data

    _LAST.clear()
    _LAST.append(redact_data(summary))


def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    rank = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[rank]


@dataclass
class Money:
    """A sum of costs some of which may be unknown."""

    known: float = 0.0
    unknown: int = 0

    def add(self, cost: float | None) -> None:
        if cost is None:
            self.unknown += 1
        else:
            self.known += cost

    def as_dict(self) -> dict[str, Any]:
        return {"usd": round(self.known, 6), "unpriced_calls": self.unknown}

    def label(self) -> str:
        if self.unknown and not self.known:
            return "unknown"
        text = f"${self.known:.4f}"
        return text + (f" (+{self.unknown} unpriced)" if self.unknown else "")


@dataclass
class UsageTracker:
    """Counts everything a judge run did.

    Args:
        model: litellm model id.
        transport: ``litellm`` or ``direct``.
        judgments: requests lm-eval asked for.
    """

    model: str
    transport: str
    judgments: int = 0
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    done: int = 0
    cache_hits: int = 0
    cache_refused: int = 0
    calls: int = 0
    calls_ok: int = 0
    retries: int = 0
    reasks: int = 0
    empty: int = 0
    refused: int = 0
    errors: int = 0
    skipped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    tokens_unreported: int = 0
    # Prompt-cache reads and writes the providers reported (parts of input_tokens).
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_saving: float = 0.0
    spent: Money = field(default_factory=Money)
    cached_value: Money = field(default_factory=Money)
    latencies: list[float] = field(default_factory=list)
    attempt_errors: Counter[str] = field(default_factory=Counter)
    final_errors: Counter[str] = field(default_factory=Counter)
    budget_stop: str | None = None
    lowest_concurrency: int | None = None
    final_concurrency: int | None = None
    set_aside: int = 0
    stored: int = 0
    unstored: int = 0
    shared: int = 0
    empty_retries: int = 0
    # Empty replies of first-reply requests (``ask_once``): kept and scored as the task's
    # authors' code scores them (unrated, 0, "A"...), not asked again.
    empty_scored: int = 0
    stopped: str | None = None
    stopped_kind: str | None = None
    answered: int = 0
    unparsed: int = 0
    # Replies whose budget went to hidden reasoning (prb_tasks.judge.reasoning_budget).
    reasoning_retries: int = 0
    reasoning_budget: dict[str, Any] | None = None
    # What provider batches did in this run (batch=true), see prb_tasks.judge.batch.
    batch: dict[str, Any] | None = None

    # -- recording

    def hit(self, cost: float | None, shared: bool = False) -> None:
        """An answer served from the cache (costs nothing now).

        Args:
            cost: what it cost when it was made.
            shared: another process sharing the cache answered it while this run waited.
        """
        self.cache_hits += 1
        self.shared += int(shared)
        self.cached_value.add(cost)

    def call(
        self,
        cost: float | None,
        latency: float,
        input_tokens: int | None,
        output_tokens: int | None,
        reasoning_tokens: int | None,
        cached_tokens: int | None = None,
        written_tokens: int | None = None,
        saving: float = 0.0,
    ) -> None:
        """A successful HTTP call.

        Args:
            cost: its dollars (None: unknown).
            latency: seconds it took.
            input_tokens, output_tokens, reasoning_tokens: as the provider reported them.
            cached_tokens: prompt tokens read from the provider's prompt cache.
            written_tokens: prompt tokens written to the provider's prompt cache.
            saving: dollars the cache reads saved against the plain input price.
        """
        self.calls += 1
        self.calls_ok += 1
        self.spent.add(cost)
        self.latencies.append(latency)
        if input_tokens is None or output_tokens is None:
            self.tokens_unreported += 1
        self.input_tokens += input_tokens or 0
        self.output_tokens += output_tokens or 0
        self.reasoning_tokens += reasoning_tokens or 0
        self.cached_input_tokens += cached_tokens or 0
        self.cache_write_tokens += written_tokens or 0
        self.cache_saving += saving

    def failed_attempt(self, kind: str) -> None:
        """An HTTP call that failed (it may be retried)."""
        self.calls += 1
        self.attempt_errors[kind] += 1

    def finish_judgment(self, outcome: str, error_kind: str | None = None) -> None:
        """A judgment is complete: ``ok``, ``error`` or ``skipped``."""
        self.done += 1
        if outcome == "error":
            self.errors += 1
            self.final_errors[error_kind or "other"] += 1
        elif outcome == "skipped":
            self.skipped += 1

    def count_verdicts(self, completions: list[str]) -> None:
        """Count the replies that carry a readable verdict (for the no-verdict warning)."""
        from prb_tasks.judge.reasoning_budget import count
        from prb_tasks.replies.verdict import parse_verdict

        self.reasoning_budget = count(completions)
        outcomes = [parse_verdict(c).outcome for c in completions]
        self.answered = sum(o in ("verdict", "unparsed") for o in outcomes)
        self.unparsed = outcomes.count("unparsed")

    # -- reporting

    def postfix(self, concurrency: int) -> str:
        """Short live status for the progress bar."""
        timeouts = self.attempt_errors.get("timeout", 0)
        return (
            f"hits={self.cache_hits} sent={self.calls} err={self.errors} "
            + (f"timeouts={timeouts} " if timeouts else "")
            + f"cost={self.spent.label()} conc={concurrency}"
        )

    def no_verdict_warning(self, reask: bool, samples_logged: bool = True) -> str | None:
        """One line when every reply lacked a readable verdict (None otherwise).

        Args:
            reask: the judge re-asked for the verdict.
            samples_logged: the run writes its replies (``--log_samples``); else the line says to add it.
        """
        if not self.answered or self.unparsed < self.answered:
            return None
        look = ("check the replies in the --log_samples output" if samples_logged else
                "re-run with --output_path DIR --log_samples to see the replies")
        advice = (
            f"even after re-asking; {look} and try a template"
            if reask else
            f"{look}, then try reask=1 (asks once more for the verdict only) or a template"
        )
        return (
            f"prb-judge: warning: none of the {self.answered} replies had a verdict the parser could read "
            f"(parse_fail = 1.0); {advice} that asks for `Result: A` or `Result: B` "
            "(--metadata system_template=FILE or user_template=FILE)"
        )

    def summary(self) -> dict[str, Any]:
        """Everything, as JSON-ready data."""
        lat = sorted(self.latencies)
        wall = (self.finished or time.monotonic()) - self.started
        return {
            "model": self.model,
            "transport": self.transport,
            "judgments": self.judgments,
            "completed": self.done - self.errors - self.skipped,
            "errors": self.errors,
            "skipped": self.skipped,
            "cache_hits": self.cache_hits,
            "cache_entries_refused": self.cache_refused,
            "requests_sent": self.calls,
            "requests_ok": self.calls_ok,
            "retries": self.retries,
            "reasks": self.reasks,
            "answers_stored": self.stored,
            "answers_not_stored": self.unstored,
            "answers_shared": self.shared,
            "empty_completions": self.empty,
            "empty_retries": self.empty_retries,
            "empty_scored": self.empty_scored,
            "unparsed_replies": self.unparsed,
            "refused_completions": self.refused,
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "reasoning": self.reasoning_tokens,
                "calls_without_usage": self.tokens_unreported,
                "cached_input": self.cached_input_tokens,
                "cache_write": self.cache_write_tokens,
            },
            "prompt_cache_saving_usd": round(self.cache_saving, 6),
            "cost": self.spent.as_dict(),
            "cost_of_cache_hits_when_made": self.cached_value.as_dict(),
            "latency_s": {
                "p50": _round(_percentile(lat, 0.50)),
                "p90": _round(_percentile(lat, 0.90)),
                "p99": _round(_percentile(lat, 0.99)),
                "max": _round(lat[-1] if lat else None),
            },
            "errors_by_kind": dict(sorted(self.final_errors.items())),
            "failed_attempts_by_kind": dict(sorted(self.attempt_errors.items())),
            "lowest_concurrency": self.lowest_concurrency,
            "final_concurrency": self.final_concurrency,
            "requests_set_aside_as_hung": self.set_aside,
            "budget_stop": self.budget_stop,
            "stopped": self.stopped,
            "stopped_kind": self.stopped_kind,
            "wall_s": round(wall, 3),
            "batch": self.batch,
            "reasoning_budget": self.reasoning_budget,
            "reasoning_retries_sent": self.reasoning_retries,
        }

    def _empty_lines(self) -> list[str]:
        """What became of empty replies: asked again (prb's protocols) or scored as they came
        (a task run by its authors' protocol, ``ask_once``), and refusals."""
        lines = []
        if self.empty_retries or self.empty > self.empty_scored or self.refused:
            lines.append(
                f"  {self.empty_retries} empty replies were asked again once; {self.empty - self.empty_scored} "
                f"stayed empty (counted as unparsed); {self.refused} refusals; empty and refused replies are not "
                "cached")
        if self.empty_scored:
            lines.append(
                f"  {self.empty_scored} empty replies were scored as they came, as the task's authors' code scores "
                "them (not asked again)")
        return lines

    def render(self) -> str:
        """The summary as a few plain lines."""
        s = self.summary()
        lat = s["latency_s"]
        tok = s["tokens"]
        lines = [
            f"prb-judge usage ({self.model}, {self.transport}):",
            (
                f"  judgments {s['judgments']}: {s['completed']} answered, {s['errors']} errors, "
                f"{s['skipped']} skipped; {s['cache_hits']} from cache"
            ),
            (
                f"  requests sent {s['requests_sent']} ({s['requests_ok']} ok, {s['retries']} retries, "
                f"{s['reasks']} re-asks) in {s['wall_s']:.1f}s"
            ),
            f"  tokens in {tok['input']:,} / out {tok['output']:,} / reasoning {tok['reasoning']:,}"
            + (f" ({tok['calls_without_usage']} calls reported none)" if tok["calls_without_usage"] else ""),
            _prompt_cache_line(tok, s["prompt_cache_saving_usd"]),
            f"  cost {self.spent.label()}"
            + (f"; cache hits originally cost {self.cached_value.label()}" if s["cache_hits"] else ""),
        ]
        lines = [line for line in lines if line]
        if lat["p50"] is not None:
            lines.append(f"  latency p50 {lat['p50']:.2f}s  p90 {lat['p90']:.2f}s  p99 {lat['p99']:.2f}s")
        if s["errors_by_kind"] or s["failed_attempts_by_kind"]:
            final = ", ".join(f"{k} {v}" for k, v in s["errors_by_kind"].items()) or "none"
            tried = ", ".join(f"{k} {v}" for k, v in s["failed_attempts_by_kind"].items()) or "none"
            lines.append(f"  errors: final {final}; failed attempts {tried}")
        if self.shared:
            lines.append(f"  {self.shared} answers came from another process sharing the cache "
                         "(waited, not sent twice)")
        if self.empty or self.refused or self.empty_retries:
            lines.extend(self._empty_lines())
        if self.cache_refused:
            lines.append(f"  {self.cache_refused} cache entries were not JSON answers and were ignored")
        if self.budget_stop:
            lines.append(f"  {self.budget_stop}")
        if self.stopped:
            lines.append(f"  stopped early: {self.stopped}")
        if self.batch:
            b = self.batch
            lines.append(
                f"  batches: {len(b['batches_submitted'])} submitted ({b['requests_submitted']} requests), "
                f"{b['answers_collected']} answers collected, {b['failed']} failed; "
                f"cost {b['cost_label']} at batch prices (the answers above count as cache hits)"
            )
        from prb_tasks.common.redact import redact

        return redact("\n".join(lines))


def _prompt_cache_line(tokens: dict[str, Any], saving: float) -> str:
    """How much of the input the provider's prompt cache served (and what that saved)."""
    cached, written, total = tokens["cached_input"], tokens["cache_write"], tokens["input"]
    if not cached and not written:
        return ""
    share = f" ({cached / total:.0%} of input)" if total else ""
    line = f"  provider prompt cache: {cached:,} input tokens read{share}"
    if written:
        line += f", {written:,} written"
    return line + (f"; saved ${saving:.4f} against the plain input price" if saving else "")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def stopped_line(summary: dict[str, Any]) -> str | None:
    """The last line of a run that stopped sending early (None if it did not)."""
    if not summary.get("stopped"):
        return None
    answered = summary["judgments"] - summary["errors"] - summary["skipped"]
    kind = summary.get("stopped_kind") or ""
    when = {"unreachable": "once the server answers again", "unresponsive": "once the server answers again",
            "quota": "once the quota has reset",
            "disk_full": "once there is space (or with cache_dir= on another disk)"}.get(kind, "")
    lost = summary.get("answers_not_stored") or 0
    cached = (f"answered ({lost} of them could not be cached: they are in this run's results only)" if lost
              else "answered and cached")
    return (
        f"prb eval: the judge stopped early ({summary['stopped']}); {answered} of {summary['judgments']} "
        f"judgments are {cached}, the rest are skipped (skip_rate). Re-run the same command "
        f"{when + ' ' if when else ''}to resume: cached answers are not sent again."
    )


def failed_line(summary: dict[str, Any]) -> str | None:
    """The last line of a finished run in which judgments failed for good (None if none did).

    Failed judgments count as wrong (``error_rate``) and are never cached, so the same
    command sends only them again; a run that stopped early says so in :func:`stopped_line`.

    Args:
        summary: the judge run's summary.
    """
    errors = summary.get("errors") or 0
    if not errors or summary.get("stopped"):
        return None
    kinds = ", ".join(f"{k} {v}" for k, v in (summary.get("errors_by_kind") or {}).items())
    again = ("re-running sends every request again (cache=" + str(summary.get("cache_mode")) + ")"
             if summary.get("cache_mode") in ("off", "read")
             else "re-run the same command to retry only them: answered judgments are cached and not sent again")
    # A malformed reply is not retried (by design: the same request gets the same reply), nor is
    # anything with max_retries=0: "after every retry" would claim retries that never happened.
    failed = "failed after every retry" if summary.get("retries") else "failed (not retried)"
    return (f"prb eval: {errors} of {summary['judgments']} judgments {failed}"
            f"{f' ({kinds})' if kinds else ''} and count as wrong (error_rate); {again}")


def interrupted_line(summary: dict[str, Any] | None) -> str:
    """The one line ``prb eval`` prints on Ctrl-C.

    Args:
        summary: the interrupted judge run's summary (None: no judge run had started).
    """
    if summary is None:
        return "prb eval: interrupted before any judgment was sent; re-run the same command to start again."
    mode = summary.get("cache_mode")
    if mode in ("off", "read"):
        return (f"prb eval: interrupted; cache={mode} keeps no new answers, so re-running sends the "
                f"{summary['requests_ok']} answered requests again.")
    where = f" in {summary['cache_dir']}" if summary.get("cache_dir") else ""
    return (
        f"prb eval: interrupted; {summary['answers_stored']} new answers were saved{where} "
        f"({summary['cache_hits']} more were already cached, {summary['judgments']} judgments in all). "
        "Re-run the same command to resume: saved answers are not sent again."
    )
