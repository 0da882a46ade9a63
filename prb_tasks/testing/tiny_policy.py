"""A tiny, randomly initialised causal LM with a real tokenizer and chat template, for ``prb rl`` tests.

Built offline in about a second (GPT-2 architecture by default; Llama for verl, whose model merger
knows Llama-family architectures and not GPT-2, and whose vLLM rollouts need a head size vLLM's
attention kernels take), with the BPE tokenizer of :func:`prb_tasks.testing.tiny_rm.train_tokenizer`
trained on the bundled sample. Its answers are word salad; only the training, generation and
grading plumbing is real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, tiny_config, train_tokenizer

#: Ends an assistant turn so that generation prompts stop where the answer starts.
POLICY_CHAT_TEMPLATE = TINY_CHAT_TEMPLATE + "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
#: The Llama policy's attention head size: one vLLM's attention backends all take (they reject odd sizes).
LLAMA_HEAD_DIM = 64


def build_tiny_policy(folder: Path, seed: int = 0, hidden: int = 32, layers: int = 2,
                      chat_template: str | None = POLICY_CHAT_TEMPLATE,
                      arch: Literal["gpt2", "llama"] = "gpt2") -> Path:
    """Write a tiny random causal LM (``GPT2LMHeadModel`` or ``LlamaForCausalLM``) and its tokenizer to ``folder``.

    Args:
        folder: where to save (created).
        seed: torch seed of the weights.
        hidden, layers: model size (Llama: ``hidden`` is rounded up to a multiple of
            :data:`LLAMA_HEAD_DIM`, with one attention head per :data:`LLAMA_HEAD_DIM`).
        chat_template: the tokenizer's chat template (None: none, to test the refusal).
        arch: ``gpt2``, or ``llama`` (what verl's merger and vLLM take).
    """
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = train_tokenizer(arch)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    config = tiny_config(arch, tokenizer, hidden, layers, 1024)
    if arch == "llama":
        heads = max(1, -(-hidden // LLAMA_HEAD_DIM))
        config.hidden_size, config.intermediate_size = heads * LLAMA_HEAD_DIM, heads * LLAMA_HEAD_DIM * 2
        config.num_attention_heads = config.num_key_value_heads = heads
        config.head_dim = LLAMA_HEAD_DIM
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_verl_policy(folder: Path, seed: int = 0) -> Path:
    """The tiny policy ``prb rl --engine verl`` trains in benchmarks/bench_verl.py and its CPU tests: a
    Llama (verl's merger knows it) with 64-wide attention heads (vLLM's kernels take them).

    Args:
        folder: where to save (created).
        seed: torch seed of the weights.
    """
    return build_tiny_policy(folder, seed=seed, hidden=2 * LLAMA_HEAD_DIM, arch="llama")
