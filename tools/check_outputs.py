"""Run every offline command on the bundled samples and print one sha256 per output file.

``python tools/check_outputs.py OUT --ref REV`` exports git revision ``REV`` of this checkout
to one fixed folder (``/tmp/prb-check-outputs-src``: documents carry the data's path, so both
sides must run from the same place) and runs its code there, in a fresh folder ``OUT`` (and a
throw-away ``HOME``, so no cache of an earlier run answers): ``prb tasks``, ``prb data
validate`` on the sample, the example file and a missing file, ``prb audit`` on the sample and
the example, ``prb eval`` with ``prb-rm`` (BM25, length) on the sample and the example file,
``prb eval`` with ``prb-judge`` against the fake server (pairwise, both orders), as a dry run
and with a mistyped task, ``prb compare`` (table, Markdown, JSON, ``--out``) on those runs,
``prb cache info``; then it normalises every file written and prints ``sha256  name`` per
file. Made for issue 47's "no behaviour change": run it with the old and the new revision,
one after the other, and ``diff`` the two listings (each command's stdout, stderr and exit
status are files too).

Normalised, because they differ from run to run without any code change: absolute paths
(``OUT``, ``HOME``, the source folder), timestamps (in text and in file names), lm-eval's
timing and environment keys in results files, progress bars, durations and rates per second,
latencies, function addresses in configs, and the fake server's port. Needs no network: the
judge runs against ``prb_tasks.testing.fake_server`` on a loopback port.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
#: Where the revision under test is exported (the same for every run: see the module docstring).
ROOT = Path(tempfile.gettempdir()) / "prb-check-outputs-src"

#: Keys of lm-eval's results files that hold times, versions or the machine, not results.
VOLATILE_KEYS = {
    "date", "start_time", "end_time", "total_evaluation_time_seconds", "git_hash", "upper_git_hash",
    "pretty_env_info", "transformers_version", "lm_eval_version", "pid", "elapsed", "seconds",
    "wall_seconds", "duration_s", "wall_s", "latency_s",
}
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T _:-]\d{2}[:-]\d{2}(?:[:-]\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds|min)\b")
_RATE = re.compile(r"\b\d+(?:\.\d+)?\s?[\w ]{0,20}/s\b")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_NONCE = re.compile(r"nonce(-|=\")[A-Za-z0-9_-]+")
_PROGRESS = re.compile(r"(it/s|s/it|\d+%\|)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def commands(out: Path, port: int) -> list[tuple[str, list[str]]]:
    """(name, argv) of every command, in order; the runs write under ``out/runs``."""
    runs = out / "runs"
    judge = f"model=openai/fake,api_base=http://127.0.0.1:{port}/v1,cache=off"
    eval_ = ["prb", "eval", "--log_samples", "--seed", "0"]
    return [
        ("tasks", ["prb", "tasks"]),
        ("tasks_dir", ["prb", "tasks-dir"]),
        ("validate_sample", ["prb", "data", "validate", "sample"]),
        ("validate_example", ["prb", "data", "validate", str(ROOT / "prb_tasks/data/custom/example.jsonl")]),
        ("validate_missing", ["prb", "data", "validate", str(out / "no_such_file.jsonl")]),
        ("audit_sample", ["prb", "audit", "sample"]),
        ("audit_sample_json", ["prb", "audit", "sample", "--format", "json"]),
        ("audit_example", ["prb", "audit", "example"]),
        ("eval_bm25", [*eval_, "--model", "prb-rm", "--model_args", "scorer=bm25,cache=off",
                       "--tasks", "personalized_rb_sample_scalar", "--output_path", str(runs / "bm25")]),
        ("eval_length", [*eval_, "--model", "prb-rm", "--model_args", "scorer=length,cache=off",
                         "--tasks", "personalized_rb_sample_scalar", "--output_path", str(runs / "length")]),
        ("eval_custom", [*eval_, "--model", "prb-rm", "--model_args", "scorer=bm25,cache=off",
                         "--tasks", "personalized_custom_example_scalar_history",
                         "--output_path", str(runs / "custom")]),
        ("eval_judge", [*eval_, "--model", "prb-judge", "--model_args", judge,
                        "--tasks", "personalized_rb_sample", "--output_path", str(runs / "judge")]),
        ("eval_dry_run", ["prb", "eval", "--model", "prb-judge", "--model_args", "config=gpt-4.1,dry_run=true",
                          "--tasks", "personalized_rb_sample"]),
        ("eval_typo", ["prb", "eval", "--model", "prb-rm", "--model_args", "scorer=bm25",
                       "--tasks", "personalized_rb_sampel_scalar"]),
        ("compare_table", ["prb", "compare", str(runs), "--no-charts"]),
        ("compare_markdown", ["prb", "compare", str(runs), "--format", "markdown", "--no-charts"]),
        ("compare_json", ["prb", "compare", str(runs), "--format", "json", "--no-charts"]),
        ("compare_out", ["prb", "compare", str(runs), "--no-charts", "--out", str(out / "report")]),
        ("cache_info", ["prb", "cache", "info"]),
    ]


def _mask_markdown_latency(text: str) -> str:
    """Cells of a Markdown table's ``latency`` columns as ``<LATENCY>`` (measured, not computed)."""
    out: list[str] = []
    masked: list[int] = []
    for line in text.splitlines():
        cells = line.split("|")
        if not line.startswith("|"):
            masked = []
        elif "latency" in line:
            masked = [i for i, cell in enumerate(cells) if "latency" in cell]
        elif masked and not set(line) <= set("|-: "):
            cells = [("<LATENCY>" if i in masked else cell) for i, cell in enumerate(cells)]
        out.append("|".join(cells))
    return "\n".join(out)


def _mask_html_latency(text: str) -> str:
    """The same for the HTML report's tables."""
    def table(match: re.Match[str]) -> str:
        body = match.group(0)
        heads = re.findall(r"<th[^>]*>(.*?)</th>", body)
        masked = {i for i, head in enumerate(heads) if "latency" in head}
        if not masked:
            return body

        def row(found: re.Match[str]) -> str:
            cells = re.findall(r"<td[^>]*>.*?</td>", found.group(0))
            return "<tr>" + "".join("<td>&lt;LATENCY&gt;</td>" if i in masked else c
                                    for i, c in enumerate(cells)) + "</tr>"
        return re.sub(r"<tr>(?:(?!</tr>).)*<td.*?</tr>", row, body, flags=re.S)
    return re.sub(r"<table.*?</table>", table, text, flags=re.S)


def _normal_text(text: str, swaps: dict[str, str]) -> str:
    for old, new in swaps.items():
        text = text.replace(old, new)
    text = _mask_html_latency(_mask_markdown_latency(text))
    lines = [line for line in text.splitlines() if not _PROGRESS.search(line)]
    text = _NONCE.sub(r"nonce\1<NONCE>", _ADDRESS.sub(" at <ADDRESS>", _RATE.sub("<RATE>", "\n".join(lines))))
    return _DURATION.sub("<DURATION>", _TIMESTAMP.sub("<TIME>", text))


def _normal_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<VOLATILE>" if k in VOLATILE_KEYS or k.startswith("latency") else _normal_json(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_normal_json(v) for v in value]
    return value


def normalised(path: Path, swaps: dict[str, str]) -> bytes:
    """The bytes of ``path`` with what changes from run to run replaced (see the module docstring)."""
    if path.suffix in (".png", ".gz", ".parquet", ".sqlite", ".db"):
        return path.read_bytes()
    text = _normal_text(path.read_text(encoding="utf-8", errors="replace"), swaps)
    if path.suffix == ".json" or text.lstrip().startswith("{"):
        try:
            return json.dumps(_normal_json(json.loads(text)), sort_keys=True, indent=1).encode()
        except json.JSONDecodeError:
            pass
    if path.suffix == ".jsonl":
        rows = []
        for line in text.splitlines():
            try:
                rows.append(json.dumps(_normal_json(json.loads(line)), sort_keys=True))
            except json.JSONDecodeError:
                rows.append(line)
        return "\n".join(rows).encode()
    return text.encode()


def main(argv: list[str] | None = None) -> int:
    """Run the commands into ``OUT`` and print the digests; return 0 (a command's failure is output too)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="an empty or missing folder for every output")
    parser.add_argument("--ref", default="HEAD", help="the git revision to run (default: HEAD)")
    args = parser.parse_args(argv)
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(HERE), "archive", args.ref], capture_output=True, check=False)
    if archive.returncode:
        sys.exit(f"check_outputs: git archive {args.ref}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(ROOT)], input=archive.stdout, check=True)
    # git archive stamps files with the commit's time; some cache keys read the data file's mtime.
    for path in ROOT.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000), follow_symlinks=False)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        sys.exit(f"check_outputs: {out} is not empty; give an empty or missing folder")
    home = Path(tempfile.mkdtemp(prefix="prb-check-home-"))
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "COLUMNS": "120",
           "OPENAI_API_KEY": "sk-fake", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONHASHSEED": "0", "TQDM_DISABLE": "1",
           "PYTHONPATH": str(ROOT)}
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "prb_tasks.testing.fake_server", "--port", str(port),
                               "--policy", "A"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    logs = out / "logs"
    logs.mkdir()
    try:
        for name, argv_ in commands(out, port):
            done = subprocess.run(argv_, env=env, cwd=out, capture_output=True, text=True, timeout=900)
            (logs / f"{name}.out").write_text(done.stdout, encoding="utf-8")
            (logs / f"{name}.err").write_text(done.stderr, encoding="utf-8")
            (logs / f"{name}.rc").write_text(f"{done.returncode}\n", encoding="utf-8")
    finally:
        os.killpg(server.pid, 15)
        server.wait()
    swaps = {str(out): "<OUT>", str(home): "<HOME>", str(ROOT): "<ROOT>", f":{port}": ":<PORT>"}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = _TIMESTAMP.sub("<TIME>", str(path.relative_to(out)))
        print(f"{hashlib.sha256(normalised(path, swaps)).hexdigest()}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
