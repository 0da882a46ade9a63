"""Tiny, randomly initialised sequence-classification reward models for tests and benchmarks.

They are built in a second from a config and a tokenizer trained on the bundled
sample's own texts, so the whole ``scorer=hf`` path (loading from a folder, chat
templates, padding, truncation, batching) runs offline without downloading a model.
Their rewards are meaningless; only the plumbing is real. Needs the ``rm`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from prb_tasks.common.resources import sample_dir

Arch = Literal["gpt2", "llama"]

#: A small chat template in the usual Jinja form (for the tokenizer's ``chat_template``).
TINY_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}{{ eos_token }}\n"
    "{% endfor %}"
)


def sample_texts() -> Iterator[str]:
    """Every question, response and profile post of the bundled sample."""
    for path in sorted(sample_dir().rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            yield row["question"]
            yield row["chosen"]
            yield row["rejected"]
            for post in row.get("profile", []):
                yield post["text"]


# returns a transformers tokenizer (imported lazily)
def train_tokenizer(arch: Arch, vocab_size: int = 600, texts: Iterable[str] | None = None):
    """A byte-level BPE tokenizer trained on ``texts`` (default: :func:`sample_texts`).

    GPT-2 style: one ``<|endoftext|>`` token used as BOS and EOS, no pad token.
    Llama style: ``<s>``/``</s>``/``<unk>``, BOS added to every input, no pad token.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>"] if arch == "gpt2" else ["<unk>", "<s>", "</s>"]
    core = Tokenizer(models.BPE(unk_token="<unk>" if arch == "llama" else None))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(sample_texts() if texts is None else texts, trainer)
    if arch == "gpt2":
        return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|endoftext|>",
                                       eos_token="<|endoftext|>", model_max_length=512)
    bos = core.token_to_id("<s>")
    core.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)]
    )
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", model_max_length=512)


def tiny_config(arch: Arch, tokenizer: Any, hidden: int, layers: int, max_positions: int) -> Any:
    from transformers import GPT2Config, LlamaConfig

    if arch == "gpt2":
        eos = tokenizer.eos_token_id
        return GPT2Config(vocab_size=len(tokenizer), n_embd=hidden, n_layer=layers, n_head=2,
                          n_positions=max_positions, bos_token_id=eos, eos_token_id=eos)
    return LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                       num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=max_positions,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)


def build_tiny_rm(
    folder: Path,
    arch: Arch = "gpt2",
    num_labels: int = 1,
    chat_template: str | None = None,
    hidden: int = 32,
    layers: int = 2,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """Write a tiny random ``*ForSequenceClassification`` model and its tokenizer.

    Args:
        folder: where to save (created).
        arch: ``gpt2`` (absolute positions) or ``llama`` (rotary positions).
        num_labels: outputs of the classification head.
        chat_template: Jinja chat template to store with the tokenizer (None: none).
        hidden: hidden size.
        layers: transformer blocks.
        max_positions: longest input the model accepts.
        seed: torch seed for the random weights.

    Returns:
        ``folder``, loadable with ``pretrained=<folder>``.
    """
    import torch
    from transformers import AutoModelForSequenceClassification

    tokenizer = train_tokenizer(arch)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    config = tiny_config(arch, tokenizer, hidden, layers, max_positions)
    config.num_labels = num_labels
    # Neither tokenizer has a pad token and the config names none: the scorer must cope.
    config.pad_token_id = None
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config)
    # Random init puts the head's outputs near zero; larger weights make scores of
    # different responses clearly different (ties would hide bugs).
    with torch.no_grad():
        head = model.score if hasattr(model, "score") else model.classifier
        head.weight.normal_(0.0, 1.0)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def saturate_last_class(folder: Path, margin: float = 10.0, spread: float = 0.3) -> Path:
    """Rewrite a two-class GPT-2 RM from :func:`build_tiny_rm` so its last class wins
    by about ``margin`` logits on every input.

    Its last-class softmax is then 0.998-0.99999..., different for every response in
    float32 but 1.0 for all of them once rounded to bfloat16 (the nearest bfloat16
    below 1 is 0.99609375): the tie the official protocol's bfloat16 softmax creates.

    Args:
        folder: a model written by ``build_tiny_rm(folder, "gpt2", num_labels=2, ...)``.
        margin: logit of the last class on a typical input (the first class's is 0).
        spread: how much the hidden state still moves the logit between inputs.
    """
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(folder)
    if model.config.model_type != "gpt2" or model.config.num_labels != 2:
        raise ValueError("saturate_last_class needs a two-class GPT-2 model from build_tiny_rm")
    with torch.no_grad():
        # The final layer norm's bias gives every input the same direction (dim 0); its
        # small gain keeps a little of what the input says.
        norm = model.transformer.ln_f
        norm.weight.fill_(spread)
        norm.bias.zero_()
        norm.bias[0] = 1.0
        generator = torch.Generator().manual_seed(0)
        model.score.weight.zero_()
        model.score.weight[1] = torch.randn(norm.weight.shape[0], generator=generator) * spread
        model.score.weight[1, 0] = margin
    model.save_pretrained(folder)
    return Path(folder)


def build_tiny_base_lm(folder: Path, arch: Arch = "gpt2", hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write a tiny random causal language model (no classification head) and its tokenizer.

    Loading it as a sequence classifier leaves the head (``score.weight``) out of the
    checkpoint, so transformers initialises it at random: what a user gets by pointing
    ``pretrained=`` at a base or chat model instead of a reward model.

    Args:
        folder: where to save (created).
        arch: ``gpt2`` or ``llama``.
        hidden: hidden size.
        layers: transformer blocks.
        seed: torch seed for the random weights.
    """
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = train_tokenizer(arch)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(tiny_config(arch, tokenizer, hidden, layers, 512))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    """``python -m prb_tasks.testing.tiny_rm FOLDER [--seed N] [--arch gpt2|llama] [--chat-template]``: one
    tiny random RM.

    Without torch and transformers (the ``rm`` extra) it says so in one line and exits 2,
    where ``python -c "...build_tiny_rm(...)"`` ended in a ``ModuleNotFoundError`` traceback.

    Args:
        argv: the arguments (None: the command line's).
    """
    import argparse
    import importlib.util
    import sys

    from prb_tasks.common.install_hint import pip_install

    parser = argparse.ArgumentParser(prog="python -m prb_tasks.testing.tiny_rm",
                                     description="write a tiny random reward model (its rewards mean nothing)")
    parser.add_argument("folder", type=Path, help="where to write it")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    parser.add_argument("--arch", choices=("gpt2", "llama"), default="gpt2", help="architecture (default gpt2)")
    parser.add_argument("--chat-template", action="store_true",
                        help="store a small chat template with the tokenizer (protocol=official renders it)")
    args = parser.parse_args(argv)
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"tiny_rm: needs {' and '.join(missing)}, from the 'rm' extra: {pip_install('rm')}", file=sys.stderr)
        return 2
    print(build_tiny_rm(args.folder, arch=args.arch, seed=args.seed,
                        chat_template=TINY_CHAT_TEMPLATE if args.chat_template else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
