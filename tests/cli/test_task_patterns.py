"""A ``--tasks`` pattern of prb's tasks is narrowed to the tasks the backend runs, with one line."""

from __future__ import annotations

from prb_tasks.cli.task_patterns import narrow


def test_a_pattern_keeps_what_the_backend_runs() -> None:
    tasks, notes = narrow("prb-rm", ["personal_reward_bench_*"])
    assert tasks == [f"personal_reward_bench_{h}_{v}" for h in ("arena", "prism") for v in ("scalar", "scalar_history")]
    assert len(notes) == 1 and "prb-rm runs 4 of its 15 tasks; the other 11 need another backend (prb-judge" in notes[0]
    judged, notes = narrow("prb-judge", ["personal_reward_bench_*", "rmbench"])
    assert "personal_reward_bench_arena_official_pgenrm" in judged and "personal_reward_bench_fewshot_judge" in judged
    assert not any("scalar" in t for t in judged) and "personal_reward_bench_fewshot" not in judged
    assert judged[-1] == "rmbench" and "(prb-rm for the scalar tasks" in notes[0]


def test_what_is_left_to_lm_eval() -> None:
    # Every match runnable, another backend, lm-eval's own tasks, a plain name: unchanged, no line.
    for model, entry in (("prb-rm", "personal_reward_bench_*scalar*"), ("hf", "personal_reward_bench_*"),
                         ("prb-rm", "mmlu_*"), ("prb-judge", "personal_reward_bench_arena")):
        assert narrow(model, [entry]) == ([entry], [])
