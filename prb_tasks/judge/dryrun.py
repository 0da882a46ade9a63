"""``dry_run=true``: what a run would send and what it would cost, sending nothing.

Every request is built exactly as a real run builds it (same messages, settings and
cache key), so "cached" means the real run would not send it either. For the rest:

* input tokens: counted offline with the provider's tokenizer where litellm has one
  (see :mod:`prb_tasks.judge.tokens`, which says when a count is an approximation);
* output tokens: the mean of the answers already stored for the same model, system
  prompt and settings (:mod:`prb_tasks.judge.output_tokens`) when there are any, else
  ``max_tokens`` per request, an upper bound;
* dollars: at the standard price and at the provider's batch price
  (:meth:`prb_tasks.judge.pricing.Pricer.batch`).

Re-asks (``reask=true``) are not included: they depend on the answers.

A note estimates the provider's prompt cache: input tokens that repeat a long enough
prefix of an earlier request (:func:`prb_tasks.judge.prompt_cache.cacheable_tokens`)
and what they would save at the cached-input rate. The table's dollars stay at the
plain input price (an upper bound: how much is cached depends on timing).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prb_tasks.common.terminal import fit_lines
from prb_tasks.judge.answer_cache import JudgeCache
from prb_tasks.judge.errors import RunStopped
from prb_tasks.judge.output_tokens import output_history
from prb_tasks.judge.price_table import model_info
from prb_tasks.judge.pricing import Price
from prb_tasks.judge.prompt_cache import AUTOMATIC_MIN_TOKENS, anthropic_min_tokens, cacheable_tokens, request_text
from prb_tasks.judge.request import (
    ChatRequest,
    answer_profile,
    cache_key,
    request_digest,
)
from prb_tasks.judge.tokens import token_counter_for

if TYPE_CHECKING:  # pragma: no cover
    from prb_tasks.judge.setup import JudgeSetup


@dataclass
class TaskEstimate:
    """One row of the dry-run table.

    Attributes:
        task: lm-eval task name (or ``total``).
        requests: requests the run would make.
        cached: of those, answered from the cache (cost nothing now).
        input_tokens: prompt tokens of the requests to send.
        output_tokens: expected completion tokens of the requests to send.
        standard: dollars at the standard price (None: no price known).
        batch: dollars at the batch price (None: no price known).
    """

    task: str
    requests: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: float = 0.0
    standard: float | None = 0.0
    batch: float | None = 0.0

    @property
    def to_send(self) -> int:
        return self.requests - self.cached

    def add(self, other: TaskEstimate) -> None:
        self.requests += other.requests
        self.cached += other.cached
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.standard = None if self.standard is None or other.standard is None else self.standard + other.standard
        self.batch = None if self.batch is None or other.batch is None else self.batch + other.batch


@dataclass
class DryRun:
    """A whole dry run: rows per task, the total, and what the numbers rest on.

    Attributes:
        model: litellm model id.
        rows: one per task, in the order tasks first appear.
        total: sums over all tasks.
        notes: how tokens were counted and estimated, which prices were used.
    """

    model: str
    rows: list[TaskEstimate]
    total: TaskEstimate
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        """The report: a markdown table and the notes under it."""
        head = "| task | requests | cached | to send | input tokens | output tokens (expected) | $ standard | $ batch |"
        lines = [f"prb-judge dry run for {self.model}: nothing was sent, no results were written.", "",
                 head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for row in [*self.rows, self.total]:
            name = f"**{row.task}**" if row is self.total else row.task
            lines.append(
                f"| {name} | {row.requests:,} | {row.cached:,} | {row.to_send:,} | {row.input_tokens:,} | "
                f"{round(row.output_tokens):,} | {_dollars(row.standard)} | {_dollars(row.batch)} |"
            )
        # The notes are sentences: wrapped by words to a terminal's 120 columns (the table is not).
        return "\n".join([*fit_lines(lines[:1]), *lines[1:], "", *fit_lines(self.notes)])


def _dollars(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.4f}" if value < 10 else f"${value:,.2f}"


def _per_million(price: Price) -> str:
    return f"${price.input_per_token * 1e6:,.2f} / ${price.output_per_token * 1e6:,.2f}"


def estimate(lm: JudgeSetup, chats: Sequence[ChatRequest], sample_indices: Sequence[int],
             task_names: Sequence[str | None]) -> DryRun:
    """Build every request and estimate its tokens and cost.

    Args:
        lm: the judge (settings, cache folder, prices).
        chats: the run's requests, in order.
        sample_indices: for each request, how many identical ones precede it.
        task_names: the lm-eval task of each request.
    """
    s = lm.settings
    model, api_base = s.model_id, s.api_base
    if "litellm" not in sys.modules:
        # Its import is most of a dry run's time (6 s on the 2-core machine at load 7, 40 s and more at
        # load 10-17) and nothing else is printed meanwhile: say what the wait is.
        print("prb-judge: dry run: loading litellm for its token counters and price list (seconds; longer on a "
              "busy machine) ...", file=sys.stderr, flush=True)
    counter = token_counter_for(model)
    cache = None
    if s.cache in ("on", "read") and (lm.cache_dir / "cache.db").is_file():
        cache = JudgeCache(lm.cache_dir, "read")
    rows: dict[str, TaskEstimate] = {}
    sending: list[tuple[TaskEstimate, str]] = []
    # For the prompt-cache estimate: each request to send as one string, and its tokens.
    prompt_texts: list[str] = []
    prompt_tokens: list[int] = []
    profile_max: dict[str, int | None] = {}
    try:
        for index, request in enumerate(chats):
            name = task_names[index] or "(unnamed task)"
            row = rows.setdefault(name, TaskEstimate(name))
            row.requests += 1
            profile = answer_profile(request, model, api_base)
            profile_max[profile] = request.max_tokens
            key = cache_key(request_digest(request, model, api_base), sample_indices[index])
            if cache is not None and cache.get(key) is not None:
                row.cached += 1
                continue
            tokens = counter.count(request.messages)
            row.input_tokens += tokens
            prompt_texts.append(request_text(request.messages))
            prompt_tokens.append(tokens)
            sending.append((row, profile))
    finally:
        if cache is not None:
            cache.close()
    history = output_history(lm.cache_dir, model, set(profile_max)) if s.cache in ("on", "read") else {}
    ceiling = _model_max_output(model)
    notes = [f"Input tokens: {counter.description}."]
    sources: set[str] = set()
    per_request: dict[str, float | None] = {}
    for profile, max_tokens in profile_max.items():
        past = history.get(profile)
        if past is not None and past.answers:
            per_request[profile] = past.mean
            sources.add(f"Output tokens: expected from {past.answers:,} stored answers of {model} with the same "
                        f"system prompt and settings (mean {past.mean:.1f} per request).")
        elif max_tokens is not None or ceiling is not None:
            limit = max_tokens if max_tokens is not None else ceiling
            per_request[profile] = float(limit) if limit is not None else None
            source = f"max_tokens={max_tokens}" if max_tokens is not None else f"the model's limit of {ceiling}"
            sources.add(f"Output tokens: an upper bound, {source} per request (no stored answers of {model} with "
                        "this system prompt and these settings yet).")
        else:
            per_request[profile] = None
            sources.add("Output tokens: unknown (no max_tokens and no stored answers).")
    notes.extend(sorted(sources))
    standard, batch = lm.pricer.listed(), lm.pricer.batch()
    for row, profile in sending:
        expected = per_request.get(profile)
        row.output_tokens += expected or 0.0
        row.standard = _cost(row.standard, standard, 0, expected)
        row.batch = _cost(row.batch, batch, 0, expected)
    for row in rows.values():
        # Input tokens are known per row; add their cost once.
        row.standard = _cost(row.standard, standard, row.input_tokens, 0.0)
        row.batch = _cost(row.batch, batch, row.input_tokens, 0.0)
    if standard is not None and batch is not None:
        notes.append(f"Prices per million input / output tokens: {_per_million(standard)} ({standard.source}); "
                     f"batch {_per_million(batch)} ({batch.source}).")
    else:
        notes.append(f"Prices: none known for {model}; set input_cost_per_mtok and output_cost_per_mtok.")
    notes.append(_prompt_cache_note(model, standard, prompt_texts, prompt_tokens))
    if s.reask:
        notes.append("Re-asks (reask=true) are not included: at most one more request per reply without a verdict.")
    total = TaskEstimate("total")
    for row in rows.values():
        total.add(row)
    return DryRun(model=model, rows=list(rows.values()), total=total, notes=notes)


def _cost(so_far: float | None, price: Price | None, input_tokens: int, output_tokens: float | None) -> float | None:
    if so_far is None or price is None or output_tokens is None:
        return None
    return so_far + input_tokens * price.input_per_token + output_tokens * price.output_per_token


def _prompt_cache_note(model: str, price: Price | None, texts: list[str], tokens: list[int]) -> str:
    """One line: input tokens a provider prompt cache could serve, and the saving."""
    anthropic = anthropic_min_tokens(model)
    minimum = anthropic if anthropic is not None else AUTOMATIC_MIN_TOKENS
    read, written = cacheable_tokens(texts, tokens, minimum)
    total = sum(tokens)
    line = (f"Provider prompt cache (estimate): {read:,} of {total:,} input tokens repeat a prefix of an earlier "
            f"request of at least {minimum:,} tokens")
    if anthropic is not None:
        line += f" (cache breakpoints are placed on them; {written:,} tokens would be written to the cache first)"
    if price is None or price.cached_input_per_token is None:
        return line + "; no cached-input price is known, so no saving is estimated."
    saving = price.cache_saving(read)
    if anthropic is not None and price.cache_write_per_token is not None:
        saving -= written * (price.cache_write_per_token - price.input_per_token)
    return (line + f"; at the cached rate that would save about {_dollars(saving)} of the standard price "
            "(an upper bound: a prefix the provider has dropped from its cache by the time it repeats is paid again).")


def _model_max_output(model: str) -> int | None:
    info = model_info(model) or {}
    value = info.get("max_output_tokens")
    return int(value) if isinstance(value, int) and value > 0 else None


def run_dry_run(lm: JudgeSetup, chats: Sequence[ChatRequest], sample_indices: Sequence[int],
                task_names: Sequence[str | None]) -> None:
    """Print the dry-run report and stop the run (raises :class:`RunStopped`)."""
    report = estimate(lm, chats, sample_indices, task_names)
    print(report.render(), flush=True)
    raise RunStopped("prb-judge: dry run finished: nothing was sent and no results were written "
                     "(run again without dry_run=true to judge)")
