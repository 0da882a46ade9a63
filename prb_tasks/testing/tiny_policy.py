"""A tiny, randomly initialised causal LM with a real tokenizer and chat template, for ``prb rl`` tests.

Built offline in about a second (GPT-2 architecture, the BPE tokenizer of
:func:`prb_tasks.testing.tiny_rm.train_tokenizer` trained on the bundled sample). Its answers
are word salad; only the training, generation and grading plumbing is real.
"""

from __future__ import annotations

from pathlib import Path

from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, tiny_config, train_tokenizer

#: Ends an assistant turn so that generation prompts stop where the answer starts.
POLICY_CHAT_TEMPLATE = TINY_CHAT_TEMPLATE + "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"


def build_tiny_policy(folder: Path, seed: int = 0, hidden: int = 32, layers: int = 2,
                      chat_template: str | None = POLICY_CHAT_TEMPLATE) -> Path:
    """Write a tiny random ``GPT2LMHeadModel`` and its tokenizer to ``folder``.

    Args:
        folder: where to save (created).
        seed: torch seed of the weights.
        hidden, layers: model size.
        chat_template: the tokenizer's chat template (None: none, to test the refusal).
    """
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = train_tokenizer("gpt2")
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    config = tiny_config("gpt2", tokenizer, hidden, layers, 1024)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
