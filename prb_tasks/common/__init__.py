"""Small helpers shared by every part of prb: error types, retries, JSON stores,
secret redaction, text-file reading, bundled file locations, "did you mean" hints,
refusing keys in model arguments, and seeding torch lazily.

Nothing here imports from the rest of ``prb_tasks``, so any module may use them.
"""
