"""``prb compare``'s per-user blocks on constructed runs: the counterpart each personalized model
is set beside, a model that helps exactly one group, a null where nothing is found, and the blocks
in every output (terminal within 120 columns, report.md, report.json, report.html)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.build import Section, _section
from prb_tasks.report.compare import compare
from prb_tasks.report.outcomes import Entry
from prb_tasks.report.peruser import per_user
from prb_tasks.report.runs import Family, Run
from tests.report_fixture import write_run


def entry(eid: str, label: str, scores: np.ndarray, users: list[str], countries: list[str] | None = None,
          setting: str = "fewshot", backend: str = "prb-method", family: str = "personalllm_fewshot") -> Entry:
    """A scalar entry of ``label`` (its run's label too) with per-pair scores, users and countries."""
    fam = Family(family, [family], "scalar", "local:x", setting=setting, benchmark="bench")
    run = Run(Path(f"{eid}/results_x.json"), label, backend, {}, [fam])
    e = Entry(eid, label, "scalar", run, fam, setting, "scalar")
    n = len(scores)
    e.keys = [f"{u}/{i}" for i, u in enumerate(users)]
    e.subset, e.user, e.category, e.tags = ["s"] * n, list(users), [None] * n, [()] * n
    e.docs = [{"user_id": u, **({"country": countries[i]} if countries else {})} for i, u in enumerate(users)]
    e.score = np.asarray(scores, dtype=float)
    e.j_pair, e.j_correct = np.arange(n), e.score.copy()
    e.j_pick = np.where(e.score == 1.0, 1, 0)
    e.j_outcome, e.j_pos, e.j_letter = ["verdict"] * n, [None] * n, [None] * n
    e.w_chosen = e.w_rejected = np.full(n, np.nan)
    e.s_chosen, e.s_rejected = e.score.copy(), np.zeros(n)
    return e


def section(entries: list[Entry], setting: str = "fewshot") -> Section:
    return _section("bench", setting, "local:x", entries, set())


USERS_PER_COUNTRY, PAIRS = 12, 10
COUNTRIES = ("Japan", "Nigeria", "Portugal")


def people() -> tuple[list[str], list[str]]:
    users = [f"{c[:2]}{u}" for c in COUNTRIES for u in range(USERS_PER_COUNTRY) for _ in range(PAIRS)]
    return users, [u[:2] for u in users]


def test_a_model_that_helps_exactly_one_country_is_found_there_and_nowhere_else():
    users, countries = people()
    rng = np.random.default_rng(4)
    base = (rng.random(len(users)) < 0.6).astype(float)
    helped = base.copy()
    portugal = np.array([c == "Po" for c in countries])
    helped[portugal] = 1.0  # right on every Portuguese pair; the others exactly as the base
    flip = ~portugal & (rng.random(len(users)) < 0.1)
    helped[flip] = 1.0 - helped[flip]  # noise in both directions elsewhere
    found = per_user(section([entry("m1", "prb-method (method=nonpersonalized)", base, users, countries),
                              entry("m2", "prb-method (method=lowrank)", helped, users, countries)]), [])
    assert found is not None and len(found.helped) == 1
    h = found.helped[0]
    assert (h.id, h.counterpart_id, h.counterpart_is) == ("m2", "m1", "the nonpersonalized method")
    assert h.shared_pairs == len(users) and h.resampled == f"{3 * USERS_PER_COUNTRY} users"
    groups = {g.value: g.split for g in h.groups}
    assert set(groups) == {"Ja", "Ni", "Po"} and found.group_fields == ["country"]
    assert groups["Po"].p_adjusted < 0.05 and groups["Po"].hurt == 0
    assert groups["Ja"].p_adjusted >= 0.05 and groups["Ni"].p_adjusted >= 0.05


def test_null_a_method_identical_to_its_counterpart_helps_and_hurts_nobody():
    users, countries = people()
    same = (np.random.default_rng(1).random(len(users)) < 0.7).astype(float)
    found = per_user(section([entry("m1", "prb-method (method=nonpersonalized)", same, users, countries),
                              entry("m2", "prb-method (method=similar_users)", same.copy(), users, countries)]), [])
    assert found is not None
    split = found.helped[0].split
    assert (split.helped, split.hurt, split.level, split.p_value) == (0, 0, 3 * USERS_PER_COUNTRY, 1.0)
    assert all(g.split.p_adjusted == 1.0 for g in found.helped[0].groups)
    # Two models that agree on every pair: every user ranks them as the aggregate does (tied), none differs.
    assert found.agreement is not None and found.agreement.users == 0
    assert found.agreement.all_tied == 3 * USERS_PER_COUNTRY


def test_a_user_aware_model_is_set_beside_the_same_model_on_the_user_blind_task():
    users, _ = people()
    scores = (np.random.default_rng(2).random(len(users)) < 0.6).astype(float)
    aware = section([entry("m1", "prb-rm (scorer=bm25)", scores, users, setting="history",
                           backend="prb-rm", family="personalized_custom_scalar_history")], "history")
    blind = section([entry("m2", "prb-rm (scorer=bm25)", scores * 0, users, setting="question",
                           backend="prb-rm", family="personalized_custom_scalar"),
                     entry("m3", "prb-rm (scorer=length)", scores, users, setting="question",
                           backend="prb-rm", family="personalized_custom_scalar")], "question")
    found = per_user(aware, [aware, blind])
    assert found is not None and [(h.id, h.counterpart_id) for h in found.helped] == [("m1", "m2")]
    assert found.helped[0].counterpart_is == "the same model on the user-blind task personalized_custom_scalar"
    assert found.helped[0].split.hurt == 0 and found.helped[0].split.helped > 0
    assert "needs at least 2 models" in " ".join(found.notes)
    # The user-blind section itself has no counterpart to be helped against.
    assert per_user(blind, [aware, blind]).helped == []


def test_data_without_users_gets_no_per_user_blocks():
    scores = np.ones(6)
    plain = entry("m1", "x", scores, ["u"] * 6)
    plain.user = [None] * 6
    assert per_user(section([plain]), []) is None


def _runs(tmp_path: Path) -> list[Path]:
    """Three methods on the few-shot task, 3 users (write_run's u0-u2) of 20 pairs each."""
    rules = {"nonpersonalized": lambda k: int(k.split("/")[1]) % 2 == 0,
             "similar_users": lambda k: int(k.split("/")[1]) % 4 != 3,
             "lowrank": lambda k: int(k.split("/")[1]) % 3 != 2}
    for name, rule in rules.items():
        write_run(tmp_path / name, "personalllm_fewshot", "prb-method", {"method": name}, rule, pairs=60,
                  source={"kind": "local", "location": "/data/pl", "subset": "x", "rows": 60})
    return [tmp_path]


def test_compare_shows_the_per_user_blocks_everywhere(tmp_path: Path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report"
    outcome = compare(_runs(tmp_path / "runs"), out)
    text = outcome.text
    # Every line fits a terminal, the ranking table too (its model names shortened to their arguments).
    assert all(len(line) <= 120 for line in text.splitlines())
    assert "1  similar_users " in text
    flat = " ".join(text.split())
    assert "per user, nonpersonalized: median" in flat and "of 3 users" in flat
    assert "helped: similar_users vs nonpersonalized" in flat and "sign test p" in flat
    assert "rankings: mean tau user vs aggregate" in flat and "500 resamples each" in flat
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    block = data["sections"][0]["per_user"]
    assert sorted(m["label"] for m in block["spreads"]) == ["prb-method (method=lowrank)",
                                                            "prb-method (method=nonpersonalized)",
                                                            "prb-method (method=similar_users)"]
    assert block["spreads"][0]["spread"]["users"] == 3 and block["min_pairs"] == 5
    assert {h["counterpart_label"] for h in block["helped"]} == {"prb-method (method=nonpersonalized)"}
    assert block["agreement"]["noise_iters"] == 500
    assert block["spreads"][0]["spread"]["resampled"] == "3 users" and block["agreement"]["resampled"] == "3 users"
    assert {h["resampled"] for h in block["helped"]} == {"3 users"}
    assert "2000 resamples of the counted users" in block["method"]["distribution"]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    for title in ("Per-user accuracy: the distribution, not only the mean",
                  "Who is helped: each personalized model against its non-personalized counterpart",
                  "Whose ranking differs: each user&#39;s ranking of the 3 models against the aggregate"):
        assert title in html
        assert title.replace("&#39;", "'") in markdown
    assert any(file.endswith("_peruser.png") for _, file in outcome.report.charts[data["sections"][0]["slug"]])
    assert "Per-user accuracy (ECDF over users)" in (out / f"{data['sections'][0]['slug']}_peruser.svg").read_text()


def test_how_much_accuracy_predicts_without_downstream_runs_names_the_published_ranges(tmp_path: Path):
    out = tmp_path / "report"
    outcome = compare(_runs(tmp_path / "runs"), out, charts=False)
    block = outcome.report.predicts
    assert block is not None and block.measured == [] and "no downstream run" in block.why_not
    flat = " ".join(outcome.text.split())
    assert "how much accuracy predicts: no Best-of-N or prb rl runs of these models here" in flat
    assert "Kendall 0.08-0.31 (arXiv 2512.23067); Spearman 0.26-0.37 (Personalized RewardBench)" in flat
    assert "here: mean tau of each user's ranking vs the aggregate" in flat and "resamples of 3 users" in flat
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [p["value"] for p in data["predicts"]["published"]] == ["0.08-0.31", "0.26-0.37",
                                                                    "0.04 mean, 57% near zero or negative"]
    assert data["predicts"]["per_user"][0]["users"] == 3
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<section id="predicts">' in html and "ACL Findings 2026" in html
    assert "## How much accuracy predicts" in (out / "report.md").read_text(encoding="utf-8")


def test_how_much_accuracy_predicts_shows_prb_validity_on_the_same_folders(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    from prb_tasks.report import validity as module
    from tests.report.test_validity_stats import model

    gains = [0.0, 0.1, 0.3, 0.2]  # accuracy orders m0 < m1 < m2 < m3; the gain swaps m2 and m3
    models = [model(f"m{i}", [1.0] * (i + 1) + [0.0] * (4 - i), [gains[i]] * 5) for i in range(4)]
    monkeypatch.setattr(module, "load_models", lambda *a, **k: (list(models), "bench", "down"))
    outcome = compare(_runs(tmp_path / "runs"), None, charts=False)
    block = outcome.report.predicts
    assert block is not None and block.why_not == ""
    flat = " ".join(outcome.text.split())
    assert "measured: kendall 0.67 (95% CI over 4 models" in flat
    assert "order flips downstream: 1 of the 6 model pairs" in flat


def test_your_own_datas_demographics_reach_the_documents_as_groups():
    from prb_tasks.documents import custom

    docs = custom.build_docs("scalar", data_path="example")
    maria = next(d for d in docs if d["user_id"] == "maria")
    # Categorical demographics only: an age is a number, not a group.
    assert maria["demographics"] == {"occupation": "retired primary-school teacher", "country": "Portugal",
                                     "tech_comfort": "low"}


def test_groups_of_too_few_users_are_left_out_of_the_split():
    users, countries = people()
    # Two Japanese users become "Iceland": a group of 2 users says nothing and is left out.
    countries = ["Is" if u in ("Ja0", "Ja1") else c for u, c in zip(users, countries)]
    scores = (np.random.default_rng(6).random(len(users)) < 0.6).astype(float)
    found = per_user(section([entry("m1", "prb-method (method=nonpersonalized)", scores, users, countries),
                              entry("m2", "prb-method (method=lowrank)", 1 - scores, users, countries)]), [])
    groups = {g.value: g.split.users for g in found.helped[0].groups}
    assert groups == {"Ja": USERS_PER_COUNTRY - 2, "Ni": USERS_PER_COUNTRY, "Po": USERS_PER_COUNTRY}
