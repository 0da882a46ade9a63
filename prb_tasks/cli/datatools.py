"""``prb data download`` and ``prb data validate``: local copies in the HF layout,
and bring-your-own preference files."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.family import detect_family
from prb_tasks.data.personalized_rb.checks import find_warnings
from prb_tasks.data.personalized_rb.reader import read_subset, split_files
from prb_tasks.data.personalized_rb.subsets import HF_REPO, SUBSETS, subset_by_name


FAMILIES = ("personalized_rb", "personalllm", "custom")


def download(target: Path, subsets: list[str] | None = None, family: str = "personalized_rb") -> int:
    """Copy the benchmark's parquet files into ``target`` (same layout as the HF repo).

    Args:
        target: destination folder (created).
        subsets: HF config names to fetch; all three when None (Personalized RewardBench only).
        family: ``personalized_rb`` or ``personalllm`` (its test split, and the train split
            the authors' public-script preset draws histories from).
    """
    if family in ("rewardbench2", "rmbench"):
        from prb_tasks.cli import general_data

        if subsets:
            print(f"prb: --subset applies to personalized_rb only; {family} is downloaded whole")
            return 2
        return general_data.download(target, family)
    if family == "personalllm":
        from prb_tasks.data.personalllm.constants import DATA_FOLDER, HF_REPO as PLLM_REPO, HF_SPLIT, TRAIN_SPLIT

        if subsets:
            print("prb: --subset applies to personalized_rb only; PersonalLLM has one test split")
            return 2
        return _snapshot(PLLM_REPO, [f"{DATA_FOLDER}/{HF_SPLIT}-*", f"{DATA_FOLDER}/{TRAIN_SPLIT}-*", "README.md"], target) or validate(target, family)
    if family != "personalized_rb":
        print(f"prb: nothing to download for --family {family}")
        return 2
    known = [s.config for s in SUBSETS]
    configs = []
    for name in subsets or known:
        try:
            configs.append(subset_by_name(name).config)
        except ValueError:
            from prb_tasks.common.suggest import did_you_mean

            print(f"prb: unknown --subset '{name}'{did_you_mean(name, known)}; subsets: "
                  + ", ".join(f"{s.config} ({s.short})" for s in SUBSETS), file=sys.stderr)
            return 2
    return _snapshot(HF_REPO, [f"{c}/*" for c in configs] + ["README.md"], target) or validate(target, family)


def _snapshot(repo: str, patterns: list[str], target: Path) -> int:
    """Download ``patterns`` of the HF dataset ``repo`` into ``target``; 0 on success."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - a dependency of lm-eval
        print("prb: huggingface_hub is not installed; pip install huggingface_hub", file=sys.stderr)
        return 2
    from prb_tasks.common.hub_reach import offline_mode, unreachable_reason

    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"prb: cannot create {target}: {exc.strerror or exc}; choose a folder you can write to",
              file=sys.stderr)
        return 2
    reason = "HF_HUB_OFFLINE is set" if offline_mode() else unreachable_reason()
    if reason is not None:
        print(f"prb: cannot download {repo}: {reason}; run `prb data download DIR` on a machine with "
              "access to huggingface.co and copy DIR here", file=sys.stderr)
        return 1
    try:
        snapshot_download(repo_id=repo, repo_type="dataset", allow_patterns=patterns, local_dir=str(target))
    except Exception as exc:  # offline, auth, rate limit: the advice is the same
        first = f"{type(exc).__name__}: {exc}".splitlines()[0]
        print(f"prb: download of {repo} failed: {first}; this needs access to huggingface.co: "
              "copy the folder from a connected machine instead", file=sys.stderr)
        return 1
    return 0


def validate(folder: Path, family: str | None = None) -> int:
    """Check a local copy (or preference file); print counts; return a process exit code.

    Args:
        folder: the copy's root folder, or a ``.json``/``.jsonl`` preference file;
            ``sample`` means the bundled sample, as with ``--metadata '{"data_dir": "sample"}'``;
            ``example`` the bundled example preference file (``data_path: example``).
        family: ``personalized_rb``, ``personalllm`` or ``custom``; guessed when None.
    """
    from prb_tasks.data.personalized_rb.sources import SAMPLE
    from prb_tasks.common.resources import sample_dir

    from prb_tasks.data.custom.sources import EXAMPLE, example_path

    bundled = str(folder) == SAMPLE and not folder.exists()
    if bundled:
        folder = sample_dir()
    elif str(folder) == EXAMPLE and not folder.exists():
        # As for the tasks and prb audit: 'example' is the bundled example preference file.
        folder = example_path()
    family = family or detect_family(folder)
    if family in ("rewardbench2", "rmbench"):
        from prb_tasks.cli import general_data

        return general_data.validate(folder, family)
    if family == "personalllm":
        return validate_personalllm(folder)
    if family == "custom":
        return validate_custom(folder)
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is a file, not a folder"
        print(f"prb: '{folder}' {what}; pass the folder that holds the subset folders "
              f"(<dir>/{SUBSETS[0].config}/...), or 'sample'", file=sys.stderr)
        return 2
    status = 0
    total = 0
    print(f"{'subset':<38} {'rows':>6}  status")
    for subset in SUBSETS:
        try:
            split_files(folder, subset)
        except DataError as exc:
            print(f"{subset.config:<38} {'-':>6}  missing: {exc}")
            status = max(status, 1)
            continue
        try:
            rows = read_subset(folder, subset)
        except DataError as exc:
            print(f"{subset.config:<38} {'-':>6}  INVALID")
            print(f"  {exc}")
            status = 1
            continue
        total += len(rows)
        warnings = find_warnings(rows)
        note = "ok" if not warnings else f"ok, {len(warnings)} warning{'s' if len(warnings) > 1 else ''}"
        if bundled:
            note += " (the bundled synthetic sample)"
        elif subset.expected_rows is not None and len(rows) != subset.expected_rows:
            note += f" (the published split has {subset.expected_rows}; this is a partial or different copy)"
        print(f"{subset.config:<38} {len(rows):>6}  {note}")
        for warning in warnings:
            print(f"  {warning.line(str(folder / subset.config))}")
    print(f"{'total':<38} {total:>6}")
    return status


def validate_personalllm(folder: Path) -> int:
    """Check a PersonalLLM copy (``<dir>/data/test-*.parquet``); print counts per prompt subset."""
    from prb_tasks.data.personalllm.constants import EXPECTED_TEST_ROWS
    from prb_tasks.data.personalllm.reader import read_split

    if not folder.is_dir():
        print(f"prb: '{folder}' is not a folder", file=sys.stderr)
        return 2
    try:
        rows = read_split(folder)
    except DataError as exc:
        print(str(exc))
        return 1
    incomplete = [row for row in rows if row.missing_scores]
    print(f"{'PersonalLLM prompt subset':<38} {'rows':>6}")
    for subset, count in sorted(Counter(row.subset for row in rows).items()):
        print(f"{subset:<38} {count:>6}")
    note = "ok" if len(rows) == EXPECTED_TEST_ROWS else (
        f"ok (the published test split has {EXPECTED_TEST_ROWS}; this is a partial or different copy)")
    print(f"{'total':<38} {len(rows):>6}  {note}")
    if incomplete:
        first = incomplete[0]
        print(f"{len(incomplete)} prompts have a missing reward and will not be used "
              f"(first: row {first.index + 1}, column {first.missing_scores[0]})")
    return 0


def validate_custom(path: Path) -> int:
    """Check a bring-your-own preference file; print users, preferences and tags."""
    from prb_tasks.data.custom.reader import read_users

    if not path.is_file():
        print(f"prb: '{path}' is not a file", file=sys.stderr)
        return 2
    try:
        users = read_users(path)
    except DataError as exc:
        print(str(exc))
        return 1
    prefs = [p for u in users for p in u.preferences]
    tags = Counter(t for p in prefs for t in p.value_alignment)
    chosen_a = sum(p.chosen_response == "response_A" for p in prefs)
    single = sum(len(u.preferences) == 1 for u in users)
    print(f"{path}: ok")
    print(f"  users: {len(users)} ({single} with a single preference, judged with no history)")
    print(f"  preferences: {len(prefs)} (chosen is response_A in {chosen_a}, response_B in {len(prefs) - chosen_a})")
    print(f"  without a reason: {sum(not p.reason.strip() for p in prefs)}; "
          f"without value_alignment tags: {sum(not p.value_alignment for p in prefs)}")
    if tags:
        print(f"  tags ({len(tags)}): " + ", ".join(f"{t} {n}" for t, n in sorted(tags.items())))
    return 0
