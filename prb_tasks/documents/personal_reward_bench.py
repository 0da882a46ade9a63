"""PersonalRewardBench's tasks (``prb_tasks/tasks/personal_reward_bench/``): each user's test pairs are
scored; their train (and val) pairs are the history a judge or a history-aware RM is shown.

Variants (``dataset_kwargs.variant``; ``half``: ``arena`` or ``prism``):

- ``judge``: prb's clean protocol: both orders, the user's ``k`` latest train/val pairs as history,
  every judgment counted (a failure is wrong and named);
- ``kcurve``: ``judge`` at each history size of :data:`K_CURVE` (subset ``<k>-shot``), for the k-curve;
- ``synthesizeme``: SynthesizeMe's computation (both orders, their ``max(0, ·)`` scoring, bootstrap
  interval over judgments), history ``k`` (0 by default: their default judge sees none);
- ``pgenrm``: P-GenRM's computation (:func:`pgenrm_selection`: 6 history pairs drawn per test pair
  from the user's train pairs by one ``random.Random(42)`` stream over users in id order; one order;
  JSON scores, their denominator);
- ``scalar`` / ``scalar_history``: a reward model scores both answers after the request, or after the
  user's ``k`` latest train/val pairs and the request.
"""

from __future__ import annotations

import ast
import hashlib
import random
from pathlib import Path
from typing import Any, Optional

from pydantic import Field

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.errors import DataError
from prb_tasks.data.personal_reward_bench.constants import ENV_VAR, K_CURVE, PGENRM_HISTORY, PGENRM_SEED
from prb_tasks.data.personal_reward_bench.reader import (
    HALVES,
    BenchRow,
    HalfCopy,
    UserRows,
    as_people,
    half_folder,
    present_halves,
)
from prb_tasks.data.personal_reward_bench.sources import load_half, resolve_data_dir
from prb_tasks.documents.metadata import MetadataSpec, check_options, data_dir_preflight, note_unused, task_name
from prb_tasks.documents.options import TemplateOptions, parse_options, unused_templates
from prb_tasks.documents.pairs import (
    ASK_ONCE,
    DocList,
    judge_pair_docs,
    judge_system_prompt,
    scalar_pair_doc,
    to_dataset,
)
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.prompts.user_history import PastChoice, profile_texts

FAMILY = "personal_reward_bench"
VARIANTS = ("judge", "kcurve", "synthesizeme", "pgenrm", "scalar", "scalar_history")
DEFAULT_K = 6


class PersonalRewardBenchOptions(TemplateOptions):
    """``--metadata`` options of the PersonalRewardBench tasks (each field's description says what it does)."""

    data_dir: Optional[str] = Field(None, description="local copy: a folder holding chatbot_arena_personalized_0125/ "
                                    f"and/or prism_personalized_0125/ in the HF layout; else ${ENV_VAR}")
    k: Optional[int] = Field(None, ge=0, description="history pairs (the user's latest train/val pairs) shown with "
                             f"each test pair: judge and scalar_history default {DEFAULT_K}, synthesizeme 0; "
                             "the kcurve, official_pgenrm and scalar tasks fix their own (a note says so)")
    pgenrm_prompts: Optional[str] = Field(None, description="the pgenrm tasks: P-GenRM's PROMPTS.py (their "
                                          "Character-GenRM/inference/PROMPTS.py) to send their prompt text; "
                                          "default: prb's wording of the same request")


#: The ``--metadata`` keys of every ``personal_reward_bench*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options(FAMILY, PersonalRewardBenchOptions, fixed=frozenset({"variant", "half"}))

#: Variant -> why ``k`` does not apply to it (``{half}``: the task's half). A note, not a refusal: one
#: ``--metadata`` serves every task of a run, and ``--tasks 'personal_reward_bench_arena*'`` with ``k`` is
#: no mistake for the tasks that take it.
K_FIXED = {
    "kcurve": "it runs every history size of the curve, " + ", ".join(map(str, K_CURVE)) + " pairs (subsets <k>-shot)",
    "pgenrm": f"P-GenRM's official protocol draws its own {PGENRM_HISTORY} of the user's train pairs per test pair "
              "(their seeded 'rotate' selection); personal_reward_bench_{half} takes k",
    "scalar": "it scores each pair after the request alone, with no history; "
              "personal_reward_bench_{half}_scalar_history takes k",
}


def history_rows(user: UserRows, k: int) -> list[BenchRow]:
    """The ``k`` latest of a user's train and val pairs, oldest first (none of the test split).

    Args:
        user: the user's pairs.
        k: most pairs shown (0: none).
    """
    pool = [*user.train, *user.val]
    return pool[len(pool) - k:] if 0 < k <= len(pool) else (pool if k else [])


def _shown_first(key: str, salt: str) -> bool:
    # Fixed per pair by a hash, so about half are shown chosen-first and every run shows the same.
    return hashlib.sha256(f"{salt}|{key}".encode()).digest()[0] % 2 == 0


def _past(row: BenchRow) -> PastChoice:
    if _shown_first(row.key, "history"):
        return PastChoice(row.request, row.chosen_text, row.rejected_text, "A")
    return PastChoice(row.request, row.rejected_text, row.chosen_text, "B")


def _identity(copy: HalfCopy, row: BenchRow, variant: str, subset: str) -> dict[str, Any]:
    return {"pair_key": row.key, "id": row.key, "subset": subset, "user_id": f"{copy.half}:{row.user_id}",
            "variant": variant, "half": copy.half, "tags": [], "conversation_id": row.conversation_id}


def _judge_docs(copy: HalfCopy, variant: str, opts: PersonalRewardBenchOptions, ks: tuple[int, ...],
                kcurve: bool) -> list[dict[str, Any]]:
    system_prompt = judge_system_prompt(opts.templates, opts.system_template)
    user_ref = resolve("judge/user_person.jinja", opts.templates, opts.user_template)
    history_ref = resolve("judge/history.jinja", opts.templates)
    docs: list[dict[str, Any]] = []
    for k in ks:
        for user in copy.users:
            for row in user.test:
                past = [_past(r) for r in history_rows(user, k)]
                context = render(history_ref, history=past, demographics=[])
                identity = _identity(copy, row, variant, f"{k}-shot" if kcurve else copy.half)
                if kcurve:
                    identity["pair_key"] = identity["id"] = f"{row.key}/k{k}"
                identity["history_pairs"] = len(past)

                def message(a: str, b: str, context: str = context, question: str = row.request) -> str:
                    # Every field the shared template reads; this family has no stated reasons or feedback.
                    return render(user_ref, context=context, question=question, response_a=a, response_b=b,
                                  profile=(), reason="", feedback="")

                docs.extend(judge_pair_docs(identity, row.chosen_text, row.rejected_text, system_prompt, message))
    return docs


def _scalar_docs(copy: HalfCopy, variant: str, k: int, opts: PersonalRewardBenchOptions,
                 tag: str) -> list[dict[str, Any]]:
    rm_ref = resolve("rm/user_person.jinja", opts.templates, opts.user_template) if variant != "scalar" else None
    docs = []
    for user in copy.users:
        for row in user.test:
            past = [_past(r) for r in history_rows(user, k)] if rm_ref is not None else []
            prompt = row.request if rm_ref is None else render(
                rm_ref, question=row.request, history=past, demographics=[], profile=())
            key = f"{FAMILY}::{tag}::{variant}::{row.key}"
            profile_store.remember(key, profile_texts(past))
            docs.append(scalar_pair_doc(_identity(copy, row, variant, copy.half), row.request, prompt,
                                        row.chosen_text, row.rejected_text, key, chosen_first=bool(row.flip)))
    return docs


def pgenrm_selection(copy: HalfCopy, n_examples: int = PGENRM_HISTORY,
                     seed: int = PGENRM_SEED) -> list[tuple[BenchRow, list[BenchRow]]]:
    """P-GenRM's ``get_full_train_val_rotate(..., test_split_name="test")``: each test pair with its history.

    One ``random`` stream seeded once; users in id order (pandas' ``groupby``); a user without test
    pairs is skipped before any draw; each test pair draws ``min(n_examples, train)`` of the user's train
    pairs with ``sample`` (none drawn when the user has no train pair).

    Args:
        copy: the half read.
        n_examples: history pairs per test pair (their ``FEWSHOTS=6``).
        seed: their ``random.seed(42)``.
    """
    rng = random.Random(seed)
    out = []
    for user in copy.users:
        if not user.test:
            continue
        pool = list(user.train)
        for row in user.test:
            k = min(n_examples, len(pool))
            out.append((row, rng.sample(pool, k) if k > 0 else []))
    return out


def pgenrm_history(rows: list[BenchRow]) -> str:
    """Their ``fewshot_formatter``: per pair the first context turn, the chosen and the rejected text."""
    return "".join(f"User: {r.context[0].content}\nChosen: {r.chosen[0].content}\nRejected: {r.rejected[0].content}"
                   "\n\n" for r in rows)


def read_pgenrm_prompts(path: str) -> tuple[str, str]:
    """``USER_PREFERENCE_ANALYSIS_PROMPT`` and ``USER_PROMPT_TEMPLATE`` from P-GenRM's ``PROMPTS.py``,
    read from its syntax tree (never run).

    Args:
        path: the file.

    Raises:
        DataError: the file is missing or lacks either string (one line).
    """
    file = Path(path).expanduser()
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise DataError(f"prb: pgenrm_prompts {file}: cannot read it as Python ({exc}); give P-GenRM's "
                        "Character-GenRM/inference/PROMPTS.py") from None
    found = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant)
             and isinstance(node.value.value, str)}
    names = ("USER_PREFERENCE_ANALYSIS_PROMPT", "USER_PROMPT_TEMPLATE")
    missing = [n for n in names if n not in found]
    if missing:
        raise DataError(f"prb: pgenrm_prompts {file}: no string {', '.join(missing)}; give P-GenRM's "
                        "Character-GenRM/inference/PROMPTS.py")
    return found[names[0]], found[names[1]]


def _pgenrm_docs(copy: HalfCopy, opts: PersonalRewardBenchOptions) -> tuple[list[dict[str, Any]], int]:
    theirs = read_pgenrm_prompts(opts.pgenrm_prompts) if opts.pgenrm_prompts else None
    docs, unreadable = [], 0
    for row, few in pgenrm_selection(copy):
        if not (row.chosen_as_turn and all(r.chosen_as_turn for r in few)):
            # Their script reads chosen["content"]: on a list of turns it raises when the item is
            # submitted, and the item is skipped before any call (not in their denominator either).
            unreadable += 1
            continue
        first = _shown_first(row.key, "pgenrm-order")
        chosen, rejected = row.chosen[0].content, row.rejected[0].content
        one, two = (chosen, rejected) if first else (rejected, chosen)
        fields = {"user_input": row.context[0].content, "response_1": one, "response_2": two}
        if theirs is None:
            system = render(resolve("judge/pgenrm_system.jinja", opts.templates), few_shots=pgenrm_history(few))
            prompt = render(resolve("judge/pgenrm_user.jinja", opts.templates), **fields)
        else:
            system = theirs[0].format(few_shots=pgenrm_history(few))
            prompt = theirs[1].format(**fields)
        docs.append({**_identity(copy, row, "pgenrm", copy.half), "chosen_position": "A" if first else "B",
                     "system_prompt": system, "prompt": prompt, "same_text": chosen == rejected,
                     "history_pairs": len(few), ASK_ONCE: True})
    return docs, unreadable


def unused_keys(variant: str, half: str, opts: PersonalRewardBenchOptions) -> dict[str, str]:
    """``--metadata`` keys this task leaves alone -> why (:func:`~prb_tasks.documents.metadata.note_unused`
    prints one note for each the user gave).

    Args:
        variant: the task's variant.
        half: the task's half.
        opts: the options parsed.
    """
    unused = unused_templates(system=variant not in ("scalar", "scalar_history", "pgenrm"),
                              user=variant not in ("scalar", "pgenrm"))
    if variant in K_FIXED:
        unused["k"] = K_FIXED[variant].format(half=half)
    if variant == "pgenrm":
        own = ("P-GenRM's protocol renders its own system and user prompts (judge/pgenrm_system.jinja and "
               "judge/pgenrm_user.jinja of templates, or pgenrm_prompts)")
        unused["system_template"] = unused["user_template"] = own
        del unused["templates"]  # read for pgenrm_system.jinja and pgenrm_user.jinja, unless pgenrm_prompts
        if opts.pgenrm_prompts:
            unused["templates"] = "pgenrm_prompts gives the prompt text; drop one of them"
    else:
        unused["pgenrm_prompts"] = f"only personal_reward_bench_{half}_official_pgenrm sends P-GenRM's prompt text"
    return unused


def _k(opts: PersonalRewardBenchOptions, variant: str) -> int:
    if opts.k is not None:
        return opts.k
    return 0 if variant == "synthesizeme" else DEFAULT_K


def build_docs(variant: str, half: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one variant for the test pairs of one half.

    Args:
        variant: one of :data:`VARIANTS`.
        half: ``arena`` or ``prism``.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`PersonalRewardBenchOptions`.
    """
    if variant not in VARIANTS:
        raise DataError(f"prb: unknown {FAMILY} variant '{variant}'; expected one of {', '.join(VARIANTS)}")
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(PersonalRewardBenchOptions, kwargs)
    note_unused(unused_keys(variant, half, opts), kwargs, f"the {FAMILY} {variant} tasks")
    copy = load_half(opts.data_dir, half)
    tests = sum(len(u.test) for u in copy.users)
    provenance.record(kwargs, provenance.DataSource("local", str(copy.folder), "test pairs", tests),
                      task_name(kwargs) or f"{FAMILY}_{half}_{variant}")
    if variant == "pgenrm":
        docs, unreadable = _pgenrm_docs(copy, opts)
        if unreadable:
            import logging

            logging.getLogger("lm_eval.prb_tasks").warning(
                "P-GenRM protocol: %d test pairs left out before any call: chosen/rejected are lists of turns, "
                "which P-GenRM's script cannot read (chosen['content'])", unreadable)
        if not docs:
            raise DataError(f"prb: {copy.folder}: no test pair P-GenRM's script can read (chosen/rejected must be "
                            "one role/content turn)")
        return docs
    if variant in ("scalar", "scalar_history"):
        # The scalar task shows no history: a k given to it (noted above) must not change its documents.
        shown = _k(opts, variant) if variant == "scalar_history" else 0
        tag = hashlib.sha256(f"{copy.folder}|{copy.files}|{shown}".encode()).hexdigest()[:12]
        return _scalar_docs(copy, variant, shown, opts, tag)
    ks = K_CURVE if variant == "kcurve" else (_k(opts, variant),)
    return _judge_docs(copy, variant, opts, ks, kcurve=variant == "kcurve")


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point of the task YAMLs (``variant`` and ``half`` name the task)."""
    variant = kwargs.pop("variant")
    half = kwargs.pop("half")
    return to_dataset(build_docs(variant, half, **kwargs))


def fewshot_source(opts: Any, featured: bool = True) -> tuple[Any, provenance.DataSource, str]:
    """The users of every half present for the few-shot tasks and ``prb train`` (``data_family``:
    ``personal_reward_bench``): each user's pairs in train, val, test order; ids carry the half.

    This is the family's one use of prb's provenance checks: the split records the copy's digest
    (``data_digest``) beside the protocol's keys, so a ``prb train`` checkpoint refuses an evaluation
    on another copy as well as one whose unseen users it trained on
    (:meth:`prb_tasks.train.method.TrainedMethod.check_split`).

    Args:
        opts: the few-shot tasks' options (the copy is ``data_dir``).
        featured: compute the features the options ask for.
    """
    from prb_tasks.documents.fewshot import split_users
    from prb_tasks.fewshot.sources import people_pairs

    root = resolve_data_dir(opts.data_dir)
    halves = present_halves(root)
    if not halves:
        raise DataError(f"prb: {root} has no chatbot_arena_personalized_0125/data/ or prism_personalized_0125/data/")
    copies = [load_half(str(root), half) for half in halves]
    people = tuple(p for copy in copies for p in as_people(copy))
    pairs = sum(copy.pairs for copy in copies)
    origin = provenance.DataSource("local", str(root), "labelled pairs", pairs)
    tag = "|".join(f"{c.folder}|{[f.stat().st_mtime for f in c.files]}" for c in copies)
    by_user, users = people_pairs(FAMILY, people)
    data = {"data_digest": _digest([f for c in copies for f in c.files])}
    return split_users(opts, by_user, users, FAMILY, featured, data), origin, tag


def _digest(files: list[Path]) -> str:
    # The shards' bytes, in block reads: which users exist (and their pairs) is decided by them.
    digest = hashlib.sha256()
    for path in files:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\x1e")
    return digest.hexdigest()[:16]


#: ``prb eval``'s check before a model loads: a named copy must be a folder.
def _halves_present(folder: Path, _opts: Any, tasks: dict[str, Any]) -> None:
    # Each task names its half (personal_reward_bench_<half>...); the few-shot tasks, which read every half
    # present, live in another family's folder.
    for task in tasks:
        half = task.removeprefix(f"{FAMILY}_").split("_")[0]
        if half in HALVES:
            half_folder(folder, half)


preflight = data_dir_preflight(resolve_data_dir, PersonalRewardBenchOptions, _halves_present)
