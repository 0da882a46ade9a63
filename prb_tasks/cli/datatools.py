"""``prb data download`` and ``prb data validate``: local copies in the HF layout,
and bring-your-own preference files."""

from __future__ import annotations

import sys
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.data import families


def download(target: Path, subsets: list[str] | None = None, family: str = "personalized_rb") -> int:
    """Copy a family's files from the hub into ``target`` (same layout as the HF repo), then check them.

    Args:
        target: destination folder (created).
        subsets: ``--subset`` names, for a family downloaded by subset (Personalized
            RewardBench: HF config names; all when None).
        family: a registered family with a hub copy (``personalized_rb``, ``personalllm``:
            its test and train splits, ``rewardbench2``, ``rmbench``).
    """
    chosen = families.get(family)
    if chosen.hub_repo is None:
        print(f"prb: nothing to download for --family {family}")
        return 2
    if chosen.subset_files is None:
        if subsets:
            by_subset = families.either(f.name for f in families.families("download") if f.subset_files)
            print(f"prb: --subset applies to {by_subset} only; {chosen.whole}")
            return 2
        patterns = list(chosen.hub_files)
    else:
        try:
            patterns = chosen.subset_files(subsets) + list(chosen.hub_files)
        except PRBError as exc:
            print(str(exc), file=sys.stderr)
            return 2
    parts = chosen.hub_parts or ((chosen.hub_repo, ""),)
    for repo, folder in parts:
        # The command the offline line suggests names the family: without --family it copies another one.
        again = chosen.download_command() if family else "prb data download DIR"
        code = _snapshot(repo, patterns, target / folder if folder else target, again)
        if code:
            return code
    return validate(target, family)


def _snapshot(repo: str, patterns: list[str], target: Path, again: str = "prb data download DIR") -> int:
    """Download ``patterns`` of the HF dataset ``repo`` into ``target``; 0 on success.

    Args:
        repo: the HF dataset.
        patterns: the files to download.
        target: the folder they go into.
        again: the command an offline machine's line tells the user to run elsewhere.
    """
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
        print(f"prb: cannot download {repo}: {reason}; run `{again}` on a machine with "
              "access to huggingface.co and copy DIR here", file=sys.stderr)
        return 1
    try:
        snapshot_download(repo_id=repo, repo_type="dataset", allow_patterns=patterns, local_dir=str(target))
    except Exception as exc:  # noqa: BLE001 - offline, auth, rate limit: the advice is the same
        first = f"{type(exc).__name__}: {exc}".splitlines()[0]
        print(f"prb: download of {repo} failed: {first}; this needs access to huggingface.co: "
              "copy the folder from a connected machine instead", file=sys.stderr)
        return 1
    return 0


def validate(folder: Path, family: str | None = None) -> int:
    """Check a local copy (or preference file); print counts; return a process exit code.

    Args:
        folder: the copy's root folder, or a ``.json``/``.jsonl`` preference file; a
            family's bundled name stands for its bundled data when no such path exists:
            ``sample`` the bundled sample, as with ``--metadata '{"data_dir": "sample"}'``,
            ``example`` the bundled example preference file (``data_path: example``).
        family: a registered family's name; guessed from the layout when None.
    """
    owner = families.bundled(str(folder)) if not folder.exists() else None
    if owner is not None and owner.bundled_path is not None:
        # As for the tasks and prb audit: the name is the bundled data.
        folder = owner.bundled_path()
    claimed = any(f.detect is not None and f.detect(folder) for f in families.families())
    if family is None and owner is None and not claimed and not folder.exists() and not folder.is_symlink():
        # No family's layout to guess from (a .jsonl name is a preference file's): the first family's message (its
        # subset folders) would mislead a user of any other family.
        print(f"prb: '{folder}' does not exist; give a local copy's folder (`prb data download DIR --family NAME` "
              "makes one), a preference file, or 'sample'", file=sys.stderr)
        return 2
    chosen = families.get(family or families.detect(folder))
    return chosen.validate(folder, owner is not None)
