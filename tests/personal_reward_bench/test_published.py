"""PersonalRewardBench's published rows reach ``prb compare`` as runs marked published, with their protocol."""

from __future__ import annotations

import json
from pathlib import Path

from prb_tasks.data.personal_reward_bench.published import PROTOCOLS, ROWS, main
from prb_tasks.report.compare import compare


def test_published_rows_in_compare(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "pub")]) == 0
    assert "wrote 10 published rows" in capsys.readouterr().out
    report = json.loads(compare([tmp_path / "pub"], fmt="json", charts=False).text)
    models = [m for s in report["sections"] for m in s["models"]]
    assert len(models) == len(ROWS) == 10
    by_label = {m["label"]: m for m in models}
    pgenrm = by_label["published (model=P-GenRM-8B, protocol=pgenrm) [personal_reward_bench_arena]"]
    assert pgenrm["acc"]["value"] == 0.7592 and pgenrm["backend"] == "published" and not pgenrm["logged"]
    assert pgenrm["source"] == "hub" and pgenrm["setting"] == "history"
    prism = {m["label"].split(" [")[0]: m["acc"]["value"] for m in models if m["family"].endswith("_prism")}
    assert prism == {
        "published (model=P-GenRM-8B, protocol=pgenrm)": 0.6806,
        "published (model=SynthesizeMe, protocol=pgenrm_table)": 0.6374,
        "published (model=LaMP-style retrieval, protocol=pgenrm_table)": 0.5417,
        "published (model=Llama-3.1-8B judge, default, protocol=synthesizeme)": 0.528,
        "published (model=Llama-3.1-8B judge, demographics, protocol=synthesizeme)": 0.5406,
        "published (model=Llama-3.1-8B judge, memory, protocol=synthesizeme)": 0.5417,
        "published (model=Llama-3.1-8B judge, SynthesizeMe, protocol=synthesizeme)": 0.5524,
    }
    assert all(row.protocol in PROTOCOLS for row in ROWS)
    written = json.loads(next((tmp_path / "pub").glob("p_genrm_8b_prism/results_*.json")).read_text())
    assert written["prb"]["published"]["source"] == "P-GenRM (ICLR 2026)"
