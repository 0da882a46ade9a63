"""litellm's model table (prices, output limits), read without importing litellm.

``import litellm`` costs seconds of CPU and ~100 MB; a run through the direct transport
needs only one row of litellm's bundled ``model_prices_and_context_window_backup.json``
(3.5 MB). We find that file through the package's location (nothing is imported),
locate the model's entry by its quoted key and decode that one JSON object, so neither
litellm nor the whole table is ever held in memory.

Model ids resolve the way litellm's ``get_model_info`` does for the cases we use:
the full id (``gemini/gemini-2.5-flash``), else the name without its provider prefix
when the entry belongs to that provider (``openai/gpt-4.1`` -> ``gpt-4.1``;
``anthropic/claude-sonnet-4-5`` -> ``claude-sonnet-4-5``). An id not in the table (a
local ``openai/<served name>``) has no entry: its price is unknown, never 0.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

TABLE_NAME = "model_prices_and_context_window_backup.json"

# Provider prefixes whose entries are keyed by the bare model name in litellm's table.
_PROVIDER_ALIASES = {"hosted_vllm": "openai", "text-completion-openai": "openai"}


def table_path() -> Path | None:
    """Where the installed litellm keeps its bundled model table (None: litellm not installed)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / TABLE_NAME
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _table_text() -> str:
    path = table_path()
    return path.read_text(encoding="utf-8") if path is not None else ""


def _entry(key: str) -> dict[str, Any] | None:
    """The table's object for ``key``, decoded on its own (None: no such key)."""
    text = _table_text()
    needle = json.dumps(key) + ":"
    at = text.find(needle)
    while at != -1:
        # Keys start a line of the pretty-printed table: skip matches inside values.
        line_start = text.rfind("\n", 0, at) + 1
        if not text[line_start:at].strip():
            start = at + len(needle)
            while start < len(text) and text[start] in " \t\r\n":
                start += 1
            try:
                value, _ = json.JSONDecoder().raw_decode(text, start)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
        at = text.find(needle, at + 1)
    return None


@lru_cache(maxsize=64)
def model_info(model: str) -> dict[str, Any] | None:
    """litellm's table entry for a litellm model id, or None if it lists none.

    Args:
        model: litellm model id, e.g. ``openai/gpt-4.1`` or ``anthropic/claude-haiku-4-5``.
    """
    entry = _entry(model)
    if entry is not None:
        return entry
    provider, _, bare = model.partition("/")
    if not bare:
        return None
    entry = _entry(bare)
    if entry is None:
        return None
    listed = str(entry.get("litellm_provider", ""))
    wanted = _PROVIDER_ALIASES.get(provider, provider)
    return entry if listed == wanted or listed.startswith(wanted + "-") else None
