"""prb: Personalized RewardBench for EleutherAI's lm-evaluation-harness.

The package is laid out along the data flow:
``data`` (load and validate rows) -> ``prompts`` (retrieve posts, render templates)
-> ``taskdocs`` (turn rows into harness documents) -> ``judge`` / ``rm`` (backends)
-> ``scoring`` (verdicts and metrics). ``tasks/`` holds the harness YAMLs.
"""

__version__ = "0.1.0"
