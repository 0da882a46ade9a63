"""``prb data download`` and ``prb data validate``: local copies in the HF layout."""

from __future__ import annotations

from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.checks import find_warnings
from prb_tasks.data.personalized_rb.reader import read_subset, split_files
from prb_tasks.data.personalized_rb.subsets import HF_REPO, SUBSETS


def download(target: Path, subsets: list[str] | None = None) -> int:
    """Copy the benchmark's parquet files into ``target`` (same layout as the HF repo).

    Args:
        target: destination folder (created).
        subsets: HF config names to fetch; all three when None.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - a dependency of lm-eval
        print("prb: huggingface_hub is not installed; pip install huggingface_hub")
        return 2
    configs = subsets or [s.config for s in SUBSETS]
    target.mkdir(parents=True, exist_ok=True)
    try:
        snapshot_download(
            repo_id=HF_REPO,
            repo_type="dataset",
            allow_patterns=[f"{c}/*" for c in configs] + ["README.md"],
            local_dir=str(target),
        )
    except Exception as exc:  # offline, auth, rate limit: the advice is the same
        print(f"prb: download of {HF_REPO} failed: {type(exc).__name__}: {exc}".splitlines()[0])
        print("prb: this needs access to huggingface.co; copy the folder from a connected machine instead")
        return 1
    return validate(target)


def validate(folder: Path) -> int:
    """Check every subset under ``folder``; print counts; return a process exit code."""
    if not folder.is_dir():
        print(f"prb: '{folder}' is not a folder")
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
        if subset.expected_rows is not None and len(rows) != subset.expected_rows:
            note += f" (the published split has {subset.expected_rows}; this is a partial or different copy)"
        print(f"{subset.config:<38} {len(rows):>6}  {note}")
        for warning in warnings:
            print(f"  {warning.line(str(folder / subset.config))}")
    print(f"{'total':<38} {total:>6}")
    return status
