"""Prompt tokens of a chat request, counted offline before anything is sent.

litellm 1.106.2 counts chat messages (with the per-message overhead of OpenAI's chat
format) and ships what it needs for that offline: tiktoken's ``cl100k_base``,
``o200k_base`` and ``p50k_base`` files (it points ``TIKTOKEN_CACHE_DIR`` at its own
copy) and a Claude tokenizer. What that means per provider:

* OpenAI models tiktoken knows (``gpt-4.1``, ``gpt-4o*``, ``o4-mini``, ``gpt-5*``, ...):
  the provider's own tokenizer, so counts match what OpenAI bills up to litellm's
  message-overhead formula.
* Anthropic models: litellm's bundled Claude tokenizer (Claude 3 models: ``cl100k_base``,
  litellm's own choice). Anthropic publishes no tokenizer for current models, so this is
  an approximation.
* Everything else (Gemini, Ollama, vLLM, llama.cpp, unknown served names): tiktoken
  ``cl100k_base``, an approximation. (litellm would try to download Llama or Cohere
  tokenizers from the Hugging Face hub; we never do, so a count works offline.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prb_tasks.judge.client import import_litellm
from prb_tasks.judge.request import Message

# A model name litellm counts with cl100k_base: our approximation for unknown tokenizers.
_FALLBACK_MODEL = "gpt-4"


@dataclass(frozen=True)
class TokenCounter:
    """Counts prompt tokens the way one provider would, as far as litellm knows how.

    Attributes:
        counting_model: model name handed to ``litellm.token_counter``.
        exact: True when this is the provider's own tokenizer.
        description: one line saying which tokenizer this is, for reports.
    """

    counting_model: str
    exact: bool
    description: str

    def count(self, messages: Sequence[Message]) -> int:
        """Prompt tokens of these chat messages, message overhead included."""
        litellm = import_litellm()
        return int(litellm.token_counter(model=self.counting_model,
                                         messages=[{"role": m["role"], "content": m["content"]} for m in messages]))


def token_counter_for(model_id: str) -> TokenCounter:
    """The best offline counter for a litellm model id.

    Args:
        model_id: e.g. ``openai/gpt-4.1``, ``anthropic/claude-sonnet-4-5``, ``ollama_chat/qwen3:8b``.
    """
    litellm = import_litellm()
    from litellm.litellm_core_utils.token_counter import openai_tokenizer_encoding_name

    try:
        bare, provider, _, _ = litellm.get_llm_provider(model_id)
    except Exception:  # noqa: BLE001 - unknown provider: count approximately
        bare, provider = model_id, ""
    if provider in ("openai", "azure", "text-completion-openai"):
        import tiktoken

        try:
            tiktoken.encoding_name_for_model(bare)
            known = True
        except KeyError:
            known = "gpt-4o" in bare  # litellm maps these itself
        if known:
            encoding = openai_tokenizer_encoding_name(bare)
            return TokenCounter(bare, True, f"tiktoken {encoding} (OpenAI's tokenizer for {bare}) through litellm")
    if provider == "anthropic":
        kind = litellm.utils.huggingface_tokenizer_kind(bare)
        if kind == "anthropic":
            return TokenCounter(bare, False, "litellm's bundled Claude tokenizer (an approximation: Anthropic "
                                             "publishes no tokenizer for current models)")
        return TokenCounter(bare, False, f"tiktoken cl100k_base, litellm's choice for {bare} (an approximation)")
    return TokenCounter(_FALLBACK_MODEL, False,
                        f"tiktoken cl100k_base (an approximation: litellm has no offline tokenizer for {model_id})")
