"""Small RM-Bench copies in the authors' layout; the writer lives in the package
(``prb_tasks.testing.benchmark_copies``) so the docs' walkthrough can use it too."""

from prb_tasks.testing.benchmark_copies import rmbench_rows as fixture_rows  # noqa: F401
from prb_tasks.testing.benchmark_copies import write_rmbench  # noqa: F401
