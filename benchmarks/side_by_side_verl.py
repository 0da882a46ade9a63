"""Run the authors' own ``PPO/prepare_data.py`` and ``PPO/reward_function.py`` next to prb's verl inputs.

Their files are read from a local snapshot of Martin-qyma/Personalized-RewardBench at commit
a5c6814 (a bare git directory, e.g. what ``git clone --bare`` writes), copied to a temporary
folder, never into this repository. On one small input of our own (a ranked LaMP-QA split in
their ``rank_dataset.py`` layout, with awkward rows: more than 10 posts, none, a question holding
``{profile}``, non-ASCII categories):

- their ``prepare_data.py`` is run as a script and its parquet compared with prb's, row by row and
  as Arrow tables; prb's prompts come from ``prb templates official --source`` on the snapshot;
- their ``compute_score`` (``SERVER_URL`` pointed at a local server with their ``/score`` shape;
  a stand-in ``wandb`` module, as nobody is logged in) and prb's reward module, loaded and called
  as verl does, are compared over a set of server replies, failures included.

    python benchmarks/side_by_side_verl.py --snapshot /path/to/Personalized-RewardBench.git

Not a test: it needs the snapshot, which CI does not have (tests/rl/test_verl.py holds
transcriptions of the same scripts instead).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COMMIT = "a5c6814"
FILES = ("PPO/prepare_data.py", "PPO/reward_function.py", "prompts/sample.txt", "BoN/sample.py",
         "prompts/evaluation.txt", "BoN/evaluate.py", "prompts/pairwise_system.txt", "prompts/pairwise_user.txt")
SUBSET = "Art_and_Entertainment"


def extract(snapshot: Path, target: Path) -> None:
    """Their files at the pinned commit, written under ``target``."""
    for name in FILES:
        data = subprocess.run(["git", "--git-dir", str(snapshot), "show", f"{COMMIT}:{name}"], check=True,
                              capture_output=True).stdout
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)


def small_input() -> list[dict]:
    """Ranked rows in their rank_dataset.py layout (posts already in rank order)."""
    def post(i: int, text: str, category: str = "Photography") -> dict:
        return {"id": f"p{i}", "category": category, "text": text}

    return [
        {"id": "a1", "question": "Which lens for street photos at night?",
         "profile": [post(i, f"My post {i}:\nI shoot film, mostly {i * 5}mm.") for i in range(13)]},
        {"id": "a2", "question": "Is {profile} a placeholder or {question}?", "profile": [post(1, "x", "Café ✓")]},
        {"id": "a3", "question": "A user with no posts", "profile": []},
        {"id": "a4", "question": "  leading and trailing  ",
         "profile": [post(i, f"  t{i}\n\n", "A\nB") for i in range(4)]},
    ] + [{"id": f"b{n}", "question": f"Question number {n} about art?",
          "profile": [post(i, f"Art post {n}-{i} " * (i + 1)) for i in range(n % 12)]} for n in range(20)]


def compare_rows(work: Path) -> tuple[int, int, bool]:
    """(equal rows, rows, Arrow tables equal) of their prepare_data.py against prb's rows."""
    import pyarrow.parquet as pq

    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.prompts.official_templates import read_source, write_templates
    from prb_tasks.prompts.retrieval import SelectedPost
    from prb_tasks.rl.lamp_qa import lamp_prompt, read_split
    from prb_tasks.rl.verl_engine.rows import verl_row, write_parquet

    data = work / "data"
    data.mkdir()
    (data / f"{SUBSET}_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in small_input()),
                                                encoding="utf-8")
    subprocess.run([sys.executable, str(work / "PPO" / "prepare_data.py"), "--subset", SUBSET, "--data-dir",
                    str(data), "--output-dir", str(work / "theirs"), "--template",
                    str(work / "prompts" / "sample.txt")], check=True, capture_output=True)
    theirs = pq.read_table(work / "theirs" / f"{SUBSET}.parquet")
    templates = work / "official"
    files, differ = read_source(work)
    assert not differ, f"files differ from commit {COMMIT}: {[f.path for f in differ]}"
    write_templates(templates, files)
    subset = next(s for s in SUBSETS if s.config == SUBSET)
    rows = read_split(data, subset, "train")
    prompts = [lamp_prompt(f"art-train/{i}", row.question,
                           [SelectedPost(r, p.id, p.category, p.text) for r, p in enumerate(row.profile[:10], 1)],
                           str(templates)) for i, row in enumerate(rows)]
    source = f"local:{data / f'{SUBSET}_train.jsonl'}"
    ours = [verl_row(p, i, source) for i, p in enumerate(prompts)]
    write_parquet(prompts, work / "ours.parquet", source)
    their_rows = theirs.to_pylist()
    equal = sum(a == b for a, b in zip(ours, their_rows))
    return equal, len(their_rows), pq.read_table(work / "ours.parquet").equals(theirs)


class _Score(BaseHTTPRequestHandler):
    reply: tuple[int, bytes] = (200, b"{}")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status, body = type(self).reply
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


REPLIES = [(200, b'{"score": 7}'), (200, b'{"score": 0.8312}'), (200, b'{"score": -3.5}'), (200, b'{"score": 10}'),
           (200, b'{"score": true}'), (200, b'{"score": "7"}'), (200, b'{"score": null}'), (200, b'{"x": 1}'),
           (200, b"not json"), (500, b'{"score": 9}'), (404, b""), (200, b'{"score": 1e308}')]


def compare_rewards(work: Path) -> tuple[int, int]:
    """(equal, compared) rewards of their compute_score against prb's reward module."""
    from prb_tasks.rl.verl_engine.reward import RewardConfig, write_reward_module

    sys.modules.setdefault("wandb", types.SimpleNamespace(run=None, log=lambda *a, **k: None))  # type: ignore[arg-type]
    spec = importlib.util.spec_from_file_location("their_reward", work / "PPO" / "reward_function.py")
    assert spec is not None and spec.loader is not None
    theirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(theirs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Score)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/score"
    theirs.SERVER_URL = url
    module = write_reward_module(work / "prb", RewardConfig(url=url))
    spec = importlib.util.spec_from_file_location("custom_module", module)
    assert spec is not None and spec.loader is not None
    ours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours)
    info = {"split": "train", "index": 0, "query": "Which lens?", "profile": "Post 1 (Category: A):\nhi"}
    equal = compared = 0
    try:
        for reply in REPLIES:
            _Score.reply = reply
            a = theirs.compute_score("local:x", "an answer", "", dict(info))
            b = ours.compute_score(data_source="local:x", solution_str="an answer", ground_truth="",
                                   extra_info=dict(info, num_turns=2, rollout_reward_scores={}))
            equal += a == b
            compared += 1
            print(f"  reply {reply[0]} {reply[1][:24]!r:28} theirs {a!r:>22}  prb {b!r:>22}")
    finally:
        server.shutdown()
        server.server_close()
    theirs.SERVER_URL = f"http://127.0.0.1:{server.server_address[1]}/score"  # now closed: a refused connection
    ours.compute_score.config = RewardConfig(url=theirs.SERVER_URL)
    a = theirs.compute_score("local:x", "an answer", "", dict(info))
    b = ours.compute_score(data_source="local:x", solution_str="an answer", ground_truth="", extra_info=dict(info))
    print(f"  server gone                         theirs {a!r:>22}  prb {b!r:>22}")
    return equal + (a == b), compared + 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", required=True, type=Path, help="bare git directory of their repository")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prb-side-by-side-") as tmp:
        work = Path(tmp)
        extract(args.snapshot, work)
        equal, total, tables = compare_rows(work)
        print(f"prepare_data.py rows: {equal} of {total} equal; parquet tables equal: {tables}")
        same, compared = compare_rewards(work)
        print(f"reward_function.py: {same} of {compared} rewards equal")
    return 0 if equal == total and tables and same == compared else 1


if __name__ == "__main__":
    sys.exit(main())
