"""Small RewardBench 2 copies in the exact HF layout; the writer lives in the package
(``prb_tasks.testing.benchmark_copies``) so the docs' walkthrough can use it too."""

from prb_tasks.testing.benchmark_copies import rewardbench2_rows as fixture_rows  # noqa: F401
from prb_tasks.testing.benchmark_copies import write_rewardbench2  # noqa: F401
