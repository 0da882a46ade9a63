"""Personalized RewardBench as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

import sys
from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.personalized_rb.subsets import HF_REPO, SUBSETS, subset_by_name


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a local copy: rows and warnings per subset; return a process exit code.

    Args:
        folder: the copy's root folder (``<folder>/<subset config>/...``).
        bundled: ``folder`` is the bundled synthetic sample (its counts are not compared
            with the published split's).
    """
    from prb_tasks.common.terminal import fit
    from prb_tasks.data.personalized_rb.checks import find_warnings
    from prb_tasks.data.personalized_rb.reader import read_subset, split_files

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
            print(f"{subset.config:<38} {'-':>6}  missing")
            print(fit(f"  {exc}"))  # the reason under its row, wrapped to the terminal's 120 columns
            status = max(status, 1)
            continue
        try:
            rows = read_subset(folder, subset)
        except DataError as exc:
            print(f"{subset.config:<38} {'-':>6}  INVALID")
            print(fit(f"  {exc}"))
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
            print(fit(f"  {warning.line(str(folder / subset.config))}"))
    print(f"{'total':<38} {total:>6}")
    return status


def subset_files(names: list[str] | None) -> list[str]:
    """The hub file patterns of the ``--subset`` names (all subsets when None or empty).

    Raises:
        DataError: an unknown name (one line with a near match and the subsets).
    """
    known = [s.config for s in SUBSETS]
    configs = []
    for name in names or known:
        try:
            configs.append(subset_by_name(name).config)
        except ValueError:
            from prb_tasks.common.suggest import did_you_mean

            raise DataError(f"prb: unknown --subset '{name}'{did_you_mean(name, known)}; subsets: "
                            + ", ".join(f"{s.config} ({s.short})" for s in SUBSETS)) from None
    return [f"{c}/*" for c in configs]


def _sample() -> Path:
    from prb_tasks.common.resources import sample_dir

    return sample_dir()


FAMILY = BenchmarkFamily(
    name="personalized_rb",
    order=10,
    validate=validate,
    documents=("prb_tasks.documents.personalized_rb", "prb_tasks.documents.personalized_rb_bon"),
    options="prb_tasks.documents.personalized_rb:DocOptions",
    task_folders=("personalized_rb", "personalized_rb_bon"),
    commands=frozenset({"download", "validate", "audit", "train"}),
    # No layout test: a folder no other family claims is taken for a Personalized RewardBench copy.
    bundled="sample",  # personalized_rb.sources.SAMPLE (that module would load numpy for every command)
    bundled_path=_sample,
    hub_repo=HF_REPO,
    hub_files=("README.md",),
    subset_files=subset_files,
    audit="prb_tasks.documents.personalized_rb:audit_docs",
    describe="a Personalized RewardBench folder (<dir>/Art_and_Entertainment/...) or 'sample'",
    downstream_tasks=("personalized_rb_bon", "personalized_rb_bon_judge"),
    pairwise_example="personalized_rb_sample_scalar",
    train="prb_tasks.train.sources:personalized_rb",
    users_have="Personalized RewardBench rows have a profile (the asker's posts) and no demographics",
    one_pair_per_user=True,
)
