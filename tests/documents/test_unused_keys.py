"""A ``--metadata`` key the task leaves alone is one note naming the task and why (never dropped without a word).

One ``--metadata`` serves every task of a run, so these are notes, not refusals: ``--tasks
'personal_reward_bench_arena*'`` with ``pgenrm_prompts`` is no mistake for the pgenrm task.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.documents import community_alignment, custom, personal_reward_bench, personalllm, prism
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.testing.personal_reward_bench_copy import write_copy
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.community_alignment_fixture import ca_rows, write_ca
from tests.prism_fixture import write_prism


@pytest.fixture(autouse=True)
def no_command_line() -> Any:
    """As under lm-eval's Python API: a command line another test declared (``prb eval``'s ``prepare``) would make
    only its ``--metadata`` keys the user's."""
    from prb_tasks.common import harness_args

    harness_args.declare(None)
    yield
    harness_args.declare(None)


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("unused")
    system = root / "system.jinja"
    system.write_text("You judge. Answer A or B.\n", encoding="utf-8")
    return {"prb": write_copy(root / "prb", users=2), "prism": write_prism(root / "prism"),
            "ca": write_ca(root / "ca", full=ca_rows()[:1]),
            "pllm": write_personalllm(root / "pllm", fixture_rows(20, seed=3)), "system": system}


def _build(copies: dict[str, Path], family: str, variant: str, **options: Any) -> list[dict[str, Any]]:
    builders: dict[str, Callable[..., list[dict[str, Any]]]] = {
        "personal_reward_bench": lambda v, **o: personal_reward_bench.build_docs(v, "arena", **o,
                                                                                  data_dir=str(copies["prb"])),
        "prism": lambda v, **o: prism.build_docs(v, data_dir=str(copies["prism"]), **o),
        "community_alignment": lambda v, **o: community_alignment.build_docs(v, data_dir=str(copies["ca"]), **o),
        "personalized_custom": lambda v, **o: custom.build_docs(v, data_path="example", **o),
        "personalllm": lambda v, **o: personalllm.build_docs(v, data_dir=str(copies["pllm"]), n_users=3, **o),
    }
    return [{**d, "prompt": doc_prompt(d)} for d in builders[family](variant, **options)]


def _notes(err: str) -> list[str]:
    # fit() wraps a line at 120 columns and indents the rest: join each line with its continuation.
    joined: list[str] = []
    for line in err.splitlines():
        if line.startswith(" ") and joined:
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    return [line for line in joined if " ignored by " in line]


@pytest.mark.parametrize("family, variant, task, key, why", [
    ("personal_reward_bench", "judge", "personal_reward_bench_arena", "pgenrm_prompts",
     "only personal_reward_bench_arena_official_pgenrm sends P-GenRM's prompt text"),
    ("personal_reward_bench", "scalar_history", "personal_reward_bench_arena_scalar_history", "pgenrm_prompts",
     "only personal_reward_bench_arena_official_pgenrm"),
    ("personal_reward_bench", "scalar_history", "personal_reward_bench_arena_scalar_history", "system_template",
     "it sends no judge system prompt"),
    ("personal_reward_bench", "pgenrm", "personal_reward_bench_arena_official_pgenrm", "system_template",
     "P-GenRM's protocol renders its own system and user prompts"),
    ("personal_reward_bench", "scalar", "personal_reward_bench_arena_scalar", "templates",
     "it renders no template"),
    ("prism", "judge", "prism", "k", "none of the person's other choices; prism_profile takes k"),
    ("prism", "scalar", "prism_scalar", "k", "prism_scalar_profile takes k"),
    ("prism", "scalar_profile", "prism_scalar_profile", "system_template", "it sends no judge system prompt"),
    ("community_alignment", "judge", "community_alignment", "k", "community_alignment_profile takes k"),
    ("personalized_custom", "scalar", "personalized_custom_scalar", "user_template",
     "it renders no user-message template"),
    ("personalllm", "judge", "personalllm", "icl_responses", "only personalllm_gen generates answers"),
    ("personalllm", "scalar", "personalllm_scalar", "system_template", "it sends no judge system prompt"),
])
def test_a_key_the_task_leaves_alone_is_one_note(copies: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                 family: str, variant: str, task: str, key: str, why: str) -> None:
    """Each of these keys changed nothing in the task and said nothing: now one note names the task and why."""
    value: Any = {"k": 2, "icl_responses": "winning_and_losing"}.get(key, str(copies["system"]))
    source = {"config_source": f"x/{task}.yaml"}
    plain = _build(copies, family, variant, **source)
    assert _notes(capsys.readouterr().err) == []
    given = _build(copies, family, variant, **{key: value}, **source)
    assert [d["prompt"] for d in given] == [d["prompt"] for d in plain]  # really not read
    err = capsys.readouterr().err
    notes = _notes(err)
    assert len(notes) == 1 and notes[0].startswith(f"prb: {key}={value} ignored by {task}: "), err
    assert why in notes[0], notes[0]
    assert max(len(line) for line in err.splitlines()) <= 120


@pytest.mark.parametrize("family, variant, key", [
    ("personal_reward_bench", "pgenrm", "templates"),
    ("personal_reward_bench", "judge", "system_template"),
    ("prism", "profile", "k"),
    ("community_alignment", "scalar_profile", "k"),
    ("personalized_custom", "judge", "system_template"),
])
def test_a_key_the_task_reads_is_not_noted(copies: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                           family: str, variant: str, key: str) -> None:
    value: Any = 0 if key == "k" else str(copies["system"] if key == "system_template" else copies["system"].parent)
    _build(copies, family, variant, **{key: value})
    assert _notes(capsys.readouterr().err) == []


def test_pgenrm_prompts_with_templates_notes_the_templates(copies: dict[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "PROMPTS.py"
    prompts.write_text('USER_PREFERENCE_ANALYSIS_PROMPT = "Past: {few_shots}"\n'
                       'USER_PROMPT_TEMPLATE = "{user_input} | {response_1} | {response_2}"\n', encoding="utf-8")
    _build(copies, "personal_reward_bench", "pgenrm", pgenrm_prompts=str(prompts), templates=str(tmp_path))
    notes = _notes(capsys.readouterr().err)
    assert len(notes) == 1 and notes[0].startswith(f"prb: templates={tmp_path} ignored by the personal_reward_bench "
                                                   "pgenrm tasks: pgenrm_prompts gives the prompt text"), notes


def test_personalized_rb_notes_a_key_once_per_variant_not_per_subset(capsys: pytest.CaptureFixture[str]) -> None:
    """``--tasks personalized_rb_scalar`` runs one task per subset; ``k`` (posts shown) was dropped by each without
    a word; now one note for the variant."""
    from prb_tasks.documents import personalized_rb

    plain = personalized_rb.load_dataset(subset="art", variant="scalar", source="sample")["test"]
    for subset in ("art", "lifestyle"):
        given = personalized_rb.load_dataset(subset=subset, variant="scalar", source="sample", k=3, retriever="bm25",
                                             config_source=f"x/personalized_rb_sample_scalar_{subset}.yaml")["test"]
        if subset == "art":
            assert [doc_prompt(d) for d in given] == [doc_prompt(d) for d in plain]
    notes = _notes(capsys.readouterr().err)
    why = "it shows no posts; personalized_rb_profile, _plan and _scalar_profile select them"
    assert notes == [f"prb: k=3 ignored by the personalized_rb_sample_scalar tasks: {why}",
                     f"prb: retriever=bm25 ignored by the personalized_rb_sample_scalar tasks: {why}"], notes
    personalized_rb.load_dataset(subset="art", variant="profile", source="sample", k=3)
    assert _notes(capsys.readouterr().err) == []


@pytest.mark.parametrize("family, variant", [("personal_reward_bench", "scalar"), ("prism", "scalar"),
                                             ("community_alignment", "scalar")])
def test_k_a_scalar_task_ignores_leaves_its_documents_equal(copies: dict[str, Path], family: str,
                                                            variant: str) -> None:
    """The documents' profile-store key held ``k``, so two runs with another (ignored) ``k`` differed."""
    assert _build(copies, family, variant, k=1) == _build(copies, family, variant, k=6)


def test_another_k_of_the_scalar_task_is_served_from_the_score_cache(copies: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    """Through a real HF reward model: the second run's responses all come from the score cache."""
    pytest.importorskip("transformers")
    from prb_tasks.rm.inputs import from_request
    from prb_tasks.rm.model import RewardModelLM
    from prb_tasks.testing.tiny_rm import build_tiny_rm

    rm = build_tiny_rm(tmp_path / "rm")
    scored: list[int] = []
    for k in (1, 6):
        docs = _build(copies, "personal_reward_bench", "scalar", k=k)
        items = [from_request(d, "", "", n, "personal_reward_bench_arena_scalar") for d in docs for n in (0, 1)]
        lm = RewardModelLM(pretrained=str(rm), device="cpu", cache_dir=str(tmp_path / "scores"))
        score = lm.scorer.score

        def counted(batch: Any, report: Any = None, score: Any = score) -> list[float]:
            scored.append(len(batch))
            return score(batch, report)

        lm.scorer.score = counted  # type: ignore[method-assign]
        lm.rewards(items, disable_tqdm=True)
    assert scored and sum(scored) == len(items)  # the first run scored every response, the second none


def test_fewshot_notes_the_simulation_keys_a_real_family_leaves_alone(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """PersonalLLM's simulation keys (n_users, ...) and the prompt keys given to a method's few-shot task changed
    nothing and said nothing."""
    from prb_tasks.documents import fewshot
    from tests.prism_fixture import many_rows

    folder = write_prism(tmp_path / "prism", *many_rows())
    source = {"config_source": "x/prism_fewshot.yaml"}
    plain = fewshot.build_docs("prism", "method", data_dir=str(folder), queries=2, unseen_share=0.5, **source)
    assert _notes(capsys.readouterr().err) == []
    given = fewshot.build_docs("prism", "method", data_dir=str(folder), queries=2, unseen_share=0.5, n_users=50,
                               system_template=str(tmp_path), **source)
    assert given == plain
    assert _notes(capsys.readouterr().err) == [
        "prb: system_template=" + str(tmp_path) + " ignored by prism_fewshot: prb-method scores the pairs; no prompt "
        "is rendered (the _fewshot_judge tasks render one)",
        "prb: n_users=50 ignored by prism_fewshot: it reads prism's users; only the personalllm few-shot tasks "
        "simulate users"]
    rules = tmp_path / "rules.jinja"
    rules.write_text("Answer A or B.\n", encoding="utf-8")
    judged = fewshot.build_docs("prism", "judge", data_dir=str(folder), queries=2, unseen_share=0.5,
                                system_template=str(rules))
    assert _notes(capsys.readouterr().err) == [] and judged[0]["system_prompt"].startswith("Answer A or B.")
