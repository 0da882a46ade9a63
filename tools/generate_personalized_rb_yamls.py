"""Write the task YAMLs of ``prb_tasks/tasks/personalized_rb/`` from one table.

Each variant is a group over the benchmark's three subsets: one group YAML and one YAML
per subset (``personalized_rb_<variant>_<subset>.yaml``), all alike but for the names.
The four ``_*.yaml`` files they include (prompts, metrics, the loader) are written by hand.
Run ``python tools/generate_personalized_rb_yamls.py`` after changing :data:`VARIANTS`;
``--check`` exits 1 when a committed file differs from what the table gives
(``tests/documents/test_generated_yamls.py`` runs the same comparison).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "prb_tasks" / "tasks" / "personalized_rb"
# (file-name suffix, the subset's name on the hub)
SUBSETS = (("art", "Art_and_Entertainment"), ("lifestyle", "Lifestyle_and_Personal_Development"),
           ("society", "Society_and_Culture"))
MICRO_MACRO = "# acc is the size-weighted (micro) mean over subsets; acc_macro the plain mean of the three."
PAIRWISE = ("acc_pos_a", "acc_pos_b", "pos_bias", "pos_a_rate", "parse_fail", "error_rate", "skip_rate")
# Soft verdicts (prb-judge logprobs=; prb_tasks/scoring/soft.py): absent from runs without them.
SOFT = ("soft_acc", "soft_cover", "ece", "acc_cov20", "acc_cov40", "acc_cov60", "acc_cov80", "acc_cov100")
BOTH_ORDERS = ("acc", "acc_macro", "acc_pair", "consistency", "double_game") + PAIRWISE + SOFT
SCALAR = ("acc", "acc_macro", "tie_rate")
OFFICIAL = (("acc", "acc_macro", "acc_official") + PAIRWISE
            + ("acc_pos_a_official", "acc_pos_b_official", "pos_bias_official", "pos_a_rate_official",
               "parse_fail_official", "always_a_official"))
PLAN = ("plan_recall", "plan_precision", "plan_empty", "plan_size", "error_rate", "skip_rate")


@dataclass(frozen=True)
class Variant:
    """One group of the family.

    Attributes:
        name: the group's task name; subtasks append ``_<subset>``.
        comments: the group file's opening comment lines (without ``# ``).
        alias: the group's ``group_alias``.
        include: the shared YAML every subtask includes.
        variant: ``dataset_kwargs.variant`` (what the document builder makes).
        setting: ``metadata.setting``: what the model is shown (prb_tasks/report/settings.py).
        metrics: the group's aggregated metrics; ``acc_macro`` is the unweighted one.
        source: ``dataset_kwargs.source`` (``sample`` for the bundled data), or None.
    """

    name: str
    comments: tuple[str, ...]
    alias: str
    include: str
    variant: str
    setting: str
    metrics: tuple[str, ...]
    source: str | None = None


VARIANTS = (
    Variant("personalized_rb",
            ("The default judge benchmark: question only (as the official protocol), each pair judged in both "
             "orders.",),
            "Personalized RewardBench: judge, question only, both orders", "_judge_both.yaml", "both", "question",
            BOTH_ORDERS),
    Variant("personalized_rb_official",
            ("The official protocol: one order per pair (seed 42 per subset), question only. acc_official reads "
             "unparsed verdicts as A, like the original script.",),
            "Personalized RewardBench: judge, official single order", "_judge_single.yaml", "official", "question",
            OFFICIAL),
    Variant("personalized_rb_oracle",
            ("DIAGNOSTIC ONLY: the judge is shown the rubric aspects, the benchmark's own scoring standard. An upper "
             "bound; never report it as a leaderboard number.",),
            "Personalized RewardBench: judge sees rubric aspects (DIAGNOSTIC upper bound, not a leaderboard number)",
            "_judge_both.yaml", "oracle", "oracle", BOTH_ORDERS),
    Variant("personalized_rb_plan",
            ("Planner stage 1: the model lists the aspects this user will expect, from the question and the user's "
             "top-k posts (--metadata retriever, k, max_post_chars).",
             "Plan quality against the gold rubric aspects; run with --log_samples --output_path DIR, then stage 2 "
             "with --metadata '{\"plans\": \"DIR\"}'."),
            "Personalized RewardBench: planner stage 1, inferred aspects vs the rubric", "_plan.yaml", "plan",
            "profile", PLAN),
    Variant("personalized_rb_planned",
            ("Planner stage 2: the judge sees the question, the aspects stage 1 inferred (--metadata '{\"plans\": "
             "\"<stage-1 output>\"}') and both responses, in both orders.",),
            "Personalized RewardBench: judge, question + inferred aspects (planner), both orders", "_judge_both.yaml",
            "planned", "plan", BOTH_ORDERS),
    Variant("personalized_rb_profile",
            ("Profile-aware: the judge also sees the user's k past posts most relevant to the question (BM25; "
             "--metadata k, max_post_chars).",),
            "Personalized RewardBench: judge, question + top-k profile posts, both orders", "_judge_both.yaml",
            "profile", "profile", BOTH_ORDERS),
    Variant("personalized_rb_sample",
            ("Offline demo on the bundled synthetic sample (36 pairs written for this project, not benchmark data).",),
            "PRB bundled SYNTHETIC sample: judge, both orders", "_judge_both.yaml", "both", "question", BOTH_ORDERS,
            source="sample"),
    Variant("personalized_rb_sample_scalar",
            ("Offline demo on the bundled synthetic sample with a scalar RM or baseline scorer.",),
            "PRB bundled SYNTHETIC sample: scalar RM", "_scalar.yaml", "scalar", "question", SCALAR, source="sample"),
    Variant("personalized_rb_scalar",
            ("Scalar RMs on the official protocol: [user: question, assistant: response]; ties count as wrong.",),
            "Personalized RewardBench: scalar RM, question only", "_scalar.yaml", "scalar", "question", SCALAR),
    Variant("personalized_rb_scalar_profile",
            ("Scalar RMs with the user's top-k posts (BM25) prepended to the question in the user turn.",),
            "Personalized RewardBench: scalar RM, question + top-k profile posts", "_scalar.yaml", "scalar_profile",
            "profile", SCALAR),
)


def group_yaml(v: Variant) -> str:
    """The group file of ``v``."""
    lines = [f"# {c}" for c in v.comments]
    if "acc_macro" in v.metrics:
        lines.append(MICRO_MACRO)
    lines += [f"group: {v.name}", f'group_alias: "{v.alias}"', "task:"]
    lines += [f"  - {v.name}_{short}" for short, _ in SUBSETS]
    lines.append("aggregate_metric_list:")
    for metric in v.metrics:
        lines += [f"  - metric: {metric}", f"    weight_by_size: {'false' if metric == 'acc_macro' else 'true'}"]
    lines += ["metadata:", "  version: 1.0"]
    return "\n".join(lines) + "\n"


def subtask_yaml(v: Variant, short: str, subset: str) -> str:
    """The file of ``v``'s subtask on ``subset`` (``short``: its suffix in the task name)."""
    lines = [f"include: {v.include}", f"task: {v.name}_{short}", f"task_alias: {subset}", "dataset_kwargs:",
             f"  subset: {subset}", f"  variant: {v.variant}"]
    if v.source:
        lines.append(f"  source: {v.source}")
    lines += ["metadata:", "  version: 1.0",
              "  # What the model is shown (see prb_tasks/report/settings.py): "
              "reports rank only models shown the same.",
              f"  setting: {v.setting}"]
    return "\n".join(lines) + "\n"


def generated() -> dict[str, str]:
    """File name -> text of every generated file."""
    out: dict[str, str] = {}
    for v in VARIANTS:
        out[f"{v.name}.yaml"] = group_yaml(v)
        for short, subset in SUBSETS:
            out[f"{v.name}_{short}.yaml"] = subtask_yaml(v, short, subset)
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the files (or with ``--check`` compare them); return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on any difference")
    args = parser.parse_args(argv)
    files = generated()
    stale = sorted(name for name, text in files.items()
                   if not (FOLDER / name).is_file() or (FOLDER / name).read_text(encoding="utf-8") != text)
    strays = sorted(p.name for p in FOLDER.glob("personalized_rb*.yaml") if p.name not in files)
    if args.check:
        for name in stale:
            print(f"{FOLDER / name}: differs from the generator's output; run python tools/{Path(__file__).name}")
        for name in strays:
            print(f"{FOLDER / name}: not generated; add its variant to VARIANTS or remove the file")
        return 1 if stale or strays else 0
    for name in stale:
        (FOLDER / name).write_text(files[name], encoding="utf-8")
    print(f"{len(files)} files, {len(stale)} written" + (f"; not generated: {', '.join(strays)}" if strays else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
