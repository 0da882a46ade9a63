"""``--metadata`` of a command that takes its data as a DATA argument (``prb audit``, ``prb train``)."""

from __future__ import annotations

import json
from typing import Any

from prb_tasks.common.errors import PRBError


def data_command_metadata(text: str | None, command: str, error: type[PRBError] = PRBError) -> dict[str, Any]:
    """``--metadata`` as a dict; not JSON, not an object, or naming the data again is one line.

    Args:
        text: ``--metadata`` as given (JSON text) or None.
        command: the command, for the message (``prb audit``).
        error: the error class to raise (the command's own).
    """
    try:
        options = json.loads(text) if text else {}
    except ValueError as exc:
        raise error(f"{command}: --metadata is not JSON ({exc}); give an object, e.g. "
                    "'{\"n_users\": 200}'") from None
    if not isinstance(options, dict):
        raise error(f"{command}: --metadata must be a JSON object, e.g. '{{\"n_users\": 200}}'")
    for key in ("data_dir", "data_path"):
        if key in options:
            raise error(f"{command}: give the data as the DATA argument, not as --metadata {key}")
    return options
