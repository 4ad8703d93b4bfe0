"""Metric learning and metric embedding for nearest-neighbour classification.

See the chapter "Metric learning and metric embedding for nearest neighbours"
(``chapters/12-metric.ipynb``).

A Mahalanobis metric :math:`d_M(x, x') = \\sqrt{(x - x')^\\top M (x - x')}` with
:math:`M = L^\\top L` positive semi-definite is the Euclidean distance after the linear
map :math:`x \\mapsto Lx`.  Three classical ways of learning :math:`M` from labels are
implemented here: MMC (scipy's L-BFGS on a factor of :math:`M` in whitened coordinates,
stopped by a certified duality gap), LMNN (projected subgradient descent) and ITML
(cyclic Bregman projections), together with the kernelised metric embedding of
Sriperumbudur and Lanckriet (MENN), a semidefinite program solved by default with a
smoothed low-rank method (scipy's L-BFGS-B, stopped by a certified duality gap), or
exactly with cvxpy and Clarabel on small problems.  The paper's leave-one-out error of the
epsilon-neighbourhood rule (the quantity MENN's hinges stand in for) and its transductive
learning of the kernel matrix itself are here too.  All learned matrices are PSD by
construction.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import euclidean_distances, linear_kernel, rbf_kernel
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ._tolerance import (cvxpy_settings, default_cvxpy_settings, iteration_cap, solve_with_clarabel,
                         tightened)
from ._validation import (
    check_squares_finite,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_positive_int,
    check_symmetric,
    check_symmetric_psd,
    rounding_tolerance,
    validate_params,
)

_POSITIVE = Interval(Real, 0, None, closed="neither")
_NON_NEGATIVE = Interval(Real, 0, None)
_POSITIVE_INT = Interval(Integral, 1, None)

__all__ = [
    "mahalanobis",
    "pairwise_mahalanobis",
    "knn_loo_error",
    "knn_predict",
    "psd_projection",
    "components_from_metric",
    "lmnn_target_neighbors",
    "lmnn_loss",
    "mmc_objective",
    "MMC",
    "LMNN",
    "ITML",
    "menn_objective",
    "MetricEmbeddingNN",
    "epsilon_loo_error",
    "learn_kernel_matrix",
]


# ----------------------------------------------------------------------------- basics


def _check_metric_matrix(M, n_features, name="M"):
    M = check_symmetric_psd(M, name)
    if M.shape != (n_features, n_features):
        raise ValueError(f"{name} must have shape ({n_features}, {n_features}), got {M.shape}")
    return M


@validate_params({"x": ["array-like"], "y": ["array-like"], "M": ["array-like"]})
def mahalanobis(x, y, M):
    r"""Mahalanobis distance :math:`\sqrt{(x - y)^\top M (x - y)}`.

    Parameters
    ----------
    x, y : array_like of shape (n_features,) or (n_points, n_features)
        Points; rows are paired (broadcast like NumPy arrays).
    M : array_like of shape (n_features, n_features)
        Symmetric positive semi-definite matrix.

    Returns
    -------
    float or ndarray of shape (n_points,)

    With ``M = I`` this is the Euclidean distance; with ``M = L.T @ L`` it is the
    Euclidean distance between ``L @ x`` and ``L @ y``.  See the chapter "Metric
    learning", section "Mahalanobis metrics are linear embeddings".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import mahalanobis
    >>> M = np.diag([4.0, 1.0])
    >>> round(mahalanobis([0.0, 0.0], [1.0, 1.0], M), 4)
    2.2361
    """
    x = check_squares_finite(as_float_array(x, "x", ndim=(1, 2)), "x")
    y = check_squares_finite(as_float_array(y, "y", ndim=(1, 2)), "y")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"x and y must have the same number of features, got {x.shape} and {y.shape}")
    M = _check_metric_matrix(M, x.shape[-1])
    diff = x - y
    sq = np.einsum("...i,ij,...j->...", diff, M, diff)
    out = np.sqrt(np.maximum(sq, 0.0))
    return float(out) if out.ndim == 0 else out


@validate_params({"X": ["array-like"], "Y": ["array-like", None], "M": ["array-like", None],
                  "squared": ["boolean"]})
def pairwise_mahalanobis(X, Y=None, M=None, *, squared=False):
    r"""Matrix of Mahalanobis distances between the rows of ``X`` and of ``Y``.

    :math:`D_{ij} = (x_i - y_j)^\top M (x_i - y_j)` (squared) or its square root.
    ``M=None`` means the identity (Euclidean distances).  See the chapter "Metric
    learning".

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    Y : array_like of shape (n_samples_Y, n_features), default=None (``Y = X``)
    M : array_like of shape (n_features, n_features), default=None
        Symmetric positive semi-definite metric matrix.
    squared : bool, default=False

    Returns
    -------
    ndarray of shape (n_samples, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import pairwise_mahalanobis
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> print(pairwise_mahalanobis(X, M=np.diag([4.0, 1.0]), squared=True))
    [[0. 4. 1.]
     [4. 0. 5.]
     [1. 5. 0.]]
    """
    X = check_squares_finite(as_float_array(X, "X", ndim=2), "X")
    same = Y is None
    Y = X if same else check_squares_finite(as_float_array(Y, "Y", ndim=2), "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}")
    if M is not None:
        L = components_from_metric(_check_metric_matrix(M, X.shape[1]))
        X, Y = X @ L.T, Y @ L.T
    D = euclidean_distances(X, Y, squared=True)
    if same:
        np.fill_diagonal(D, 0.0)
    return D if squared else np.sqrt(D)


@validate_params({"A": ["array-like"]})
def psd_projection(A):
    r"""Nearest symmetric PSD matrix in Frobenius norm: :math:`V\max(\Lambda, 0)V^\top`.

    ``A`` is symmetrised first.  See the chapter "Metric learning".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import psd_projection
    >>> print(psd_projection(np.array([[1.0, 0.0], [0.0, -2.0]])))
    [[1. 0.]
     [0. 0.]]
    """
    A = as_float_array(A, "A", ndim=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {A.shape}")
    A = (A + A.T) / 2
    w, V = np.linalg.eigh(A)
    return (V * np.maximum(w, 0.0)) @ V.T


@validate_params({"M": ["array-like"], "n_components": [_POSITIVE_INT, None],
                  "tol": [Interval(Real, 0, 1, closed="left")]})
def components_from_metric(M, n_components=None, tol=1e-10):
    r"""A matrix ``L`` with :math:`L^\top L = M`, rows ordered by decreasing eigenvalue.

    :math:`L = \Lambda_d^{1/2} V_d^\top` from :math:`M = V\Lambda V^\top`; eigenvectors
    carry a deterministic sign (largest-magnitude entry positive).  Rows for eigenvalues
    below ``tol`` times the largest are kept as zeros unless ``n_components`` cuts them.
    See the chapter "Metric learning", section "Mahalanobis metrics are linear
    embeddings".

    Parameters
    ----------
    M : array_like of shape (n_features, n_features)
        Symmetric positive semi-definite metric matrix.
    n_components : int, default=None
        Rows kept (all by default).
    tol : float in [0, 1), default=1e-10

    Returns
    -------
    L : ndarray of shape (n_components, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import components_from_metric
    >>> M = np.diag([1.0, 4.0])
    >>> L = components_from_metric(M)
    >>> print(L)
    [[0. 2.]
     [1. 0.]]
    >>> np.allclose(L.T @ L, M)
    True
    """
    M = check_symmetric_psd(M, "M")
    w, V = np.linalg.eigh((M + M.T) / 2)
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    idx = np.argmax(np.abs(V), axis=0)
    V = V * np.sign(V[idx, np.arange(V.shape[1])])
    w = np.where(w > tol * max(w[0], 0.0), w, 0.0)
    if n_components is not None:
        n_components = check_positive_int(n_components, "n_components", upper=M.shape[0],
                                          upper_name="the number of features")
        w, V = w[:n_components], V[:, :n_components]
    return np.sqrt(w)[:, None] * V.T


_TIE_RTOL = 1e-9


def _nearest(D, n_neighbors):
    """Column indices of the ``n_neighbors`` smallest entries of each row of ``D``, nearest first.

    Distances are rounded to a grid of ``1e-9`` times the row's largest finite distance
    before a stable sort, so equal distances go to the smaller index. A tie in exact
    arithmetic (common with integer-valued features) then stays a tie however the
    distance computation rounds, which differs between BLAS builds and CPUs.
    """
    finite = np.isfinite(D)
    D_finite = np.where(finite, D, 0.0)
    scale = D_finite.max(axis=1, keepdims=True)
    grid = np.where(scale > 0, scale, 1.0) * _TIE_RTOL
    D_rounded = np.where(finite, np.round(D_finite / grid), np.inf)
    return np.argsort(D_rounded, axis=1, kind="stable")[:, :n_neighbors]


def _vote(neigh_labels, n_classes):
    """Majority vote per row; ties go to the smallest class index (as scikit-learn)."""
    counts = np.zeros((neigh_labels.shape[0], n_classes), dtype=int)
    np.add.at(counts, (np.repeat(np.arange(neigh_labels.shape[0]), neigh_labels.shape[1]),
                       neigh_labels.ravel()), 1)
    return np.argmax(counts, axis=1)


def _check_labels(y, n_samples, name="y"):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"{name} must be a 1-D array with {n_samples} labels, got shape {y.shape}")
    check_classification_targets(y)
    return np.unique(y, return_inverse=True)


@validate_params({"X": ["array-like"], "y": ["array-like"], "n_neighbors": [_POSITIVE_INT],
                  "M": ["array-like", None], "precomputed": ["boolean"]})
def knn_loo_error(X, y, n_neighbors=3, M=None, *, precomputed=False):
    r"""Leave-one-out error of the k-nearest-neighbour rule.

    Each training point is classified by a majority vote of its ``n_neighbors``
    nearest *other* training points; the error is the fraction misclassified.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features), or (n_samples, n_samples)
        Points (possibly already embedded), or a matrix of pairwise distances when
        ``precomputed=True``.
    y : array_like of shape (n_samples,)
    n_neighbors : int, default=3
    M : array_like of shape (n_features, n_features), optional
        Mahalanobis matrix; Euclidean distance if omitted.
    precomputed : bool, default=False

    Returns
    -------
    float

    Distance ties are broken by the smaller index (distances are compared on a grid of
    ``1e-9`` times the largest, so that rounding does not decide), vote ties by the smaller
    class label (as scikit-learn's ``KNeighborsClassifier``).  See the chapter "Metric
    learning", section "Why the metric matters".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import knn_loo_error
    >>> X = np.array([[0.0, 0.0], [0.1, 5.0], [0.2, -5.0],
    ...               [1.0, 0.0], [1.1, 5.0], [1.2, -5.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> knn_loo_error(X, y, n_neighbors=1)
    1.0
    >>> knn_loo_error(X, y, n_neighbors=1, M=np.diag([1.0, 0.0]))
    0.0
    """
    if precomputed:
        if M is not None:
            raise ValueError("M must be None when precomputed=True")
        D = as_float_array(X, "X", ndim=2)
        if D.shape[0] != D.shape[1]:
            raise ValueError(f"a precomputed distance matrix must be square, got shape {D.shape}")
        D = D.copy()
    else:
        D = pairwise_mahalanobis(X, None, M, squared=True)
    n = D.shape[0]
    classes, y_idx = _check_labels(y, n)
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors", upper=n - 1,
                                     upper_name="the number of samples minus one")
    np.fill_diagonal(D, np.inf)
    neigh = _nearest(D, n_neighbors)
    pred = _vote(y_idx[neigh], classes.size)
    return float(np.mean(pred != y_idx))


@validate_params({"X_train": ["array-like"], "y_train": ["array-like"], "X_test": ["array-like"],
                  "n_neighbors": [_POSITIVE_INT], "M": ["array-like", None]})
def knn_predict(X_train, y_train, X_test, n_neighbors=3, M=None):
    r"""Predict labels of ``X_test`` by a k-NN vote among ``X_train`` (Mahalanobis ``M``).

    Ties as in :func:`knn_loo_error`.  See the chapter "Metric learning".

    Parameters
    ----------
    X_train : array_like of shape (n_train, n_features)
    y_train : array_like of shape (n_train,)
    X_test : array_like of shape (n_test, n_features)
    n_neighbors : int, default=3
    M : array_like of shape (n_features, n_features), default=None
        Symmetric positive semi-definite metric matrix (the identity by default).

    Returns
    -------
    ndarray of shape (n_test,)

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import knn_predict
    >>> X = np.array([[0.0], [1.0], [5.0], [6.0]])
    >>> print(knn_predict(X, [0, 0, 1, 1], [[0.5], [5.5]], n_neighbors=1))
    [0 1]
    """
    X_train = as_float_array(X_train, "X_train", ndim=2)
    classes, y_idx = _check_labels(y_train, X_train.shape[0], "y_train")
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors", upper=X_train.shape[0],
                                     upper_name="the number of training samples")
    D = pairwise_mahalanobis(X_test, X_train, M, squared=True)
    neigh = _nearest(D, n_neighbors)
    return classes[_vote(y_idx[neigh], classes.size)]


# ----------------------------------------------------------------------------- shared


class _MetricTransformer(TransformerMixin, BaseEstimator):
    """Shared plumbing: ``components_`` from ``metric_``, ``transform``, tags."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _validate_xy(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes, got 1 class")
        self.classes_ = classes
        return X, y_idx

    def _set_metric(self, M, scale=1.0):
        """``metric_ = M / scale**2`` and ``components_`` (the factor of ``M`` over ``scale``)
        for an ``M`` learned on ``X / scale``; a scale too extreme for float64 is an error."""
        M = (M + M.T) / 2
        components = components_from_metric(M)
        if scale != 1.0:
            big = float(np.abs(M).max())
            with np.errstate(over="ignore", under="ignore"):
                M, components = M / scale / scale, components / scale
            tiny = np.finfo(np.float64).tiny
            if not (np.all(np.isfinite(M)) and np.all(np.isfinite(components))) or (
                    big > 0 and float(np.abs(M).max()) < tiny):
                # metric_ scales as 1 / scale^2: it is a finite, normal float64 only for a
                # scale within [sqrt(big / max), sqrt(big / tiny)]
                lo = np.sqrt(big / np.finfo(np.float64).max) * 2.0
                hi = np.sqrt(big / tiny) / 2.0
                raise ValueError(f"{type(self).__name__}: the learned metric of X (whose "
                                 f"typical distance is {scale:.3g}) is not representable in "
                                 "float64: it scales as 1 / distance^2; rescale X so that its "
                                 f"typical distance lies within [{lo:.1e}, {hi:.1e}] (e.g. "
                                 "with sklearn.preprocessing.StandardScaler)")
        self.metric_ = M
        self.components_ = components
        self.n_features_out_ = self.components_.shape[0]

    def get_mahalanobis_matrix(self):
        """The learned PSD matrix ``metric_`` (same name as in ``metric-learn``)."""
        check_is_fitted(self)
        return self.metric_

    def transform(self, X):
        """Map ``X`` to ``X @ components_.T``: Euclidean distances there are learned ones."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self)
        return np.array([f"{type(self).__name__.lower()}{i}" for i in range(self.n_features_out_)],
                        dtype=object)


def _check_index_pairs(pairs, n_samples, name):
    """Pairs of sample indices, an int array of shape (n_pairs, 2) with entries in 0..n-1."""
    arr = np.asarray(pairs)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=int)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must be an array of index pairs of shape (n_pairs, 2), "
                         f"got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind not in "bf" or not np.all(np.mod(arr, 1) == 0):
            raise ValueError(f"{name} must hold integer sample indices")
    arr = arr.astype(int)
    if arr.min() < 0 or arr.max() >= n_samples:
        bad = arr.min() if arr.min() < 0 else arr.max()
        raise ValueError(f"{name} holds the sample index {bad}, but X has {n_samples} "
                         f"sample{'s' if n_samples != 1 else ''} (indices 0..{n_samples - 1})")
    return arr


# ----------------------------------------------------------------------------- MMC


@validate_params({"M": ["array-like"], "X": ["array-like"], "similar": ["array-like"],
                  "dissimilar": ["array-like"]})
def mmc_objective(M, X, similar, dissimilar):
    r"""MMC's objective :math:`g(M) = \sum_{(i,j)\in D} d_M(x_i, x_j)` and its gradient.

    .. math:: \nabla g(M) = \sum_{(i,j)\in D} \frac{(x_i - x_j)(x_i - x_j)^\top}{2\,d_M(x_i, x_j)}.

    Also returns :math:`f(M) = \sum_{(i,j)\in S} d_M^2(x_i, x_j) = \langle M, \Sigma_S\rangle`.
    ``similar`` and ``dissimilar`` are integer arrays of shape (n_pairs, 2).  See the
    chapter "Metric learning", section "MMC".

    Parameters
    ----------
    M : array_like of shape (n_features, n_features)
        Symmetric positive semi-definite metric matrix.
    X : array_like of shape (n_samples, n_features)
    similar, dissimilar : array_like of int, shape (n_pairs, 2)
        Pairs of row indices of ``X``.

    Returns
    -------
    g : float
    grad : ndarray of shape (n_features, n_features)
    f : float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import mmc_objective
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> similar = np.array([[0, 1]])
    >>> dissimilar = np.array([[0, 2]])
    >>> out = mmc_objective(np.eye(2), X, similar, dissimilar)
    >>> print(round(out[0], 4))
    2.0
    """
    X = check_squares_finite(as_float_array(X, "X", ndim=2), "X")
    M = _check_metric_matrix(M, X.shape[1])
    similar = _check_index_pairs(similar, X.shape[0], "similar")
    dissimilar = _check_index_pairs(dissimilar, X.shape[0], "dissimilar")
    ds = X[similar[:, 0]] - X[similar[:, 1]]
    dd = X[dissimilar[:, 0]] - X[dissimilar[:, 1]]
    dist = np.sqrt(np.maximum(np.sum((dd @ M) * dd, axis=1), 0.0))
    if np.any(dist == 0):
        raise ValueError("a dissimilar pair has distance 0 under M: the gradient is undefined")
    grad = (dd / (2 * dist)[:, None]).T @ dd
    f = float(np.sum((ds @ M) * ds))
    return float(dist.sum()), grad, f


def _class_pairs(y_idx):
    i, j = np.triu_indices(y_idx.size, 1)
    same = y_idx[i] == y_idx[j]
    return np.column_stack([i[same], j[same]]), np.column_stack([i[~same], j[~same]])


class _ClassPairRanks:
    """The pairs ``i < j`` of one kind (same class, or different classes) in the order of
    :func:`_class_pairs` (row-major), addressed by rank without listing them: O(n) memory.

    Row ``i`` has ``s_i`` similar partners ``j > i`` (its class members after it) and
    ``d_i = n - 1 - i - s_i`` dissimilar ones; a rank falls in the row where the cumulative
    count passes it.  The ``t``-th dissimilar partner of ``i`` is the element of index
    ``i - p_i + t`` of the complement of ``i``'s class (``p_i`` its rank in the class),
    found by a binary search on the class positions.
    """

    def __init__(self, y_idx):
        n = y_idx.size
        self.order = np.argsort(y_idx, kind="stable")          # class members, ascending
        sizes = np.bincount(y_idx)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.sizes, self.y = sizes, y_idx
        self.pos = np.empty(n, dtype=np.int64)
        self.pos[self.order] = np.arange(n) - self.starts[y_idx[self.order]]
        similar = sizes[y_idx] - 1 - self.pos
        dissimilar = (n - 1 - np.arange(n)) - similar
        self.per_row = {True: similar, False: dissimilar}
        self.cumulative = {True: np.cumsum(similar), False: np.cumsum(dissimilar)}

    def count(self, similar):
        return int(self.cumulative[similar][-1]) if self.y.size else 0

    def pairs(self, ranks, similar):
        """The pairs of the given ranks (an int array), shape (len(ranks), 2)."""
        ranks = np.asarray(ranks, dtype=np.int64)
        cum = self.cumulative[similar]
        i = np.searchsorted(cum, ranks, side="right")
        t = ranks - (cum[i] - self.per_row[similar][i])
        c = self.y[i]
        if similar:
            j = self.order[self.starts[c] + self.pos[i] + 1 + t]
        else:
            m = i - self.pos[i] + t                  # index in the complement of class c
            j = np.empty_like(m)
            for cls in np.unique(c):
                rows = c == cls
                members = self.order[self.starts[cls]:self.starts[cls] + self.sizes[cls]]
                before = members - np.arange(members.size)   # complement elements before each
                j[rows] = m[rows] + np.searchsorted(before, m[rows], side="right")
        return np.column_stack([i, j])


def _distinct_ranks(rng, n_ranks, k, accept=None, max_rounds=100):
    """Up to ``k`` distinct ranks in ``[0, n_ranks)``, drawn uniformly without replacement
    (repeated draws are dropped; ``accept`` may reject ranks too), in O(k) memory."""
    out = np.empty(0, dtype=np.int64)
    for _ in range(max_rounds):
        if out.size >= k:
            break
        draw = rng.randint(0, n_ranks, size=max(2 * (k - out.size), 16), dtype=np.int64)
        if accept is not None:
            draw = draw[accept(draw)]
        both = np.concatenate([out, draw])
        first = np.sort(np.unique(both, return_index=True)[1])
        out = both[first][:k]
    return out


def _sampled_class_pairs(index, similar, k, rng, accept=None):
    """Up to ``k`` distinct pairs of one kind drawn uniformly without listing them (all of
    them when there are at most ``k``), kept where ``accept`` (a function of the pairs)
    holds: memory O(k), whatever the number of pairs."""
    total = index.count(similar)
    keep = (lambda ranks: accept(index.pairs(ranks, similar))) if accept else None
    if total <= k:
        ranks = np.arange(total)
        return index.pairs(ranks if keep is None else ranks[keep(ranks)], similar)
    return index.pairs(_distinct_ranks(rng, total, k, keep), similar)


class MMC(_MetricTransformer):
    r"""Mahalanobis metric for clustering (Xing, Ng, Jordan and Russell, 2002).

    With similar pairs :math:`S` (same class) and dissimilar pairs :math:`D`
    (different classes), MMC solves the convex problem

    .. math:: \min_{M \succeq 0} \sum_{(i,j)\in S} d_M^2(x_i, x_j)
              \quad\text{s.t.}\quad \sum_{(i,j)\in D} d_M(x_i, x_j) \ge 1,

    (note the distances in the constraint are not squared).  The problem is convex (the
    constraint function is concave in :math:`M`), and it is unchanged by an invertible
    linear map of the data.  Its optimum maximises the scale-free ratio
    :math:`\sum_D d_M / (\sum_S d_M^2)^{1/2}`.  We whiten the data with the scatter
    :math:`\Sigma_S = \sum_S (x_i - x_j)(x_i - x_j)^\top` of the similar differences
    (so that :math:`\sum_S d_M^2 = \mathrm{tr}\,A` for the metric :math:`A` in the
    whitened coordinates), then maximise the logarithm of the ratio over a factor
    :math:`L` of :math:`A = L^\top L` (PSD by construction, no projection) with scipy's
    L-BFGS, starting from :math:`L = I/\sqrt d`.  After each iteration a certificate is
    computed: with :math:`\hat A = A/\mathrm{tr}\,A` and :math:`g(A) = \sum_D d_A`
    concave, the Frank-Wolfe gap :math:`\lambda_{\max}(\nabla g(\hat A)) - g(\hat A)/2`
    bounds how far the ratio is below its optimum, and L-BFGS stops once that bound is
    below ``tol`` times the ratio.  The result is mapped back to the original
    coordinates and rescaled to meet :math:`\sum_D d_M = 1` with equality, so
    ``metric_`` solves the problem above.  (The original paper uses projected gradient
    ascent on :math:`M`; the optimum is the same.)  If :math:`\Sigma_S` is singular and
    some dissimilar difference has a component in its null space, the optimal value is
    0 and ``metric_`` is the projector onto that null space, rescaled.

    With all pairs, the optimum often has rank one: the matrix that best separates the
    class *means* along one direction, which can hurt nearest-neighbour classification
    (chapter 12 shows this on wine).  ``max_pairs`` samples the constraints instead.

    Parameters
    ----------
    max_pairs : int or None, default=None
        If given, at most this many similar and this many dissimilar pairs are drawn
        at random (``random_state``); otherwise all pairs are used.
    max_iter : int, default=500
        Maximum number of L-BFGS iterations (reaching it gives a ``ConvergenceWarning``).
    tol : float, default=1e-7
        Stop when the certified relative gap to the optimal ratio (see above) is below
        ``tol``; the test does not depend on the scale or on any linear transformation
        of the data.  Stopping at ``max_iter`` or at a failed line search with a larger
        gap gives a ``ConvergenceWarning``.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    metric_ : ndarray of shape (n_features, n_features)
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``L.T @ L = metric_``.
    objective_history_ : list of float
        :math:`\sum_D d_M / \sqrt{\sum_S d_M^2}` (scale free) per function evaluation.
    gap_ : float
        The certified relative gap to the optimal ratio at the end.
    n_iter_ : int

    See the chapter "Metric learning", section "MMC".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import MMC
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 15)
    >>> X = np.column_stack([y + 0.1 * rng.normal(size=30),
    ...                      3 * rng.normal(size=30)])
    >>> mmc = MMC(random_state=0).fit(X, y)
    >>> M = mmc.metric_
    >>> bool(M[0, 0] > M[1, 1])
    True
    """

    _parameter_constraints = {
        "max_pairs": [_POSITIVE_INT, None],
        "max_iter": [_POSITIVE_INT],
        "tol": [_NON_NEGATIVE],
        "random_state": ["random_state"],
    }

    def __init__(self, max_pairs=None, max_iter=500, tol=1e-7, random_state=None):
        self.max_pairs = max_pairs
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y):
        """Learn ``metric_`` from labelled data; returns ``self``."""
        check_estimator_params(self)
        X, y_idx = self._validate_xy(X, y)
        if self.max_pairs is None:
            similar, dissimilar = _class_pairs(y_idx)
        else:   # draw them by rank, without listing all pairs
            index, rng = _ClassPairRanks(y_idx), check_random_state(self.random_state)
            similar = _sampled_class_pairs(index, True, int(self.max_pairs), rng)
            dissimilar = _sampled_class_pairs(index, False, int(self.max_pairs), rng)
        if similar.shape[0] == 0:
            raise ValueError("MMC needs at least one pair of points with the same label")
        dd = X[dissimilar[:, 0]] - X[dissimilar[:, 1]]
        keep = np.any(dd != 0, axis=1)
        dissimilar = dissimilar[keep]
        if dissimilar.shape[0] == 0:
            raise ValueError("MMC needs at least one pair of distinct points with different labels")
        # the problem is scale-equivariant (metric_ scales as 1 / scale^2): solve it for
        # X / scale, a power of two (exact in floating point) near the largest dissimilar
        # difference, so that the scatter below neither overflows nor underflows
        scale = float(np.ldexp(1.0, int(np.frexp(np.abs(dd).max())[1]) - 1))
        X = X / scale
        ds = X[similar[:, 0]] - X[similar[:, 1]]
        dd = X[dissimilar[:, 0]] - X[dissimilar[:, 1]]
        S = ds.T @ ds
        w, U = np.linalg.eigh(S)
        spans = w > 1e-12 * max(w[-1], 0.0)
        null = U[:, ~spans]
        if null.shape[1] and np.abs(dd @ null).max() > 1e-9 * np.abs(dd).max():
            # a direction with no spread within classes but some across them: the optimum
            # is 0, reached by any metric that lives on those directions
            M = null @ null.T
            self.objective_history_, self.n_iter_, self.gap_ = [], 0, 0.0
        else:
            T = U[:, spans] / np.sqrt(w[spans])        # whitening on the span: T^T S T = I
            L = self._ascend(dd @ T)
            M = T @ (L.T @ L) @ T.T
        g = mmc_objective(M, X, similar, dissimilar)[0]
        self._set_metric(M / g**2, scale)
        return self

    def _ascend(self, Z):
        """L-BFGS on the factor L for the whitened dissimilar differences ``Z``; returns L."""
        from scipy.optimize import minimize

        d = Z.shape[1]
        history = []
        gaps = []
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)

        def parts(L):
            Y = Z @ L.T
            dist = np.sqrt(np.sum(Y * Y, axis=1))
            return Y, dist, dist.sum(), np.sum(L * L)   # sum_S d^2 = ||L||_F^2 once whitened

        def neg_log_ratio(flat):
            L = flat.reshape(d, d)
            Y, dist, g, f = parts(L)
            value = np.log(g) - 0.5 * np.log(f)
            history.append(float(np.exp(value)))
            with np.errstate(divide="ignore", invalid="ignore"):
                Yn = np.where(dist[:, None] > 0, Y / dist[:, None], 0.0)
            grad = (Yn.T @ Z) / g - L / f                # d(value)/dL
            return -value, -grad.ravel()

        def duality_gap(L):
            # A = L^T L / ||L||_F^2 on the spectraplex; g is concave, so the Frank-Wolfe gap
            # lambda_max(grad g(A)) - <grad g(A), A> = lambda_max - g(A)/2 bounds g* - g(A).
            L = L / np.sqrt(np.sum(L * L))
            Y, dist, g, _ = parts(L)
            dist = np.maximum(dist, 1e-300)
            G = (Z / (2 * dist)[:, None]).T @ Z
            return (np.linalg.eigvalsh(G)[-1] - g / 2) / g

        def stop_when_certified(intermediate_result):
            gaps.append(duality_gap(intermediate_result.x.reshape(d, d)))
            if gaps[-1] <= tol:
                raise StopIteration

        L0 = np.eye(d) / np.sqrt(d)
        gaps.append(duality_gap(L0))
        if gaps[-1] <= tol:
            self.objective_history_, self.n_iter_, self.gap_ = [], 0, float(gaps[-1])
            return L0
        res = minimize(neg_log_ratio, L0.ravel(), jac=True, method="L-BFGS-B",
                       callback=stop_when_certified,
                       options={"maxiter": max_iter, "gtol": 0.0, "ftol": tightened(1e-15)})
        L = res.x.reshape(d, d)
        self.objective_history_ = history
        self.n_iter_ = int(res.nit)
        self.gap_ = float(gaps[-1])
        if not np.isfinite(self.gap_) or not np.all(np.isfinite(L)):
            raise ValueError(f"MMC broke down after {self.n_iter_} L-BFGS iterations: the "
                             f"duality gap is {self.gap_} (the pair distances overflow or "
                             "vanish in float64); scale X towards 1 first")
        if self.gap_ > tol:
            if res.status == 1:
                reason, advice = f"its limit (max_iter={max_iter})", "raise max_iter"
            elif res.status == 0:   # scipy's own test: the objective stopped decreasing
                reason, advice = (f"a stall after {self.n_iter_} iterations ({res.message})",
                                  "the objective no longer decreases at this precision: "
                                  "raise tol, or standardise X")
            else:
                reason, advice = (f"a failed line search after {self.n_iter_} iterations "
                                  f"({res.message})", "raise tol, or standardise X")
            warnings.warn(f"MMC: L-BFGS stopped at {reason} with a relative duality gap of "
                          f"{self.gap_:.2g} > tol={tol:g}; {advice}",
                          ConvergenceWarning, stacklevel=3)
        return L


# ----------------------------------------------------------------------------- LMNN


@validate_params({"X": ["array-like"], "y": ["array-like"], "n_neighbors": [_POSITIVE_INT]})
def lmnn_target_neighbors(X, y, n_neighbors=3):
    r"""The target neighbours of LMNN: each point's ``n_neighbors`` nearest same-class points.

    Euclidean distances, ties broken by index.  Returns an int array of shape
    (n_pairs, 2) of pairs ``(i, j)`` meaning :math:`j \rightsquigarrow i`.  A class with
    fewer than ``n_neighbors + 1`` points gives its members fewer target neighbours; an
    ``n_neighbors`` that no class can give (the largest has at most ``n_neighbors``
    points) is refused.  See the chapter "Metric learning", section "LMNN".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import lmnn_target_neighbors
    >>> X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0]])
    >>> print(lmnn_target_neighbors(X, [0, 0, 0, 1, 1], n_neighbors=1))
    [[0 1]
     [1 0]
     [2 1]
     [3 4]
     [4 3]]
    """
    X = as_float_array(X, "X", ndim=2)
    _, y_idx = _check_labels(y, X.shape[0])
    _check_target_count(n_neighbors, y_idx)
    # class by class, a block of rows at a time: memory of one block of distances to the
    # class, not n x n; each row's candidates are its class members in index order, as
    # in the n x n matrix with the other classes at infinity, so ties break alike
    neighbours = np.full((X.shape[0], n_neighbors), -1, dtype=int)
    for members in (np.flatnonzero(y_idx == c) for c in np.unique(y_idx)):
        k = min(n_neighbors, members.size - 1)
        if k == 0:
            continue
        block = max(1, _DISTANCE_BLOCK_ENTRIES // members.size)
        for start in range(0, members.size, block):
            rows = members[start:start + block]
            D = euclidean_distances(X[rows], X[members], squared=True)
            D[np.arange(rows.size), np.arange(start, start + rows.size)] = np.inf
            order = _nearest(D, k)
            found = np.isfinite(np.take_along_axis(D, order, axis=1))
            neighbours[rows, :k] = np.where(found, members[order], -1)
    i, slot = np.nonzero(neighbours >= 0)
    return np.column_stack([i, neighbours[i, slot]]).astype(int).reshape(-1, 2)


def _check_target_count(n_neighbors, y_idx):
    """``n_neighbors`` target neighbours must exist for some point: a class of more than
    ``n_neighbors`` points (smaller classes give their members fewer, as documented)."""
    largest = int(np.bincount(y_idx).max()) if y_idx.size else 0
    if largest < 2:
        raise ValueError("every class of y has a single point: a target neighbour is another "
                         "point of the same class, so some class needs two or more points")
    if n_neighbors >= largest:
        raise ValueError(f"n_neighbors={n_neighbors} target neighbours need a class of at "
                         f"least {n_neighbors + 1} points (a point and its neighbours of the "
                         f"same class), but the largest class of y has {largest}; choose "
                         f"n_neighbors <= {largest - 1}")


# Entries of one block of distances in lmnn_target_neighbors (32 MB of float64).
_DISTANCE_BLOCK_ENTRIES = 1 << 22


def _lmnn_triplets(targets, y_idx):
    """Every triplet ``(i, j, l)`` at once (target pair ``(i, j)``, impostor ``l``): about
    ``n_neighbors * n^2`` of them; LMNN itself walks them in blocks (:func:`_lmnn_margin_rows`)."""
    i, j = targets[:, 0], targets[:, 1]
    impostor = y_idx[None, :] != y_idx[i][:, None]          # (n_pairs, n)
    t, l = np.nonzero(impostor)
    return i[t], j[t], l


# Entries (target pairs x points) of one block of LMNN's margins: 8 MB of float64; a pass
# holds a few such arrays, about 40 MB in all, whatever n.
_LMNN_TRIPLET_BLOCK_ENTRIES = 1 << 20


def _lmnn_margin_rows(M, X, targets, y_idx):
    """Every triplet's margin, a block of target pairs at a time: yields ``(start, i, j,
    margin, impostor)`` for the pairs ``targets[start:start + len(i)]``, with ``margin``
    (pairs x n) :math:`1 + d_M^2(x_i, x_j) - d_M^2(x_i, x_l)` for every point ``l`` and
    ``impostor`` marking the points of another class.  The squared distances of a block
    come from one matrix product, :math:`x_i^\top M x_i + x_l^\top M x_l - 2x_i^\top M x_l`:
    memory O(block x n), time O(k n^2 d) per pass."""
    n = X.shape[0]
    XM = X @ M
    sq = np.einsum("ij,ij->i", X, XM)
    rows_per_block = max(1, _LMNN_TRIPLET_BLOCK_ENTRIES // max(n, 1))
    for start in range(0, targets.shape[0], rows_per_block):
        i, j = targets[start:start + rows_per_block].T
        dist = sq[i, None] + sq[None, :] - 2.0 * (X[i] @ XM.T)
        np.maximum(dist, 0.0, out=dist)
        margin = 1.0 + dist[np.arange(i.size), j][:, None] - dist
        yield start, i, j, margin, y_idx[None, :] != y_idx[i][:, None]


def _lmnn_hinge_parts(X, i, j, active):
    r"""The sum of :math:`A_{ij} - A_{il}` over the triplets ``active`` marks (target pairs
    ``(i[r], j[r])``, points ``l``), with :math:`A_{ab} = (x_a - x_b)(x_a - x_b)^\top`, as
    ``(S, w)``: the sum is :math:`S + X^\top\mathrm{diag}(w)X`.  A pair with ``c`` marked
    points adds :math:`c\,A_{ij} - \sum_l A_{il} = -(x_i y^\top + y x_i^\top) + c\,x_j x_j^\top
    - \sum_l x_l x_l^\top` with :math:`y = c\,x_j - \sum_l x_l` (its :math:`x_i x_i^\top`
    terms cancel), so a block costs two matrix products; ``w`` is summed over the blocks
    before the last product."""
    count = active.sum(axis=1)
    pushed = active.astype(float)
    Y = count[:, None] * X[j] - pushed @ X
    S = -(X[i].T @ Y + Y.T @ X[i])
    return S, np.bincount(j, count, minlength=X.shape[0]) - pushed.sum(axis=0)


@validate_params({"M": ["array-like"], "X": ["array-like"], "y": ["array-like"],
                  "targets": ["array-like"], "push_weight": [Interval(Real, 0, 1)]})
def lmnn_loss(M, X, y, targets, push_weight=0.5):
    r"""LMNN loss and a subgradient in :math:`M`.

    .. math::

        \begin{aligned}
        \varepsilon(M) = {}& (1-\mu)\sum_{i,\,j\rightsquigarrow i} d_M^2(x_i,x_j) \\
          &{} + \mu \sum_{i,\,j\rightsquigarrow i}\sum_{l:\,y_l\ne y_i}
            \big[1 + d_M^2(x_i,x_j) - d_M^2(x_i,x_l)\big]_+ ,
        \end{aligned}

    with :math:`\mu` = ``push_weight``.  The loss is piecewise linear in :math:`M`; the
    returned matrix is its gradient wherever no hinge is exactly at its kink.
    See the chapter "Metric learning", section "LMNN".

    Parameters
    ----------
    M : array_like of shape (n_features, n_features)
        Symmetric positive semi-definite metric matrix.
    X : array_like of shape (n_samples, n_features)
    y : array_like of shape (n_samples,)
    targets : array_like of int, shape (n_pairs, 2)
        Pairs ``(i, j)`` of row indices meaning :math:`j \rightsquigarrow i`, as
        returned by :func:`lmnn_target_neighbors`: ``i != j`` and ``y[i] == y[j]``.
    push_weight : float in [0, 1], default=0.5
        :math:`\mu`.

    Returns
    -------
    loss : float
    grad : ndarray of shape (n_features, n_features)
    n_active : int
        Number of triplets with a positive hinge.

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import lmnn_loss, lmnn_target_neighbors
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0], [1.0, 3.0]])
    >>> y = np.array([0, 1, 0, 1])
    >>> targets = lmnn_target_neighbors(X, y, n_neighbors=1)
    >>> loss, grad, n_active = lmnn_loss(np.eye(2), X, y, targets)
    >>> print(round(loss, 4), grad.shape, n_active)
    36.0 (2, 2) 4
    """
    X = check_squares_finite(as_float_array(X, "X", ndim=2), "X")
    M = _check_metric_matrix(M, X.shape[1])
    y = np.asarray(y)
    _, y_idx = _check_labels(y, X.shape[0])
    targets = _check_index_pairs(targets, X.shape[0], "targets")
    _check_targets_of_classes(targets, y, y_idx)
    return _lmnn_loss(M, X, y_idx, targets, float(push_weight))


def _check_targets_of_classes(targets, y, y_idx):
    """A target neighbour is another point of the same class: a pair across two classes
    pulls together two points that the same loss pushes apart, and a point paired with
    itself is no neighbour; either way ``y`` and ``targets`` do not belong together."""
    i, j = targets[:, 0], targets[:, 1]
    same_point = np.flatnonzero(i == j)
    if same_point.size:
        t = int(same_point[0])
        raise ValueError(f"targets pairs the point {i[t]} with itself (row {t}): a target "
                         "neighbour is another point of the same class")
    across = np.flatnonzero(y_idx[i] != y_idx[j])
    if across.size:
        t = int(across[0])
        yi, yj = y[[i[t], j[t]]].tolist()
        raise ValueError(f"y and targets disagree: the target pair ({i[t]}, {j[t]}) (row {t}) "
                         f"joins y[{i[t]}]={yi!r} and y[{j[t]}]={yj!r} (pairs across two "
                         f"classes: {across.size} of {targets.shape[0]}); "
                         "target neighbours are points of the same class "
                         "(lmnn_target_neighbors(X, y) gives them)")


def _lmnn_loss(M, X, y_idx, targets, mu):
    """LMNN's loss, a subgradient and the number of positive hinges, from the margins of
    :func:`_lmnn_margin_rows` and the sums of :func:`_lmnn_hinge_parts`, a block of target
    pairs at a time: memory O(block x n + n k), time O(k n^2 d + n d^2) per call, whatever
    the number of triplets (about ``k n^2``)."""
    n = X.shape[0]
    D0 = X[targets[:, 0]] - X[targets[:, 1]]
    loss = (1 - mu) * float(np.einsum("pi,ij,pj->", D0, M, D0))
    grad = (1 - mu) * (D0.T @ D0)
    n_active = 0
    point_weight = np.zeros(n)
    for _, i, j, margin, impostor in _lmnn_margin_rows(M, X, targets, y_idx):
        active = (margin > 0) & impostor
        n_block = int(active.sum())
        if n_block == 0:
            continue
        n_active += n_block
        loss += mu * float(margin[active].sum())
        S, w = _lmnn_hinge_parts(X, i, j, active)
        grad += mu * S
        point_weight += mu * w
    grad += (X.T * point_weight) @ X
    return float(loss), (grad + grad.T) / 2, n_active


class LMNN(_MetricTransformer):
    r"""Large-margin nearest neighbour metric learning (Weinberger and Saul, 2009).

    Target neighbours :math:`j \rightsquigarrow i` are the ``n_neighbors`` nearest
    same-class points under the Euclidean metric; then

    .. math::

        \begin{aligned}
        \min_{M\succeq 0}\ & (1-\mu)\sum_{i,\,j\rightsquigarrow i} d_M^2(x_i,x_j) \\
          &{} + \mu \sum_{i,\,j\rightsquigarrow i}\sum_{l:\,y_l\ne y_i}
            \big[1 + d_M^2(x_i,x_j) - d_M^2(x_i,x_l)\big]_+ ,
        \end{aligned}

    a semidefinite program (the loss is convex and piecewise linear in :math:`M`).

    The data are first divided by :math:`s`, the root mean square target-neighbour
    distance (computed without overflow), and the problem is solved there: the loss is
    unchanged by :math:`X \to X/s`, :math:`M \to s^2 M`, so the learned ``metric_`` is
    :math:`M/s^2` and scaling ``X`` by any factor (even :math:`10^{\pm 150}`) scales
    ``metric_`` by its inverse square.

    Two stages.  First projected subgradient descent on :math:`M` (as in the original
    paper) from the identity: a step along the negative subgradient, then the projection
    onto the PSD cone (clipping negative eigenvalues); the first step is ``init_step``
    or :math:`0.1\|M_0\|_F/\|\nabla\|_F`, it grows by 5% after an improvement and is
    halved (the step undone) after a deterioration; it stops when an accepted step
    changes the loss by less than ``tol`` (relative), when the step has collapsed below
    :math:`10^{-12}\|M\|_F/\|\nabla\|_F`, or at ``max_iter``.  This first-order method
    stalls short of the optimum (0.8% above it on standardised wine), so with
    ``solver="active-set"`` (the default ``"auto"`` where it is affordable) the exact
    optimum follows: the SDP restricted to the triplets whose margin is above -0.5 at the
    current :math:`M` is solved (by Clarabel through cvxpy up to 20 features, by
    lecturelib's own primal-dual interior-point method above, where Clarabel's
    factorisation of the dense triplet block is too slow), and every
    triplet left out is checked at its solution; any with a positive hinge joins the
    working set and the restricted problem is solved again.  When none does, the
    restricted optimum is the optimum of the full problem (the left-out hinges are zero
    there and can only add to the loss elsewhere).  The result is then certified by
    lecturelib itself, not by Clarabel's status: multipliers :math:`\alpha_t\in[0,\mu]` read
    off the solution (:math:`\mu` on the positive hinges, 0 on the inactive ones, the
    complementary values on the ties) give a lower bound on the optimum from the dual of
    the SDP, and the relative duality gap ``duality_gap_`` must be at most
    :math:`10^{-4}`.  That is the stage's convergence criterion: Clarabel's "almost
    solved" status (the optimum of a piecewise linear loss is degenerate, and Clarabel
    stalls near :math:`10^{-7}` on wine) is accepted silently when the certificate holds,
    as is its "solved" status only then.

    Cost: the triplets (each target pair with every point of another class, about
    :math:`k n^2` of them) are never held at once: every pass over them (a loss and
    subgradient, a selection of the working set, the certificate) walks them in blocks of
    target pairs, reading a block's margins from its rows of squared distances (one
    matrix product), so memory is O(nk) plus one block (``_LMNN_TRIPLET_BLOCK_ENTRIES``
    target pairs times points), and time is O(k n^2 d) per pass.  The target neighbours
    take O(sum of the squared class sizes x d) once (:func:`lmnn_target_neighbors`); the
    active-set stage holds its working set (on wine 1,222 of 62,574 triplets).

    A ``ConvergenceWarning`` is raised whenever the result is not certified by the
    method's own criterion: the subgradient stage stopped by its step collapse or
    ``max_iter`` (when it is the last stage), the active set still growing after
    ``max_rounds`` solves, a certified gap above :math:`10^{-4}`.  When the subgradient
    stage is the last, its gap is certified the same way, from multipliers read off its
    point (there far from complementary, so the bound is loose: 31% on wine, where the
    loss is 0.8% above the optimum), and a gap above :math:`10^{-4}` warns even when
    the stage converged by its own criterion.  Tested against
    an independent cvxpy solve on standardised iris and wine (loss within 0.1%), and on
    wine with 8 noise columns (21 features: the interior-point stage); on breast cancer
    (30 features) its loss is 6% below metric-learn's, certified
    (``benchmarks/METRIC.md``).

    Parameters
    ----------
    n_neighbors : int, default=3
        Target neighbours per point; the largest class needs more than ``n_neighbors``
        points (a smaller class gives its members fewer, as
        :func:`lmnn_target_neighbors` does).
    push_weight : float, default=0.5
        :math:`\mu`, in (0, 1).
    max_iter : int, default=500
        Iteration cap of the subgradient stage.
    tol : float, default=1e-7
        The subgradient stage stops when the relative change of the loss stays below
        ``tol`` after a step.
    init_step : float or None, default=None
        First step size (in the units of the standardised data); by default
        ``0.1 * ||M0|| / ||gradient||``.
    solver : {"auto", "active-set", "subgradient"}, default="auto"
        ``"auto"`` is ``"active-set"`` for at most 20 features, or beyond when the
        interior-point method's first working set has at most :math:`10^7` entries
        (working triplets times :math:`d(d+1)/2`: breast cancer, 30 features, 7,152
        triplets, about 12 s in all), else ``"subgradient"``, which warns with its
        certified gap when that is above :math:`10^{-4}`; where the exact stage fails,
        ``"auto"`` keeps the subgradient result with a ``ConvergenceWarning`` and
        ``"active-set"`` raises the ``ValueError``.
    max_rounds : int, default=20
        Cap on the restricted solves of the active-set stage.

    Attributes
    ----------
    metric_, components_ : as in :class:`MMC`
    target_neighbors_ : ndarray of shape (n_pairs, 2)
    loss_ : float
        The loss at ``metric_``.
    loss_history_ : list of float
        The loss after each subgradient step, then after each restricted solve.
    n_iter_ : int
        Subgradient steps taken.
    n_rounds_ : int
        Restricted solves of the active-set stage (0 without it).
    duality_gap_ : float
        The certified relative gap of the result (of the active-set stage, or of the
        subgradient stage when it is the last): the loss is at most this fraction above
        the optimum.  The subgradient stage warns when it is above :math:`10^{-4}`, even
        when its own criterion stopped it.
    scale_ : float
        :math:`s`, the RMS target-neighbour distance of ``X``.

    See the chapter "Metric learning", section "LMNN".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import LMNN, knn_loo_error
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 15)
    >>> X = np.column_stack([y + 0.1 * rng.normal(size=30),
    ...                      3 * rng.normal(size=30)])
    >>> lmnn = LMNN(n_neighbors=3).fit(X, y)
    >>> knn_loo_error(X, y, 3) > knn_loo_error(X, y, 3, M=lmnn.metric_)
    True
    """

    _parameter_constraints = {
        "n_neighbors": [_POSITIVE_INT],
        "push_weight": [Interval(Real, 0, 1, closed="neither")],
        "max_iter": [_POSITIVE_INT],
        "tol": [_NON_NEGATIVE],
        "init_step": [_POSITIVE, None],
        "solver": [Options("auto", "active-set", "subgradient")],
        "max_rounds": [_POSITIVE_INT],
    }

    def __init__(self, n_neighbors=3, push_weight=0.5, max_iter=500, tol=1e-7, init_step=None,
                 solver="auto", max_rounds=20):
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.max_iter = max_iter
        self.tol = tol
        self.init_step = init_step
        self.solver = solver
        self.max_rounds = max_rounds

    def fit(self, X, y):
        """Learn ``metric_`` from labelled data; returns ``self``."""
        check_estimator_params(self)
        X, y_idx = self._validate_xy(X, y)
        mu = float(self.push_weight)
        Xu, scale, targets = _lmnn_standardise(X, y_idx, self.n_neighbors)
        self.target_neighbors_, self.scale_ = targets, scale
        solver = self.solver
        M, loss, stop = self._subgradient(Xu, y_idx, targets, mu)
        if solver == "auto":
            solver = ("active-set" if _lmnn_exact_stage_affordable(M, Xu, targets, y_idx)
                      else "subgradient")
        self.n_rounds_ = 0
        self.duality_gap_ = float("nan")
        if solver == "active-set":
            try:
                M, loss, self.n_rounds_, multipliers = _lmnn_active_set(
                    Xu, targets, y_idx, mu, M, self.max_rounds)
                self.loss_history_.append(loss)
            except ValueError as exc:
                if self.solver != "auto":
                    raise
                # "auto" keeps the subgradient result, and says that it is not certified
                solver, stop = "subgradient", f"{stop}; the exact stage failed ({exc})"
            else:
                self.duality_gap_ = self._certify(M, loss, Xu, targets, y_idx, mu,
                                                  multipliers)
                if not self.duality_gap_ <= _LMNN_CERTIFIED_GAP:
                    warnings.warn(
                        f"LMNN: the active-set stage ended {self.n_rounds_} restricted solves "
                        f"with a certified relative duality gap of {self.duality_gap_:.3g} > "
                        f"{_LMNN_CERTIFIED_GAP:g} (Clarabel stopped short of the optimum, or "
                        "the triplet margins are badly scaled); its loss may be above the "
                        "optimum: standardise X, or raise max_rounds", ConvergenceWarning,
                        stacklevel=2)
        if solver == "subgradient":
            # the subgradient stage's own criterion (a small change of the loss) does not
            # say how far it is from the optimum; the certificate does
            self.duality_gap_ = self._certify(M, loss, Xu, targets, y_idx, mu)
            if stop != "converged":
                warnings.warn(f"LMNN stopped {stop} before the relative change of the loss "
                              f"fell below tol={tightened(self.tol):g}; its loss is certified "
                              f"within {self.duality_gap_:.3g} (relative) of the optimum: "
                              "raise max_iter, or use solver='active-set'",
                              ConvergenceWarning, stacklevel=2)
            elif not self.duality_gap_ <= _LMNN_CERTIFIED_GAP:
                why = ("solver='auto' skips the exact stage when its working set has more "
                       f"than {_LMNN_IPM_MAX_ENTRIES:.0e} entries"
                       if self.solver == "auto"
                       else "the subgradient method stalls short of the optimum")
                warnings.warn(f"LMNN: the subgradient stage converged (relative change of the "
                              f"loss below tol={tightened(self.tol):g}), but its loss is "
                              f"certified only within {self.duality_gap_:.3g} (relative) of "
                              f"the optimum, above {_LMNN_CERTIFIED_GAP:g} ({why}); use "
                              "solver='active-set' for the certified optimum",
                              ConvergenceWarning, stacklevel=2)
        self.loss_ = loss
        self._set_metric(M, scale)
        return self

    @staticmethod
    def _certify(M, loss, Xu, targets, y_idx, mu, multipliers=None):
        """The certified gap; warns when the certificate left out its fit of the ties.
        The interior-point method's own ``multipliers`` give a second bound (the triplets
        outside its working set at 0); the smaller gap is kept."""
        gap, skipped = _lmnn_certified_gap(M, loss, Xu, targets, y_idx, mu)
        if multipliers is not None:
            gap = min(gap, _lmnn_gap_of_multipliers(M, loss, Xu, targets, mu, *multipliers))
            if gap <= _LMNN_CERTIFIED_GAP:
                skipped = 0
        if skipped:
            d = Xu.shape[1]
            warnings.warn(f"LMNN: the duality-gap certificate skipped its fit of the "
                          f"multipliers of {skipped} tied triplets ({skipped} x {d}^2 entries "
                          f"> {_LMNN_TIE_FIT_MAX_ENTRIES:.0e}, too costly); duality_gap_ "
                          f"({gap:.3g}) is the looser bound without them", ConvergenceWarning,
                          stacklevel=3)
        return gap

    def _subgradient(self, Xu, y_idx, targets, mu):
        """Projected subgradient descent from the identity; (best M, its loss, stop reason)."""
        M = np.eye(Xu.shape[1])
        loss, grad, _ = _lmnn_loss(M, Xu, y_idx, targets, mu)
        gnorm = np.linalg.norm(grad)
        if self.init_step is None:
            step = 0.1 * np.linalg.norm(M) / gnorm if gnorm > 0 else 0.0
        else:
            step = float(self.init_step)
        best_M, best_loss = M, loss
        self.loss_history_ = [loss]
        self.n_iter_ = 0
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        rel = np.inf   # the last relative decrease of the loss
        stop = None
        for it in range(max_iter):
            if gnorm == 0:                    # a zero subgradient: M is optimal
                stop = "converged"
                break
            self.n_iter_ = it + 1
            M_new = psd_projection(M - step * grad)
            loss_new, grad_new, _ = _lmnn_loss(M_new, Xu, y_idx, targets, mu)
            if loss_new <= loss:
                rel = (loss - loss_new) / max(abs(loss), 1e-300)
                M, loss, grad = M_new, loss_new, grad_new
                gnorm = np.linalg.norm(grad)
                step *= 1.05
                if loss < best_loss:
                    best_M, best_loss = M, loss
                self.loss_history_.append(loss)
                if rel < tol:
                    stop = "converged"
                    break
            else:
                step /= 2
                self.loss_history_.append(loss)
                if step < 1e-12 * np.linalg.norm(M) / max(gnorm, 1e-300):
                    stop = (f"after {self.n_iter_} iterations because its step size collapsed "
                            f"(last relative decrease of the loss {rel:.3g})")
                    break
        if stop is None:
            stop = (f"at max_iter={max_iter} iterations (last relative decrease of the loss "
                    f"{rel:.3g})")
        return best_M, best_loss, stop


# The restricted problems go to Clarabel up to this many features, to lecturelib's own
# interior-point method above: Clarabel's sparse factorisation of the dense block of
# working triplets x d^2 took about 10 s on wine with 8 noise columns (1,906 x 21^2) and
# failed after 4 minutes on breast cancer (7,152 x 30^2), where the interior-point
# method takes about 3 s a round.
_LMNN_ACTIVE_SET_MAX_FEATURES = 20
# solver="auto" runs the interior-point method while its working triplets times
# d (d + 1) / 2 (the entries of its matrix F, 8 bytes each, held twice) are at most this
_LMNN_IPM_MAX_ENTRIES = 10_000_000
# its stopping gap (relative); double precision stalls it near 1e-7
_LMNN_IPM_GAP = 1e-8


def _lmnn_exact_stage_affordable(M, Xu, targets, y_idx):
    """Whether solver="auto" runs the active-set stage from ``M``: at most 20 features
    (Clarabel), or a first working set of at most ``_LMNN_IPM_MAX_ENTRIES`` entries for
    the interior-point method."""
    d = Xu.shape[1]
    if d <= _LMNN_ACTIVE_SET_MAX_FEATURES:
        return True
    n_work = _lmnn_select(M, Xu, targets, y_idx, -_LMNN_WORKING_MARGIN)[0].size
    return n_work * d * (d + 1) // 2 <= _LMNN_IPM_MAX_ENTRIES
# triplets whose margin is above -0.5 (in standardised units) join the working set: on wine
# that is 1,222 of 62,574 and no triplet left out is active at the restricted optimum
_LMNN_WORKING_MARGIN = 0.5
# The active-set stage's convergence criterion: its result is accepted silently when
# lecturelib's own duality certificate puts its loss within this fraction of the optimum.
_LMNN_CERTIFIED_GAP = 1e-4
# Widths of the band of margins treated as ties when the certificate's multipliers are fitted.
_LMNN_TIE_WIDTHS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
# The certificate fits the ties' multipliers by bounded least squares on a dense
# (d^2 x ties) matrix; beyond this many entries the fit is skipped (the ties keep the
# multiplier 0, a valid but looser bound) and LMNN says so: on np.eye(60), every distance
# tied, 3,600 x thousands of ties did not return in 200 s.
_LMNN_TIE_FIT_MAX_ENTRIES = 1_000_000
# the most ties fitted by the exact least-squares solver (a ties x ties factorisation:
# 32 MB here); more go to LSMR
_LMNN_TIE_FIT_EXACT_MAX = 2_000
# The same for MENN's certificate of solver="cvxpy" (fewer: each fit is a least-squares
# problem with s^2 rows), and the largest dual SDP over the ties' multipliers it solves
# (ties times s^2 entries of its constraint matrix; beyond, the certificate does without).
_MENN_TIE_WIDTHS = (1e-4, 1e-3)
_MENN_TIE_SDP_MAX_ENTRIES = 20_000_000


def _lmnn_standardise(X, y_idx, n_neighbors):
    """``(X / s, s, targets)``: ``s`` is the RMS target-neighbour distance, computed without
    overflow, ``targets`` the target neighbours.

    Dividing by the largest |entry| first keeps the squared distances finite for any finite
    ``X``; a positive factor does not change which points are nearest.
    """
    big = float(np.max(np.abs(X)))
    X1 = X / big if big > 0 else X.copy()
    targets = lmnn_target_neighbors(X1, y_idx, n_neighbors)
    if big == 0 or targets.shape[0] == 0:
        return X1, (big if big > 0 else 1.0), targets
    D0 = X1[targets[:, 0]] - X1[targets[:, 1]]
    unit = float(np.sqrt(np.mean(np.sum(D0**2, axis=1))))
    if unit == 0:
        return X1, big, targets
    return X1 / unit, big * unit, targets


def _lmnn_triplet_features(Xu, a, b):
    """Rows :math:`\\mathrm{vec}((x_a - x_b)(x_a - x_b)^\\top)`, so that row @ vec(M) = d_M^2."""
    D = Xu[a] - Xu[b]
    return np.einsum("pi,pj->pij", D, D).reshape(len(a), -1)


def _lmnn_select(M, Xu, targets, y_idx, threshold):
    """``(keys, i, j, l, margins)`` of the triplets whose margin is above ``threshold``, in
    the order of :func:`_lmnn_triplets` (``keys = t * n + l``, ``t`` the target pair's row,
    increasing), found a block at a time."""
    n = y_idx.size
    parts = []
    for start, i, j, margin, impostor in _lmnn_margin_rows(M, Xu, targets, y_idx):
        r, l = np.nonzero(impostor & (margin > threshold))
        parts.append(((start + r) * n + l, i[r], j[r], l, margin[r, l]))
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))


def _lmnn_active_set(Xu, targets, y_idx, mu, M, max_rounds):
    """The exact optimum on a growing working set of triplets (see LMNN): each restricted
    problem by Clarabel up to ``_LMNN_ACTIVE_SET_MAX_FEATURES`` features, by
    :func:`_lmnn_restricted_ipm` above.  Returns ``(M, loss, rounds, multipliers)``:
    ``multipliers`` are the interior-point method's ``(i, j, l, alpha)`` (None from
    Clarabel)."""
    d = Xu.shape[1]
    D = Xu[targets[:, 0]] - Xu[targets[:, 1]]
    P = D.T @ D
    # the working set as explicit triplets (keys t * n + l); the candidates are those with
    # a margin above -0.5 at the current M, found in blocks
    work = _lmnn_select(M, Xu, targets, y_idx, -_LMNN_WORKING_MARGIN)[:4]
    multipliers = None
    for rounds in range(1, max_rounds + 1):
        _, wi, wj, wl = work
        if d <= _LMNN_ACTIVE_SET_MAX_FEATURES:
            M = _lmnn_restricted_clarabel(Xu, wi, wj, wl, P, mu)
        else:
            M, alpha = _lmnn_restricted_ipm(Xu, wi, wj, wl, P, mu, M)
            multipliers = (wi, wj, wl, alpha)
        candidates = _lmnn_select(M, Xu, targets, y_idx, -_LMNN_WORKING_MARGIN)
        margins = candidates[4]           # every positive margin is among the candidates
        missed = (margins > 0) & ~np.isin(candidates[0], work[0])
        if not missed.any():
            break
        keys, first = np.unique(np.concatenate([work[0], candidates[0]]), return_index=True)
        work = tuple(np.concatenate([w, c])[first] for w, c in zip(work[1:], candidates[1:4]))
        work = (keys, *work)
    else:
        warnings.warn(f"LMNN: the active set still grew after max_rounds={max_rounds} "
                      "restricted solves; its loss may be above the optimum: raise max_rounds",
                      ConvergenceWarning, stacklevel=3)
    loss = ((1 - mu) * float(np.einsum("pi,ij,pj->", D, M, D))
            + mu * float(np.maximum(margins, 0).sum()))
    return M, loss, rounds, multipliers


def _lmnn_restricted_clarabel(Xu, wi, wj, wl, P, mu):
    """LMNN's SDP restricted to the triplets ``(wi, wj, wl)``, by Clarabel through cvxpy."""
    import cvxpy as cp

    d = Xu.shape[1]
    A = (_lmnn_triplet_features(Xu, wi, wj) - _lmnn_triplet_features(Xu, wi, wl))
    Mv = cp.Variable((d, d), PSD=True)
    m = cp.vec(Mv, order="C")
    objective = (1 - mu) * (P.ravel() @ m) + mu * cp.sum(cp.pos(1 + A @ m))
    problem = cp.Problem(cp.Minimize(objective))
    # qdldl factors this KKT system (a dense block of n_work x d^2) 4 times faster than
    # Clarabel's default faer on wine
    solve_with_clarabel(problem, "LMNN", "use solver='subgradient'",
                        {**cvxpy_settings(cp.CLARABEL), "direct_solve_method": "qdldl"})
    if problem.status not in ("optimal", "optimal_inaccurate") or Mv.value is None:
        raise ValueError(f"LMNN: the SDP solver (Clarabel, through cvxpy) returned status "
                         f"{problem.status!r}, not a solution; use solver='subgradient'")
    return psd_projection((Mv.value + Mv.value.T) / 2)


def _svec_rows(U, V):
    """Rows ``f`` with ``f @ M[triu] = <U U' - V V', M>`` (off-diagonal entries doubled)."""
    a, b = np.triu_indices(U.shape[1])
    return (U[:, a] * U[:, b] - V[:, a] * V[:, b]) * np.where(a == b, 1.0, 2.0)


def _lmnn_restricted_ipm(Xu, wi, wj, wl, P, mu, M_start, max_iter=100):
    r"""LMNN's SDP restricted to the triplets ``(wi, wj, wl)`` by a primal-dual
    interior-point method; returns ``(M, alpha)``, ``alpha`` the triplets' multipliers.

    The problem is :math:`\min (1-\mu)\langle P, M\rangle + \mu\sum_t\xi_t` over
    :math:`M\succeq 0`, :math:`\xi\ge 0`, :math:`\xi_t \ge 1 + \langle A_t, M\rangle`, and
    its dual :math:`\max \sum_t\alpha_t` over :math:`0\le\alpha\le\mu`,
    :math:`Z = (1-\mu)P + \sum_t\alpha_t A_t \succeq 0`.  Every iterate is feasible for
    both, so :math:`\sum_t\alpha_t` is a lower bound throughout.  Each iteration is
    Mehrotra's predictor-corrector with the Nesterov-Todd scaling :math:`W` of the PSD
    block (:math:`WZW = M`); eliminating the triplets' variables leaves one symmetric
    positive definite system in the :math:`d(d+1)/2` entries of :math:`M`,
    :math:`W^{-1}\otimes W^{-1} + F^\top\mathrm{diag}(w)F` (:math:`F` the triplets as
    rows), formed by one matrix product: time O(triplets x d^4) per iteration, memory
    O(triplets x d^2).  Clarabel solves the same problem, but its sparse factorisation of
    the dense triplet block took minutes at 30 features.  It stops at a relative gap of
    ``_LMNN_IPM_GAP`` or when five iterations bring no tenth off the best gap (the floor
    of double precision, near :math:`10^{-7}`), and returns the iterate with the smallest
    gap.
    """
    from scipy.linalg import cho_factor, cho_solve
    from scipy.linalg.blas import dsyrk

    d = Xu.shape[1]
    a, b = np.triu_indices(d)
    off = a != b
    twice = np.where(off, 2.0, 1.0)
    flat, flat_t = a * d + b, b * d + a          # M[triu] -> vec(M), both triangles
    F = _svec_rows(Xu[wi] - Xu[wj], Xu[wi] - Xu[wl])
    C = (1 - mu) * P
    c = C[a, b] * twice

    def smat(v):
        S = np.empty((d, d))
        S[a, b] = v
        S[b, a] = v
        return S

    def pushed(alpha):                            # sum_t alpha_t A_t
        return smat((F.T @ alpha) / twice)

    # a strictly feasible start: M inside the cone, xi above both of its bounds, and the
    # largest alpha = mu / 2^k that leaves Z positive definite
    M = M_start + 1e-2 * max(np.trace(M_start), 1e-12) / d * np.eye(d)
    x = M[a, b].copy()
    margin = F @ x + 1
    xi = np.maximum(margin, 0) + 1.0
    r = xi - margin
    alpha = np.full(F.shape[0], mu / 2)
    Z = C + pushed(alpha)
    while np.linalg.eigvalsh(Z)[0] <= 1e-8 * np.trace(C) / d:
        alpha /= 2
        Z = C + pushed(alpha)
    n_pairs = 2 * F.shape[0] + d               # complementary pairs, the PSD block as d
    best = None
    for it in range(max_iter):
        primal = c @ x + mu * xi.sum()
        # relative to the loss, or absolute below 1 (an empty working set has optimum 0)
        gap = (primal - alpha.sum()) / max(abs(primal), 1.0)
        if best is None or gap < 0.9 * best[2]:
            best = (M.copy(), alpha.copy(), gap, it)
        if gap <= _LMNN_IPM_GAP or it - best[3] >= 5:
            break
        try:
            LM, LZ = np.linalg.cholesky(M), np.linalg.cholesky(Z)
        except np.linalg.LinAlgError:      # rounding pushed an iterate to the boundary
            break
        # Nesterov-Todd scaling: with L_Z' L_M = U diag(v) V', G = L_M V diag(v)^(-1/2)
        # gives G' Z G = G^(-1) M G^(-T) = diag(v) and W = G G'
        _, v, Vt = np.linalg.svd(LZ.T @ LM)
        G_inv = (np.sqrt(v)[:, None] * Vt) @ np.linalg.inv(LM)
        G = np.linalg.inv(G_inv)
        W_inv = G_inv.T @ G_inv
        K = np.kron(W_inv, W_inv)
        KJ = K[:, flat] + K[:, flat_t] * off
        beta = mu - alpha
        ar, xb = alpha / r, xi / beta
        weight = ar / (1 + ar * xb)
        # F' diag(weight) F by a symmetric rank-k update (its upper triangle, which is all
        # that cho_factor reads), half the work of a general product
        H = KJ[flat] + KJ[flat_t] * off[:, None]
        if F.shape[0]:
            H += dsyrk(1.0, np.sqrt(weight)[:, None] * F, trans=1)
        try:
            factor = cho_factor(H, lower=False, overwrite_a=True)
        except np.linalg.LinAlgError:      # the same, seen in the Newton system
            break
        M_inv = np.linalg.inv(M)

        def direction(target, second_order=None):
            e1, e2, R = target / r - alpha, target / beta - xi, target * M_inv - Z
            if second_order is not None:
                da, dr, dxi, S = second_order
                e1, e2 = e1 - da * dr / r, e2 + da * dxi / beta
                R = R - G_inv.T @ S @ G_inv
            h = (e1 - ar * e2) / (1 + ar * xb)
            dx = cho_solve(factor, R[a, b] * twice - F.T @ h)
            u = F @ dx
            dr = (e2 + xb * e1 - u) / (1 + ar * xb)
            da = h + weight * u
            return dx, da, dr, dr + u, smat(dx), pushed(da)

        def step_lengths(da, dr, dxi, dM, dZ):
            primal_step = min(_psd_step(M, dM), _positive_step(xi, dxi), _positive_step(r, dr))
            dual_step = min(_psd_step(Z, dZ), _positive_step(alpha, da),
                            _positive_step(beta, -da))
            return primal_step, dual_step

        comp = alpha @ r + beta @ xi + np.sum(M * Z)
        dx, da, dr, dxi, dM, dZ = direction(0.0)                 # the predictor
        sp, sd = (min(1.0, s) for s in step_lengths(da, dr, dxi, dM, dZ))
        alpha_aff = alpha + sd * da
        comp_aff = (alpha_aff @ (r + sp * dr) + (mu - alpha_aff) @ (xi + sp * dxi)
                    + np.sum((M + sp * dM) * (Z + sd * dZ)))
        sigma = (comp_aff / comp) ** 3
        # the corrector: second-order terms of the pairs, the PSD block's in scaled space
        prod = (G_inv @ dM @ G_inv.T) @ (G.T @ dZ @ G)
        S = (prod + prod.T) / (v[:, None] + v[None, :])
        dx, da, dr, dxi, dM, dZ = direction(sigma * comp / n_pairs, (da, dr, dxi, S))
        sp, sd = (min(1.0, 0.98 * s) for s in step_lengths(da, dr, dxi, dM, dZ))
        x, xi, r, alpha = x + sp * dx, xi + sp * dxi, r + sp * dr, alpha + sd * da
        M, Z = smat(x), C + pushed(alpha)
    return best[0], best[1]


def _psd_step(X, dX):
    """The largest s with X + s dX positive semidefinite (X positive definite)."""
    Li = np.linalg.inv(np.linalg.cholesky(X))
    low = np.linalg.eigvalsh(Li @ dX @ Li.T)[0]
    return np.inf if low >= 0 else -1.0 / low


def _positive_step(v, dv):
    """The largest s with v + s dv >= 0 (v > 0)."""
    down = dv < 0
    return float(np.min(-v[down] / dv[down])) if down.any() else np.inf


def _lmnn_certified_gap(M, loss, Xu, targets, y_idx, mu):
    r"""Relative duality gap of LMNN's SDP at ``M``, a bound computed from the dual.

    For multipliers :math:`0 \le \alpha_t \le \mu`, :math:`\mu[1 + \langle A_t, M\rangle]_+
    \ge \alpha_t(1 + \langle A_t, M\rangle)`, so with :math:`Z = (1-\mu)P + \sum_t\alpha_t A_t`
    (:math:`P` the target-neighbour scatter, :math:`A_t` the triplet matrices) every
    :math:`M' \succeq 0` has loss at least :math:`\sum_t\alpha_t + \langle Z, M'\rangle`.  The
    optimum has :math:`(1-\mu)\langle P, M^*\rangle \le` ``loss``, which gives
    :math:`L^* \ge \sum_t\alpha_t + \text{loss}\,\min(0, \lambda_{\min}(Z, P))/(1-\mu)`
    (:math:`\lambda_{\min}(Z, P)` the smallest eigenvalue of :math:`Z` relative to
    :math:`P \succ 0`).  The multipliers are read off ``M``:
    :math:`\mu` on the triplets with a positive hinge, 0 on the inactive ones, and on the
    ties (margins within a width ``w`` of 0) the values in :math:`[0,\mu]` that make
    :math:`ZM` smallest (complementarity, bounded least squares); the best of the widths
    ``_LMNN_TIE_WIDTHS`` is kept (every choice gives a valid bound).  A width whose ties
    make the least-squares problem larger than ``_LMNN_TIE_FIT_MAX_ENTRIES`` entries
    (ties times :math:`d^2`) leaves their multipliers at 0.

    Returns ``(gap, skipped)``: ``skipped`` is the largest number of ties whose fit was
    left out (0 when none was).
    """
    from scipy.optimize import lsq_linear

    D = Xu[targets[:, 0]] - Xu[targets[:, 1]]
    P = D.T @ D
    d = Xu.shape[1]
    # one pass over the triplets, in blocks, for every width: the active triplets' sum of
    # A_t and their count, the ties listed while their fit stays affordable
    pushed = {w: np.zeros((d, d)) for w in _LMNN_TIE_WIDTHS}
    point_weight = {w: np.zeros(Xu.shape[0]) for w in _LMNN_TIE_WIDTHS}
    n_active = dict.fromkeys(_LMNN_TIE_WIDTHS, 0)
    n_ties = dict.fromkeys(_LMNN_TIE_WIDTHS, 0)
    tied = {w: [] for w in _LMNN_TIE_WIDTHS}
    for _, i, j, margins, impostor in _lmnn_margin_rows(M, Xu, targets, y_idx):
        for width in _LMNN_TIE_WIDTHS:
            active = impostor & (margins > width)
            ties = impostor & (np.abs(margins) <= width)
            S, w = _lmnn_hinge_parts(Xu, i, j, active)
            pushed[width] += S
            point_weight[width] += w
            n_active[width] += int(active.sum())
            n_ties[width] += int(ties.sum())
            if n_ties[width] * d * d <= _LMNN_TIE_FIT_MAX_ENTRIES:
                r, l = np.nonzero(ties)
                tied[width].append((Xu[i[r]] - Xu[j[r]], Xu[i[r]] - Xu[l]))
            else:          # too many to fit: none is kept
                tied[width].clear()
    for width in _LMNN_TIE_WIDTHS:
        pushed[width] += (Xu.T * point_weight[width]) @ Xu
    best, skipped = -np.inf, 0
    for width in _LMNN_TIE_WIDTHS:
        Z = (1 - mu) * P + mu * pushed[width]
        dual = mu * float(n_active[width])
        if n_ties[width] * d * d > _LMNN_TIE_FIT_MAX_ENTRIES:
            skipped = max(skipped, n_ties[width])
        elif n_ties[width]:
            Aj = np.concatenate([a for a, _ in tied[width]])
            Al = np.concatenate([b for _, b in tied[width]])
            cols = ((Aj @ M)[:, None, :] * Aj[:, :, None]
                    - (Al @ M)[:, None, :] * Al[:, :, None]).reshape(len(Aj), -1)  # A_t M
            # the exact solver factors a ties x ties matrix (1.2 GB for 12,000 ties at
            # d = 3); beyond a few thousand ties the iterative one keeps memory linear
            solver = "exact" if len(Aj) <= _LMNN_TIE_FIT_EXACT_MAX else "lsmr"
            alpha = lsq_linear(cols.T, -(Z @ M).ravel(), bounds=(0.0, mu),
                               lsq_solver=solver).x
            Z = Z + (Aj.T * alpha) @ Aj - (Al.T * alpha) @ Al
            dual += float(alpha.sum())
        best = max(best, _lmnn_dual_bound(Z, dual, loss, P, mu))
    return (loss - best) / max(abs(loss), 1e-300), skipped


def _lmnn_dual_bound(Z, dual, loss, P, mu):
    """The lower bound on LMNN's optimum from multipliers with sum ``dual`` and matrix
    ``Z`` (see :func:`_lmnn_certified_gap`): ``dual`` when ``Z`` is PSD, less the
    correction through the smallest eigenvalue of ``Z`` relative to ``P`` when not."""
    from scipy.linalg import eigh

    Z = (Z + Z.T) / 2
    if float(np.linalg.eigvalsh(Z)[0]) >= 0:
        return dual
    lam_P = np.linalg.eigvalsh(P)
    if lam_P[0] <= 1e-12 * lam_P[-1]:   # M* is not bounded through P: no finite bound
        return -np.inf
    return dual + loss / (1 - mu) * float(eigh(Z, P, eigvals_only=True)[0])


def _lmnn_gap_of_multipliers(M, loss, Xu, targets, mu, i, j, l, alpha):
    """The relative gap certified by multipliers ``alpha`` of the triplets ``(i, j, l)``
    (every other triplet's at 0), as the interior-point method returns them."""
    D = Xu[targets[:, 0]] - Xu[targets[:, 1]]
    P = D.T @ D
    Dj, Dl = Xu[i] - Xu[j], Xu[i] - Xu[l]
    Z = (1 - mu) * P + (Dj.T * alpha) @ Dj - (Dl.T * alpha) @ Dl
    best = _lmnn_dual_bound(Z, float(alpha.sum()), loss, P, mu)
    return (loss - best) / max(abs(loss), 1e-300)


# ----------------------------------------------------------------------------- ITML


class ITML(_MetricTransformer):
    r"""Information-theoretic metric learning (Davis, Kulis, Jain, Sra and Dhillon, 2007).

    .. math::

        \begin{aligned}
        \min_{M\succeq 0,\ \xi}\ & D_{\ell d}(M, M_0)
          + \gamma\, D_{\ell d}(\mathrm{diag}\,\xi, \mathrm{diag}\,\xi_0) \\
        \text{s.t.}\ & d_M^2(x_i,x_j) \le \xi_{ij}\ \ ((i,j)\ \text{similar}), \\
        & d_M^2(x_i,x_j) \ge \xi_{ij}\ \ ((i,j)\ \text{dissimilar}),
        \end{aligned}

    with the LogDet divergence

    .. math::

        D_{\ell d}(A, B) = \mathrm{tr}(AB^{-1}) - \log\det(AB^{-1}) - d,

    :math:`M_0 = I`, and slack targets :math:`\xi_0` equal to ``u`` for similar and
    ``l`` for dissimilar pairs.  Solved by cyclic Bregman projections (the scheme of the
    paper's Algorithm 1), one constraint at a time, each a rank-one update of :math:`M`,
    so :math:`M` stays positive definite.  The projection step is the exact one for this
    objective, :math:`\alpha = \delta\,\frac{\gamma}{\gamma+1}(1/p - 1/\xi)` with
    :math:`p = d_M^2(x_i, x_j)` and :math:`\delta = \pm 1`, clipped at the dual variable
    of the constraint; the paper's printed step
    :math:`\frac{\delta}{2}(1/p - \gamma/\xi)` is the same only at :math:`\gamma = 1`.
    The projections converge linearly, slowly at a large :math:`\gamma` (at
    :math:`\gamma = 10` they stopped 3.3% above the optimum on iris after 5,000 sweeps),
    so their dual variables are handed, every 50 sweeps and when the sweeps stop, to
    projected Newton on the dual (see ``_itml_dual_newton``), which ends when every
    constraint's residual is :math:`10^{-8}` of its slack: the optimum to about
    :math:`10^{-8}` (relative), checked against cvxpy on iris and wine at
    :math:`\gamma \in \{0.1, 1, 10\}`.
    Scaling ``X`` by :math:`s` (with the default bounds, which scale by :math:`s^2`)
    leaves ``metric_`` unchanged; the sweeps run on the pair differences in units of their
    RMS length, so that this holds to rounding even at :math:`s = 10^{\pm 150}`.

    Parameters
    ----------
    gamma : float > 0, default=1.0
        Weight of the slack term (large = nearly hard constraints).
    n_constraints : int or None, default=None
        Number of random pairs (half similar, half dissimilar); by default
        ``20 * n_classes**2`` as in ``metric-learn``.
    bounds : (float, float) or None, default=None
        ``(u, l)``; by default the 5th and 95th percentiles of the squared Euclidean
        distances of the chosen pairs.
    max_iter : int, default=5000
        Maximum number of sweeps through the constraints (reaching it without a
        successful Newton polish gives a ``ConvergenceWarning``).
    tol : float, default=1e-3
        Stop the sweeps (then polish) when the dual variables change by less than
        ``tol`` (relative to their norm)
        in a sweep *and* the change still to come, estimated from the linear rate
        :math:`\rho` of the last two sweeps as :math:`\text{change}\cdot\rho/(1-\rho)`,
        is below it too.  (The last change alone left ITML 2% above its optimum on iris
        and 6% on wine at :math:`\gamma = 10`.)
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    metric_, components_ : as in :class:`MMC`
    pairs_ : ndarray of shape (n_pairs, 2)
    pair_labels_ : ndarray of shape (n_pairs,)
        +1 similar, -1 dissimilar.
    bounds_ : ndarray of shape (2,)
    slack_ : ndarray of shape (n_pairs,)
    n_iter_ : int
        Sweeps of Bregman projections.
    n_newton_ : int
        Newton steps of the dual polish (0 when it did not succeed: a warning says so).

    See the chapter "Metric learning", section "ITML".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import ITML
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 15)
    >>> X = np.column_stack([y + 0.1 * rng.normal(size=30),
    ...                      3 * rng.normal(size=30)])
    >>> itml = ITML(random_state=0).fit(X, y)
    >>> M = itml.metric_
    >>> bool(M[0, 0] > M[1, 1])
    True
    """

    _parameter_constraints = {
        "gamma": [_POSITIVE],
        "n_constraints": [_POSITIVE_INT, None],
        "bounds": [None, "array-like"],
        "max_iter": [_POSITIVE_INT],
        "tol": [_NON_NEGATIVE],
        "random_state": ["random_state"],
    }

    def __init__(self, gamma=1.0, n_constraints=None, bounds=None, max_iter=5000, tol=1e-3,
                 random_state=None):
        self.gamma = gamma
        self.n_constraints = n_constraints
        self.bounds = bounds
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y):
        """Learn ``metric_`` from labelled data; returns ``self``."""
        check_estimator_params(self)
        X, y_idx = self._validate_xy(X, y)
        gamma = float(self.gamma)
        rng = check_random_state(self.random_state)
        n_pairs = (20 * self.classes_.size**2 if self.n_constraints is None
                   else int(self.n_constraints))
        want_sim = (n_pairs + 1) // 2
        want_dis = n_pairs - n_pairs // 2 if n_pairs > 1 else 1
        # drawn by rank without listing all pairs (memory O(n_constraints)), rejecting
        # pairs of equal points
        index = _ClassPairRanks(y_idx)

        def distinct(P):
            return np.any(X[P[:, 0]] != X[P[:, 1]], axis=1)

        similar = _sampled_class_pairs(index, True, want_sim, rng, distinct)
        dissimilar = _sampled_class_pairs(index, False, want_dis, rng, distinct)
        if similar.shape[0] == 0 or dissimilar.shape[0] == 0:
            raise ValueError("ITML needs distinct pairs both within a class and across classes")
        n_sim, n_dis = similar.shape[0], dissimilar.shape[0]
        pairs = np.vstack([similar, dissimilar])
        delta = np.r_[np.ones(n_sim), -np.ones(n_dis)]
        V, s = _itml_unit_differences(X, pairs)
        sq = np.einsum("pi,pi->p", V, V)
        if self.bounds is None:
            u, l = np.percentile(sq, 5), np.percentile(sq, 95)
        else:
            bounds = np.asarray(self.bounds)
            if bounds.shape != (2,) or bounds.dtype.kind not in "iuf":
                raise ValueError(f"bounds must be a pair of numbers (u, l), got {self.bounds!r}")
            u, l = (float(b) for b in bounds)
            if not 0 < u <= l:
                raise ValueError(f"bounds must satisfy 0 < u <= l, got {self.bounds}")
            with np.errstate(over="ignore", under="ignore"):
                u, l = u / s / s, l / s / s
            if not (0 < u <= l < np.inf):
                raise ValueError(f"bounds={self.bounds} are out of all proportion to the squared "
                                 f"distances of X (about {s:.3g}**2): in units of these they "
                                 "are not representable in float64")
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        xi0 = np.where(delta > 0, u, l)

        def polish(lam):
            return _itml_dual_newton(V, delta, xi0, gamma, lam)

        M, xi, self.n_iter_, change, self.n_newton_ = _itml_bregman(
            V, delta, u, l, gamma, max_iter, tol, polish)
        if change is not None:
            warnings.warn(f"ITML stopped at max_iter={max_iter} sweeps before the dual "
                          f"variables settled to tol={tol:g} (their last relative change "
                          f"{change:.3g}, or the change still to come at that rate, is "
                          "larger), and the Newton polish of the dual did not reach its "
                          "optimality test; raise max_iter", ConvergenceWarning, stacklevel=2)
        elif self.n_newton_ == 0:
            warnings.warn("ITML: the Newton polish of the dual did not reach its optimality "
                          f"test; the result is the Bregman projections' at tol={tol:g}, "
                          "which can stop short of the optimum", ConvergenceWarning,
                          stacklevel=2)
        with np.errstate(over="ignore", under="ignore"):
            self.bounds_ = np.array([u, l]) * s * s
            self.slack_ = xi * s * s
        if not (np.all(np.isfinite(self.bounds_)) and np.all(np.isfinite(self.slack_))):
            raise ValueError(f"ITML: the squared distances of X (about {s:.3g}**2) overflow "
                             "float64, and so would bounds_ and slack_; scale X down")
        self.pairs_, self.pair_labels_ = pairs, delta.astype(int)
        self._set_metric(M)
        return self


def _itml_unit_differences(X, pairs):
    """``(V / s, s)``: the pair differences ``V`` in units of their RMS length ``s``.

    The problem with ``V / s`` and bounds divided by :math:`s^2` has the same ``M`` as the
    original one, and its squared distances neither overflow nor underflow however
    ``X`` is scaled (dividing by the largest |entry| first keeps every step finite).
    """
    big = float(np.max(np.abs(X)))
    if big == 0:
        return X[pairs[:, 0]] - X[pairs[:, 1]], 1.0
    V = X[pairs[:, 0]] / big - X[pairs[:, 1]] / big
    rms = float(np.sqrt(np.mean(np.einsum("pi,pi->p", V, V))))
    return V / rms, big * rms


# ITML tries the Newton polish of its dual every this many sweeps (and when the sweeps stop).
_ITML_POLISH_EVERY = 50


def _itml_bregman(V, delta, u, l, gamma, max_iter, tol, polish=None):
    r"""Cyclic Bregman projections (Algorithm 1 of Davis et al., 2007) with :math:`M_0 = I`.

    The Bregman function of the objective is
    :math:`\phi(M, \xi) = -\log\det M - \gamma\sum_c \log\xi_c`.  Projecting onto
    the hyperplane :math:`\delta_c(v^\top M v - \xi_c) = 0` means
    :math:`M^{-1} \leftarrow M^{-1} - \delta_c\alpha\, vv^\top` and
    :math:`\gamma/\xi_c \leftarrow \gamma/\xi_c + \delta_c\alpha`; with
    :math:`p = v^\top M v` the new distance is :math:`p/(1 - \delta_c\alpha p)`, and
    equating it with the new :math:`\xi_c` gives

    .. math:: \alpha = \delta_c\,\frac{\gamma}{\gamma + 1}\Big(\frac1p - \frac1{\xi_c}\Big).

    (The paper prints :math:`\tfrac{\delta_c}{2}(1/p - \gamma/\xi_c)`, which agrees
    only at :math:`\gamma = 1`.)  The step is clipped at the dual variable
    :math:`\lambda_c \ge 0` (Hildreth's correction for an inequality constraint).

    ``polish(lam)``, when given, is tried with the dual variables every
    ``_ITML_POLISH_EVERY`` sweeps and when the sweeps stop; the first ``(M, xi, n_newton)``
    it returns is the result.

    Returns ``(M, xi, n_iter, change, n_newton)``: ``change`` None when the stopping rule
    was met or the polish succeeded, else the last relative change of the dual variables
    (the run reached ``max_iter``); ``n_newton`` the polish's Newton steps (0 without it).
    A sweep that leaves ``M`` or the duals not finite raises a ``ValueError``.
    """
    d = V.shape[1]
    M = np.eye(d)
    lam = np.zeros(V.shape[0])
    xi = np.where(delta > 0, u, l).astype(float)
    shrink = gamma / (gamma + 1.0)
    n_iter = 0
    previous_change = np.inf
    for sweep in range(max_iter):
        n_iter = sweep + 1
        lam_old = lam.copy()
        for c in range(V.shape[0]):
            v = V[c]
            Mv = M @ v
            p = float(v @ Mv)
            if p <= 0:
                continue
            alpha = min(lam[c], delta[c] * shrink * (1 / p - 1 / xi[c]))
            beta = delta[c] * alpha / (1 - delta[c] * alpha * p)
            xi[c] = gamma * xi[c] / (gamma + delta[c] * alpha * xi[c])
            lam[c] -= alpha
            M = M + beta * np.outer(Mv, Mv)
        change = np.linalg.norm(lam - lam_old)
        if not (np.isfinite(change) and np.all(np.isfinite(M))):
            raise ValueError(f"ITML broke down in sweep {n_iter}: the metric or the dual "
                             "variables are not finite in float64; raise gamma, or give bounds "
                             "closer to the squared distances of X")
        # the sweeps converge linearly: with the rate rho = change / previous change, the
        # distance still to go is about change * rho / (1 - rho), which can be far more
        # than the last change (ITML stopped 6% from its optimum on iris when only the
        # last change was compared with tol)
        rate = change / previous_change if previous_change > 0 else 0.0
        remaining = change * rate / (1 - rate) if rate < 1 else np.inf
        previous_change = change
        settled = change == 0 or (change <= tol * np.linalg.norm(lam)
                                  and remaining <= tol * np.linalg.norm(lam))
        if polish is not None and (settled or n_iter % _ITML_POLISH_EVERY == 0
                                   or n_iter == max_iter):
            polished = polish(lam)
            if polished is not None:
                return polished[0], polished[1], n_iter, None, polished[2]
        if settled:
            return (M + M.T) / 2, xi, n_iter, None, 0
    return (M + M.T) / 2, xi, n_iter, change / max(np.linalg.norm(lam), 1e-300), 0


# The Newton polish of ITML's dual stops when every constraint's residual
# |d_M^2(v) - xi| (free multipliers; a one-sided test at 0) is this fraction of xi.
_ITML_KKT_TOL = 1e-8


def _itml_dual_newton(V, delta, xi0, gamma, lam, max_iter=100):
    r"""ITML's optimum by projected Newton on its dual, from the multipliers ``lam``.

    Minimising the Lagrangian over :math:`M` and :math:`\xi` gives
    :math:`M = (I + \sum_c\lambda_c\delta_c v_cv_c^\top)^{-1}` and
    :math:`\xi_c = \xi_{0,c}/(1 - \lambda_c\delta_c\xi_{0,c}/\gamma)`, and the dual

    .. math:: \max_{\lambda\ge0}\ \log\det\Big(I + \sum_c\lambda_c\delta_c v_cv_c^\top\Big)
              + \gamma\sum_c\log\big(1 - \lambda_c\delta_c\xi_{0,c}/\gamma\big),

    concave and smooth, with gradient :math:`\delta_c(v_c^\top Mv_c - \xi_c)` and Hessian
    :math:`-(\delta_c\delta_e(v_c^\top Mv_e)^2) - \mathrm{diag}(\xi_c^2/\gamma)`.  Projected
    Newton (Bertsekas, 1982) with an Armijo search that stays in the domain converges
    quadratically where the cyclic projections crawl (at :math:`\gamma = 10` they stopped
    3.3% above the optimum on iris after 5,000 sweeps).  Returns ``(M, xi, n_iter)`` once
    every residual passes ``_ITML_KKT_TOL``, else None.
    """
    d = V.shape[1]

    def parts(lam):
        """(-dual, gradient of -dual, M, xi), or None outside the dual's domain."""
        t = 1 - lam * delta * xi0 / gamma
        if np.any(t <= 0):
            return None
        try:
            C = np.linalg.cholesky(np.eye(d) + (V.T * (lam * delta)) @ V)
        except np.linalg.LinAlgError:
            return None
        W = np.linalg.solve(C, V.T)                     # M = C^{-T} C^{-1}: v'Mv = |C^{-1}v|^2
        xi = xi0 / t
        f = -2 * np.sum(np.log(np.diag(C))) - gamma * np.sum(np.log(t))
        return f, -delta * (np.einsum("ip,ip->p", W, W) - xi), W, xi

    current = parts(lam)
    if current is None:
        return None
    for it in range(max_iter + 1):
        f, g, W, xi = current
        residual = np.where(lam > 0, np.abs(g), np.maximum(-g, 0)) / xi
        if residual.max() <= _ITML_KKT_TOL:
            M = _itml_metric_from_dual(V, delta, lam)
            return M, xi, it
        if it == max_iter:
            return None
        # Bertsekas' binding set: multipliers at (or within eps of) 0 pushed further down
        eps = min(1e-8, float(np.linalg.norm(lam - np.maximum(lam - g, 0))))
        binding = (lam <= eps) & (g > 0)
        free = ~binding
        H = np.outer(delta, delta) * (W.T @ W) ** 2 + np.diag(xi**2 / gamma)
        step = np.zeros_like(lam)
        step[free] = -np.linalg.solve(H[np.ix_(free, free)], g[free])
        step[binding] = -g[binding] / np.diag(H)[binding]
        size = 1.0
        while True:
            trial = np.maximum(lam + size * step, 0.0)
            found = parts(trial)
            if found is not None and found[0] <= f + 1e-4 * g @ (trial - lam):
                break
            size /= 2
            if size < 1e-20:
                return None
        lam, current = trial, found
    return None


def _itml_metric_from_dual(V, delta, lam):
    r""":math:`M = (I + \sum_c\lambda_c\delta_c v_cv_c^\top)^{-1}`, symmetric."""
    d = V.shape[1]
    M = np.linalg.inv(np.eye(d) + (V.T * (lam * delta)) @ V)
    return (M + M.T) / 2


# ----------------------------------------------------------------------------- MENN


@validate_params({"C_bar": ["array-like"], "eps": [_NON_NEGATIVE], "K": ["array-like"],
                  "y": ["array-like"], "eta": [_POSITIVE]})
def menn_objective(C_bar, eps, K, y, eta=1.0):
    r"""Objective of the MENN semidefinite program (eq. 11 of Sriperumbudur and Lanckriet).

    .. math::
        \langle \bar C, K\rangle_F + \eta \sum_{i,j=1}^{n}
        \big[1 + \tau_{ij}\,\mathrm{tr}(A_{ij}\bar C) - \tau_{ij}\,\varepsilon\big]_+,
        \qquad A_{ij} = (k_i - k_j)(k_i - k_j)^\top,

    where :math:`\tau_{ij} = +1` for equal labels and :math:`-1` otherwise and the sum
    runs over all ordered pairs, including :math:`i = j` (each adds
    :math:`[1-\varepsilon]_+`), as in the paper.  See the chapter "Metric learning",
    section "Metric embedding as a semidefinite program".

    Parameters
    ----------
    C_bar : array_like of shape (n_samples, n_samples)
        :math:`\bar C`, a symmetric matrix.  The objective is defined for every
        symmetric :math:`\bar C`; the program's constraint :math:`\bar C \succeq 0` is not
        checked, so that a solver's solution, feasible only within its tolerance, can be
        evaluated.
    eps : float >= 0
        :math:`\varepsilon`.
    K : array_like of shape (n_samples, n_samples)
        Symmetric positive semi-definite Gram matrix.
    y : array_like of shape (n_samples,)
    eta : float > 0, default=1.0

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import menn_objective
    >>> K = np.eye(2)
    >>> round(menn_objective(np.zeros((2, 2)), 0.5, K, [0, 1]), 4)
    4.0
    """
    K = check_symmetric_psd(K, "K")
    C_bar = as_float_array(C_bar, "C_bar", ndim=2)
    if C_bar.shape != K.shape:
        raise ValueError(f"C_bar must have the shape of K {K.shape}, got {C_bar.shape}")
    check_symmetric(C_bar, "C_bar")
    _, y_idx = _check_labels(y, K.shape[0])
    tau = np.where(y_idx[:, None] == y_idx[None, :], 1.0, -1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        B = K @ C_bar @ K
        dist = np.diag(B)[:, None] + np.diag(B)[None, :] - 2 * B
        value = float(np.sum(K * C_bar) + eta * np.sum(np.maximum(0.0, 1 + tau * (dist - eps))))
    if not np.isfinite(value):
        raise ValueError("the MENN objective overflows float64 (or is undefined, inf - inf): "
                         "K and C_bar are too large; rescale them")
    return value


def _feature_factor(K, tol=1e-10):
    """F with K ~= F F.T (eigenvalues below tol * largest dropped)."""
    w, U = np.linalg.eigh(K)
    keep = w > tol * w.max()
    return U[:, keep] * np.sqrt(w[keep])


def _centred_null_space_and_pinv(F, tol=1e-10):
    """Null space of H F (H the centring matrix) and the pseudo-inverse of H F.

    Both come from one SVD with one rank cut: centring removes one direction of ``F``
    exactly, and a pseudo-inverse that kept its round-off singular value (~1e-13) would
    make ``C_bar`` meaningless.
    """
    U, s, Vt = np.linalg.svd(F - F.mean(axis=0), full_matrices=True)
    rank = int(np.sum(s > tol * max(s.max(), 1e-300)))
    pinv = (Vt[:rank].T / s[:rank]) @ U[:, :rank].T
    return Vt[rank:].T, pinv


# The exact route (Clarabel, an interior-point method) factors a dense matrix with one row
# per entry of the n x n Gram matrix.  Measured (one thread): 100 points 80 s and 1.7 GB,
# 120 points 5 minutes and 3.2 GB; 208 points (chapter 12's largest fits) ran out of 22 GB.
# SCS (first-order; memory like n^2) is no way round the cap: it solves the chapter's first
# 208-point cancer fit to residuals 1e-6 (the optimum to 1e-6) in 11 minutes and 380 MB,
# but on iris's nearly singular kernels it stalls (125 points: 30 times the optimum
# after 20,000 iterations), as the cost (G G^T)^+ has entries up to 1e12 / lambda_max.
_CVXPY_MAX_SAMPLES = 120
_EXCLUDED_EIGENVALUE = 1e-12
# The subgradient solver has no optimality test; it runs max_iter steps and warns when the
# best objective still fell by more than this fraction in the last tenth of them.  With
# the O(1/sqrt(t)) rate of the method, the remaining gap is then about 20 times larger.
_SUBGRADIENT_RTOL = 1e-3
# Smoothing widths whose multipliers certify the subgradient solver's point (the best is kept)
_MENN_CERTIFICATE_SMOOTHINGS = (1e-1, 1e-2, 1e-3, 1e-4)
# The low-rank solver's first and smallest smoothing widths (margins are of order 1).
_SMOOTHING_START = 1.0
_SMOOTHING_FLOOR = 1e-7
# Largest entry of a linear kernel matrix MetricEmbeddingNN accepts: within it every entry
# of K at 1e-16 of the largest is a normal float64, and sums of n^2 such products are finite.
_LINEAR_KERNEL_RANGE = (1e-270, 1e270)
# L-BFGS-B iterations between two certificates within one run of the low-rank solver.
_CHECK_EVERY = 200


class MetricEmbeddingNN(ClassifierMixin, TransformerMixin, BaseEstimator):
    r"""Metric embedding for nearest-neighbour classification (MENN; Sriperumbudur and Lanckriet).

    The embedding is :math:`f(x) = C k_x` with :math:`k_x = (k(x, x_1), \dots, k(x, x_n))^\top`
    (the representer theorem: :math:`f = \sum_i c_i k(\cdot, x_i)`, :math:`\sum_i c_i = 0`),
    and :math:`\bar C = C^\top C` solves the semidefinite program

    .. math::

        \begin{aligned}
        \min_{\bar C\succeq 0,\ \varepsilon\ge 0,\ \xi\ge 0}\ & \langle\bar C, K\rangle_F
          + \eta\sum_{i,j}\xi_{ij} \\
        \text{s.t.}\ & \tau_{ij}\big(\langle\bar C, -A_{ij}\rangle_F + \varepsilon\big)
          \ge 1 - \xi_{ij}, \\
        & \langle \bar C, \mathbf 1\mathbf 1^\top\rangle_F = 0,
        \end{aligned}

    with :math:`A_{ij} = (k_i - k_j)(k_i - k_j)^\top` and :math:`\tau_{ij} = \pm 1` for
    equal/different labels; the sum runs over all ordered pairs including
    :math:`i = j`, as in the paper.  The paper asks for :math:`\varepsilon > 0`; we
    allow :math:`\varepsilon \ge 0` (a closed feasible set).  It is a soft-margin SVM
    whose "points" are the matrices :math:`-A_{ij}` with labels :math:`\tau_{ij}`,
    normal :math:`\bar C` and offset :math:`\varepsilon`.

    Every solver works in reduced coordinates: with :math:`K = FF^\top`,
    :math:`W = F^\top\bar C F` carries all the information, since

    .. math::

        \|f(x_i) - f(x_j)\|^2 = (F_i - F_j)W(F_i - F_j)^\top,
        \qquad \langle\bar C, K\rangle = \mathrm{tr}\,W,

    and :math:`\bar C` is recovered as
    :math:`(HF)^{+\top} W (HF)^{+}` (:math:`H` the centring matrix).

    The default solver (``"lowrank"``) writes :math:`W = B U U^\top B^\top` (:math:`B` a
    basis of the row space of :math:`HF`, :math:`U` with ``q`` columns), replaces each hinge
    :math:`[z]_+` by the softplus :math:`\mu\log(1 + e^{z/\mu})` and minimises over
    :math:`(U, \varepsilon)` with scipy's L-BFGS-B.  After each run it computes a lower
    bound on the optimum from the dual of the SDP,

    .. math::

        \begin{aligned}
        \max_{\alpha}\ & \sum_{i,j}\alpha_{ij} \\
        \text{s.t.}\ & 0\le\alpha_{ij}\le\eta,\quad \sum_{i,j}\alpha_{ij}\tau_{ij}\le 0, \\
        & I + \sum_{i,j}\alpha_{ij}\tau_{ij}\, g_{ij} g_{ij}^\top \succeq 0,
        \end{aligned}

    (:math:`g_{ij}` the difference of the two points in the basis :math:`B`), evaluated at the
    smoothed multipliers :math:`\alpha_{ij} = \eta\,\sigma(z_{ij}/\mu)` scaled into the
    feasible set.  It stops when the objective is within ``tol`` (relative) of that bound
    (tried after each L-BFGS-B run and every 200 iterations within one); otherwise it
    adds the directions in which the dual matrix is not PSD to :math:`U` (the rank was too
    small) or divides :math:`\mu` by 5, and runs L-BFGS-B again from where it stopped.
    Before all that it certifies :math:`W = 0` in closed form (every multiplier at
    :math:`\eta`): for a kernel so small that no metric pays for its trace, that is the
    optimum, returned with ``n_iter_ = 0``.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
    gamma : float > 0 or None, default=None
        RBF width :math:`\rho` in :math:`\exp(-\rho\|x - y\|^2)`; default ``1 / n_features``.
    eta : float, default=1.0
        Weight of the hinge losses, :math:`\eta = 1/\tilde\lambda`.
    n_neighbors : int, default=3
        k of the k-NN rule used by ``predict``, at most the number of training points.
    n_components : int or None, default=None
        Dimension of ``transform``'s output; by default the rank of :math:`\bar C`
        (eigenvalues above ``1e-6`` times the largest).
    solver : {"lowrank", "cvxpy", "subgradient"}, default="lowrank"
        ``"lowrank"``: the smoothed low-rank method above, stopped by a certified duality
        gap (measured on a 2-core machine: about 2 s at 100 iris points, 1 to 7 s at
        208 breast-cancer points, 1 to 2.5 minutes at 371 balance-scale points).  It runs
        its matrix products on one BLAS thread (through threadpoolctl): they are small,
        and more threads make it slower.
        ``"cvxpy"``: the SDP solved by Clarabel through cvxpy, with the Gram matrix
        :math:`M = F W F^\top` of the embedded points as variable (each squared distance
        is then :math:`M_{ii} + M_{jj} - 2M_{ij}`); exact up to the interior-point
        tolerance, at most 120 training points (there, 5 minutes and 3.2 GB; time grows
        like :math:`n^6` or faster and memory like :math:`n^4`: 208 points need more than
        22 GB).  ``"subgradient"``: projected subgradient descent on
        :math:`(W, \varepsilon)` with steps :math:`\sqrt{n}/(\|g_t\|\sqrt{t+1})`, in the
        spirit of the paper's own solver; it has no optimality test and is kept for
        comparison.  Its best point is certified afterwards, from the smoothed multipliers
        of the low-rank solver at a few widths, and a gap above ``tol`` warns: the bound
        from a point so far from complementarity is loose (about 0.8 on 89 iris points,
        where the objective is 7% above the optimum after 3,000 steps), so it nearly
        always warns.  Its steps have a fixed scale, which suits kernels of order 1: when its
        best point is still the start :math:`W = 0` (the optimum for a kernel so small that
        no metric pays for itself, else a stall), that point's certified duality gap is
        computed as for ``"cvxpy"``.
    max_iter : int, default=20000
        Cap on the L-BFGS-B iterations of ``"lowrank"`` (all its runs together) or on the
        steps of ``"subgradient"``.  ``"lowrank"`` warns (``ConvergenceWarning``) when it
        reaches the cap before the gap is below ``tol``; ``"subgradient"`` always takes
        ``max_iter`` steps and warns when its best objective still fell by more than 0.1%
        over the last tenth of them.
    tol : float, default=1e-3
        Relative duality gap at which ``"lowrank"`` stops.  ``"cvxpy"``'s solution is
        certified the same way (multipliers read off it give the dual bound) and warns
        (``ConvergenceWarning``) when its certified gap is above ``tol``, whatever
        Clarabel's status ("solved" or "almost solved").

    Attributes
    ----------
    C_bar_ : ndarray of shape (n_samples, n_samples)
    eps_ : float
    objective_ : float
        Value of the objective at the solution.
    embedding_ : ndarray of shape (n_components_, n_samples)
        The matrix :math:`C` with :math:`f(x) = C k_x`.
    eigenvalues_ : ndarray of shape (rank,)
        Spectrum of :math:`W = F^\top\bar C F`, descending: the learned metric in the
        kernel's own coordinates (it suggests the embedding dimension; unlike
        :math:`\bar C` itself it is well conditioned).
    n_iter_ : int
        Solver iterations (L-BFGS-B iterations, Clarabel iterations, or ``max_iter``
        subgradient steps).
    duality_gap_ : float
        The certified relative gap, the objective minus a lower bound from the dual,
        divided by the objective; the objective is at most this fraction above the SDP's
        optimum (for ``"subgradient"`` a loose bound, see ``solver``).
    classes_, X_fit_, n_components_

    See the chapter "Metric learning", section "Metric embedding as a semidefinite program".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import MetricEmbeddingNN
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 8)
    >>> X = np.column_stack([y + 0.1 * rng.normal(size=16),
    ...                      rng.normal(size=16)])
    >>> menn = MetricEmbeddingNN(kernel="rbf", gamma=0.5, n_neighbors=1)
    >>> menn = menn.fit(X, y)
    >>> print(menn.predict([[0.0, 0.0], [1.0, 0.0]]))
    [0 1]
    """

    _parameter_constraints = {
        "kernel": [Options("rbf", "linear")],
        "gamma": [_POSITIVE, None],
        "eta": [_POSITIVE],
        "n_neighbors": [_POSITIVE_INT],
        "n_components": [_POSITIVE_INT, None],
        "solver": [Options("lowrank", "cvxpy", "subgradient")],
        "max_iter": [_POSITIVE_INT],
        "tol": [_POSITIVE],
    }

    def __init__(self, kernel="rbf", gamma=None, eta=1.0, n_neighbors=3, n_components=None,
                 solver="lowrank", max_iter=20000, tol=1e-3):
        self.kernel = kernel
        self.gamma = gamma
        self.eta = eta
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def kernel_matrix(self, X, Y=None):
        r"""The kernel values :math:`k(x_i, y_j)` used by this model (``linear`` or ``rbf``).

        Parameters
        ----------
        X : array_like of shape (n, n_features)
        Y : array_like of shape (p, n_features), default=X

        Returns
        -------
        ndarray of shape (n, p)
        """
        X = as_float_array(X, "X", ndim=2)
        Y = X if Y is None else as_float_array(Y, "Y", ndim=2)
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}")
        return self._kernel(X, Y)

    def _kernel_of_training_set(self, X):
        """``K(X, X)``, refused when float64 cannot hold it: the linear kernel's largest
        entry must lie within ``_LINEAR_KERNEL_RANGE``.  The problem is not scale-invariant
        (for the linear kernel, X * s solves the problem of X with eta * s^2), so X is not
        rescaled; below the range the kernel's entries are subnormal (or zero), above it
        the solvers' sums over pairs overflow."""
        with np.errstate(over="ignore", invalid="ignore"):
            K = self._kernel(X, X)
        lo, hi = _LINEAR_KERNEL_RANGE
        big = float(np.max(np.abs(K))) if np.all(np.isfinite(K)) else np.inf
        if self.kernel == "linear" and not (lo <= big <= hi or big == 0.0):
            raise ValueError(
                f"MetricEmbeddingNN: the linear kernel of X has largest entry {big:.3g} "
                f"(the largest squared row norm of X), outside [{lo:.0e}, {hi:.0e}], where "
                "float64 holds it and its sums over pairs; rescale X (e.g. with "
                "sklearn.preprocessing.StandardScaler; note that X * s is the problem of X "
                "with eta * s^2, so choose eta for the scaled X)")
        if not np.all(np.isfinite(K)):
            raise ValueError("MetricEmbeddingNN: the kernel matrix of X is not finite in float64; "
                             "rescale X (e.g. with sklearn.preprocessing.StandardScaler)")
        return K

    def _kernel(self, X, Y):
        if self.kernel == "linear":
            return linear_kernel(X, Y)
        gamma = 1.0 / X.shape[1] if self.gamma is None else self.gamma
        return rbf_kernel(X, Y, gamma=gamma)

    def fit(self, X, y):
        """Solve the SDP on the training data; returns ``self``."""
        check_estimator_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError("MetricEmbeddingNN needs at least two classes, got 1 class")
        check_positive_int(self.n_neighbors, "n_neighbors", upper=X.shape[0],
                           upper_name="the number of training samples")
        eta = float(self.eta)
        solver = self.solver
        if solver == "cvxpy" and X.shape[0] > _CVXPY_MAX_SAMPLES:
            raise ValueError(
                f"solver='cvxpy' is limited to {_CVXPY_MAX_SAMPLES} training points (its "
                f"interior-point steps factor a dense matrix with n^2/2 rows), got "
                f"{X.shape[0]}; use solver='lowrank'"
            )
        self.X_fit_ = X
        K = self._kernel_of_training_set(X)
        F = _feature_factor(K)
        null, Fc_pinv = _centred_null_space_and_pinv(F)
        tau = np.where(y_idx[:, None] == y_idx[None, :], 1.0, -1.0)
        self.duality_gap_ = float("nan")
        if solver == "lowrank":
            # one BLAS thread: the products are small (n x s times s x q), and two threads
            # made a fit 1.7 times slower on an idle 2-core machine, far slower on a busy one
            with threadpool_limits(limits=1, user_api="blas"):
                tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
                W, eps, self.n_iter_, self.duality_gap_, capped = _menn_lowrank(
                    F, tau, eta, max_iter, float(tol))
            if not np.isfinite(self.duality_gap_) and not self.duality_gap_ == np.inf:
                raise ValueError(
                    f"MetricEmbeddingNN: the low-rank solver broke down after {self.n_iter_} "
                    "iterations (its objective or duality gap is NaN); scale the features, "
                    "choose a moderate eta, or use solver='cvxpy' on up to 120 points")
            if self.duality_gap_ > tol:
                if capped:
                    why, advice = "at its iteration cap", "raise max_iter"
                else:
                    why = ("because L-BFGS-B could not improve it further at the finest "
                           "smoothing (a stall)")
                    advice = "raise tol"
                warnings.warn(
                    f"MetricEmbeddingNN: the low-rank solver stopped (after {self.n_iter_} of "
                    f"max_iter={max_iter} iterations) {why}, with a certified duality gap of "
                    f"{self.duality_gap_:.3g} > tol={tol}; {advice}, or use solver='cvxpy' on "
                    "up to 120 points", ConvergenceWarning, stacklevel=2)
        elif solver == "cvxpy":
            W, eps, self.n_iter_, self.duality_gap_ = _menn_cvxpy(F, tau, eta)
            if not self.duality_gap_ <= self.tol:
                warnings.warn(
                    f"MetricEmbeddingNN: the SDP solver's solution (Clarabel, after "
                    f"{self.n_iter_} iterations) has a certified duality gap of "
                    f"{self.duality_gap_:.3g} > tol={self.tol}; scale the "
                    "features, choose a moderate eta, or use solver='lowrank'",
                    ConvergenceWarning, stacklevel=2)
        else:
            W, eps, improving = _menn_subgradient(F, null, tau, eta, self.max_iter)
            self.n_iter_ = self.max_iter
            # the method has no optimality test of its own: its best point is certified
            red = _MennReduced(F, tau, eta)
            S = red.basis.T @ W @ red.basis
            if not np.any(W):
                # its best point still has the starting W = 0: the optimum (a kernel so
                # small that no metric pays for itself), or a method whose fixed step scale
                # misses the kernel's; the exact certificate tells which
                self.duality_gap_ = _menn_certified_gap(red, S, eps)
                why = ("is still its start W = 0, which has", "its step scale does not "
                       "suit this kernel's; use solver='lowrank', or scale X")
            else:
                self.duality_gap_ = _menn_smoothed_certificate(red, S, eps)
                why = ("has", "it has no optimality test and stops short of the optimum "
                       "(the bound from its point is loose, the objective usually much "
                       "closer); raise max_iter, or use solver='lowrank'")
            if not improving and not self.duality_gap_ <= self.tol:
                warnings.warn(
                    f"MetricEmbeddingNN: the subgradient solver's best point in "
                    f"max_iter={self.max_iter} steps {why[0]} a certified duality gap of "
                    f"{self.duality_gap_:.3g} > tol={self.tol}: {why[1]}",
                    ConvergenceWarning, stacklevel=2)
        C_bar = Fc_pinv.T @ W @ Fc_pinv
        self.C_bar_ = (C_bar + C_bar.T) / 2
        self.eps_ = float(eps)
        self.W_ = W
        self.objective_ = _menn_reduced_objective(W, eps, F, tau, eta)
        # the spectrum and the embedding come from W (well conditioned): with
        # W = V diag(w) V^T, f(x) = diag(w)^{1/2} V^T F^+ k_x, so that
        # ||f(x_i) - f(x_j)||^2 = (F_i - F_j) W (F_i - F_j)^T on the training set.
        w, V = np.linalg.eigh((W + W.T) / 2)
        order = np.argsort(w)[::-1]
        w, V = np.maximum(w[order], 0.0), V[:, order]
        idx = np.argmax(np.abs(V), axis=0)
        V = V * np.sign(V[idx, np.arange(V.shape[1])])
        self.eigenvalues_ = w
        if self.n_components is None:
            d = max(1, int(np.sum(w > 1e-6 * max(w[0], 1e-300))))
        else:
            d = check_positive_int(self.n_components, "n_components", upper=w.size,
                                   upper_name="the rank of the kernel matrix")
        self.n_components_ = d
        self.embedding_ = (np.sqrt(w[:d])[:, None] * V[:, :d].T) @ np.linalg.pinv(F)
        self._train_embedded = self.embedding_ @ K
        self._y_idx = y_idx
        return self

    def transform(self, X):
        r"""Embed ``X``: rows :math:`f(x)^\top = (C k_x)^\top`."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (self.embedding_ @ self._kernel(self.X_fit_, X)).T

    def predict(self, X):
        """k-NN vote (``n_neighbors``) among the embedded training points."""
        Z = self.transform(X)
        return knn_predict(self._train_embedded.T, self.classes_[self._y_idx], Z,
                           self.n_neighbors)

    def loo_error(self):
        """Leave-one-out k-NN error on the training set, in the learned embedding."""
        check_is_fitted(self)
        return knn_loo_error(self._train_embedded.T, self._y_idx, self.n_neighbors)


def _reduced_pair_dist(W, F):
    Z = F @ W @ F.T
    d = np.diag(Z)
    return d[:, None] + d[None, :] - 2 * Z


def _menn_reduced_objective(W, eps, F, tau, eta):
    dist = _reduced_pair_dist(W, F)
    return float(np.trace(W) + eta * np.sum(np.maximum(0.0, 1 + tau * (dist - eps))))


def _menn_cvxpy(F, tau, eta):
    """The SDP over the Gram matrix M = G S G^T of the embedded training points (Clarabel).

    Every squared distance is then M_ii + M_jj - 2 M_ij (three entries per pair instead of
    a dense quadratic form), tr S = <M, (G G^T)^+>, and M is confined to the range of G.
    Directions of that range whose eigenvalue of G G^T is below 1e-12 of the largest cost
    more than 1e12 / largest eigenvalue per unit of squared distance; they are excluded
    (at 1e-8 they are not negligible: a kernel of two iris features loses 2.5e-4 of the
    optimum).  The solution is judged by lecturelib's certificate, not by Clarabel's
    status: its relative duality gap (:func:`_menn_certified_gap`) is returned, and the
    caller warns when it is above ``tol``, so Clarabel's "optimal_inaccurate" (reduced
    accuracy, typically on nearly singular kernels) passes silently only when certified.
    Returns (W, eps, n_iter, gap).
    """
    import cvxpy as cp

    red = _MennReduced(F, tau, eta)
    n, s = red.G.shape
    sv = np.linalg.norm(red.G, axis=0)
    Uc = red.G / sv
    lam = sv**2
    keep = lam > _EXCLUDED_EIGENVALUE * lam.max()
    cost = (Uc[:, keep] / lam[keep]) @ Uc[:, keep].T
    excluded = np.eye(n) - 1.0 / n - Uc[:, keep] @ Uc[:, keep].T
    i, j = np.triu_indices(n, 1)
    t = tau[i, j]
    M = cp.Variable((n, n), PSD=True)
    eps = cp.Variable(nonneg=True)
    diag = cp.diag(M)
    dist = diag[i] + diag[j] - 2 * M[i, j]
    # ordered pairs: each unordered pair twice, plus the n diagonal terms [1 - eps]_+
    hinge = 2 * cp.sum(cp.pos(1 + cp.multiply(t, dist) - t * eps)) + n * cp.pos(1 - eps)
    constraints = [cp.trace(excluded @ M) == 0] if np.trace(excluded) > 0.5 else []
    problem = cp.Problem(cp.Minimize(cp.trace(cost @ M) + eta * hinge), constraints)
    advice = ("scale the features (e.g. with sklearn.preprocessing.StandardScaler), choose a "
              "moderate eta, or use the default solver='lowrank'")
    solve_with_clarabel(problem, "MetricEmbeddingNN", advice)  # judged by the certificate below
    if problem.status not in ("optimal", "optimal_inaccurate") or M.value is None:
        raise ValueError(f"MetricEmbeddingNN: the SDP solver (Clarabel, through cvxpy) returned "
                         f"status {problem.status!r}, not a solution; {advice}")
    G_pinv = red.G.T / lam[:, None]                 # G^+ (the columns of G are orthogonal)
    S = psd_projection(G_pinv @ ((M.value + M.value.T) / 2) @ G_pinv.T)
    n_iter = getattr(problem.solver_stats, "num_iters", None) or 1
    eps_value = max(float(eps.value), 0.0)
    gap = _menn_certified_gap(red, S, eps_value)
    return red.basis @ S @ red.basis.T, eps_value, int(n_iter), gap


def _menn_subgradient(F, null, tau, eta, max_iter):
    n, r = F.shape
    P = np.eye(r) - null @ null.T

    def project(W):
        return psd_projection(P @ W @ P)

    def value_and_subgradient(W, eps):
        dist = _reduced_pair_dist(W, F)
        margin = 1 + tau * (dist - eps)
        active = margin > 0
        T = np.where(active, tau, 0.0)
        deg = T.sum(axis=1) + T.sum(axis=0)
        gW = np.eye(r) + eta * (F.T @ (deg[:, None] * F) - F.T @ (T + T.T) @ F)
        g_eps = -eta * T.sum()
        return float(np.trace(W) + eta * margin[active].sum()), gW, g_eps

    # classical subgradient steps R / (||g|| sqrt(t + 1)), best iterate kept
    radius = np.sqrt(n)
    W, eps = np.zeros((r, r)), 1.0
    best = (np.inf, W, eps)
    check_at = int(0.9 * max_iter)  # the best value then, to judge the last tenth of the run
    best_at_check = np.inf
    for t in range(max_iter):
        if t == check_at:
            best_at_check = best[0]
        val, gW, g_eps = value_and_subgradient(W, eps)
        if not (np.isfinite(val) and np.all(np.isfinite(gW))):
            raise ValueError(
                f"MetricEmbeddingNN: the subgradient solver broke down at step {t + 1}: its "
                "objective or subgradient is not finite in float64; scale the features or "
                "choose a moderate eta")
        if val < best[0]:
            best = (val, W, eps)
        gnorm = np.sqrt(np.sum(gW**2) + g_eps**2)
        step = radius / max(gnorm, 1e-300) / np.sqrt(t + 1)
        W = project(W - step * gW)
        eps = max(eps - step * g_eps, 0.0)
    gain = (best_at_check - best[0]) / max(abs(best[0]), 1e-300)
    if gain > _SUBGRADIENT_RTOL:
        warnings.warn(
            f"MetricEmbeddingNN: the subgradient solver stopped at max_iter={max_iter} while "
            f"still improving (the best objective fell by {min(gain, 1.0):.1%} > "
            f"{_SUBGRADIENT_RTOL:.1%} in the last tenth of the iterations); raise max_iter, or "
            "use solver='cvxpy' on small problems",
            ConvergenceWarning, stacklevel=3)
    return best[1], best[2], gain > _SUBGRADIENT_RTOL


class _MennReduced:
    """The MENN SDP in centred reduced coordinates, for the low-rank solver.

    ``G`` (n x s) holds the training points in an orthogonal basis of the row space of
    H F (H the centring matrix), so that every feasible W is B S B^T with S (s x s) PSD,
    tr W = tr S and d_ij = (G_i - G_j) S (G_i - G_j)^T.  ``S = U U^T`` with U (s x q).
    Sums run over all ordered pairs as full n x n matrices (contiguous arrays are faster
    than gathering the upper triangle); ``tau`` is kept with a zero diagonal, and the
    n diagonal terms [1 - eps]_+ are added separately.
    """

    def __init__(self, F, tau, eta):
        n = F.shape[0]
        Uc, sv, Vt = np.linalg.svd(F - F.mean(axis=0), full_matrices=False)
        rank = int(np.sum(sv > 1e-10 * max(sv.max(), 1e-300)))
        self.G = Uc[:, :rank] * sv[:rank]
        self.basis = Vt[:rank].T                    # W = basis S basis^T
        self.tau = tau.copy()
        np.fill_diagonal(self.tau, 0.0)
        self.eta, self.n = eta, n

    @staticmethod
    def squared_distances(Z):
        """All squared distances between the rows of Z, from their Gram matrix."""
        sq = np.sum(Z**2, axis=1)
        return sq[:, None] + sq[None, :] - 2 * Z @ Z.T

    def margins(self, U, eps, Z=None):
        """The margins 1 + tau_ij (d_ij - eps) of all ordered pairs (diagonal: 1), as a matrix.

        ``Z = G U`` may be passed when the caller has it already."""
        Z = self.G @ U if Z is None else Z
        return 1 + self.tau * (self.squared_distances(Z) - eps)

    def objective(self, U, eps, m=None):
        """Exact objective tr S + eta * sum over ordered pairs of the hinge (diagonal too).

        ``m``, the margins at (U, eps), may be passed when the caller has them already."""
        hinge = np.maximum(self.margins(U, eps) if m is None else m, 0.0)
        return float(np.sum(U**2) + self.eta * (np.sum(hinge) - np.trace(hinge)
                                                + self.n * max(1.0 - eps, 0.0)))

    def smoothed(self, x, q, mu):
        """Each hinge replaced by the softplus mu log(1 + exp(z / mu)); value and gradient."""
        U, eps = x[:-1].reshape(-1, q), x[-1]
        Z = self.G @ U
        m = self.margins(U, eps, Z) / mu
        np.fill_diagonal(m, -np.inf)                # the diagonal is added below
        value = np.sum(U**2) + self.eta * mu * (np.sum(np.logaddexp(0.0, m))
                                                + self.n * np.logaddexp(0.0, (1.0 - eps) / mu))
        w = self.eta * expit(m) * self.tau          # d value / d dist_ij, symmetric
        grad_Z = 4 * (w.sum(axis=1)[:, None] * Z - w @ Z)
        grad_U = 2 * U + self.G.T @ grad_Z
        grad_eps = -(np.sum(w) + self.eta * self.n * expit((1.0 - eps) / mu))
        return value, np.append(grad_U.ravel(), grad_eps)

    def dual_bound(self, m, eps, mu):
        """A certified lower bound on the SDP optimum from the smoothed multipliers at the
        point with margins ``m`` and threshold ``eps``.

        The dual of the SDP is max sum(alpha) over 0 <= alpha <= eta (one per ordered
        pair, the diagonal included) with sum(alpha * tau) <= 0 and
        I + sum alpha_ij tau_ij g_ij g_ij^T PSD.  The multipliers alpha = eta * h'(margin)
        of the smoothed problem are scaled into that set: the similar pairs down until the
        linear constraint holds, then all of them until the matrix is PSD.
        Returns the bound and the eigen-decomposition of the dual matrix.
        """
        alpha = self.eta * expit(m / mu)
        np.fill_diagonal(alpha, 0.0)
        alpha_diag = self.n * self.eta * expit((1.0 - eps) / mu)
        similar = self.tau > 0
        excess = alpha[similar].sum() + alpha_diag - alpha[~similar].sum()
        if excess > 0:
            # sum(alpha tau) <= 0: lower the similar pairs' multipliers, those with the
            # smallest margins first (the pairs closest to being inactive)
            idx = np.flatnonzero(similar.ravel())
            idx = idx[np.argsort(-m.ravel()[idx], kind="stable")][::-1]
            flat = alpha.ravel()
            cut = np.cumsum(flat[idx])
            full = cut <= excess
            flat[idx[full]] = 0.0
            rest = excess - (cut[full][-1] if full.any() else 0.0)
            if not full.all():
                first = idx[np.argmin(full)]
                flat[first] = max(flat[first] - rest, 0.0)
            else:
                alpha_diag = max(alpha_diag - rest, 0.0)
            alpha = flat.reshape(alpha.shape)
        a = alpha * self.tau
        lap = np.diag(a.sum(axis=1)) - a
        S = 2 * self.G.T @ lap @ self.G            # sum over ordered pairs alpha tau g g^T
        S = (S + S.T) / 2
        w, V = np.linalg.eigh(S)
        t = 1.0 if w[0] >= -1.0 else -1.0 / w[0]   # I + t S is then PSD
        return t * (alpha.sum() + alpha_diag), w, V


def _menn_smoothed_certificate(prob, S, eps):
    r"""Relative duality gap at :math:`W = BSB^\top` from the smoothed multipliers
    :math:`\eta\,\sigma(z/\mu)` of its margins, the best of ``_MENN_CERTIFICATE_SMOOTHINGS``
    (each made dual feasible by :meth:`_MennReduced.dual_bound`, so each bound is valid).
    Cheap (one eigenvalue problem of the basis' size per width), for points far from
    complementarity such as the subgradient solver's, where the tie multipliers of
    :func:`_menn_certified_gap` cost a Clarabel solve and bound no better."""
    w, V = np.linalg.eigh((S + S.T) / 2)
    U = V * np.sqrt(np.maximum(w, 0.0))
    m = prob.margins(U, eps)
    objective = prob.objective(U, eps, m)
    bound = max(prob.dual_bound(m, eps, mu)[0] for mu in _MENN_CERTIFICATE_SMOOTHINGS)
    return (objective - bound) / max(abs(objective), 1e-300)


def _menn_dual_value(alpha, a_diag, t_pairs, g, eta, n):
    """The dual objective at ``alpha`` (unordered pairs, each standing for its two ordered
    ones: ``alpha`` is their sum, in [0, 2 eta]) and ``a_diag`` (the diagonal terms),
    after making them dual feasible: clipped to their boxes, the similar pairs scaled down
    until sum(alpha tau) <= 0, then all until I + sum alpha tau g g^T is PSD."""
    alpha = np.clip(alpha, 0.0, 2 * eta)
    a_diag = min(max(a_diag, 0.0), n * eta)
    excess = alpha @ t_pairs + a_diag
    if excess > 0:
        similar = t_pairs > 0
        total = alpha[similar].sum() + a_diag
        keep = max(0.0, 1.0 - excess / total) if total > 0 else 0.0
        alpha = np.where(similar, alpha * keep, alpha)
        a_diag *= keep
    lam = np.linalg.eigvalsh((g.T * (alpha * t_pairs)) @ g)[0]
    scale = 1.0 if lam >= -1.0 else -1.0 / lam   # I + scale * sum alpha tau g g^T is PSD
    return scale * (alpha.sum() + a_diag)


def _menn_certified_gap(prob, S, eps):
    r"""Relative duality gap of the MENN SDP at :math:`W = BSB^\top`, from multipliers read
    off the point (for a solution that no smoothing produced, such as Clarabel's).

    The multipliers are :math:`\eta` on the pairs with a positive hinge, 0 on the inactive
    ones, and on the ties (margins within a width ``w`` of 0) those that maximise the dual
    with the others fixed (:func:`_menn_tie_multipliers`, an SDP over the ties' multipliers
    only).  Where that SDP is too large, the ties' values in :math:`[0,\eta]` that best
    satisfy complementarity, :math:`(I + \sum\alpha_{ij}\tau_{ij} g_{ij}g_{ij}^\top)S = 0`
    and, when :math:`\varepsilon > 0`, :math:`\sum\alpha_{ij}\tau_{ij} = 0` (bounded least
    squares; the best of the widths ``_MENN_TIE_WIDTHS``), are used instead; on a degenerate
    optimum they can be far from feasible, and the certificate then overstates the gap.
    Either way the multipliers are then made dual feasible (the similar pairs scaled down
    until :math:`\sum\alpha\tau \le 0`, all of them until the dual matrix is PSD), and
    :math:`\sum\alpha` is a lower bound on the optimum (see :class:`_MennReduced`).
    """
    from scipy.optimize import lsq_linear

    w, V = np.linalg.eigh((S + S.T) / 2)
    U = V * np.sqrt(np.maximum(w, 0.0))
    m = prob.margins(U, eps)
    objective = prob.objective(U, eps, m)
    n, eta, G = prob.n, prob.eta, prob.G
    # unordered pairs: the two ordered pairs (i, j) and (j, i) have the same margin and
    # g g^T, so one multiplier in [0, 2 eta] stands for the sum of theirs
    i, j = np.triu_indices(n, 1)
    m_pairs, t_pairs, g = m[i, j], prob.tau[i, j], G[i] - G[j]
    m_diag = 1.0 - eps                               # the n diagonal terms [1 - eps]_+
    # the ties' multipliers chosen by the dual itself (a small SDP) when it is affordable,
    # else by complementarity (bounded least squares)
    alpha = _menn_tie_multipliers(m_pairs, t_pairs, g, m_diag, eta, n, _MENN_TIE_WIDTHS[-1])
    if alpha is not None:
        bound = _menn_dual_value(*alpha, t_pairs, g, eta, n)
        return (objective - bound) / max(abs(objective), 1e-300)
    best = -np.inf
    for width in _MENN_TIE_WIDTHS:
        active, ties, alpha, a_diag, diag_tie = _menn_tie_split(m_pairs, m_diag, eta, n, width)
        if ties.any() or diag_tie:
            gt, tt = g[ties], t_pairs[ties]
            Z0 = _menn_fixed_dual_matrix(g, t_pairs, active, eta)
            cols = (tt[:, None, None] * gt[:, :, None]
                    * (gt @ S)[:, None, :]).reshape(len(gt), S.size).T
            eps_row = tt.copy()
            upper = np.full(len(gt), 2 * eta)
            if diag_tie:      # the diagonal multiplier (tau = 1, g = 0) is free too
                cols = np.hstack([cols, np.zeros((cols.shape[0], 1))])
                eps_row, upper = np.append(eps_row, 1.0), np.append(upper, n * eta)
            rhs = -(Z0 @ S).ravel()
            if eps > width:   # eps > 0: complementarity asks sum(alpha tau) = 0
                cols = np.vstack([cols, eps_row])
                rhs = np.append(rhs, -(2 * eta * t_pairs[active].sum() + a_diag))
            x = lsq_linear(cols, rhs, bounds=(0.0, upper)).x
            alpha[ties] = x[: len(gt)]
            if diag_tie:
                a_diag = x[-1]
        best = max(best, _menn_dual_value(alpha, a_diag, t_pairs, g, eta, n))
    return (objective - best) / max(abs(objective), 1e-300)


def _menn_tie_split(m_pairs, m_diag, eta, n, width):
    """The multipliers the margins fix at ``width``: 2 eta on the (unordered) pairs with a
    positive hinge, 0 on the inactive ones, and the diagonal terms' n eta or 0; the ties
    (margins within ``width`` of 0) are left to be chosen.  Returns
    ``(active, ties, alpha, a_diag, diag_tie)``."""
    active, ties = m_pairs > width, np.abs(m_pairs) <= width
    return (active, ties, np.where(active, 2 * eta, 0.0), n * eta if m_diag > width else 0.0,
            abs(m_diag) <= width)


def _menn_fixed_dual_matrix(g, t_pairs, active, eta):
    r""":math:`I + \sum 2\eta\,\tau g g^\top` over the active pairs: the dual matrix
    before the ties' multipliers are added."""
    return np.eye(g.shape[1]) + (g[active].T * (2 * eta * t_pairs[active])) @ g[active]


def _menn_tie_multipliers(m_pairs, t_pairs, g, m_diag, eta, n, width):
    """Dual-optimal multipliers of the (unordered) pairs whose margin is within ``width`` of
    0, the others fixed at 2 eta (positive hinge) or 0: max sum(alpha) over the box with
    sum(alpha tau) <= 0 and I + sum alpha tau g g^T PSD (Clarabel).  ``None`` if the
    solver fails; the caller makes the result feasible again before using it."""
    import cvxpy as cp

    active, ties, alpha, a_diag_fixed, diag_tie = _menn_tie_split(m_pairs, m_diag, eta, n, width)
    s = g.shape[1]
    if ties.sum() * s * s > _MENN_TIE_SDP_MAX_ENTRIES:
        return None
    gt, tt = g[ties], t_pairs[ties]
    Z0 = _menn_fixed_dual_matrix(g, t_pairs, active, eta)
    a = cp.Variable(len(gt), bounds=[0.0, 2 * eta])
    d = cp.Variable(bounds=[0.0, n * eta]) if diag_tie else 0.0
    outer = (tt[:, None, None] * gt[:, :, None] * gt[:, None, :]).reshape(len(gt), s * s)
    Z = cp.reshape(Z0.ravel() + outer.T @ a, (s, s), order="C")
    problem = cp.Problem(cp.Maximize(cp.sum(a) + d),
                         [(Z + Z.T) / 2 >> 0,
                          2 * eta * t_pairs[active].sum() + a_diag_fixed + tt @ a + d <= 0])
    try:
        solve_with_clarabel(problem, "MetricEmbeddingNN", "")
    except ValueError:
        return None
    if a.value is None:
        return None
    alpha[ties] = a.value
    return alpha, (float(d.value) if diag_tie else a_diag_fixed)


def _menn_zero_metric(prob):
    r"""The best threshold for :math:`W = 0` and that point's certified relative gap.

    At :math:`W = 0` every distance is 0, so the objective is
    :math:`\eta\,(N_s[1-\varepsilon]_+ + N_d(1+\varepsilon))` (:math:`N_s` ordered similar
    pairs, the diagonal included, :math:`N_d` dissimilar ones), least at
    :math:`\varepsilon = 1` if :math:`N_s > N_d`, else at 0.  Its dual certificate: every
    multiplier at :math:`\eta`, the similar ones (and the diagonal) scaled by
    :math:`\min(1, N_d/N_s)` so that :math:`\sum\alpha\tau \le 0`, then all of them
    until the dual matrix is PSD; when it is PSD already, the bound equals the objective
    and :math:`W = 0` is optimal.  Costs one product over the pairs and one small
    eigenvalue problem.  Returns ``(eps, gap)``.
    """
    n, eta = prob.n, prob.eta
    similar, dissimilar = prob.tau > 0, prob.tau < 0
    n_similar = float(similar.sum() + n)
    n_dissimilar = float(dissimilar.sum())
    eps = 1.0 if n_similar > n_dissimilar else 0.0
    objective = prob.objective(np.zeros((prob.G.shape[1], 1)), eps)
    keep = min(1.0, n_dissimilar / n_similar)
    a = eta * np.where(similar, keep, 0.0) - eta * dissimilar   # alpha * tau
    dual = 2 * prob.G.T @ (np.diag(a.sum(axis=1)) - a) @ prob.G
    lowest = np.linalg.eigvalsh((dual + dual.T) / 2)[0]
    scale = 1.0 if lowest >= -1.0 else -1.0 / lowest
    bound = scale * eta * (keep * n_similar + n_dissimilar)
    return eps, (objective - bound) / max(abs(objective), 1e-300)


def _menn_lowrank(F, tau, eta, max_iter, tol, init_rank=8, rank_step=4):
    """Minimise the smoothed SDP over S = U U^T (L-BFGS-B), sharpening the smoothing until
    the certified duality gap is below ``tol``.  Returns (W, eps, n_iter, gap, capped):
    ``n_iter`` counts the L-BFGS-B iterations that ran, ``capped`` says whether the budget of
    ``max_iter`` (where a run that cannot move counts 1) ran out.

    When the dual matrix is not PSD, up to ``rank_step`` of its negative directions are
    added to U (the rank was too small) before the smoothing is sharpened.
    """
    prob = _MennReduced(F, tau, eta)
    n, s = prob.G.shape
    if s == 0:
        raise ValueError("MetricEmbeddingNN: the centred kernel matrix is zero; "
                         "every embedding maps all points to one")
    eps, gap = _menn_zero_metric(prob)
    if gap <= tol:
        # W = 0 is optimal (a kernel so small that no metric pays for its trace); the
        # start below, scaled to make distances of order 1, would be huge there
        return np.zeros((F.shape[1], F.shape[1])), eps, 0, gap, False
    q = min(s, init_rank)
    # start: the top kernel directions, scaled so that a typical squared distance is 1
    d0 = prob.squared_distances(prob.G[:, :q])[~np.eye(n, dtype=bool)]
    start_scale = 1.0 / np.sqrt(max(np.median(d0), 1e-300))
    U = start_scale * np.eye(s, q)
    eps = 1.0
    best = [prob.objective(U, eps), U, eps]
    lower = -np.inf

    def certify(U, eps, mu):
        """Update the best point and the lower bound; return the gap and the dual matrix."""
        nonlocal lower
        m = prob.margins(U, eps)
        value = prob.objective(U, eps, m)
        if value < best[0]:
            best[:] = value, U.copy(), eps
        bound, w, V = prob.dual_bound(m, eps, mu)
        lower = max(lower, bound)
        return (best[0] - lower) / max(abs(best[0]), 1e-300), w, V

    run_iter = 0

    def check_within_run(intermediate_result):
        # the certificate is also tried every _CHECK_EVERY iterations, so that a run
        # stops as soon as the gap is below tol instead of converging to 1e-13
        nonlocal run_iter
        run_iter += 1
        if run_iter % _CHECK_EVERY == 0:
            x = intermediate_result.x
            if certify(x[:-1].reshape(-1, q), float(x[-1]), mu)[0] <= tol:
                raise StopIteration

    n_iter, n_run, mu, gap = 0, 0, _SMOOTHING_START, np.inf
    while n_iter < max_iter:
        x0 = np.append(U.ravel(), eps)
        bounds = [(None, None)] * (x0.size - 1) + [(0.0, None)]
        run_iter = 0
        res = minimize(prob.smoothed, x0, args=(q, mu), jac=True, method="L-BFGS-B",
                       bounds=bounds, callback=check_within_run,
                       options={"maxiter": max_iter - n_iter, "gtol": tightened(1e-12), "maxls": 100,
                                "ftol": tightened(1e-13), "maxcor": 20})
        n_iter += max(int(res.nit), 1)   # the budget: a run that cannot move still counts
        n_run += int(res.nit)
        stalled = res.nit == 0
        U, eps = res.x[:-1].reshape(-1, q), float(res.x[-1])
        gap, w, V = certify(U, eps, mu)
        if gap <= tol:
            break
        if w[0] < -1.001 and q < s:                # add the dual matrix's negative directions
            new = V[:, w < -1.001][:, : min(s - q, rank_step)]
            # at a small step: 1% of U's columns, but not less than 0.1% of the starting
            # scale (U = 0 is a stationary point, which a tiny step cannot leave)
            step = max(1e-2 * np.sqrt(np.sum(U**2) / max(q, 1)), 1e-3 * start_scale)
            U = np.hstack([U, step * new])
            q = U.shape[1]
        elif mu > _SMOOTHING_FLOOR and not stalled:
            mu *= 0.2
        else:       # no sharper smoothing to try, or L-BFGS-B cannot move at this one
            break
    _, U, eps = best
    return prob.basis @ (U @ U.T) @ prob.basis.T, eps, n_run, gap, n_iter >= max_iter and gap > tol


# ----------------------------------------------------------------------------- kernel learning


def _check_squared_distances(D, name, *, tol=1e-8):
    """Refuse a square ``D`` that is not a matrix of squared distances: an entry below zero,
    or ``D`` and ``D.T`` differing, by more than ``tol`` times ``max(1, largest |entry|)``
    (at least the round-off of ``n`` terms in ``D``'s precision)."""
    atol = rounding_tolerance(D, D.shape[0], floor=tol) * max(1.0, float(np.abs(D).max()))
    if D.min() < -atol:
        raise ValueError(f"{name} must hold squared distances, which are non-negative; its "
                         f"smallest entry is {D.min():.3g}")
    if not np.allclose(D, D.T, rtol=0, atol=atol):
        raise ValueError(f"{name} must be symmetric (squared distances); its largest "
                         f"asymmetry is {np.abs(D - D.T).max():.3g}")


@validate_params({"D": ["array-like"], "y": ["array-like"], "eps": [_NON_NEGATIVE]})
def epsilon_loo_error(D, y, eps):
    r"""Leave-one-out error of the :math:`\varepsilon`-neighbourhood rule (eq. 1 of
    Sriperumbudur and Lanckriet), from a matrix of squared distances ``D``.

    .. math::
        \begin{aligned}
        \mathrm{LOOE} = \frac12 + \frac1{2n}\sum_{i=1}^n \operatorname{sgn}\Big(
        &\#\{j : \tau_{ij} = -1,\ D_{ij} \le \varepsilon\} \\
        &{} - \#\{j \ne i : \tau_{ij} = +1,\ D_{ij} \le \varepsilon\}\Big);
        \end{aligned}

    each point counts 1 when the other classes outnumber its own in the ball of squared
    radius :math:`\varepsilon` around it (the point itself left out), 0 in the opposite
    case and 1/2 on a tie, an empty ball included.  This is the quantity MENN's hinge
    loss stands in for.  See the chapter "Metric learning", section "The leave-one-out
    criterion and learning the kernel".

    Parameters
    ----------
    D : array_like of shape (n_samples, n_samples)
        Squared distances between the points: symmetric and non-negative, up to the
        rounding of a computation by the expansion
        :math:`\lVert x\rVert^2 + \lVert x'\rVert^2 - 2\langle x, x'\rangle`.
    y : array_like of shape (n_samples,)
    eps : float >= 0
        :math:`\varepsilon`, the squared radius of the balls.

    Returns
    -------
    float

    Examples
    --------
    Four points with their own class alone in their balls, one with an empty ball:

    >>> import numpy as np
    >>> from lecturelib.metric import epsilon_loo_error
    >>> x = np.array([0.0, 0.1, 1.0, 1.1, 5.0])
    >>> D = (x[:, None] - x[None, :]) ** 2
    >>> round(epsilon_loo_error(D, [0, 0, 1, 1, 1], eps=0.05), 4)
    0.1
    """
    D = as_float_array(D, "D", ndim=2)
    n = D.shape[0]
    if D.shape != (n, n):
        raise ValueError(f"D must be a square matrix of squared distances, got shape {D.shape}")
    _check_squared_distances(D, "D")
    _, y_idx = _check_labels(y, n)
    same_class = y_idx[:, None] == y_idx[None, :]
    inside = (D <= eps) & ~np.eye(n, dtype=bool)
    own = np.sum(inside & same_class, axis=1)
    other = np.sum(inside & ~same_class, axis=1)
    return float(0.5 + np.sum(np.sign(other - own)) / (2 * n))


@validate_params({"y": ["array-like"], "lam": [_POSITIVE]})
def learn_kernel_matrix(y, lam=1e-3):
    r"""Learn the Gram matrix of the training points themselves (section 4 of Sriperumbudur
    and Lanckriet, eq. 12); transductive: there is no kernel for a new point.

    .. math::
        \min_{K \succeq 0,\ \varepsilon \ge 0}\ \sum_{i,j=1}^n \big[1 + \tau_{ij}
        (k_{ii} + k_{jj} - 2k_{ij}) - \tau_{ij}\varepsilon\big]_+ + \lambda \|K\|_F^2,

    with :math:`\tau_{ij} = +1` for equal labels and :math:`-1` otherwise, over all
    ordered pairs (the diagonal adds :math:`n[1 - \varepsilon]_+`).  Solved by Clarabel
    through cvxpy, at most 120 points (the cost of ``MetricEmbeddingNN(solver="cvxpy")``).
    Only the labels enter: with a small ``lam`` the optimum memorises them
    (:math:`\varepsilon = 1`, squared distance 0 within a class and 2 across, the classes
    at the vertices of a centred simplex).  See the chapter "Metric learning", section
    "The leave-one-out criterion and learning the kernel".

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples)
    eps : float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.metric import learn_kernel_matrix
    >>> K, eps = learn_kernel_matrix([0, 0, 1, 1], lam=1e-3)
    >>> print(np.round(K, 3), round(eps, 3))
    [[ 0.5  0.5 -0.5 -0.5]
     [ 0.5  0.5 -0.5 -0.5]
     [-0.5 -0.5  0.5  0.5]
     [-0.5 -0.5  0.5  0.5]] 1.0
    """
    import cvxpy as cp

    classes, y_idx = _check_labels(y, np.size(y))
    n = y_idx.size
    if classes.size < 2:
        raise ValueError("learn_kernel_matrix needs at least two classes, got 1 class")
    if n > _CVXPY_MAX_SAMPLES:
        raise ValueError(f"learn_kernel_matrix is limited to {_CVXPY_MAX_SAMPLES} points (an "
                         f"interior-point method on an n x n PSD matrix), got {n}")
    tau = np.where(y_idx[:, None] == y_idx[None, :], 1.0, -1.0)
    K = cp.Variable((n, n), PSD=True)
    eps = cp.Variable(nonneg=True)
    diag = cp.reshape(cp.diag(K), (n, 1), order="F") @ np.ones((1, n))
    dist = diag + diag.T - 2 * K
    loss = cp.sum(cp.pos(1 + cp.multiply(tau, dist) - tau * eps))
    problem = cp.Problem(cp.Minimize(loss + lam * cp.sum_squares(K)))
    # The tolerance switch does not tighten this solve: the memorising optimum is a
    # degenerate vertex, and Clarabel stops "almost solved" when asked for gaps below its
    # default 1e-8 (at 3e-9 on 24 iris labels, with the default solve's value to 17 digits).
    solve_with_clarabel(problem, "learn_kernel_matrix", "choose a smaller lam (1e-3 is typical)",
                    default_cvxpy_settings(cp.CLARABEL))
    if problem.status != "optimal" or K.value is None or eps.value is None:
        raise ValueError(f"learn_kernel_matrix: Clarabel returned status {problem.status!r}, "
                         "not a solution; choose a smaller lam (1e-3 is typical)")
    return psd_projection((K.value + K.value.T) / 2), float(eps.value)
