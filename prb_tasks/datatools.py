"""``prb data download`` and ``prb data validate``: local copies in the HF layout."""

from __future__ import annotations

import sys
from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.reader import read_subset, split_files
from prb_tasks.data.personalized_rb.subsets import HF_REPO, SUBSETS, subset_by_name


def download(target: Path, subsets: list[str] | None = None) -> int:
    """Copy the benchmark's parquet files into ``target`` (same layout as the HF repo).

    Args:
        target: destination folder (created).
        subsets: HF config names to fetch; all three when None.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - a dependency of lm-eval
        print("prb: huggingface_hub is not installed; pip install huggingface_hub", file=sys.stderr)
        return 2
    from prb_tasks.data.hub import offline_mode, unreachable_reason

    known = [s.config for s in SUBSETS]
    configs = []
    for name in subsets or known:
        try:
            configs.append(subset_by_name(name).config)
        except ValueError:
            from prb_tasks.suggest import did_you_mean

            print(f"prb: unknown --subset '{name}'{did_you_mean(name, known)}; subsets: "
                  + ", ".join(f"{s.config} ({s.short})" for s in SUBSETS), file=sys.stderr)
            return 2
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"prb: cannot create {target}: {exc.strerror or exc}; choose a folder you can write to",
              file=sys.stderr)
        return 2
    reason = "HF_HUB_OFFLINE is set" if offline_mode() else unreachable_reason()
    if reason is not None:
        print(f"prb: cannot download {HF_REPO}: {reason}; run `prb data download DIR` on a machine with "
              "access to huggingface.co and copy DIR here", file=sys.stderr)
        return 1
    try:
        snapshot_download(
            repo_id=HF_REPO,
            repo_type="dataset",
            allow_patterns=[f"{c}/*" for c in configs] + ["README.md"],
            local_dir=str(target),
        )
    except Exception as exc:  # offline, auth, rate limit: the advice is the same
        first = f"{type(exc).__name__}: {exc}".splitlines()[0]
        print(f"prb: download of {HF_REPO} failed: {first}; this needs access to huggingface.co: "
              "copy the folder from a connected machine instead", file=sys.stderr)
        return 1
    return validate(target)


def validate(folder: Path) -> int:
    """Check every subset under ``folder``; print counts; return a process exit code.

    Args:
        folder: a local copy in the HF layout; ``sample`` means the bundled sample,
            as with ``--metadata '{"data_dir": "sample"}'``.
    """
    from prb_tasks.data.personalized_rb.sources import SAMPLE
    from prb_tasks.resources import sample_dir

    bundled = str(folder) == SAMPLE and not folder.exists()
    if bundled:
        folder = sample_dir()
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
        note = "ok"
        if bundled:
            note = "ok (the bundled synthetic sample)"
        elif subset.expected_rows is not None and len(rows) != subset.expected_rows:
            note = f"ok (the published split has {subset.expected_rows}; this is a partial or different copy)"
        print(f"{subset.config:<38} {len(rows):>6}  {note}")
    print(f"{'total':<38} {total:>6}")
    return status
