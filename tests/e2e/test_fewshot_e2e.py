"""The few-shot tasks end to end through `prb eval`: a shipped method, a third-party method
registered by entry point, and the in-context judge against the fake server."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from prb_tasks.documents import fewshot
from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.metrics import area_under_curve
from prb_tasks.fewshot.sources import lookup
from prb_tasks.testing.fake_server import Message
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.runner import metric, read_results, read_samples, run_cli, run_fake_judge, sent_prompt

OPTIONS = {"n_users": 12, "queries": 2}


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_personalllm(tmp_path_factory.mktemp("pllm"), fixture_rows(40, seed=5))


def _metadata(copy_dir: Path, **extra) -> str:
    return json.dumps({"data_dir": str(copy_dir), **OPTIONS, **extra})


def _data(copy_dir: Path):
    docs = fewshot.build_docs("personalllm", "method", data_dir=str(copy_dir), **OPTIONS)
    return lookup(docs[0]["split_key"])


@pytest.mark.slow
def test_a_shipped_method_through_prb_eval_matches_the_protocol(tmp_path: Path, copy_dir: Path) -> None:
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=lowrank,rank=2", "--tasks",
                    "personalllm_fewshot", "--metadata", _metadata(copy_dir), "--output_path", str(out),
                    "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    expected = run(registry.build("lowrank", {"rank": 2}), _data(copy_dir))
    by_k: dict[int, list[int]] = {}
    for o in expected:
        by_k.setdefault(o.k, []).append(o.correct)
    for k, values in by_k.items():
        assert metric(results, "personalllm_fewshot", f"acc_k{k}") == pytest.approx(sum(values) / len(values))
        low, high = (metric(results, "personalllm_fewshot", f"acc_k{k}_{e}") for e in ("low", "high"))
        assert low <= sum(values) / len(values) <= high
    curve = {k: sum(v) / len(v) for k, v in by_k.items()}
    assert metric(results, "personalllm_fewshot", "aukc") == pytest.approx(area_under_curve(curve))
    assert "personalllm_fewshot k-curve, acc % (95% CI over users):\n  k=0 " in proc.stdout
    assert "6 seen users, 6 unseen" in proc.stderr
    _check_k_curve_chart(out, tmp_path / "report")


SVG = "{http://www.w3.org/2000/svg}"


def _check_k_curve_chart(runs: Path, folder: Path) -> None:
    """prb compare draws the run's k-curve: vector and raster files, the k grid on the x axis,
    percentages within 0-100, a legend naming the method and its aukc; listed for report.html."""
    pytest.importorskip("matplotlib")
    import xml.etree.ElementTree as ET

    from prb_tasks.report.build import build_report
    from prb_tasks.report.charts import draw_charts

    report = build_report([runs])
    assert draw_charts(report, folder) == []
    (section,) = report.sections
    assert report.charts[section.slug][0] == (
        "Few-shot k-curves: accuracy per support size k, 95% intervals over users", f"{section.slug}_kcurve.png")
    for ext in ("svg", "pdf", "png"):
        assert (folder / f"{section.slug}_kcurve.{ext}").stat().st_size > 0
    tree = ET.parse(folder / f"{section.slug}_kcurve.svg")
    ticks: dict[str, list[str]] = {}
    for group in tree.iter(f"{SVG}g"):
        gid = group.get("id", "")
        if re.fullmatch(r"[xy]tick_\d+", gid):
            ticks.setdefault(gid[0], []).extend("".join(t.itertext()).strip() for t in group.iter(f"{SVG}text"))
    assert [t for t in ticks["x"] if t] == ["0", "1", "2", "4", "8", "16"]
    assert all(0 <= float(t) <= 100 for t in ticks["y"] if t)
    texts = " ".join("".join(t.itertext()) for t in tree.iter(f"{SVG}text"))
    assert "lowrank" in texts and "aukc" in texts and "resampling users" in texts


def test_user_mistakes_are_one_line(tmp_path: Path, copy_dir: Path) -> None:
    base = ["eval", "--model", "prb-method", "--tasks", "personalllm_fewshot", "--metadata", _metadata(copy_dir)]
    for args, expected in (
        (["--model_args", "method=lowrnk"],
         "prb-method: unknown method 'lowrnk' (did you mean 'lowrank'?); available: nonpersonalized"),
        (["--model_args", "method=lowrank,rnk=3"], "method 'lowrank' has no option rnk"),
        (["--model_args", "seen_l2=1"], "prb-method: give --model_args method=NAME"),
    ):
        proc = run_cli(base + args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert expected in proc.stderr and "Traceback" not in proc.stderr


THIRD_PARTY = '''
"""A method from another package: the user's support pairs vote for short or long answers."""
from prb_tasks.fewshot.method import Method


class LengthTaste(Method):
    name = "length_taste"

    def __init__(self, sign: int = 1):
        self.sign, self.taste = sign, {}

    def learn(self, seen):
        self.learned_from = len(seen)

    def adapt(self, user, support):
        votes = sum(1 if len(p.chosen.text) > len(p.rejected.text) else -1 for p in support)
        self.taste[user.user_id] = self.sign * (1 if votes >= 0 else -1)

    def score(self, user, prompt, response):
        return self.taste[user.user_id] * len(response.text)
'''


def test_a_third_party_method_registered_by_entry_point(tmp_path: Path, copy_dir: Path) -> None:
    site = tmp_path / "site"
    (site / "lengthtaste").mkdir(parents=True)
    (site / "lengthtaste" / "__init__.py").write_text(textwrap.dedent(THIRD_PARTY), encoding="utf-8")
    info = site / "lengthtaste-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lengthtaste\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[prb_tasks.methods]\nlength_taste = lengthtaste:LengthTaste\n",
                                           encoding="utf-8")
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=length_taste,sign=1", "--tasks",
                    "personalllm_fewshot", "--metadata", _metadata(copy_dir), "--output_path", str(out)],
                   cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "prb-method (length_taste)" in proc.stderr
    # The same method run here, by hand, gives the same k-curve.
    import sys

    sys.path.insert(0, str(site))
    try:
        from lengthtaste import LengthTaste
    finally:
        sys.path.remove(str(site))
    outcomes = run(LengthTaste(sign=1), _data(copy_dir))
    results = read_results(out)
    for k in (0, 4, 16):
        values = [o.correct for o in outcomes if o.k == k]
        assert metric(results, "personalllm_fewshot", f"acc_k{k}") == pytest.approx(sum(values) / len(values))
    # Without the package on the path the name is unknown, and the message says how to add one.
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=length_taste", "--tasks",
                    "personalllm_fewshot", "--metadata", _metadata(copy_dir)], cwd=tmp_path)
    assert proc.returncode == 2 and "entry point in the 'prb_tasks.methods' group" in proc.stderr


_SHOWN = re.compile(r"=== Earlier comparison \d+ ===\nRequest: (.*)\n")


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["recent", "similar"])
def test_in_context_judge_through_the_fake_server(tmp_path: Path, copy_dir: Path, selection: str) -> None:
    task = "personalllm_fewshot_judge" + ("_similar" if selection == "similar" else "")
    docs = fewshot.build_docs("personalllm", "judge", selection, data_dir=str(copy_dir), **OPTIONS)
    data = lookup(docs[0]["split_key"])
    # The fake judge is right once it is shown at least 4 support pairs, wrong before.
    answers = {}
    for d in docs:
        letter = d["chosen_position"] if d["k"] >= 4 else {"A": "B", "B": "A"}[d["chosen_position"]]
        answers[d["prompt"].strip()] = f"Judging by their choices.\nResult: {letter}"

    def policy(messages: list[Message], model: str) -> str:
        return answers.get(messages[-1]["content"].strip(), "no idea")

    proc, out, sent = run_fake_judge(policy, task, _metadata(copy_dir), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sent == len(docs)
    results = read_results(out)
    for k in (0, 1, 2):
        assert metric(results, task, f"acc_k{k}") == 0.0
    for k in (4, 8, 16):
        assert metric(results, task, f"acc_k{k}") == 1.0
    assert metric(results, task, "aukc") == pytest.approx(0.5)
    # Each prompt shows exactly its k support pairs: the most recent, or the most similar of the pool.
    unseen = {u.user_id: u for u in data.split.unseen}
    for sample in read_samples(out, task):
        doc = sample["doc"]
        user, query = unseen[doc["user_id"]], data.pairs[doc["query_key"]]
        shown = _SHOWN.findall(sent_prompt(sample))
        expected = fewshot.support_for(user, query, doc["k"], selection)
        assert shown == [p.prompt for p in expected]
        assert query.prompt not in shown or query.prompt in [p.prompt for p in user.pool]
