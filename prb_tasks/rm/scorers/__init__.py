"""Scorers: each maps a batch of :class:`~prb_tasks.rm.inputs.RMInput` to rewards."""
