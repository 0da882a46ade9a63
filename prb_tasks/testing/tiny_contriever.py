"""A tiny stand-in for ``facebook/contriever-msmarco``: a BERT encoder built from a config.

Same architecture and tokenizer kind as the real checkpoint (``BertModel``, a WordPiece
``BertTokenizerFast``, 512 positions), random weights and a word-piece vocabulary
trained on the bundled sample's texts, so ``retriever=contriever`` runs offline end to
end. Its rankings are meaningless; only the plumbing is real. Needs torch and
transformers.
"""

from __future__ import annotations

from pathlib import Path

from prb_tasks.testing.tiny_rm import sample_texts


def build_tiny_contriever(folder: str | Path, seed: int = 0, hidden: int = 32) -> Path:
    """Write a tiny BERT encoder and its tokenizer to ``folder``; returns the folder.

    Args:
        folder: where to save (created).
        seed: torch seed of the random weights.
        hidden: hidden size (the real model has 768).
    """
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    core = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    core.normalizer = normalizers.BertNormalizer(lowercase=True)
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    core.train_from_iterator(sample_texts(), trainers.WordPieceTrainer(vocab_size=800, special_tokens=specials,
                                                                         show_progress=False))
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", core.token_to_id("[CLS]")), ("[SEP]", core.token_to_id("[SEP]"))])
    tokenizer = BertTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                  sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)
    tokenizer.save_pretrained(target)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=512)
    BertModel(config).eval().save_pretrained(target)
    return target
