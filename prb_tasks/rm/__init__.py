"""Scalar reward models and baselines behind the ``prb-rm`` lm-eval model."""
