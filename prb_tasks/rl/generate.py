"""Answers of a policy to the held-out questions, one per question, kept in a JSONL file.

Sampled as the authors' ``PPO/infer.py`` samples (temperature 1.0, top_p 0.9, 512 tokens in
the ``paper`` preset), seeded, with the same chat the policy was trained on. A file that
already holds every question's answer is reused, so a re-run after an interruption does not
sample again.
"""

from __future__ import annotations

import json
from pathlib import Path

from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.prompts import RLPrompt


def read_answers(path: Path) -> dict[str, str]:
    """pair_key -> answer, from a file :func:`write_answers` wrote (empty when absent)."""
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[str(record["pair_key"])] = str(record["answer"])
    return out


def generate_answers(policy: str, prompts: list[RLPrompt], preset: RLPreset, seed: int, path: Path) -> dict[str, str]:
    """pair_key -> the policy's answer for every prompt, written to ``path``.

    Args:
        policy: hub name or folder of the policy.
        prompts: the held-out prompts.
        preset: sampling settings (``test_*``).
        seed: torch seed before sampling.
        path: the answers file (reused when complete).
    """
    done = read_answers(path)
    if prompts and all(p.pair_key in done for p in prompts):
        return {p.pair_key: done[p.pair_key] for p in prompts}
    import torch

    from prb_tasks.rl.policy import load_policy

    model, tokenizer = load_policy(policy)
    model.eval()
    torch.manual_seed(seed)
    answers: dict[str, str] = {}
    for prompt in prompts:
        text = tokenizer.apply_chat_template(prompt.chat(), tokenize=False, add_generation_prompt=True)
        encoded = tokenizer(text, return_tensors="pt", add_special_tokens=False).to(model.device)
        with torch.no_grad():
            output = model.generate(**encoded, do_sample=True, temperature=preset.test_temperature,
                                    top_p=preset.test_top_p, max_new_tokens=preset.test_max_new_tokens,
                                    pad_token_id=tokenizer.pad_token_id)
        answers[prompt.pair_key] = tokenizer.decode(output[0, encoded["input_ids"].shape[1]:],
                                                    skip_special_tokens=True).strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps({"pair_key": k, "answer": v}, ensure_ascii=False) + "\n"
                           for k, v in answers.items()), encoding="utf-8")
    tmp.replace(path)
    return answers
