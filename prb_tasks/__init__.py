"""prb: Personalized RewardBench for EleutherAI's lm-evaluation-harness.

The package is laid out along the data flow:
``data`` (load and validate rows; one subpackage per benchmark family)
-> ``prompts`` (retrieve posts, render templates)
-> ``documents`` (rows -> harness documents; one module per family)
-> ``judge`` / ``rm`` (backends) -> ``scoring`` (verdicts and metrics) -> ``report``.
``tasks/`` holds the harness YAMLs, one folder per family.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
"""The installed version of prb (``prb --version`` prints it; results files record it)."""
