"""The statistics every report shares: intervals, paired tests and correlations.

``pairs`` (the stratified bootstrap over pairs, McNemar's exact test and its sign-flip
form, Holm's correction, Cohen's kappa), ``clusters`` (the same with users as the unit),
``resampling`` (which of the two a list of pairs gets, decided once from the data) and
``correlation`` (how well one ranking of models predicts another, with Williams' test and
bootstrap intervals over draws). The ground floor beside ``common``: nothing here imports
from the rest of ``prb_tasks`` but ``common``, so any layer may use it.
"""
