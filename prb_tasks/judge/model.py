"""``prb-judge``: the lm-eval ``LM`` for generative judges.

lm-eval gives us, per judgment, a context and generation settings. With
``--apply_chat_template`` (which ``prb eval`` adds for this model) the context is the
chat messages that :meth:`JudgeLM.apply_chat_template` serialized as JSON; without
it, the context is one plain prompt sent as a single user message.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

from lm_eval.api.model import LM

from prb_tasks.common.retry import RetryPolicy
from prb_tasks.documents.pairs import ASK_ONCE, UNLESS_REASK
from prb_tasks.judge.answer_cache import JudgeCache, default_cache_dir
from prb_tasks.judge.chat_context import ChatMessagesJson, CompactChat, chat_context, expand_messages
from prb_tasks.judge.client import ChatClient
from prb_tasks.judge.configs import resolve_settings
from prb_tasks.judge.dispatch import prefix_group, spaced_order
from prb_tasks.judge.doc_generation import document_generation, explicit_gen_kwargs
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.keys import missing_key_line, resolve_key
from prb_tasks.judge.options import JudgeSettings
from prb_tasks.judge.pricing import Pricer
from prb_tasks.judge.prompt_cache import anthropic_min_tokens
from prb_tasks.judge.reply_forms import PAIRWISE, form_name
from prb_tasks.judge.request import ChatRequest, Message
from prb_tasks.judge.runner import JudgeRunner, Outcome, close_at_exit
from prb_tasks.judge.usage import UsageTracker, remember_summary

log = logging.getLogger(__name__)

# gen_kwargs we understand; ``do_sample`` is meaningless for chat APIs (temperature says it).
_KNOWN_GEN_KWARGS = {"until", "max_gen_toks", "max_tokens", "temperature", "top_p", "seed", "do_sample"}


class JudgeLM(LM):
    """A generative judge behind litellm (or an OpenAI-compatible server).

    Args:
        **model_args: see :class:`prb_tasks.judge.options.JudgeSettings`; plus
            ``config=<name or path>`` to start from a judge config.
    """

    #: Whether replies should carry a verdict (False where the engine writes answers,
    #: e.g. ``prb collect serve --generate``: no "no verdict" warning then).
    expects_verdicts = True

    def __init__(self, **model_args: Any) -> None:
        super().__init__()
        self.settings: JudgeSettings = resolve_settings(model_args)
        # A key plainly missing is found now, before lm-eval loads data (which can take
        # minutes with retrieval), not when the first request is about to go.
        missing = missing_key_line(self.settings)
        if missing is not None:
            raise JudgeConfigError(missing)
        self.direct = self.settings.use_direct()
        self.pricer = Pricer(self.settings)
        self.cache_dir = Path(self.settings.cache_dir).expanduser() if self.settings.cache_dir else default_cache_dir()
        self._saw_chat_template = False
        self._warned: set[str] = set()
        self._client: ChatClient | None = None
        self._client_lock = threading.Lock()
        # Nothing heavy here: checking the key, looking up the price and building the
        # client (imports of litellm or aiohttp, up to ~3 s) wait until a request is
        # about to be sent (:meth:`_get_client`), so a fully cached run skips them.

    # -- the client, made when the first request is about to be sent

    def _get_client(self) -> ChatClient:
        """This judge's client, made once (its connection pool is kept between calls).

        Checks first what would make every request fail: a missing provider key, or
        ``max_cost`` without a price. The runner calls it off the event loop.
        """
        with self._client_lock:
            if self._client is not None:
                return self._client
            s = self.settings
            api_key = resolve_key(s, self.direct)
            # The one price lookup (it may import litellm): here, not on the event loop.
            if self.pricer.listed() is None and s.max_cost is not None:
                raise JudgeConfigError(
                    f"prb-judge: max_cost needs a price, and litellm lists none for {s.model_id}; "
                    "set input_cost_per_mtok and output_cost_per_mtok"
                )
            if self.direct:
                from prb_tasks.judge.direct import DirectOpenAIClient

                assert s.api_base is not None
                # Twice the concurrency: requests set aside as hung keep their connection
                # (see limiter), and the requests sent meanwhile must not queue for one.
                client: ChatClient = DirectOpenAIClient(s.model_id, s.api_base, api_key, s.timeout,
                                                        2 * s.num_concurrent)
            else:
                from prb_tasks.judge.client import LiteLLMClient

                client = LiteLLMClient(s.model_id, s.api_base, api_key, s.timeout)
            close_at_exit(client)
            self._client = client
            return client

    # -- chat template hooks (lm-eval calls these with --apply_chat_template)

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """Keep the messages as they are, for :meth:`generate_until`.

        They are kept as JSON, or in compact form while ``prb eval`` runs
        (:mod:`prb_tasks.judge.chat_context`).
        """
        self._saw_chat_template = True
        return chat_context(chat_history)

    @property
    def tokenizer_name(self) -> str:
        """Names the (absent) chat template in lm-eval's request-cache fingerprint."""
        return "prb-judge-chat-messages"

    def chat_template(self, chat_template: bool | str = False) -> str:
        """No text template: messages go to the API as structured turns."""
        return ""

    # -- lm-eval request types

    def loglikelihood(self, requests: Any, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """Refused with one line naming the tasks to run instead: a generative judge has no log-likelihoods."""
        raise JudgeConfigError(
            "prb-judge is a generative judge and cannot score log-likelihoods; run it on the judge "
            "tasks (personalized_rb, personalized_rb_sample, rewardbench2_judge, rmbench_judge, ...), or use "
            "--model prb-rm for the scalar tasks (personalized_rb_scalar*, personalized_rb_sample_scalar, "
            "rewardbench2, rmbench)"
        )

    def loglikelihood_rolling(self, requests: Any, disable_tqdm: bool = False) -> list[float]:
        """Refused, as :meth:`loglikelihood`."""
        return self.loglikelihood(requests)  # type: ignore[return-value]

    def generate_until(self, requests: Any, disable_tqdm: bool = False) -> list[str]:
        """One completion per request, in request order."""
        if not requests:
            return []
        # Requests are built lazily, inside their tasks, so the first calls go out at
        # once; repeats are numbered here from the raw arguments (same args, same request).
        reask = self.settings.reask
        explicit, said = explicit_gen_kwargs(), set[tuple[str, str]]()
        chats = _LazyRequests(self, [
            (req.args[0], document_generation(getattr(req, "doc", None), req.args[1], explicit, said,
                                              getattr(req, "task_name", None)),
             _asks_once(req, reask), form_name(getattr(req, "doc", None)))
            for req in requests])
        from prb_tasks.common.memory import trim

        trim()  # what lm-eval freed while building the requests goes back before the run's longest stage
        s = self.settings
        if not self.direct and anthropic_min_tokens(s.model_id) is not None:
            chats.mark_shared_prefixes()
        if s.dry_run:
            from prb_tasks.judge.dryrun import run_dry_run

            run_dry_run(self, chats, chats.sample_indices(), [getattr(r, "task_name", None) for r in requests])
        usage = UsageTracker(model=s.model_id, transport="direct" if self.direct else "litellm", judgments=len(chats))
        settled: dict[int, Outcome] = {}
        if s.batch:
            # Provider batches fill the cache first; the run below then finds the answers there.
            from prb_tasks.judge.batch import run_batches, run_unsettled

            settled = run_batches(self, chats, chats.sample_indices(), usage, show_progress=not disable_tqdm)
        cache = JudgeCache(self.cache_dir, s.cache)
        runner = JudgeRunner(
            settings=s,
            make_client=self._get_client,
            cache=cache,
            pricer=self.pricer,
            usage=usage,
            retry=RetryPolicy(max_retries=s.max_retries, base=s.backoff_base, cap=s.backoff_max),
            show_progress=not disable_tqdm,
        )
        results: list[str] | None = None
        try:
            # The requests sharing a prefix with an earlier one are sent a little later, when
            # the provider has cached it (dispatch order only).
            order = spaced_order([prefix_group(getattr(r, "doc", None)) for r in requests], 2 * s.num_concurrent)
            results = (run_unsettled(runner, chats, chats.sample_indices(), settled, usage) if settled
                       else runner.run(chats, chats.sample_indices(), order))
            # The no-verdict warning speaks of `Result: A`: only pairwise verdicts are counted (the
            # other forms have their own line under the table, prb_tasks/scoring/lacking.py).
            usage.count_verdicts([text for text, req in zip(results, requests)
                                  if form_name(getattr(req, "doc", None)) == PAIRWISE])
        finally:
            # Also on Ctrl-C and fatal errors: `prb eval` reports what was saved.
            usage.cache_refused = cache.refused
            cache.close()
            summary = usage.summary()
            summary["cache_dir"] = str(self.cache_dir) if s.cache != "off" else None
            summary["cache_mode"] = s.cache
            remember_summary(summary)
        print(usage.render(), flush=True)
        warning = usage.no_verdict_warning(s.reask, _samples_logged()) if self.expects_verdicts else None
        if warning:
            print(warning, file=sys.stderr, flush=True)
        return results

    # -- request building

    def to_request(self, context: Any, gen_kwargs: dict[str, Any] | None, ask_once: bool = False,
                   reply_form: str | None = PAIRWISE) -> ChatRequest:
        """Turn one lm-eval request into the chat request to send.

        Args:
            context: JSON messages from :meth:`apply_chat_template`, or a plain prompt.
            gen_kwargs: the task's generation settings; ``max_tokens``, ``temperature``,
                ``top_p``, ``seed`` and ``stop`` from model_args/config take precedence.
            ask_once: score the first reply as it comes (the document asked for the
                official protocol); see :class:`~prb_tasks.judge.request.ChatRequest`.
            reply_form: what the reply must end with (:mod:`prb_tasks.judge.reply_forms`;
                None: free text), for ``reask``.
        """
        gen = dict(gen_kwargs or {})
        for name in sorted(set(gen) - _KNOWN_GEN_KWARGS - self._warned):
            self._warned.add(name)
            log.warning("prb-judge: ignoring generation setting %r (not sent to the API)", name)
        s = self.settings
        if s.temperature == "omit":
            temperature = None
        elif s.temperature is not None:
            temperature = float(s.temperature)
        else:
            raw = gen.get("temperature")
            temperature = float(raw) if raw is not None else None
        until = gen.get("until")
        task_stop = [until] if isinstance(until, str) else list(until or [])
        stop = s.stop if s.stop is not None else task_stop
        max_tokens = s.max_tokens or gen.get("max_gen_toks") or gen.get("max_tokens")
        return ChatRequest(
            messages=self._messages(context),
            max_tokens=int(max_tokens) if max_tokens else None,
            temperature=temperature,
            top_p=s.top_p if s.top_p is not None else gen.get("top_p"),
            seed=s.seed if s.seed is not None else gen.get("seed"),
            stop=tuple(str(x) for x in stop if x),
            response_format=s.response_format,
            reasoning_effort=s.reasoning_effort,
            # Only verdicts have a position whose letters' probabilities mean something.
            top_logprobs=s.logprobs or None if reply_form == PAIRWISE else None,
            ask_once=ask_once,
            reply_form=reply_form,
        )

    def _messages(self, context: Any) -> tuple[Message, ...]:
        text = getattr(context, "prompt", context)  # lm-eval's JsonChatStr carries .prompt
        if isinstance(text, CompactChat):
            return tuple(expand_messages(text))
        if not isinstance(text, str):
            text = str(text)
        # The marker type survives in-process; the flag covers contexts that lost it
        # (e.g. lm-eval's request cache round trip).
        if isinstance(text, ChatMessagesJson) or self._saw_chat_template:
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, list) and data and all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in data
            ):
                return tuple({"role": m["role"], "content": m["content"]} for m in data)
        return ({"role": "user", "content": text},)


def _asks_once(instance: Any, reask: bool) -> bool:
    """Whether an lm-eval request's document asks for its first reply only.

    Args:
        instance: lm-eval's request; its ``doc`` may carry :data:`ASK_ONCE`.
        reask: the judge's ``reask`` setting, which overrides an ``ASK_ONCE`` of
            :data:`UNLESS_REASK` (the user chose prb's re-asks over the authors' protocol).
    """
    doc = getattr(instance, "doc", None)
    if not isinstance(doc, dict):
        return False
    wanted = doc.get(ASK_ONCE)
    return not reask if wanted == UNLESS_REASK else bool(wanted)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


class _LazyRequests(Sequence[ChatRequest]):
    """lm-eval requests turned into :class:`ChatRequest` on each access.

    Built requests are not kept (unless :meth:`mark_shared_prefixes` needs them all): each
    holds its prompt again, decoded from lm-eval's JSON, and lm-eval keeps its own copy for
    the whole run; building one again costs microseconds.
    """

    def __init__(self, lm: JudgeLM, args: list[tuple[Any, ...]]) -> None:
        self._lm = lm
        self._args = args
        self._built: list[ChatRequest | None] = [None] * len(args)

    def __len__(self) -> int:
        return len(self._args)

    @overload
    def __getitem__(self, index: int) -> ChatRequest: ...

    @overload
    def __getitem__(self, index: slice) -> list[ChatRequest]: ...

    def __getitem__(self, index: int | slice) -> ChatRequest | list[ChatRequest]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        built = self._built[index]
        return built if built is not None else self._lm.to_request(*self._args[index])

    def mark_shared_prefixes(self) -> None:
        """Build every request now and note how much of its last message another one shares.

        For providers whose prompt cache needs breakpoints (Anthropic): the whole run is
        needed to know what is shared, which costs milliseconds beside their latency.
        """
        from prb_tasks.judge.prompt_cache import shared_prefix_lengths

        built = [self[i] for i in range(len(self))]
        shared = shared_prefix_lengths([r.messages[-1]["content"] if r.messages else "" for r in built])
        self._built = [replace(r, shared_prefix=n) for r, n in zip(built, shared)]

    def sample_indices(self) -> list[int]:
        """For each request, how many identical ones come before it."""
        seen: Counter[Any] = Counter()
        out = []
        for context, gen, ask_once, _form in self._args:
            # A digest, not the text: str() of lm-eval's str subclasses is a full copy, and a
            # Counter keyed on copies held every prompt a second time for the whole run.
            text = getattr(context, "prompt", context)
            digest = hashlib.blake2b((text if isinstance(text, str) else str(text)).encode("utf-8"),
                                     digest_size=16).digest()
            key = (digest, _freeze(gen), ask_once)
            out.append(seen[key])
            seen[key] += 1
        return out


def _samples_logged() -> bool:
    """Whether the run writes its replies (``--log_samples``); True when that cannot be known."""
    from prb_tasks.common.harness_args import current

    args = current()
    return args is None or bool(args.settings.get("log_samples") or args.settings.get("predict_only"))
