"""Turning validated rows into the small documents lm-eval iterates over, one module per family."""

__all__: list[str] = []
