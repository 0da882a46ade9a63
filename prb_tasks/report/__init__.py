"""Reading finished runs back and comparing them (``prb compare``).

Data flow: ``runs`` (find and read lm-eval output folders; ``source`` says which data
they used) -> ``outcomes`` (per-pair arrays from the sample logs) -> ``summary`` (per
model), ``pairwise`` (between models; :mod:`prb_tasks.stats` holds the statistics) and ``ladder``
(one model across variants) -> ``build`` (the report) -> ``tables`` -> ``render_text``,
``render_md``, ``render_json``, ``charts`` (with ``chart_helpers``), ``render_html`` (with ``drilldown`` and
``pairtext`` for the pair browser); ``compare`` runs the command.
"""

__all__: list[str] = []
