"""Small text utilities shared by retrieval and the lexical baselines."""

__all__: list[str] = []
