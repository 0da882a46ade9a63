"""``prb audit``: how far content-blind shortcuts get on a data set."""

__all__: list[str] = []
