"""``prb rl``: the RL downstream (a policy trained against each reward model, graded like Best-of-N)."""

__all__: list[str] = []
