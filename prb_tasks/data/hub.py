"""Datasets from the Hugging Face hub: a reachability check first, then one load, any failure one line.

The check itself (:mod:`prb_tasks.common.hub_reach`) is shared with the model loaders.
"""

from __future__ import annotations

from typing import Any

from prb_tasks.common.hub_reach import offline_mode, unreachable_reason

__all__ = ["load_from_hub", "require_hub"]


def require_hub(what: str, advice: str) -> None:
    """Fail at once when the hub is out of reach, instead of after datasets' retries.

    ``HF_HUB_OFFLINE=1`` skips the check: datasets then reads its own cache.

    Args:
        what: the dataset (and subset) named in the message.
        advice: what the user can do instead (a local copy), for the message.
    """
    from prb_tasks.data.errors import DataError

    reason = None if offline_mode() else unreachable_reason()
    if reason is not None:
        raise DataError(
            f"prb: cannot load {what} from the HF hub: {reason}; {advice} "
            "(or HF_HUB_OFFLINE=1 to use the datasets cache)"
        )


def load_from_hub(repo: str, label: str, advice: str, *, config: str | None = None, split: str) -> Any:
    """One split of a hub dataset through ``datasets``; any failure is one :class:`DataError` line.

    Call :func:`require_hub` (or the family's own reachability check) first: this only loads.

    Args:
        repo: the dataset's hub id.
        label: what the message names in brackets after the id (the split or the subset).
        advice: what the user can do instead (a local copy), for the message.
        config: the dataset's config (subset), if it has several.
        split: the split to load.
    """
    from prb_tasks.data.errors import DataError

    try:
        import datasets

        return datasets.load_dataset(repo, config, split=split)
    except Exception as exc:  # offline, auth, renamed split or config: all end the same way
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise DataError(f"prb: could not load {repo} ({label}) from the HF hub: {type(exc).__name__}: "
                        f"{first}; {advice}") from exc
