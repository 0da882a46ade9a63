"""Which finished runs `prb compare` reads as pairwise verdicts (prb_tasks/report/runs.py): a judge whose
replies are boxed verdicts or ratings is left out, not read with the `Result: A` parser."""

from __future__ import annotations

from prb_tasks.report.runs import _kind

CONFIGS = {"t": {"output_type": "generate_until"}}


def _samples(doc: dict) -> dict[str, list[dict]]:
    return {"t": [{"doc": doc}]}


def test_only_pairwise_verdict_judges_are_compared() -> None:
    assert _kind(CONFIGS, ["t"], _samples({"chosen_position": "A", "variant": "both"})) == "judge"
    assert _kind(CONFIGS, ["t"], _samples({"chosen_position": "A"})) == "judge"
    # rmbench_judge documents carry a chosen position too, but their replies are boxed five-way verdicts.
    assert _kind(CONFIGS, ["t"], _samples({"chosen_position": "B", "variant": "rmbench_pair"})) is None
    assert _kind(CONFIGS, ["t"], _samples({"variant": "rating", "row_id": "r1"})) is None
