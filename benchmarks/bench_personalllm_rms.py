"""GPU time and memory of the ten PersonalLLM reward models' architectures, without their weights.

``prb personalllm score`` loads the ten reward models one after another. Where the hub
cannot be reached, this measures what each costs from its architecture alone: a model of
the same shape (layers, widths, heads, vocabulary; typed in below from the checkpoints'
published configs) with random bfloat16 weights scores batches of fixed-length inputs.
Cost does not depend on the weights' values, so time per response and peak memory are
those of the real model for inputs of that length; scores are meaningless.

    python benchmarks/bench_personalllm_rms.py                      # 256 responses of 768 tokens, batch 16
    python benchmarks/bench_personalllm_rms.py --tokens 1024 --responses 512 --only gemma_2b

Approximations: beaver_7b is PKU's LlamaModelForScore and the OpenAssistant Pythia models
use their own reward head; both are measured as the HF sequence-classification model of
the same backbone (the heads are one linear layer). Needs a CUDA GPU. Not a test.
"""

from __future__ import annotations

import argparse
import json
import time

# name -> (transformers config class, its arguments): the checkpoints' backbones.
_LLAMA_7B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
             "intermediate_size": 11008, "vocab_size": 32000}
_MISTRAL_7B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 32000}
ARCHITECTURES: dict[str, tuple[str, dict]] = {
    "beaver_7b": ("LlamaConfig", _LLAMA_7B),
    "gemma_2b": ("GemmaConfig", {"hidden_size": 2048, "num_hidden_layers": 18, "num_attention_heads": 8,
                                 "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 16384,
                                 "vocab_size": 256000}),
    "gemma_7b": ("GemmaConfig", {"hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
                                 "num_key_value_heads": 16, "head_dim": 256, "intermediate_size": 24576,
                                 "vocab_size": 256000}),
    "llama3_sfairx": ("LlamaConfig", {**_MISTRAL_7B, "vocab_size": 128256, "rope_theta": 500000.0}),
    "mistral_raft": ("MistralConfig", _MISTRAL_7B),
    "mistral_ray": ("MistralConfig", _MISTRAL_7B),
    "mistral_weqweasdas": ("MistralConfig", _MISTRAL_7B),
    "oasst_deberta_v3": ("DebertaV2Config", {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                                             "intermediate_size": 4096, "vocab_size": 128100,
                                             "max_position_embeddings": 512, "relative_attention": True,
                                             "position_buckets": 256, "pos_att_type": ["p2c", "c2p"],
                                             "position_biased_input": False, "norm_rel_ebd": "layer_norm",
                                             "share_att_key": True}),
    "oasst_pythia_1b": ("GPTNeoXConfig", {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
                                          "intermediate_size": 8192, "vocab_size": 50304, "rotary_pct": 0.25}),
    "oasst_pythia_7b": ("GPTNeoXConfig", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                          "intermediate_size": 16384, "vocab_size": 50432, "rotary_pct": 0.25}),
}


def measure(name: str, tokens: int, responses: int, batch: int) -> dict:
    """Load time, scoring time and peak GPU memory of one architecture."""
    import torch
    import transformers
    from transformers import AutoModelForSequenceClassification

    kind, args = ARCHITECTURES[name]
    # DeBERTa-v3 reads at most 512 positions: longer inputs are truncated for it anyway.
    length = min(tokens, args.get("max_position_embeddings", tokens))
    config = getattr(transformers, kind)(**args, num_labels=1, pad_token_id=0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    with torch.device("cuda"):
        model = AutoModelForSequenceClassification.from_config(config, dtype=torch.bfloat16)
    model.eval()
    torch.cuda.synchronize()
    built = time.perf_counter() - started
    weights = torch.cuda.memory_allocated() / 2**30
    ids = torch.randint(1, 1000, (batch, length), device="cuda")
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        model(input_ids=ids, attention_mask=mask)  # warm-up (kernels, allocator)
        torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(max(responses // batch, 1)):
            model(input_ids=ids, attention_mask=mask)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - started
    done = max(responses // batch, 1) * batch
    peak = torch.cuda.max_memory_allocated() / 2**30
    params = sum(p.numel() for p in model.parameters()) / 1e9
    del model
    torch.cuda.empty_cache()
    return {"reward_model": name, "params_b": round(params, 2), "tokens": length, "batch": batch,
            "weights_gib": round(weights, 1), "peak_gib": round(peak, 1), "build_s": round(built, 1),
            "s_per_1000_responses": round(elapsed / done * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=768, help="tokens per input (prompt + response)")
    parser.add_argument("--responses", type=int, default=256, help="responses scored per model")
    parser.add_argument("--batch", type=int, default=16, help="responses per forward pass (prb-rm's default)")
    parser.add_argument("--only", action="append", choices=sorted(ARCHITECTURES), help="measure only these")
    args = parser.parse_args()
    import torch

    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}))
    for name in args.only or sorted(ARCHITECTURES):
        print(json.dumps(measure(name, args.tokens, args.responses, args.batch)), flush=True)


if __name__ == "__main__":
    main()
