"""PRISM (HannahRoseKirk/prism-alignment): 1,500 people's survey answers and their rated conversations."""

__all__: list[str] = []
