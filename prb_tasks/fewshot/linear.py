"""Linear rewards over frozen features, fitted to pairwise choices (numpy only).

A user's reward of a response is ``w . f`` for the response's features ``f``; the
chance they prefer ``a`` to ``b`` is ``sigmoid(w . (f_a - f_b))`` (Bradley-Terry). The
weights are the penalised maximum-likelihood fit, found by Newton's method: the loss
is convex and the penalty keeps it strictly so, so a few iterations converge even on
pairs a linear reward separates perfectly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prb_tasks.fewshot.method import Pair, SeenUser

NEWTON_STEPS = 25


class MissingFeatures(ValueError):
    """A pair without features given to a feature-based method."""


#: The way on for data without reward-model scores (PRISM, Community Alignment, your own file).
EMBED_HINT = ("give --metadata '{\"features\": \"embedding\"}' to use each response's text embedding "
              "(all-MiniLM-L6-v2) as its features")


def differences(pairs: Sequence[Pair]) -> np.ndarray:
    """``features(chosen) - features(rejected)`` per pair, shape ``(pairs, d)``.

    Args:
        pairs: labelled pairs whose responses carry features.
    """
    if not pairs:
        return np.zeros((0, 0))
    rows = []
    for pair in pairs:
        if pair.chosen.features is None or pair.rejected.features is None:
            raise MissingFeatures(f"pair {pair.key} has no response features; this method needs data with "
                                  f"features (PersonalLLM's reward-model scores): {EMBED_HINT}")
        rows.append(np.asarray(pair.chosen.features, float) - np.asarray(pair.rejected.features, float))
    return np.vstack(rows)


def fit_offset(x: np.ndarray, basis: np.ndarray, offset: np.ndarray, l2: float) -> np.ndarray:
    """Coefficients ``a`` of ``w = offset + a @ basis`` maximising the penalised likelihood.

    Minimises ``sum log(1 + exp(-w . x_i)) + l2/2 |a|^2``; with no pairs the answer is
    ``a = 0`` (so ``w = offset``).

    Args:
        x: feature differences (chosen minus rejected), shape ``(n, d)``.
        basis: directions, shape ``(r, d)``.
        offset: the prior weights, shape ``(d,)``.
        l2: penalty on ``a`` (must be positive).
    """
    r = basis.shape[0]
    a = np.zeros(r)
    if not len(x):
        return a
    z = x @ basis.T            # (n, r)
    base = x @ offset          # (n,)
    for _ in range(NEWTON_STEPS):
        margin = base + z @ a
        p = 1.0 / (1.0 + np.exp(np.clip(margin, -50, 50)))   # chance of the *wrong* order
        grad = -(z * p[:, None]).sum(axis=0) + l2 * a
        step = _newton_step(z, np.maximum(p * (1 - p), 1e-12), l2, grad)
        a -= step
        if np.abs(step).max() < 1e-8:
            break
    return a


def _newton_step(z: np.ndarray, curvature: np.ndarray, l2: float, grad: np.ndarray) -> np.ndarray:
    """``(z^T diag(curvature) z + l2 I)^-1 grad``, solved in the smaller of the two sizes.

    With more dimensions than pairs (text embeddings: 384 numbers, 24 pairs) the
    Woodbury identity turns the ``d x d`` system into an ``n x n`` one.
    """
    n, r = z.shape
    if r <= n:
        return np.linalg.solve((z * curvature[:, None]).T @ z + l2 * np.eye(r), grad)
    inner = np.diag(l2 / curvature) + z @ z.T
    return (grad - z.T @ np.linalg.solve(inner, z @ grad)) / l2


def fit_weights(pairs: Sequence[Pair], l2: float, prior: np.ndarray | None = None) -> np.ndarray:
    """One user's weights from their pairs, shrunk towards ``prior`` (zero by default).

    Args:
        pairs: the user's labelled pairs.
        l2: penalty on the distance from ``prior``.
        prior: weights the fit starts from and is pulled towards.
    """
    x = differences(pairs)
    d = x.shape[1] if x.size else (0 if prior is None else len(prior))
    offset = np.zeros(d) if prior is None else np.asarray(prior, float)
    return offset + fit_offset(x, np.eye(d), offset, l2)


def unit(w: np.ndarray) -> np.ndarray:
    """``w`` scaled to unit length (a zero vector stays zero): only the direction of a
    user's weights decides their choices, so fitted users are compared by direction."""
    norm = np.linalg.norm(w, axis=-1, keepdims=True)
    return np.divide(w, norm, out=np.zeros_like(w), where=norm > 0)


def seen_weights(seen: Sequence[SeenUser], l2: float) -> np.ndarray:
    """Every seen user's fitted weights, unit length, shape ``(users, d)``.

    Args:
        seen: the seen users.
        l2: penalty of each user's fit.
    """
    if not seen:
        raise ValueError("no seen users to learn from (unseen_share leaves none)")
    return unit(np.vstack([fit_weights(u.pairs, l2) for u in seen]))


def features_of(response_features: np.ndarray | None, name: str) -> np.ndarray:
    """The features of a response to score, or a one-line error naming the method."""
    if response_features is None:
        raise MissingFeatures(f"method {name} needs response features (PersonalLLM's reward-model scores); "
                              f"this data has none: {EMBED_HINT}")
    return np.asarray(response_features, float)
