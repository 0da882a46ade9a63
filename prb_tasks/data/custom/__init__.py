"""Bring-your-own per-user preference data: one JSON object per user.

``schema`` validates a user and their preferences, ``reader`` reads ``.json`` /
``.jsonl`` files with one-line errors, ``sources`` resolves ``data_path`` (or the
bundled ``example.jsonl``).
"""
