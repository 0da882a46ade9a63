"""The statistics every report shares: intervals, paired tests and correlations.

``pairs`` (the stratified bootstrap over pairs, McNemar's exact test and its sign-flip
form, Holm's correction, Cohen's kappa), ``clusters`` (the same with users as the unit),
``resampling`` (which of the two a list of pairs gets, decided once from the data) and
``correlation`` (how well one ranking of models predicts another, with Williams' test and
bootstrap intervals over draws). The ground floor beside ``common``: nothing here imports
from the rest of ``prb_tasks`` but ``common``, so any layer may use it.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.stats.clusters import cluster_bootstrap, user_macro
    from prb_tasks.stats.correlation import kendall, ndcg, pearson, rbo, spearman, williams
    from prb_tasks.stats.pairs import Interval, McNemar, bootstrap, cohen_kappa, holm, mcnemar
    from prb_tasks.stats.resampling import Design, design_for

__all__ = [
    "bootstrap",
    "cluster_bootstrap",
    "cohen_kappa",
    "Design",
    "design_for",
    "holm",
    "Interval",
    "kendall",
    "McNemar",
    "mcnemar",
    "ndcg",
    "pearson",
    "rbo",
    "spearman",
    "user_macro",
    "williams",
]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.stats.clusters": ("cluster_bootstrap", "user_macro"),
    "prb_tasks.stats.correlation": ("kendall", "ndcg", "pearson", "rbo", "spearman", "williams"),
    "prb_tasks.stats.pairs": ("Interval", "McNemar", "bootstrap", "cohen_kappa", "holm", "mcnemar"),
    "prb_tasks.stats.resampling": ("Design", "design_for"),
})
