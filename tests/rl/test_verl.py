"""``prb rl --engine verl`` (issue 45) against transcriptions of the authors' ``PPO/`` at commit a5c6814.

The transcriptions restate, in our words, what their ``PPO/verl.sh`` (the Hydra overrides of
``main_ppo``), ``PPO/prepare_data.py`` (the parquet rows) and ``PPO/reward_function.py`` (the
reward verl's reward manager gets) do. The fixture prompts are our own wording in their
placeholder format. verl itself is not installed here: the engine's checks, and the
orchestration with a stand-in ``verl`` package that records what it was asked, run on any CPU.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

import pytest

from prb_tasks.cli import main
from prb_tasks.common.errors import PRBError
from prb_tasks.prompts.official_templates import (
    BON_GRADE,
    BON_GRADE_SYSTEM,
    BON_POLICY,
    BON_POLICY_SYSTEM,
    write_templates,
)
from prb_tasks.prompts.retrieval import RetrievalOptions, SelectedPost
from prb_tasks.rl.lamp_qa import lamp_prompt, lamp_qa_prompts, read_split
from prb_tasks.rl.presets import PRESETS
from prb_tasks.rl.verl_engine.overrides import LOGGER, build_overrides, number
from prb_tasks.rl.verl_engine.pin import REWARD_FUNCTION, VERL_VERSION
from prb_tasks.rl.verl_engine.preflight import PIECES, ray_endpoint
from prb_tasks.rl.verl_engine.reward import RewardConfig, VerlReward, write_reward_module
from prb_tasks.rl.verl_engine.rows import verl_row, write_parquet
from prb_tasks.testing.hub_layout import write_shard
from tests.runner import closed_port

SYSTEM_LINE = "You help people with answers that fit them."

# --------------------------------------------------------------------------- transcriptions


def authors_verl_sh(parquet: str, policy: str, gpus: int, reward_path: str, output_dir: str,
                    run: str) -> list[str]:
    """PPO/verl.sh: the arguments after `python -m verl.trainer.main_ppo`, in their order."""
    return [
        f"data.train_files={parquet}", f"data.val_files={parquet}", "data.train_batch_size=128",
        "data.val_batch_size=128", "data.max_prompt_length=8192", "data.filter_overlong_prompts=True",
        "data.max_response_length=512", "trainer.val_before_train=False", f"trainer.n_gpus_per_node={gpus}",
        f"actor_rollout_ref.model.path={policy}", "actor_rollout_ref.model.enable_gradient_checkpointing=True",
        "actor_rollout_ref.actor.optim.lr=5e-7", "actor_rollout_ref.actor.ppo_mini_batch_size=16",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4", "actor_rollout_ref.rollout.n=1",
        "actor_rollout_ref.rollout.name=vllm", "actor_rollout_ref.rollout.load_format=safetensors",
        "actor_rollout_ref.rollout.layered_summon=False", "actor_rollout_ref.rollout.gpu_memory_utilization=0.4",
        "actor_rollout_ref.rollout.max_num_seqs=4", "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.pipeline_model_parallel_size=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size=8", "actor_rollout_ref.rollout.temperature=1.0",
        "actor_rollout_ref.rollout.top_k=0", "actor_rollout_ref.rollout.top_p=1.0",
        "actor_rollout_ref.rollout.enable_chunked_prefill=False", "actor_rollout_ref.ref.log_prob_micro_batch_size=8",
        f"custom_reward_function.path={reward_path}", "custom_reward_function.name=compute_score",
        f"critic.model.path={policy}", "critic.optim.lr=5e-6", "critic.ppo_micro_batch_size_per_gpu=4",
        "algorithm.use_kl_in_reward=False", "trainer.project_name=RewardBench", f"trainer.experiment_name={run}",
        "trainer.total_epochs=1", "trainer.logger=['wandb','console']", f"trainer.default_local_dir={output_dir}",
        "trainer.save_freq=10000",
    ]


def authors_rows(jsonl: Path, template: Path, k: int, data_source: str) -> list[dict]:
    """PPO/prepare_data.py: each JSON line -> a row; the template read and stripped; {question} then {profile}."""
    text = template.read_text(encoding="utf-8").strip()
    examples = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = []
    for idx, example in enumerate(examples):
        profile = "\n".join(f"Post {i} (Category: {item['category']}):\n{item['text']}"
                            for i, item in enumerate(example["profile"][:k], 1))
        user = text.replace("{question}", example["question"]).replace("{profile}", profile)
        rows.append({"data_source": data_source,
                     "prompt": [{"role": "system", "content": SYSTEM_LINE}, {"role": "user", "content": user}],
                     "reward_model": {"ground_truth": ""},
                     "extra_info": {"split": "train", "index": idx, "query": example["question"],
                                    "profile": profile}})
    return rows


def authors_compute_score(url: str, solution_str: str, extra_info: dict) -> float:
    """PPO/reward_function.py: POST response/query/profile, score / 10; 0.5 on any failure."""
    import requests

    session = requests.Session()
    session.mount("http://", requests.adapters.HTTPAdapter(max_retries=3))
    try:
        reply = session.post(url, json={"response_text": solution_str, "query": extra_info.get("query", ""),
                                        "profile": extra_info.get("profile", "")}, timeout=60)
        reply.raise_for_status()
        return reply.json()["score"] / 10  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - their function returns 0.5 for every failure
        return 0.5


def verl_loads(module: Path) -> Any:
    """What verl's load_extern_object does with reward.custom_reward_function.path/name (verl itself:
    tests/rl/test_verl_real.py)."""
    spec = importlib.util.spec_from_file_location("custom_module", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded.compute_score


def verl_calls(compute_score: Any, row: dict, response: str) -> float:
    """How verl's naive reward manager calls it: by keyword, extra_info with its own keys added."""
    extra = dict(row["extra_info"], num_turns=2, rollout_reward_scores={})
    return float(compute_score(data_source=row["data_source"], solution_str=response,
                               ground_truth=row["reward_model"]["ground_truth"], extra_info=extra))


# --------------------------------------------------------------------------- 1. overrides


def test_overrides_equal_their_verl_sh() -> None:
    ours = build_overrides(parquet=Path("/d/Art.parquet"), policy="Qwen/Qwen2.5-0.5B-Instruct",
                           reward_module=Path("/o/reward_function.py"), checkpoints=Path("/o/ckpt"),
                           experiment="run-1", preset=PRESETS["paper"], gpus_per_node=4)
    theirs = authors_verl_sh("/d/Art.parquet", "Qwen/Qwen2.5-0.5B-Instruct", 4, "/o/reward_function.py",
                             "/o/ckpt", "run-1")
    # What prb changes: the reward function's key (the one verl 0.9 reads, tests/rl/test_verl_real.py), the
    # logger (no wandb login); then what prb adds: the node count.
    # Their log-prob micro-batch over all GPUs is written per GPU (8 over their 4 GPUs: 2), the key verl 0.9 reads.
    expected = [LOGGER if item.startswith("trainer.logger=") else
                f"{REWARD_FUNCTION}.{item[len('custom_reward_function.'):]}"
                if item.startswith("custom_reward_function.") else
                item.replace("log_prob_micro_batch_size=8", "log_prob_micro_batch_size_per_gpu=2")
                for item in theirs] + ["trainer.nnodes=1"]
    assert ours == expected
    assert not [item for item in ours if item.startswith("custom_reward_function.")]


def test_overrides_name_the_cluster_and_the_step_limit() -> None:
    ours = build_overrides(parquet=Path("p"), policy="m", reward_module=Path("r"), checkpoints=Path("c"),
                           experiment="e", preset=PRESETS["paper"], gpus_per_node=8, nodes=4, max_steps=3)
    assert ours[-2:] == ["trainer.nnodes=4", "trainer.total_training_steps=3"]
    assert "trainer.n_gpus_per_node=8" in ours
    assert [number(x) for x in (5e-7, 5e-6, 1.0, 0.9, 1e-10, 2.5e12)] == ["5e-7", "5e-6", "1.0", "0.9", "1e-10",
                                                                          "2500000000000.0"]


# --------------------------------------------------------------------------- 2. data rows

POLICY_FIXTURE = "  Write for this person.\nTheir question: {question}\nWhat they wrote before:\n{profile}\nGo.  \n"
SCRIPT_FIXTURE = ('def messages(item):\n    return [\n'
                  f'        {{"role": "system", "content": "{SYSTEM_LINE}"}},\n'
                  '        {"role": "user", "content": item},\n    ]\n')


@pytest.fixture
def official_dir(tmp_path) -> Path:
    target = tmp_path / "official"
    write_templates(target, {BON_POLICY_SYSTEM: SCRIPT_FIXTURE.encode(), BON_POLICY: POLICY_FIXTURE.encode(),
                             BON_GRADE_SYSTEM: SCRIPT_FIXTURE.encode(), BON_GRADE: b"{question} {answer} {aspects}"})
    return target


def _post(i: int, text: str, category: str = "Hobbies") -> dict:
    return {"id": f"p{i}", "category": category, "text": text}


LAMP_ROWS = [
    {"id": "q1", "question": "Which camera suits night walks?", "details": "ignored",
     "profile": [_post(i, f"Post text {i}\nwith a second line") for i in range(14)], "rubric_aspects": []},
    # Their replace order: a question holding "{profile}" gets the posts put into it.
    {"id": 2, "question": "What is {profile} here, and {question}?", "profile": [_post(1, "only one", "Café & ✓")]},
    {"id": "q3", "question": "An empty profile?", "profile": []},
    {"id": "q4", "question": "  spaced  ", "profile": [_post(i, f"  t{i}  ", "Cat\n2") for i in range(3)]},
]


def _ranked_jsonl(folder: Path) -> Path:
    """Their rank_dataset.py output: one subset's split as JSON lines, posts already in rank order."""
    path = folder / "Art_and_Entertainment_train.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in LAMP_ROWS), encoding="utf-8")
    return path


def test_rows_equal_what_their_prepare_data_makes(tmp_path, official_dir) -> None:
    from prb_tasks.data.personalized_rb.subsets import SUBSETS

    jsonl = _ranked_jsonl(tmp_path / "data")
    template = tmp_path / "sample.txt"
    template.write_text(POLICY_FIXTURE, encoding="utf-8")
    source = f"local:{jsonl}"
    theirs = authors_rows(jsonl, template, 10, source)
    rows = read_split(tmp_path / "data", SUBSETS[0], "train")
    prompts = [lamp_prompt(f"art-train/{i}", row.question,
                           [SelectedPost(rank, p.id, p.category, p.text) for rank, p in enumerate(row.profile[:10], 1)],
                           str(official_dir)) for i, row in enumerate(rows)]
    ours = [verl_row(p, i, source) for i, p in enumerate(prompts)]
    assert ours == theirs
    assert "Post 10 (Category: Hobbies)" in ours[0]["prompt"][1]["content"]
    assert "Post 11" not in ours[0]["prompt"][1]["content"]
    # The parquet file reads back as the rows their datasets.Dataset.from_list(...).to_parquet writes.
    from datasets import Dataset

    Dataset.from_list(theirs).to_parquet(str(tmp_path / "theirs.parquet"))
    write_parquet(prompts, tmp_path / "ours.parquet", source)
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "ours.parquet").equals(pq.read_table(tmp_path / "theirs.parquet"))


# --------------------------------------------------------------------------- 3. the reward


class _Score(BaseHTTPRequestHandler):
    """Their reward_server.py's /score, with the reply a test chooses."""

    reply: tuple[int, bytes] = (200, b'{"score": 7}')
    seen: list[dict] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        type(self).seen.append(json.loads(self.rfile.read(length)))
        status, body = type(self).reply
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def score_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Score)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/score"
    finally:
        server.shutdown()
        server.server_close()


ROW = {"data_source": "local:x", "prompt": [], "reward_model": {"ground_truth": ""},
       "extra_info": {"split": "train", "index": 3, "query": "Which lens?", "profile": "Post 1 (Category: A):\nhi"}}

REPLIES = [(200, b'{"score": 7}'), (200, b'{"score": 0.8312}'), (200, b'{"score": -3.5}'), (200, b'{"score": true}'),
           (200, b'{"score": "7"}'), (200, b'{"score": null}'), (200, b'{"other": 1}'), (200, b"not json"),
           (500, b'{"score": 9}'), (404, b""), (200, b'{"score": 12345678901234567890}')]


@pytest.mark.parametrize("reply", REPLIES)
def test_served_reward_returns_what_theirs_returns(tmp_path, score_server, reply) -> None:
    _Score.reply, _Score.seen = reply, []
    module = write_reward_module(tmp_path / "verl", RewardConfig(url=score_server))
    ours = verl_calls(verl_loads(module), ROW, "Use a 35mm.")
    theirs = authors_compute_score(score_server, "Use a 35mm.", ROW["extra_info"])
    assert ours == theirs
    assert _Score.seen[0] == _Score.seen[-1] == {"response_text": "Use a 35mm.", "query": "Which lens?",
                                                 "profile": "Post 1 (Category: A):\nhi"}


def test_served_reward_unreachable_is_their_failure_value(tmp_path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/score"
    module = write_reward_module(tmp_path / "verl", RewardConfig(url=url))
    assert verl_calls(verl_loads(module), ROW, "x") == authors_compute_score(url, "x", ROW["extra_info"]) == 0.5


def test_prb_rm_reward_is_score_over_ten_and_half_on_failure(tmp_path, capsys) -> None:
    from prb_tasks.rl.reward import load_rm
    from prb_tasks.rm.inputs import RMInput

    module = write_reward_module(tmp_path / "verl", RewardConfig(rm_args="scorer=length"))
    compute_score = verl_loads(module)
    response = "A long enough answer about lenses."
    info = ROW["extra_info"]
    expected = float(load_rm("scorer=length").rewards([RMInput(info["query"] + info["profile"], response)],
                                                       disable_tqdm=True)[0]) / 10
    assert verl_calls(compute_score, ROW, response) == expected != 0.5

    class Broken:
        def rewards(self, items: list, disable_tqdm: bool = True) -> list:
            raise RuntimeError("CUDA out of memory")

    failing = VerlReward(RewardConfig(rm_args="scorer=length"))
    failing._rm = Broken()
    assert verl_calls(failing, ROW, response) == 0.5 and failing.failures == 1
    assert "reward failed (RuntimeError: CUDA out of memory); reward 0.5" in capsys.readouterr().err


def test_only_a_reward_that_loads_a_model_asks_for_one_worker() -> None:
    assert RewardConfig(rm_args="pretrained=org/rm").loads_model
    assert not RewardConfig(rm_args="pretrained=org/rm,endpoint=http://h:8000").loads_model
    assert not RewardConfig(url="http://h:8000/score").loads_model
    ours = build_overrides(parquet=Path("p"), policy="m", reward_module=Path("r"), checkpoints=Path("c"),
                           experiment="e", preset=PRESETS["paper"], gpus_per_node=1, reward_workers=1)
    assert ours[-1] == "reward.num_workers=1"


def test_reward_config_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        RewardConfig()
    with pytest.raises(ValueError, match="exactly one"):
        RewardConfig(rm_args="scorer=length", url="http://x")


def test_every_verl_difference_is_a_row_of_the_docs_table() -> None:
    from prb_tasks.rl.verl_engine.differences import VERL_DIFFERENCES

    docs = (Path(__file__).resolve().parents[2] / "docs" / "rl-downstream.md").read_text(encoding="utf-8")
    table = docs.split("### The paper, `--engine verl`, `--engine trl`", 1)[1].split("\n### ", 1)[0]
    rows = {line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")}
    assert {name for name, _, _ in VERL_DIFFERENCES} <= rows


# --------------------------------------------------------------------------- 4. one line before anything


def _rl(out: Path, *extra: str) -> list[str]:
    return ["rl", "--policy", "org/policy", "--rm", "scorer=length", "--grader", "model=openai/g",
            "--out", str(out), "--data-dir", "sample", "--engine", "verl", *extra]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.fixture
def fake_verl(tmp_path, monkeypatch) -> Path:
    """``verl`` (installed as the pinned release) and what its main_ppo imports, as packages that only exist (for
    the checks after "is it installed")."""
    root = tmp_path / "site"
    return _stub_site(root, monkeypatch, [module for _, module in PIECES], VERL_VERSION)


def _stub_site(root: Path, monkeypatch, modules: list[str], verl_version: Optional[str]) -> Path:
    for module in modules:
        (root / module).mkdir(parents=True)
        (root / module / "__init__.py").write_text("")
    if verl_version:
        info = root / f"verl-{verl_version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: verl\nVersion: {verl_version}\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return root


def test_each_missing_piece_of_main_ppo_is_named_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    """verl alone cannot run main_ppo with vLLM rollouts (red before: only verl was looked for)."""
    if any(importlib.util.find_spec(m) for m in ("vllm", "transfer_queue", "uvicorn", "fastapi")):
        pytest.skip("part of verl's rollout stack is installed here")
    _stub_site(tmp_path / "site", monkeypatch, ["verl"], VERL_VERSION)
    assert main(_rl(tmp_path / "out")) == 2
    line = _one_line(capsys)
    assert "needs vllm, TransferQueue, uvicorn, fastapi, not installed here" in line
    assert "constraints-verl.txt" in line and "[verl]" in line
    assert not (tmp_path / "out").exists()


def test_a_verl_that_reads_the_old_reward_key_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    _stub_site(tmp_path / "site", monkeypatch, [m for _, m in PIECES], "0.6.0")
    assert main(_rl(tmp_path / "out")) == 2
    line = _one_line(capsys)
    assert "verl 0.6.0 reads the reward function elsewhere" in line and f"verl=={VERL_VERSION}" in line
    assert not (tmp_path / "out").exists()


def test_a_preset_whose_batches_do_not_split_over_the_gpus_is_one_line(tmp_path, capsys, fake_verl) -> None:
    """smoke's 2-prompt batches over 8 GPUs; paper over 4 x 8 (the docs' old multi-node example)."""
    port = closed_port()
    server = _RawServer(SETTINGS_FRAME)
    try:
        for extra, words in ((["--preset", "smoke", "--gpus-per-node", "8"], "preset smoke's PPO mini-batch of 2 "
                              "prompts (rollout batch 2) does not split evenly over 8 GPUs"),
                             (["--preset", "paper", "--templates", str(tmp_path), "--gpus-per-node", "8", "--nodes",
                               "4"], "use a total of 1, 2, 4, 8, 16 GPUs")):
            assert main(_rl(tmp_path / "out", "--ray-address", f"127.0.0.1:{server.port}", *extra)) == 2
            line = _one_line(capsys)
            assert words in line, line
            assert len(line) <= 300 and not (tmp_path / "out").exists()
    finally:
        server.close()
    assert port


@pytest.mark.skipif(importlib.util.find_spec("verl") is not None, reason="verl is installed here")
def test_missing_verl_is_one_line_before_anything_is_written(tmp_path, capsys) -> None:
    assert main(_rl(tmp_path / "out")) == 2
    line = _one_line(capsys)
    assert "needs verl" in line and "pip install" in line and "[verl]" in line
    assert not (tmp_path / "out").exists()


def test_no_gpu_is_one_line_before_anything_is_written(tmp_path, capsys, fake_verl) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main(_rl(tmp_path / "out")) == 2
    assert "needs a CUDA GPU" in _one_line(capsys)
    assert not (tmp_path / "out").exists()


def test_unreachable_ray_cluster_is_one_line_before_anything_is_written(tmp_path, capsys, fake_verl) -> None:
    port = closed_port()
    assert main(_rl(tmp_path / "out", "--ray-address", f"127.0.0.1:{port}")) == 2
    line = _one_line(capsys)
    assert f"the Ray cluster at 127.0.0.1:{port} cannot be reached" in line and "ray start --head" in line
    assert not (tmp_path / "out").exists()
    assert main(_rl(tmp_path / "out", "--ray-address", "head:port")) == 2
    assert "is not HOST:PORT" in _one_line(capsys)


class _RawServer:
    """A TCP server on an OS-chosen port answering every connection with ``reply``: bytes, ``None``
    (silence, the connection held open) or ``"close"`` (closed at once)."""

    def __init__(self, reply: Any) -> None:
        import socket

        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.held: list = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.reply == "close":
                conn.close()
                continue
            self.held.append(conn)
            if self.reply is not None:
                conn.sendall(self.reply)

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.sock.close()


# What an HTTP/2 (gRPC) server sends first: a SETTINGS frame (here with one setting); and what an
# HTTP/1.1 port such as Ray's dashboard answers.
SETTINGS_FRAME = bytes([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100])
HTTP1 = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"


@pytest.mark.parametrize("reply", [None, HTTP1, "close"], ids=["silent", "http1", "closes"])
def test_an_address_that_is_not_a_ray_cluster_is_one_line(tmp_path, capsys, fake_verl, monkeypatch, reply) -> None:
    from prb_tasks.rl.verl_engine import preflight

    monkeypatch.setattr(preflight, "TIMEOUT", 2.0)  # the silent server never answers: do not wait long
    server = _RawServer(reply)
    try:
        assert main(_rl(tmp_path / "out", "--ray-address", f"127.0.0.1:{server.port}")) == 2
    finally:
        server.close()
    line = _one_line(capsys)
    assert f"127.0.0.1:{server.port} accepts connections but does not answer as a Ray cluster" in line
    assert not (tmp_path / "out").exists()


def test_a_grpc_server_passes_the_ray_check(fake_verl) -> None:
    from prb_tasks.rl.verl_engine.preflight import check

    server = _RawServer(SETTINGS_FRAME)
    try:
        assert check(f"127.0.0.1:{server.port}") == f"127.0.0.1:{server.port}"
    finally:
        server.close()


def test_served_reward_with_two_rms_is_one_line(tmp_path, capsys, fake_verl) -> None:
    argv = _rl(tmp_path / "out", "--reward-url", "http://127.0.0.1:9/score", "--rm", "scorer=bm25")
    assert main(argv) == 2
    assert "--reward-url serves one reward model" in _one_line(capsys)


def test_an_rm_that_needs_the_profile_store_is_refused_before_training() -> None:
    from prb_tasks.rl.engines import ENGINES

    with pytest.raises(PRBError) as info:
        ENGINES["verl"].check_rm("scorer=bm25", None)
    message = str(info.value)
    assert "\n" not in message and "--rm 'scorer=bm25' cannot score in verl's reward worker" in message
    assert "needs the user's profile" in message
    assert ENGINES["verl"].check_rm("scorer=length", None) is None
    assert ENGINES["verl"].check_rm("scorer=bm25", "http://127.0.0.1:9/score") is None  # served: theirs scores


@pytest.mark.parametrize("extra", [["--ray-address", "h:6379"], ["--nodes", "2"], ["--gpus-per-node", "4"]])
def test_verl_options_without_engine_verl_are_one_line(tmp_path, capsys, extra) -> None:
    argv = [a for a in _rl(tmp_path / "out", *extra) if a not in ("--engine", "verl")]
    if importlib.util.find_spec("trl") is None:
        pytest.skip("trl not installed")
    assert main(argv) == 2
    assert f"prb rl: {extra[0]} is an option of --engine verl" in _one_line(capsys)
    assert not (tmp_path / "out").exists()


def test_ray_endpoint_defaults() -> None:
    assert ray_endpoint("10.0.0.1:6379") == ("10.0.0.1", 6379)
    assert ray_endpoint("head") == ("head", 6379)
    assert ray_endpoint("ray://head") == ("head", 10001)
    with pytest.raises(PRBError):
        ray_endpoint(":1")


def test_help_documents_the_verl_path(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["rl", "--engine", "verl", "--help"])
    text = capsys.readouterr().out
    for words in ("verl.trainer.main_ppo", "verl.model_merger", "--ray-address", "score / 10, 0.5",
                  "prepare_data.py", "--lamp-qa"):
        assert words in " ".join(text.split()), words
    assert max(len(line) for line in text.splitlines()) <= 120


# --------------------------------------------------------------------------- 5. orchestration

FAKE_MAIN_PPO = '''
import json, os, sys
args = dict(a.split("=", 1) for a in sys.argv[1:])
out = args["trainer.default_local_dir"]
os.makedirs(os.path.join(out, "global_step_2", "actor"), exist_ok=True)
open(os.path.join(out, "latest_checkpointed_iteration.txt"), "w").write("2")
record = {"argv": sys.argv[1:], "ray": os.environ.get("RAY_ADDRESS")}
json.dump(record, open(os.path.join(out, "..", "seen_main_ppo.json"), "w"))
print("(TaskRunner pid=7) step:1 - actor/pg_loss:-0.01 - critic/score/mean:0.7 - timing_s/step:3.25")
print("training done")
if os.environ.get("FAIL_MAIN_PPO"):
    print("RuntimeError: NCCL timeout"); sys.exit(3)
'''
FAKE_MERGER = '''
import json, os, shutil, sys
argv = sys.argv[1:]
target = argv[argv.index("--target_dir") + 1]
if os.environ.get("FAKE_TRAINED"):  # an HF policy stands for the merged shards
    shutil.copytree(os.environ["FAKE_TRAINED"], target)
os.makedirs(target, exist_ok=True)
if not os.path.exists(os.path.join(target, "config.json")):
    open(os.path.join(target, "config.json"), "w").write("{}")
json.dump(argv, open(os.path.join(target, "..", "seen_merger.json"), "w"))
'''


@pytest.fixture
def recording_verl(tmp_path, monkeypatch) -> Path:
    """A ``verl`` whose main_ppo and model_merger only record what prb asked (verl needs GPUs)."""
    root = tmp_path / "site"
    for module, text in (("verl/trainer/main_ppo.py", FAKE_MAIN_PPO), ("verl/model_merger/__main__.py", FAKE_MERGER)):
        path = root / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for folder in (root / "verl", path.parent):
            (folder / "__init__.py").touch()
    monkeypatch.setenv("PYTHONPATH", f"{root}:{Path(__file__).resolve().parents[2]}")
    return _stub_site(root, monkeypatch, [m for _, m in PIECES if m != "verl"], VERL_VERSION)


def _prompts(official_dir: Path) -> list:
    posts = [SelectedPost(1, "p1", "A", "hello")]
    return [lamp_prompt(f"art-train/{i}", f"question {i}", posts, str(official_dir)) for i in range(3)]


def test_engine_writes_verl_inputs_runs_main_ppo_and_merges(tmp_path, official_dir, recording_verl, capsys) -> None:
    from prb_tasks.rl.verl_engine.train import train_policy_verl

    folder = tmp_path / "policies" / "rm-abc"
    final = train_policy_verl("org/policy", _prompts(official_dir), RewardConfig(rm_args="scorer=length"),
                              PRESETS["paper"], folder, experiment="rm-abc", gpus_per_node=2, nodes=3,
                              ray_address="10.0.0.1:6379")
    assert final == folder / "final" and (final / "config.json").is_file()
    err = capsys.readouterr().err
    assert "prb rl: rm-abc: verl step 1  score 0.7  pg_loss -0.01  s/step 3.25" in err  # a line per step
    assert "training done" not in err and "training done" in (folder / "verl" / "main_ppo.log").read_text()
    seen = json.loads((folder / "verl" / "seen_main_ppo.json").read_text())
    assert seen["ray"] == "10.0.0.1:6379"
    assert seen["argv"] == (folder / "verl" / "overrides.txt").read_text().splitlines()
    args = dict(item.split("=", 1) for item in seen["argv"])
    assert args["trainer.nnodes"] == "3" and args["trainer.n_gpus_per_node"] == "2"
    assert args["reward.num_workers"] == "1"  # prb-rm loads the RM in each worker: one worker, one copy
    assert Path(args[f"{REWARD_FUNCTION}.path"]) == (folder / "verl" / "reward_function.py").resolve()
    import pyarrow.parquet as pq

    assert pq.read_table(args["data.train_files"]).num_rows == 3
    merger = json.loads((folder / "seen_merger.json").read_text())
    actor = (folder / "verl" / "checkpoints" / "global_step_2" / "actor").resolve()
    assert merger == ["merge", "--backend", "fsdp", "--local_dir", str(actor), "--target_dir", str(final)]
    # Trained once: a second call reuses final.
    assert train_policy_verl("org/policy", [], RewardConfig(url="http://x"), PRESETS["paper"], folder,
                             experiment="rm-abc", gpus_per_node=2) == final


def test_engine_failure_is_one_line_naming_the_log(tmp_path, official_dir, recording_verl, monkeypatch) -> None:
    from prb_tasks.rl.verl_engine.train import train_policy_verl

    monkeypatch.setenv("FAIL_MAIN_PPO", "1")
    with pytest.raises(PRBError) as info:
        train_policy_verl("org/policy", _prompts(official_dir), RewardConfig(rm_args="scorer=length"),
                          PRESETS["paper"], tmp_path / "p", experiment="p", gpus_per_node=1)
    message = str(info.value)
    assert "\n" not in message and "verl main_ppo failed (exit 3)" in message
    assert "RuntimeError: NCCL timeout" in message and "main_ppo.log" in message


@pytest.mark.slow
def test_prb_rl_engine_verl_end_to_end(tmp_path, recording_verl, monkeypatch, capsys) -> None:
    """The whole command: preflight against a gRPC-speaking cluster address, verl's inputs, main_ppo,
    the merge, then prb's own steps on the merged policy (answers, one grading run, the run)."""
    from prb_tasks.testing.fake_server import FakeLLMServer
    from prb_tasks.testing.rl_setup import ConciseRM, concise_grader
    from prb_tasks.testing.tiny_policy import build_tiny_policy

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    policy = build_tiny_policy(tmp_path / "policy", seed=0)
    monkeypatch.setenv("FAKE_TRAINED", str(build_tiny_policy(tmp_path / "trained", seed=1)))
    cluster = _RawServer(SETTINGS_FRAME)
    try:
        with ConciseRM() as rm, FakeLLMServer(policy=concise_grader()) as grader:
            argv = ["rl", "--engine", "verl", "--policy", str(policy), "--rm", f"endpoint={rm.url}", "--grader",
                    f"model=openai/grader,api_base={grader.openai_base}", "--out", str(tmp_path / "out"),
                    "--data-dir", "sample", "--test-limit", "4", "--ray-address", f"127.0.0.1:{cluster.port}",
                    "--gpus-per-node", "1", "--nodes", "2", "--max-steps", "3"]
            assert main(argv) == 0, capsys.readouterr().err
    finally:
        cluster.close()
    err = capsys.readouterr().err
    assert "verl main_ppo: " in err and "merging " in err
    (folder,) = (tmp_path / "out" / "policies").iterdir()
    seen = json.loads((folder / "verl" / "seen_main_ppo.json").read_text())
    assert seen["ray"] == f"127.0.0.1:{cluster.port}"
    args = dict(item.split("=", 1) for item in seen["argv"])
    assert (args["trainer.nnodes"], args["trainer.n_gpus_per_node"], args["trainer.total_training_steps"]) == \
        ("2", "1", "3")  # smoke's 2-prompt batches split over 2 GPUs, not 4
    assert "reward.num_workers" not in args  # a served RM: no copy in the workers
    import pyarrow.parquet as pq

    rows = pq.read_table(args["data.train_files"]).to_pylist()
    assert rows and all(r["extra_info"]["query"] and r["prompt"][-1]["role"] == "user" for r in rows)
    answers = [json.loads(line) for line in (tmp_path / "out" / "answers" / f"{folder.name}.jsonl").read_text()
               .splitlines()]
    assert len(answers) == 4
    (run,) = (tmp_path / "out" / "runs").iterdir()
    results = json.loads(next(run.glob("results_*.json")).read_text())
    assert results["config"]["model_args"] == f"endpoint={rm.url}"
    assert results["results"]["personalized_rb_rl"]["ungraded,none"] == 0
    assert results["prb"]["rl"]["engine"] == {"name": "verl", "verl_version": VERL_VERSION}


# --------------------------------------------------------------------------- 6. LaMP-QA, hub layout


def _hub_copy(root: Path, rows: Optional[list[dict]] = None) -> Path:
    for config in ("Art_and_Entertainment", "Lifestyle_and_Personal_Development", "Society_and_Culture"):
        for split in ("train", "test"):
            data = rows if rows is not None else [
                {"id": f"{config}-{split}-{i}", "question": f"{config} question {i} about cameras",
                 "profile": [{"id": f"{j}", "category": "Photo", "text": f"post {j} on {'cameras' if j == 2 else 'x'}"}
                             for j in range(4)],
                 "rubric_aspects": [{"aspect": "a", "reason": "r", "evidence": "e"}]} for i in range(2)]
            write_shard(root / config, data, split=split)
    return root


def test_lamp_qa_hub_copy_trains_on_its_train_split(tmp_path, official_dir, monkeypatch) -> None:
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    root = _hub_copy(tmp_path / "lamp")
    prompts = lamp_qa_prompts(str(root), "train", 2, str(official_dir), RetrievalOptions(retriever="bm25", k=2,
                                                                                         max_post_chars=0))
    assert [p.pair_key for p in prompts] == ["art-train/0", "art-train/1", "lifestyle-train/0",
                                             "lifestyle-train/1", "society-train/0", "society-train/1"]
    first = prompts[0]
    assert first.question == "Art_and_Entertainment question 0 about cameras"
    assert "post 2 on cameras" in first.profile  # the one post that shares a word with the question is kept
    assert first.profile.count("Post ") == 2
    assert first.messages[0] == ("system", SYSTEM_LINE)
    assert first.messages[1][1] == POLICY_FIXTURE.strip().replace("{question}", first.question).replace(
        "{profile}", first.profile)


def test_lamp_qa_json_array_copy_reads_like_the_hub_one(tmp_path) -> None:
    from prb_tasks.data.personalized_rb.subsets import SUBSETS

    (tmp_path / "Art_and_Entertainment_test.json").write_text(json.dumps(LAMP_ROWS), encoding="utf-8")
    rows = read_split(tmp_path, SUBSETS[0], "test")
    assert [r.id for r in rows] == ["q1", "2", "q3", "q4"]
    assert rows[0].profile[13].text == "Post text 13\nwith a second line" and rows[1].profile[0].category == "Café & ✓"


def test_lamp_qa_bad_copies_are_one_line(tmp_path, official_dir) -> None:
    from prb_tasks.data.errors import DataError

    with pytest.raises(DataError, match="is not a folder"):
        lamp_qa_prompts(str(tmp_path / "nope"), "train", 2, str(official_dir))
    with pytest.raises(DataError, match="run `prb templates official DIR` once and add --templates DIR"):
        lamp_qa_prompts(str(tmp_path), "train", 2, None)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no train split of Art_and_Entertainment") as info:
        lamp_qa_prompts(str(tmp_path / "empty"), "train", 2, str(official_dir))
    assert "hf download alireza7/LaMP-QA" in str(info.value)
    root = _hub_copy(tmp_path / "bad", rows=[{"id": 1, "question": "q", "profile": [{"id": 1, "text": "t"}]}])
    with pytest.raises(DataError, match=r"row 1: field 'profile.0.category'") as info:
        lamp_qa_prompts(str(root), "train", 2, str(official_dir))
    assert "\n" not in str(info.value)
    broken = tmp_path / "jsonl"
    broken.mkdir()
    (broken / "Art_and_Entertainment_train.jsonl").write_text('{"question": "q", "profile": []}\n{oops\n')
    with pytest.raises(DataError, match=r"Art_and_Entertainment_train.jsonl line 2, column 2: not valid JSON"):
        lamp_qa_prompts(str(broken), "train", 2, str(official_dir))
    array = tmp_path / "array"
    array.mkdir()
    (array / "Art_and_Entertainment_train.json").write_text('[{"question": "q", "profile": []},]')
    with pytest.raises(DataError, match=r"Art_and_Entertainment_train.json is not JSON \("):
        lamp_qa_prompts(str(array), "train", 2, str(official_dir))


def test_cli_lamp_qa_missing_folder_is_one_line(tmp_path, capsys, official_dir) -> None:
    argv = ["rl", "--policy", "org/policy", "--rm", "scorer=length", "--grader", "model=openai/g", "--out",
            str(tmp_path / "out"), "--data-dir", "sample", "--preset", "paper", "--templates", str(official_dir),
            "--lamp-qa", str(tmp_path / "nope")]
    if importlib.util.find_spec("trl") is None:
        pytest.skip("trl not installed")
    assert main(argv) == 2
    assert "--lamp-qa" in _one_line(capsys)
    assert sys.modules.get("verl") is None
