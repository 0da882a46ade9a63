"""Load the policy and its tokenizer, refusing what RL training cannot use, in one line each."""

from __future__ import annotations

from typing import Any

from prb_tasks.common.errors import PRBError


def load_policy(path: str) -> tuple[Any, Any]:
    """(model, tokenizer) of a causal LM: hub name or local folder.

    A tokenizer without a chat template is refused: the policy is asked chat messages, as
    the authors' policy is. A tokenizer without a pad token pads with its end-of-text token.

    Args:
        path: the policy checkpoint.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise PRBError(f"prb rl: policy '{path}' has no tokenizer that loads ({str(exc).splitlines()[0]}); "
                       "give a hub name or a folder with a causal LM and its tokenizer") from None
    if not getattr(tokenizer, "chat_template", None):
        raise PRBError(f"prb rl: policy '{path}' has no chat template; use an instruction-tuned model "
                       "(e.g. Qwen/Qwen2.5-0.5B-Instruct) or add a chat_template to its tokenizer_config.json")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    try:
        model = AutoModelForCausalLM.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise PRBError(f"prb rl: policy '{path}' did not load as a causal LM ({str(exc).splitlines()[0]})") from None
    return model, tokenizer
