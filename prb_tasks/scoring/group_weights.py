"""Group rows that weight each subset by what a metric actually measured there.

lm-eval 0.4.13 turns subtask values into a group value with a size-weighted mean
(``Group.aggregate`` -> ``aggregate_subtask_metrics``), the size being the subtask's
number of documents for every metric alike. Two things go wrong for metrics that do
not measure every document:

- a subtask where a metric measured nothing reports NaN (e.g. ``pos_a_rate`` when no
  verdict was readable), and one NaN makes the whole group NaN;
- a subtask where it measured few items (10 readable verdicts out of 500) weighs as
  much as one where it measured all of them.

Our aggregation functions therefore return :class:`Measured`: a float that also
carries how many items it was computed from. :func:`install` wraps
``Group.aggregate`` so that, for every group metric where a subtask value is
``Measured``, the group value is recomputed as the mean over subtasks weighted by
those counts (subtasks that measured nothing are left out; ``weight_by_size: false``
gives each subtask that measured something weight 1). Values lm-eval's own
aggregations produce (``mean`` for ``acc``...) carry no count and keep lm-eval's
behaviour, as do other projects' groups. lm-eval has no hook for this (its
``AggMetricConfig.aggregation`` accepts a callable but ``Group.aggregate`` never
calls it), hence the wrapper.
"""

from __future__ import annotations

import functools
import math
from typing import Any


class Measured(float):
    """A metric value that knows how many items it was computed from.

    Args:
        value: the metric value (NaN when nothing was measured).
        measured: the number of items behind it.
    """

    measured: int

    def __new__(cls, value: float, measured: int) -> Measured:
        self = super().__new__(cls, value)
        self.measured = int(measured)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Measured, (float(self), self.measured))


def regroup(values: list[tuple[Any, int]], weight_by_size: bool) -> Measured | None:
    """The group value of one metric from its subtask values, or None if none is :class:`Measured`.

    Args:
        values: (subtask value, subtask document count) for each subtask reporting the metric.
        weight_by_size: the group config's setting: weight by measured items, or 1 per subtask.
    """
    if not any(isinstance(v, Measured) for v, _ in values):
        return None
    weighted: list[tuple[float, int]] = []
    for value, documents in values:
        count = value.measured if isinstance(value, Measured) else documents
        if isinstance(value, (int, float)) and not math.isnan(value) and count > 0:
            weighted.append((float(value), count))
    measured = sum(count for _, count in weighted)
    if not weighted:
        return Measured(math.nan, 0)
    if weight_by_size:
        return Measured(sum(v * c for v, c in weighted) / measured, measured)
    return Measured(sum(v for v, _ in weighted) / len(weighted), measured)


def _aggregate_by_measured(original):  # wraps lm-eval's Group.aggregate
    @functools.wraps(original)
    def aggregate(self, task_metrics):
        group_metrics = original(self, task_metrics)
        leaves = [t.task_name for t in self.get_all_tasks()]
        for config in self.aggregate_metric_list or []:
            prefix = f"{config.metric},"
            keys = {k for name in leaves for k in task_metrics.get(name, {}) if k.startswith(prefix)}
            for key in keys:
                values = [(task_metrics[name][key], int(task_metrics[name].get("sample_len", 0) or 0))
                          for name in leaves if key in task_metrics.get(name, {})]
                value = regroup(values, config.weight_by_size)
                if value is not None:
                    group_metrics[key] = value
                    group_metrics.setdefault("sample_count", {})[key] = value.measured
        return group_metrics

    setattr(aggregate, "prb_measured", True)  # functools.wraps' return type declares no such attribute
    return aggregate


def install() -> None:
    """Make lm-eval's group rows use :func:`regroup` (idempotent)."""
    from lm_eval.api.group import Group

    if not getattr(Group.aggregate, "prb_measured", False):
        Group.aggregate = _aggregate_by_measured(Group.aggregate)
