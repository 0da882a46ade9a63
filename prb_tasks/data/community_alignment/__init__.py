"""Community Alignment (facebook/community-alignment-dataset): choices of real annotators.

About 200,000 choices of more than 3,000 annotators in five countries and languages, one CSV
row per conversation.
"""

__all__: list[str] = []
