"""CPU per judgment of the prompt work each judge backend does in-process, on a judge task.

Both backends get each prompt from the task (``doc_to_text``: the prompt store renders it
again from its recipe). lm-eval's ``local-chat-completions`` then keeps the chat messages
as JSON (``apply_chat_template``), parses them to build its request and hashes them for
the samples file, which writes the JSON as it is. ``prb-judge`` keeps a compact context
(``chat_context``: a key, not the text, so a run holds no second copy of every prompt),
renders the prompt again to send it (``expand_messages``) and once more to write the
samples file (``expand_json``). Measured in one process, interleaved, with
``time.process_time`` (the minimum of the rounds), so other load on the machine moves the
numbers much less than whole runs.

    python benchmarks/bench_contexts.py DATA                  # DATA: benchmarks/fullsize_data.py output
    PYTHONPATH=/tmp/prb-main python benchmarks/bench_contexts.py DATA   # another checkout's code
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

SUBSETS = ("Art_and_Entertainment", "Lifestyle_and_Personal_Development", "Society_and_Culture")


def _chat(doc: dict[str, Any], text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": doc["system_prompt"]}, {"role": "user", "content": text}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path, help="a folder written by benchmarks/fullsize_data.py")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (the minimum is reported)")
    parser.add_argument("--variant", default="profile", help="the task's variant: profile (personalized_rb_profile) "
                                                              "or both (personalized_rb)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        parser.error(f"{args.data}: no such folder; write one with benchmarks/fullsize_data.py DIR")

    from lm_eval.utils import hash_string

    from prb_tasks.documents.personalized_rb import build_docs
    from prb_tasks.judge.chat_context import chat_context, compact_contexts, expand_json, expand_messages
    from prb_tasks.prompts import prompt_store

    docs = [doc for subset in SUBSETS
            for doc in prompt_store.stash(build_docs(subset, args.variant, data_dir=str(args.data)))]
    spent: dict[str, list[float]] = {"local-chat-completions": [], "prb-judge": []}
    with compact_contexts(True):
        for _ in range(args.rounds):
            started = time.process_time()
            for doc in docs:
                context = json.dumps(_chat(doc, prompt_store.doc_prompt(doc)), ensure_ascii=False)  # as lm-eval
                json.loads(context)
                hash_string(context)
            spent["local-chat-completions"].append(time.process_time() - started)
            started = time.process_time()
            for doc in docs:
                compact = chat_context(_chat(doc, prompt_store.doc_prompt(doc)))
                expand_messages(compact)
                expand_json(compact)
            spent["prb-judge"].append(time.process_time() - started)
    per = {name: 1e6 * min(values) / len(docs) for name, values in spent.items()}
    for name, values in spent.items():
        print(f"{name:24s} {per[name]:6.0f} us per judgment (rounds: "
              + ", ".join(f"{1e6 * v / len(docs):.0f}" for v in values) + ")")
    print(f"prb-judge's extra: {per['prb-judge'] - per['local-chat-completions']:.0f} us per judgment, "
          f"{(per['prb-judge'] - per['local-chat-completions']) * len(docs) / 1e6:.2f} s over {len(docs):,} judgments")
    return 0


if __name__ == "__main__":
    sys.exit(main())
