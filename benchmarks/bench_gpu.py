"""prb's GPU paths on one machine, end to end: ``prb-rm`` at a real reward model's size, ``prb train``.

No weights and no network are needed: models of the published shapes (Llama-3.1-8B for the
reward model, Qwen2.5-0.5B for the trained backbone) get random bfloat16 weights and a BPE
tokenizer trained on the synthetic data (its vocabulary is small, so a word is about one
token, where a real tokenizer gives about 1.3), and the data is ``fullsize_data.py``'s full-size
synthetic Personalized RewardBench (2,830 rows). Cost does not depend on the weights' values,
so times and memory are those of the real shapes for inputs of these lengths; every accuracy
printed is meaningless (random weights on word salad).

Each case is a real command (``python -m prb_tasks eval ...``, ``python -m prb_tasks train
...``) run as a subprocess with a time limit; GPU memory is read from ``nvidia-smi`` once a
second while it runs (peak of the whole device, so it includes the CUDA context).

    python benchmarks/bench_gpu.py --out /tmp/gpu                  # on a CUDA machine
    python benchmarks/bench_gpu.py --out /tmp/gpu --shapes tiny --device cpu --scale 0.02   # a dry run on CPU

Writes ``summary.json`` and ``summary.md`` to ``--out``, plus each case's log. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_personalllm_rms import ARCHITECTURES  # noqa: E402 - a sibling script, found through the path above

LLAMA3_8B = ARCHITECTURES["llama3_sfairx"]

# Published configs' shapes (no weights): what decides time and memory.
SHAPES = {
    "real": {
        # Llama-3.1-8B: the backbone bench_personalllm_rms.py measures for llama3_sfairx.
        "rm": (LLAMA3_8B[0], {**LLAMA3_8B[1], "max_position_embeddings": 131072}),
        "backbone": ("Qwen2Config", {"hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
                                     "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
                                     "max_position_embeddings": 32768, "tie_word_embeddings": True}),
    },
    "tiny": {
        "rm": ("LlamaConfig", {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                               "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 8192,
                               "max_position_embeddings": 16384}),
        "backbone": ("Qwen2Config", {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                     "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 8192,
                                     "max_position_embeddings": 16384}),
    },
}
SHAPE_NAMES = {"rm": "Llama-3.1-8B shape (Skywork-Reward-Llama-3.1-8B's backbone)", "backbone": "Qwen2.5-0.5B shape"}

def _say(text: str) -> None:
    print(f"[bench_gpu {time.strftime('%H:%M:%S')}] {text}", flush=True)


def _train_tokenizer(data: Path, vocab: int):
    """A Llama-style byte-level BPE tokenizer trained on part of the synthetic data's text."""
    import pyarrow.parquet as pq

    from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, train_tokenizer

    def texts():
        for path in sorted(data.rglob("*.parquet")):
            table = pq.read_table(path, columns=["question", "chosen", "rejected", "profile"]).slice(0, 150)
            for row in table.to_pylist():
                yield row["question"]
                yield row["chosen"]
                yield row["rejected"]
                for post in row["profile"] or []:
                    yield post["text"] if isinstance(post, dict) else str(post)

    tok = train_tokenizer("llama", vocab, texts())
    tok.model_max_length = 131072
    tok.chat_template = TINY_CHAT_TEMPLATE
    return tok


def _build(kind: str, shapes: str, tokenizer, folder: Path, device: str) -> dict:
    """A random-weight model of the named shape, saved with the tokenizer; returns its facts."""
    import torch
    import transformers

    cls_name, kwargs = SHAPES[shapes][kind]
    config = getattr(transformers, cls_name)(**kwargs, bos_token_id=tokenizer.bos_token_id,
                                             eos_token_id=tokenizer.eos_token_id, pad_token_id=None)
    started = time.perf_counter()
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device != "cpu" else torch.float32
    with torch.device(device):
        if kind == "rm":
            config.num_labels = 1
            model = transformers.AutoModelForSequenceClassification.from_config(config, dtype=dtype)
        else:
            model = transformers.AutoModel.from_config(config, dtype=dtype)
    params = sum(p.numel() for p in model.parameters())
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del model
    if device != "cpu":
        torch.cuda.empty_cache()
    return {"shape": SHAPE_NAMES[kind] if shapes == "real" else f"tiny {cls_name}", "params": params,
            "build_and_save_s": round(time.perf_counter() - started, 1)}


class _GpuMemory:
    """Peak memory.used of GPU 0 (MiB), read from nvidia-smi once a second while a command runs."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self.available = shutil.which("nvidia-smi") is not None

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=5).stdout
                self.peak = max(self.peak, int(out.split()[0]))
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                pass
            self._stop.wait(1.0)

    def __enter__(self) -> _GpuMemory:
        if self.available:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.available:
            self._thread.join()


def _run(name: str, argv: list[str], out: Path, limit: int) -> dict:
    """Run one prb command with a time limit; its output goes to ``out/<name>.log``."""
    _say(f"{name}: {' '.join(argv)}")
    log = out / f"{name}.log"
    started = time.perf_counter()
    with _GpuMemory() as memory, log.open("w") as sink:
        try:
            proc = subprocess.run([sys.executable, "-m", "prb_tasks", *argv], stdout=sink, stderr=subprocess.STDOUT,
                                  timeout=limit, cwd=out)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - started
    text = log.read_text(errors="replace")
    result: dict = {"rc": rc, "wall_s": round(wall, 1), "gpu_peak_mib": memory.peak or None}
    rate = re.findall(r"prb-rm \(.*?\): (\d+) responses .*? in ([\d.]+) s, ([\d.]+) pairs/s", text)
    if rate:
        responses, seconds, pairs = rate[-1]
        result.update(responses=int(responses), scoring_s=float(seconds), pairs_per_s=float(pairs))
    steps = re.findall(r"'train_runtime': '?([\d.]+)'?.*?'train_steps_per_second': '?([\d.]+)'?", text)
    if steps:
        result.update(train_runtime_s=float(steps[-1][0]), steps_per_s=float(steps[-1][1]))
    result["tail"] = text.strip().splitlines()[-12:]
    _say(f"{name}: rc={rc} wall {wall:.1f} s" + (f", {result.get('pairs_per_s')} pairs/s" if rate else ""))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for logs, runs and the summary")
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="real", help="real model shapes or tiny ones")
    parser.add_argument("--device", default="cuda", help="where the models are built (cuda or cpu)")
    parser.add_argument("--scale", type=float, default=1.0, help="share of the full-size data's rows to write")
    parser.add_argument("--vocab", type=int, default=32000,
                        help="the trained tokenizer's largest vocabulary (the synthetic text stops it near 2,000)")
    parser.add_argument("--profile-limit", type=int, default=20, help="rows per subset of the profile task")
    parser.add_argument("--train-steps", type=int, default=60, help="optimizer steps of each prb train case")
    parser.add_argument("--limit", type=int, default=240, help="seconds each command may take")
    parser.add_argument("--only", default="", help="comma-separated case names to run (default: all)")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("PRB_CACHE_DIR", str(out / "cache"))
    summary: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "shapes": args.shapes}
    try:
        import torch
        import transformers

        summary["torch"], summary["transformers"] = torch.__version__, transformers.__version__
        if torch.cuda.is_available():
            summary["gpu"] = torch.cuda.get_device_name(0)
    except ImportError as err:
        summary["import_error"] = str(err)

    data = out / "data"
    started = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fullsize_data.py"), str(data), "--scale",
                    str(args.scale)], check=True, stdout=subprocess.DEVNULL)
    summary["data"] = {"rows_scale": args.scale, "write_s": round(time.perf_counter() - started, 1)}
    _say(f"data written in {summary['data']['write_s']} s")
    started = time.perf_counter()
    tokenizer = _train_tokenizer(data, args.vocab)
    summary["tokenizer"] = {"vocab": len(tokenizer), "train_s": round(time.perf_counter() - started, 1)}
    _say(f"tokenizer trained in {summary['tokenizer']['train_s']} s")
    models = {kind: out / f"model-{kind}" for kind in ("rm", "backbone")}
    summary["models"] = {}
    for kind, folder in models.items():
        summary["models"][kind] = _build(kind, args.shapes, tokenizer, folder, args.device)
        _say(f"{kind}: {summary['models'][kind]}")

    meta = json.dumps({"data_dir": str(data)})
    rm = f"pretrained={models['rm']}"
    cases = {
        # The authors' protocol: batch 8 in dataset order, bf16, truncation at 8,192.
        "rm_official": ["eval", "--model", "prb-rm", "--model_args", f"{rm},protocol=official",
                        "--tasks", "personalized_rb_scalar", "--metadata", meta, "--output_path", "runs/rm_official"],
        # prb's default: length-sorted batches.
        "rm_default": ["eval", "--model", "prb-rm", "--model_args", rm,
                       "--tasks", "personalized_rb_scalar", "--metadata", meta, "--output_path", "runs/rm_default"],
        # Query + profile (the Best-of-N scoring input): long inputs, truncated at 8,192 tokens.
        "rm_profile": ["eval", "--model", "prb-rm", "--model_args", rm, "--tasks", "personalized_rb_scalar_profile",
                       "--limit", str(args.profile_limit), "--metadata", meta, "--output_path", "runs/rm_profile"],
    }
    # Personalized RewardBench has one pair per user: the latent and mixture models learn from
    # PersonalLLM's simulated users (1,000 prompts, 8 responses of about 1,500 characters).
    personalllm = out / "data-personalllm"
    from bench_personalllm import write_copy

    write_copy(personalllm, 1500)
    users = json.dumps({"n_users": 200, "unseen_share": 0.25})
    for arch, where, extra in (("context", data, []),
                               ("latent", personalllm, ["--support-max", "4", "--metadata", users]),
                               ("mixture", personalllm, ["--metadata", users])):
        cases[f"train_{arch}"] = ["train", str(where), "--architecture", arch, "--backbone", str(models["backbone"]),
                                  "--out", f"ckpt-{arch}", *(["--bf16"] if args.device != "cpu" else []),
                                  "--batch-size", "8", "--max-length", "1024",
                                  "--max-steps", str(args.train_steps), *extra]
    wanted = [c for c in args.only.split(",") if c] or list(cases)
    summary["cases"] = {}
    for name in wanted:
        summary["cases"][name] = {"argv": cases[name], **_run(name, cases[name], out, args.limit)}
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
    lines = [f"# bench_gpu ({summary.get('gpu', 'no GPU')}, torch {summary.get('torch')}, "
             f"transformers {summary.get('transformers')})", "",
             "| case | rc | wall s | scoring s | pairs/s | train steps/s | GPU peak MiB |",
             "|---|---|---|---|---|---|---|"]
    for name, case in summary["cases"].items():
        lines.append(f"| {name} | {case['rc']} | {case['wall_s']} | {case.get('scoring_s', '')} | "
                     f"{case.get('pairs_per_s', '')} | {case.get('steps_per_s', '')} | "
                     f"{case.get('gpu_peak_mib') or ''} |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
