"""K-means, graph cuts and spectral clustering.

See the chapter "Spectral clustering" (``chapters/06-clustering.ipynb``).

Notation follows the chapter: ``m`` points, ``k`` clusters, an affinity (kernel) matrix
``K`` with entries in ``[0, 1]``, its degree matrix ``D = diag(K 1)``, a partition given
by integer ``labels`` in ``0..k-1``, and the scaled indicator matrix ``G`` whose column
``j`` is ``1/sqrt(l_j)`` on the points of cluster ``j`` (``l_j`` of them) and zero
elsewhere.

Large inputs: ``KMeans`` computes all point-to-centre distances with one matrix
product, ``||x||^2 - 2 x.c + ||c||^2``; ``SpectralClustering(affinity="knn")`` keeps the
affinity sparse (``O(m n_neighbors)`` entries) and finds the leading eigenvectors with
SciPy's sparse Lanczos solver in shift-invert mode.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from pyamg import smoothed_aggregation_solver
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh, lobpcg, splu
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels, rbf_kernel
from sklearn.neighbors import kneighbors_graph
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import iteration_cap, tightened
from ._validation import (
    check_squares_finite,
    InstanceOf,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_positive_int,
    check_square,
    check_symmetric,
    check_symmetric_psd,
    input_eps,
    validate_params,
)

__all__ = [
    "KMeans",
    "KernelKMeans",
    "SpectralClustering",
    "kmeans_plusplus",
    "kmeans_objective",
    "indicator_matrix",
    "trace_objective",
    "cut_value",
    "min_cut",
    "ratio_cut_matrix",
    "normalized_cut_matrix",
    "laplacian",
    "doubly_stochastic",
    "ncut_value",
    "nassoc_value",
    "spectral_embedding",
]


# ----------------------------------------------------------------------------- helpers

_SPARSE = InstanceOf((sp.spmatrix, sp.sparray), "a scipy sparse matrix")
_LANCZOS_RESTARTS = 30  # ARPACK restarts before "auto" switches from Lanczos to LOBPCG + AMG
_POSITIVE_INT = Interval(Integral, 1, None)


def _check_labels(labels, n, name="labels"):
    """Cluster indices ``0..k-1`` of a partition, as an ``intp`` vector.

    Numeric labels are cluster indices (non-negative integers, possibly stored as floats);
    any other hashable labels (strings, ...) name the clusters and are numbered in sorted
    order, cluster ``j`` being the ``j``-th smallest distinct label.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"{name} must be a vector of length {n}, got shape {labels.shape}")
    if labels.dtype.kind == "O" and all(
            isinstance(v, (Integral, Real)) and not isinstance(v, (bool, np.bool_)) for v in labels):
        labels = labels.astype(float)
    if labels.dtype.kind not in "biuf":
        try:
            return np.unique(labels, return_inverse=True)[1].astype(np.intp).ravel()
        except TypeError:
            raise ValueError(f"{name} must be cluster indices 0..k-1 or labels of one sortable "
                             f"type (e.g. all strings), got {labels.dtype} labels that cannot "
                             "be sorted") from None
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        if not np.all(np.mod(labels, 1) == 0):
            raise ValueError(f"{name} must hold integer cluster indices")
        labels = labels.astype(int)
    if labels.size and labels.min() < 0:
        raise ValueError(f"{name} must be non-negative cluster indices 0..k-1")
    return labels.astype(np.intp)


def _check_every_cluster_used(labels, k, what, name="labels"):
    """Refuse cluster indices ``0..k-1`` that leave a cluster empty, before anything of
    size ``k`` is allocated (an index of 10**9 among a dozen points leaves nearly all of
    them empty), naming the first empty cluster."""
    present = np.unique(labels)
    if present.size == k:
        return
    gaps = np.flatnonzero(present != np.arange(present.size))
    first = int(gaps[0]) if gaps.size else int(present.size)
    raise ValueError(f"{name} leaves {k - present.size} of the clusters 0..{k - 1} empty "
                     f"(the first is {first}): {what} needs every cluster to hold a point; "
                     f"number the clusters 0..k-1 without gaps "
                     f"(np.unique({name}, return_inverse=True)[1])")


def _check_affinity(K, name="K", *, allow_sparse=False):
    """Symmetric non-negative square matrix (dense, or sparse when allowed)."""
    if sp.issparse(K):
        if not allow_sparse:
            K = K.toarray()
        else:
            K = sp.csr_matrix(K, dtype=float)
            if K.shape[0] != K.shape[1]:
                raise ValueError(f"{name} must be square, got shape {K.shape}")
            if not np.all(np.isfinite(K.data)):
                raise ValueError(f"{name} contains NaN or infinity")
            if K.nnz and K.data.min() < 0:
                raise ValueError(f"{name} has negative entries (min {K.data.min():.4g})")
            asym = abs(K - K.T)
            if asym.nnz and asym.max() > 1e-10 * max(1.0, abs(K).max()):
                raise ValueError(f"{name} must be symmetric")
            return K
    K = check_square(K, name)
    if np.any(K < 0):
        raise ValueError(f"{name} has negative entries (min {K.min():.4g})")
    if not np.allclose(K, K.T, rtol=0, atol=1e-10 * max(1.0, float(np.abs(K).max()))):
        raise ValueError(f"{name} must be symmetric")
    return K


def _degrees(K, name="K"):
    d = np.asarray(K.sum(axis=1)).ravel()
    if np.any(d <= 0):
        i = int(np.flatnonzero(d <= 0)[0])
        raise ValueError(
            f"{name} has a row with zero total affinity (point {i} is isolated); "
            "its degree cannot be normalised"
        )
    return d


def _flip_signs(V):
    """Make the largest-|entry| of each column positive (as scikit-learn's svd_flip)."""
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def _squared_distances(X, x_sq, C):
    r"""``||x_i - c_j||^2`` for all pairs, as ``||x||^2 - 2 x.c + ||c||^2`` (one GEMM)."""
    D = X @ C.T
    D *= -2.0
    D += x_sq[:, None]
    D += np.einsum("ij,ij->i", C, C)[None, :]
    np.maximum(D, 0.0, out=D)
    return D


_ASSIGN_CHUNK = 8192  # points per block: a k x 8192 score block stays in cache


def _assign(XT, x_sq, C):
    """Nearest centre of every point (lowest index on ties) and the squared distance.

    ``XT`` is the transposed data (d x m). The scores ``c_j.x - ||c_j||^2 / 2`` of all
    centres against a block of points come from one matrix product (k x block) and are
    maximised over ``j``. Blocks keep the scores in cache and the memory at O(k x block)
    instead of O(k x m).

    Returns
    -------
    labels : ndarray of shape (m,)
    dist : ndarray of shape (m,)
        ``||x_i - c_{labels_i}||^2``.
    """
    k, m = C.shape[0], XT.shape[1]
    half_sq_norms = 0.5 * np.einsum("ij,ij->i", C, C)[:, None]
    index = np.arange(k, dtype=float)
    labels = np.empty(m, dtype=np.intp)
    best = np.empty(m)
    for start in range(0, m, _ASSIGN_CHUNK):
        block = slice(start, start + _ASSIGN_CHUNK)
        S = C @ XT[:, block]
        S -= half_sq_norms
        S.max(axis=0, out=best[block])
        is_best = S == best[block]
        if np.count_nonzero(is_best) > is_best.shape[1]:  # a tie: keep the lowest index
            labels[block] = np.argmax(is_best, axis=0)
        else:
            labels[block] = index @ is_best
    best *= -2.0
    best += x_sq
    np.maximum(best, 0.0, out=best)
    return labels, best


def _onehot(labels, k):
    """The k x m 0/1 matrix with a one at (labels[i], i) (memory: the matrix alone)."""
    M = np.zeros((k, labels.shape[0]))
    M[labels, np.arange(labels.shape[0])] = 1.0
    return M


# Entries of the largest indicator matrix built (2 GiB of float64): cluster indices far
# beyond the number of points ask for a matrix of mostly empty columns.
_MAX_INDICATOR_ENTRIES = 1 << 28


def _fill_empty_clusters(labels, dist_to_own, k):
    """The empty-cluster rule: each empty cluster takes the point farthest from its centre.

    Points are taken in decreasing order of their distance to the centre they were
    assigned to; a point is only moved out of a cluster that keeps at least one point.
    """
    counts = np.bincount(labels, minlength=k)
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return labels
    labels = labels.copy()
    order = np.argsort(-dist_to_own, kind="stable")
    pos = 0
    for j in empty:
        while counts[labels[order[pos]]] <= 1:
            pos += 1
        i = order[pos]
        counts[labels[i]] -= 1
        labels[i] = j
        counts[j] = 1
        pos += 1
    return labels


# ----------------------------------------------------------------------------- objectives


@validate_params({"X": ["array-like"], "labels": ["array-like"]})
def kmeans_objective(X, labels):
    r"""The K-means energy of a partition, every point against its cluster mean.

    .. math:: E = \sum_{j=1}^k \sum_{i:\,y_i=j} \lVert x_i - c_j\rVert^2,\qquad
              c_j = \frac{1}{l_j}\sum_{i:\,y_i=j} x_i .

    Parameters
    ----------
    X : array_like of shape (m, d)
    labels : array_like of shape (m,)
        Cluster indices ``0..k-1`` (empty clusters contribute nothing), or any other
        labels, one per cluster (e.g. strings).

    Returns
    -------
    float

    See the chapter "Spectral clustering", section "K-means and its local optima".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import kmeans_objective
    >>> X = np.array([[0.0, 0.0], [0.0, 2.0], [5.0, 5.0]])
    >>> round(kmeans_objective(X, [0, 0, 1]), 4)
    2.0
    """
    X = as_float_array(X, "X", ndim=2)
    X = check_squares_finite(X, "X")
    # empty clusters contribute nothing: number the used ones 0..k-1, so that a large
    # index allocates nothing of its size
    labels = np.unique(_check_labels(labels, X.shape[0]), return_inverse=True)[1].ravel()
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k)
    sums = _onehot(labels, k) @ X
    means = sums / np.maximum(counts, 1)[:, None]
    return _inertia(X, means, labels)


@validate_params({"labels": ["array-like"], "n_clusters": [_POSITIVE_INT, None],
                  "scaled": ["boolean"]})
def indicator_matrix(labels, n_clusters=None, *, scaled=True):
    r"""The cluster indicator matrix ``G`` (m x k) of a partition.

    With ``scaled=True``, :math:`G_{ij} = 1/\sqrt{l_j}` when point ``i`` is in cluster
    ``j`` (so :math:`G^T G = I` and :math:`F = GG^T` is doubly stochastic); with
    ``scaled=False``, :math:`G_{ij} \in \{0, 1\}` (so :math:`G^T G = \mathrm{diag}(l_j)`).
    ``labels`` are cluster indices ``0..k-1``, or other labels (e.g. strings), cluster
    ``j`` being the ``j``-th smallest distinct label.

    See the chapter "Spectral clustering", section "The matrix form of K-means".

    Examples
    --------
    >>> from lecturelib.clustering import indicator_matrix
    >>> print(indicator_matrix([0, 0, 1], scaled=False))
    [[1. 0.]
     [1. 0.]
     [0. 1.]]
    >>> print(indicator_matrix([0, 0, 1]).round(4))
    [[0.7071 0.    ]
     [0.7071 0.    ]
     [0.     1.    ]]
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        raise ValueError("labels is empty: an indicator matrix needs at least one point")
    labels = _check_labels(labels, labels.shape[0] if labels.ndim == 1 else -1)
    k = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    if labels.max() >= k:
        raise ValueError(f"labels has index {labels.max()} but n_clusters={k}")
    if scaled:
        _check_every_cluster_used(labels, k, "a scaled indicator matrix (1/sqrt(l_j))")
    if labels.shape[0] * k > _MAX_INDICATOR_ENTRIES:
        raise ValueError(f"an indicator matrix of {labels.shape[0]} points x {k} clusters has more "
                         f"than {_MAX_INDICATOR_ENTRIES} entries (2 GiB): are the labels cluster "
                         "indices 0..k-1? (other labels, e.g. strings, are numbered in sorted order)")
    G = _onehot(labels, k).T
    if scaled:
        G /= np.sqrt(G.sum(axis=0))
    return G


@validate_params({"K": ["array-like"], "labels": ["array-like"]})
def trace_objective(K, labels):
    r"""``trace(G^T K G)`` for the scaled indicator ``G`` of a partition.

    .. math:: \mathrm{tr}(G^T K G) = \sum_{j=1}^k \frac{1}{l_j}\sum_{r,s \in \psi_j} K_{rs}.

    With the linear kernel ``K = X X^T`` this equals
    :math:`\sum_i \lVert x_i\rVert^2 - E` where ``E`` is the K-means energy, so
    maximising it is K-means.

    Parameters
    ----------
    K : array_like of shape (n_samples, n_samples)
        Symmetric kernel or affinity matrix (the trace reads only the symmetric part of a
        matrix, so an asymmetric one is refused rather than silently symmetrised).
    labels : array_like of shape (n_samples,)
        Cluster indices ``0..k-1``, every cluster holding a point (or labels of one
        sortable type).

    Returns
    -------
    float

    See the chapter "Spectral clustering", section "The matrix form of K-means".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import trace_objective
    >>> K = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> round(trace_objective(K, [0, 0, 1]), 4)
    3.0
    """
    K = check_symmetric(K, "K")
    G = indicator_matrix(_check_labels(labels, K.shape[0]))
    return float(np.trace(G.T @ K @ G))


@validate_params({"W": ["array-like", _SPARSE], "labels": ["array-like"]})
def cut_value(W, labels):
    r"""Total weight of the edges between different clusters.

    .. math:: \mathrm{cut} = \sum_{i<j,\ y_i \ne y_j} W_{ij};

    for two clusters this is :math:`\mathrm{cut}(A, B) = \sum_{i\in A, j\in B} W_{ij}`.

    Parameters
    ----------
    W : {array_like, sparse matrix} of shape (n_samples, n_samples)
        Symmetric non-negative affinity matrix.
    labels : array_like of shape (n_samples,)
        Cluster indices ``0..k-1`` (or labels of one sortable type).

    Returns
    -------
    float

    See the chapter "Spectral clustering", section "Min-cut".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import cut_value
    >>> W = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 0.5], [1.0, 0.5, 0.0]])
    >>> cut_value(W, [0, 0, 1])
    1.5
    """
    W = _check_affinity(W, "W")
    labels = _check_labels(labels, W.shape[0])
    different = labels[:, None] != labels[None, :]
    return float(W[different].sum() / 2.0)


@validate_params({"W": ["array-like", _SPARSE]})
def min_cut(W):
    r"""The global minimum cut of a weighted graph, by the Stoer-Wagner algorithm.

    Finds the split of the vertices into two non-empty sets ``A``, ``B`` with the
    smallest :math:`\mathrm{cut}(A,B) = \sum_{i\in A,j\in B} W_{ij}`. The diagonal of
    ``W`` (self-loops) is ignored. Runs in :math:`O(m^3)` time on the dense matrix.

    Parameters
    ----------
    W : array_like of shape (m, m)
        Symmetric non-negative weights, ``m >= 2``.

    Returns
    -------
    value : float
    labels : ndarray of shape (m,)
        ``1`` on the side that contains the last vertex merged in the best phase,
        ``0`` on the other side.

    See the chapter "Spectral clustering", section "Min-cut".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import min_cut
    >>> W = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 0.5], [1.0, 0.5, 0.0]])
    >>> min_cut(W)
    (1.5, array([0, 0, 1]))
    """
    W = _check_affinity(W, "W")
    m = W.shape[0]
    if m < 2:
        raise ValueError(f"W must have at least 2 vertices to be cut, got {m}")
    A = W.copy()
    np.fill_diagonal(A, 0.0)
    groups = [[i] for i in range(m)]
    active = list(range(m))
    best, best_group = np.inf, None
    while len(active) > 1:
        idx = np.array(active)
        weight = np.zeros(len(idx))
        added = np.zeros(len(idx), dtype=bool)
        prev = last = -1
        phase_cut = 0.0
        for step in range(len(idx)):
            sel = int(np.argmax(np.where(added, -np.inf, weight)))
            added[sel] = True
            prev, last = last, sel
            if step == len(idx) - 1:
                phase_cut = weight[sel]
            weight += A[idx[sel], idx]
        s, t = idx[prev], idx[last]
        if phase_cut < best:
            best, best_group = phase_cut, list(groups[t])
        A[s, :] += A[t, :]
        A[:, s] += A[:, t]
        A[s, s] = 0.0
        groups[s].extend(groups[t])
        active.remove(t)
    labels = np.zeros(m, dtype=np.intp)
    labels[best_group] = 1
    return float(best), labels


@validate_params({"K": ["array-like", _SPARSE], "normalized": ["boolean"]})
def laplacian(K, *, normalized=False):
    r"""The graph Laplacian ``D - K``, or ``I - D^{-1/2} K D^{-1/2}`` when normalised.

    Parameters
    ----------
    K : {array_like, sparse matrix} of shape (m, m)
        Symmetric non-negative affinities (no all-zero row when ``normalized``).
    normalized : bool, default=False

    Returns
    -------
    ndarray or sparse matrix of shape (m, m)

    See the chapter "Spectral clustering", section "Ratio cuts".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import laplacian
    >>> K = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> print(laplacian(K))
    [[ 1. -1.]
     [-1.  1.]]
    """
    K = _check_affinity(K, "K", allow_sparse=True)
    d = _degrees(K)
    if normalized:
        return sp.identity(K.shape[0], format="csr") - normalized_cut_matrix(K) if sp.issparse(K) \
            else np.eye(K.shape[0]) - normalized_cut_matrix(K)
    if sp.issparse(K):
        return (sp.diags(d) - K).tocsr()
    return np.diag(d) - K


@validate_params({"K": ["array-like", _SPARSE]})
def ratio_cut_matrix(K):
    r"""The ratio-cut matrix :math:`K' = K - D + I` with :math:`D = \mathrm{diag}(K\mathbf 1)`.

    ``K'`` has unit row sums and is the closest such symmetric matrix to ``K`` in the
    entrywise L1 norm. Its eigenvalues are ``1 - lambda`` for the eigenvalues ``lambda``
    of the Laplacian ``D - K``, with the same eigenvectors: the largest is ``1`` with
    eigenvector ``1``, and the second largest (the Fiedler vector) splits the graph by
    its signs. ``K'`` may have negative entries.

    Parameters
    ----------
    K : {array_like, sparse matrix} of shape (m, m)
        Symmetric non-negative affinities.

    Returns
    -------
    ndarray or sparse matrix of shape (m, m)

    See the chapter "Spectral clustering", section "Ratio cuts".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import ratio_cut_matrix
    >>> K = np.array([[1.0, 1.0], [1.0, 1.0]])
    >>> print(ratio_cut_matrix(K))
    [[0. 1.]
     [1. 0.]]
    """
    K = _check_affinity(K, "K", allow_sparse=True)
    d = np.asarray(K.sum(axis=1)).ravel()
    if sp.issparse(K):
        return (K + sp.diags(1.0 - d)).tocsr()
    return K + np.diag(1.0 - d)


@validate_params({"K": ["array-like", _SPARSE]})
def normalized_cut_matrix(K):
    r"""The normalised-cut matrix :math:`K' = D^{-1/2} K D^{-1/2}`.

    This is one step of the doubly-stochastic scaling. Its largest eigenvalue is 1 with
    eigenvector :math:`D^{1/2}\mathbf 1`; the second eigenvector splits the graph by
    its signs (Shi and Malik's normalised cut).

    Parameters
    ----------
    K : array_like or sparse matrix of shape (m, m)
        Symmetric non-negative affinities with no all-zero row.

    See the chapter "Spectral clustering", section "Normalised cuts".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import normalized_cut_matrix
    >>> K = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    >>> print(normalized_cut_matrix(K).round(4))
    [[0.5 0.5 0. ]
     [0.5 0.5 0. ]
     [0.  0.  1. ]]
    """
    K = _check_affinity(K, "K", allow_sparse=True)
    s = 1.0 / np.sqrt(_degrees(K))
    if sp.issparse(K):
        K = K.tocsr(copy=True)
        rows = np.repeat(np.arange(K.shape[0]), np.diff(K.indptr))
        K.data *= s[rows] * s[K.indices]
        return K
    return K * s[:, None] * s[None, :]


@validate_params({"K": ["array-like", _SPARSE], "tol": [Interval(Real, 0, None, closed="neither")],
                  "max_iter": [_POSITIVE_INT], "return_history": ["boolean"]})
def doubly_stochastic(K, *, tol=1e-10, max_iter=10_000, return_history=False):
    r"""Scale a symmetric non-negative matrix to be doubly stochastic, ``F = Lambda K Lambda``.

    Iterates :math:`K^{(t+1)} = D_t^{-1/2} K^{(t)} D_t^{-1/2}` with
    :math:`D_t = \mathrm{diag}(K^{(t)}\mathbf 1)` until every row sum is within ``tol``
    of one. The limit is the doubly-stochastic matrix closest to ``K`` in relative
    entropy, and has the form :math:`\Lambda K \Lambda` with a positive diagonal
    :math:`\Lambda`.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Symmetric, non-negative, no all-zero row.
    tol : float > 0, default=1e-10
        Stop when :math:`\max_i |(F\mathbf 1)_i - 1| \le` ``tol``.
    max_iter : int, default=10000
        At most this many normalisations are applied.
    return_history : bool, default=False
        Also return the errors :math:`e_t = \max_i |(K^{(t)}\mathbf 1)_i - 1|`, where
        :math:`K^{(0)} = K` is the input itself and :math:`K^{(t)}` the matrix after
        ``t`` normalisations.

    Returns
    -------
    F : ndarray of shape (m, m)
        The last iterate :math:`K^{(T)}`.
    history : list of float, only if ``return_history``
        ``history[t]`` is :math:`e_t`, for :math:`t = 0, \dots, T`: the first entry is the
        error of the unscaled input (not of a normalised matrix), and the last is the
        error of the returned ``F``; ``T = len(history) - 1 <= max_iter`` normalisations
        ran.

    Raises
    ------
    ValueError
        If ``K`` is not symmetric and non-negative, or has an all-zero row, or if the
        row sums overflow or underflow float64 during the iteration.

    Warns
    -----
    ConvergenceWarning
        If the iteration has not reached ``tol`` after ``max_iter`` steps; the last
        iterate is returned.  This happens when the zero pattern of ``K`` admits no
        doubly-stochastic scaling, such as ``[[0, 1], [1, 1]]`` (the iterates then only
        approach a matrix with more zeros, slowly).

    See the chapter "Spectral clustering", section "Normalised cuts".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import doubly_stochastic
    >>> K = np.array([[2.0, 1.0], [1.0, 1.0]])
    >>> F = doubly_stochastic(K)
    >>> print(F.sum(axis=0).round(6), F.sum(axis=1).round(6))
    [1. 1.] [1. 1.]
    """
    K = _check_affinity(K, "K")
    scale = 1.0 / np.sqrt(_degrees(K))
    history = [float(np.abs(K.sum(axis=1) - 1.0).max())]
    tol, max_iter = tightened(tol), iteration_cap(max_iter, tol)
    for _ in range(max_iter):
        F = K * scale[:, None] * scale[None, :]
        rows = F.sum(axis=1)
        err = float(np.abs(rows - 1.0).max())
        history.append(err)
        if err <= tol:
            return (F, history) if return_history else F
        if not np.isfinite(err) or not np.all(rows > 0):
            raise ValueError(
                f"doubly_stochastic broke down after {len(history) - 1} normalisation(s): the "
                f"row sums are {'not finite' if not np.isfinite(err) else 'zero'} in float64 "
                f"(largest entry of K {float(np.max(K)):.3g}); scale K towards 1 first")
        scale /= np.sqrt(rows)
    warnings.warn(
        f"doubly_stochastic stopped at max_iter={max_iter} iterations with max |row sum - 1| "
        f"= {err:.3g} > tol={tol:g}: the result is not doubly stochastic to that tolerance. "
        "Raise max_iter; if the error decreases only slowly, the zero pattern of K may admit "
        "no doubly-stochastic scaling (e.g. [[0, 1], [1, 1]]).",
        ConvergenceWarning, stacklevel=3)  # the caller, past the validate_params wrapper
    return (F, history) if return_history else F


def _cluster_sums(W, labels):
    W = _check_affinity(W, "W")
    labels = _check_labels(labels, W.shape[0])
    k = int(labels.max()) + 1
    _check_every_cluster_used(labels, k, "the normalised cut and association (one term "
                              "per cluster, divided by its total affinity sum(psi_j, V))")
    M = _onehot(labels, k)
    within = np.einsum("ij,ij->i", M @ W, M)  # sum(psi_j, psi_j)
    total = M @ W.sum(axis=1)  # sum(psi_j, V)
    if np.any(total <= 0):
        raise ValueError("every cluster needs positive total affinity (sum(psi_j, V) > 0)")
    return within, total


@validate_params({"W": ["array-like", _SPARSE], "labels": ["array-like"]})
def nassoc_value(W, labels):
    r"""Normalised association :math:`\sum_j \mathrm{sum}(\psi_j,\psi_j)/\mathrm{sum}(\psi_j,V)`.

    See the chapter "Spectral clustering", section "Normalised cuts".

    Parameters
    ----------
    W : {array_like, sparse matrix} of shape (n_samples, n_samples)
        Symmetric non-negative affinity matrix.
    labels : array_like of shape (n_samples,)
        Cluster indices ``0..k-1``, every cluster holding a point (or labels of one
        sortable type).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import nassoc_value, ncut_value
    >>> W = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 0.5], [1.0, 0.5, 0.0]])
    >>> round(nassoc_value(W, [0, 0, 1]), 4)
    0.7273
    >>> round(nassoc_value(W, [0, 0, 1]) + ncut_value(W, [0, 0, 1]), 4)
    2.0
    """
    within, total = _cluster_sums(W, labels)
    return float(np.sum(within / total))


@validate_params({"W": ["array-like", _SPARSE], "labels": ["array-like"]})
def ncut_value(W, labels):
    r"""Normalised cut :math:`\sum_j \mathrm{cut}(\psi_j, V\setminus\psi_j)/\mathrm{sum}(\psi_j,V)`.

    For two clusters,

    .. math:: \mathrm{Ncut}(A,B) = \mathrm{cut}(A,B)/\mathrm{sum}(A,V) +
              \mathrm{cut}(A,B)/\mathrm{sum}(B,V).

    Computed from the cut itself (not from the identity ``Ncut = k - Nassoc``), so the
    identity can be checked.

    See the chapter "Spectral clustering", section "Normalised cuts".

    Parameters
    ----------
    W : {array_like, sparse matrix} of shape (n_samples, n_samples)
        Symmetric non-negative affinity matrix.
    labels : array_like of shape (n_samples,)
        Cluster indices ``0..k-1``, every cluster holding a point (or labels of one
        sortable type).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import ncut_value
    >>> W = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 0.5], [1.0, 0.5, 0.0]])
    >>> round(ncut_value(W, [0, 0, 1]), 4)
    1.2727
    """
    W = _check_affinity(W, "W")
    labels = _check_labels(labels, W.shape[0])
    _, total = _cluster_sums(W, labels)
    k = total.shape[0]
    value = 0.0
    for j in range(k):
        inside = labels == j
        value += W[np.ix_(inside, ~inside)].sum() / total[j]
    return float(value)


# ----------------------------------------------------------------------------- K-means


@validate_params({"X": ["array-like"], "n_clusters": [_POSITIVE_INT],
                  "random_state": ["random_state"], "n_local_trials": [_POSITIVE_INT, None]})
def kmeans_plusplus(X, n_clusters, *, random_state=None, n_local_trials=None):
    r"""Greedy k-means++ seeding (Arthur and Vassilvitskii).

    The first centre is a uniformly random point; each next centre is drawn with
    probability proportional to the squared distance to the nearest centre chosen so
    far, keeping the best of ``n_local_trials`` draws (default ``2 + log k``). The draws
    take the same numbers from ``random_state`` as scikit-learn's ``kmeans_plusplus``
    (one ``choice`` with uniform weights, then ``n_local_trials`` uniforms per centre), so
    the two pick the same centres for the same seed.

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
    indices : ndarray of shape (n_clusters,)

    See the chapter "Spectral clustering", section "K-means and its local optima".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import kmeans_plusplus
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 5.0], [5.0, 6.0]])
    >>> centers, indices = kmeans_plusplus(X, 2, random_state=0)
    >>> print(centers.shape)
    (2, 2)
    >>> sorted(indices.tolist()) in ([0, 2], [0, 3], [1, 2], [1, 3])
    True
    """
    X = as_float_array(X, "X", ndim=2)
    n = X.shape[0]
    k = check_positive_int(n_clusters, "n_clusters", upper=n, upper_name="n_samples")
    rng = check_random_state(random_state)
    x_sq = np.einsum("ij,ij->i", X, X)
    return _kmeans_plusplus(X, x_sq, k, rng, n_local_trials)


def _kmeans_plusplus(X, x_sq, k, rng, n_local_trials=None):
    n = X.shape[0]
    if n_local_trials is None:
        n_local_trials = 2 + int(np.log(k))
    indices = np.empty(k, dtype=np.intp)
    indices[0] = rng.choice(n, p=np.full(n, 1.0 / n))
    closest = _squared_distances(X, x_sq, X[indices[:1]]).ravel()
    potential = closest.sum()
    for c in range(1, k):
        if potential <= 0:  # every point coincides with a chosen centre
            indices[c] = rng.randint(n)
            continue
        draws = rng.uniform(size=n_local_trials) * potential
        candidates = np.minimum(np.searchsorted(np.cumsum(closest), draws), n - 1)
        dist = _squared_distances(X[candidates], x_sq[candidates], X)
        np.minimum(dist, closest[None, :], out=dist)
        potentials = dist.sum(axis=1)
        best = int(np.argmin(potentials))
        indices[c] = candidates[best]
        closest, potential = dist[best], potentials[best]
    return X[indices].copy(), indices


def _lloyd(X, XT, x_sq, centers, max_iter, tol):
    """One run of Lloyd's iterations; returns labels, centres, inertia, n_iter, history,
    capped and the last squared centre shift.

    Stopping rule (as scikit-learn): stop when no label changes, or when the summed
    squared centre shift is at most ``tol``; after a stop on ``tol`` the points are
    assigned once more to the final centres. The per-cluster sums are updated with the
    points that changed cluster only (recomputed in full every 10 iterations or when
    many points moved), which makes late iterations cheap.
    """
    n, k = X.shape[0], centers.shape[0]
    labels_old = sums = None
    history = []
    converged = capped = False
    n_iter, shift = 0, np.inf
    for n_iter in range(1, max_iter + 1):
        labels, dist = _assign(XT, x_sq, centers)
        history.append(float(dist.sum()))
        counts = np.bincount(labels, minlength=k)
        if np.any(counts == 0):
            labels = _fill_empty_clusters(labels, dist, k)
            counts = np.bincount(labels, minlength=k)
        if labels_old is None or n_iter % 10 == 0:
            sums = _onehot(labels, k) @ X
        else:
            moved = np.flatnonzero(labels != labels_old)
            if moved.size > n // 16:
                sums = _onehot(labels, k) @ X
            elif moved.size:
                Xm = X[moved]
                np.add.at(sums, labels[moved], Xm)
                np.subtract.at(sums, labels_old[moved], Xm)
        new_centers = sums / counts[:, None]
        shift = float(((new_centers - centers) ** 2).sum())
        centers = new_centers
        if labels_old is not None and np.array_equal(labels, labels_old):
            converged = True
            break
        if shift <= tol:
            break
        labels_old = labels
    else:
        capped = True  # stopped by max_iter, not by a stopping rule
    if not converged:
        labels = _assign(XT, x_sq, centers)[0]
    return labels, centers, _inertia(X, centers, labels), n_iter, history, capped, shift


def _inertia(X, centers, labels):
    """``sum_i ||x_i - c_{labels_i}||^2`` from the differences (no cancellation), in blocks."""
    total = 0.0
    for start in range(0, X.shape[0], _ASSIGN_CHUNK):
        block = slice(start, start + _ASSIGN_CHUNK)
        diff = X[block] - centers[labels[block]]
        total += float(np.einsum("ij,ij->", diff, diff))
    return total


class KMeans(TransformerMixin, ClusterMixin, BaseEstimator):
    r"""K-means clustering by Lloyd's iterations, with k-means++ seeding.

    Minimises the energy

    .. math:: E(y, c) = \sum_{j=1}^k \sum_{i:\,y_i=j} \lVert x_i - c_j \rVert^2

    by alternating the assignment step :math:`y_i = \arg\min_j \lVert x_i-c_j\rVert^2`
    and the update step (each centre becomes the mean of its points). Neither step can
    increase ``E``, so the iterations reach a local optimum that depends on the start;
    ``n_init`` restarts keep the best. Distances are computed for all points and
    centres at once as :math:`\lVert x\rVert^2 - 2x^Tc + \lVert c\rVert^2`.

    Empty clusters: when an assignment step leaves a cluster empty, it takes the point
    farthest from its own centre (then the next farthest for the next empty cluster).

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"k-means++", "random"} or array_like of shape (n_clusters, n_features)
        Starting centres. With an array, a single run is made (``n_init`` is ignored
        with a warning unless it is 1).
    n_init : int, default=10
        Number of restarts; the run with the smallest energy is kept.
    max_iter : int, default=300
        When the kept run reaches it before converging, a ``ConvergenceWarning`` is given.
    tol : float, default=1e-4
        Stop when the squared centre shift summed over centres is at most
        ``tol`` times the mean per-feature variance of ``X`` (as scikit-learn); the
        iterations also stop when no label changes.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        The energy ``E`` of the kept run.
    n_iter_ : int
    inertia_history_ : list of float
        Energy after each assignment step of the kept run (non-increasing).
    n_features_in_ : int

    See the chapter "Spectral clustering", section "K-means and its local optima".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.clustering import KMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 5.0], [5.0, 6.0]])
    >>> km = KMeans(n_clusters=2, random_state=0).fit(X)
    >>> labels = km.labels_
    >>> print(labels[0] == labels[1], labels[0] == labels[2])
    True False
    >>> round(float(km.inertia_), 4)
    1.0
    """

    _parameter_constraints = {
        "n_clusters": [_POSITIVE_INT],
        "init": [Options("k-means++", "random"), "array-like"],
        "n_init": [_POSITIVE_INT],
        "max_iter": [_POSITIVE_INT],
        "tol": [Interval(Real, 0, None)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=10, max_iter=300, tol=1e-4,
                 random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster ``X``; returns ``self``."""
        check_estimator_params(self)
        X = validate_data(self, X, dtype=np.float64)
        X = check_squares_finite(X, "X")
        n, d = X.shape
        k, n_init = int(self.n_clusters), int(self.n_init)
        max_iter = iteration_cap(int(self.max_iter), self.tol)
        if n < k:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}")
        tol = float(tightened(self.tol)) * float(np.mean(np.var(X, axis=0)))
        rng = check_random_state(self.random_state)
        init_centers = None
        if not isinstance(self.init, str):
            init_centers = as_float_array(self.init, "init", ndim=2)
            if init_centers.shape != (k, d):
                raise ValueError(
                    f"init must have shape (n_clusters, n_features) = ({k}, {d}), "
                    f"got {init_centers.shape}"
                )
            if n_init != 1:
                warnings.warn(f"explicit initial centres given: doing 1 run instead of n_init={n_init}",
                              RuntimeWarning, stacklevel=2)
                n_init = 1
        x_sq = np.einsum("ij,ij->i", X, X)
        XT = np.ascontiguousarray(X.T)
        best = None
        for _ in range(n_init):
            if init_centers is not None:
                centers = init_centers.copy()
            elif self.init == "k-means++":
                centers, _ = _kmeans_plusplus(X, x_sq, k, rng)
            else:  # scikit-learn's draw (uniform weights), for the same seeds
                centers = X[rng.choice(n, k, replace=False, p=np.full(n, 1.0 / n))].copy()
            run = _lloyd(X, XT, x_sq, centers, max_iter, tol)
            if best is None or run[2] < best[2]:
                best = run
        labels, centers, inertia, n_iter, history, capped, shift = best
        if capped:
            warnings.warn(
                f"KMeans stopped at max_iter={max_iter} iterations before the labels settled "
                f"(last squared centre shift {shift:.3g} > {tol:.3g}, which is tol="
                f"{tightened(self.tol):g} times the mean variance of X); its energy may still "
                "fall: raise max_iter",
                ConvergenceWarning, stacklevel=2)
        self.labels_ = labels
        self.cluster_centers_ = centers
        self.inertia_ = inertia
        self.n_iter_ = n_iter
        self.inertia_history_ = history
        return self

    def predict(self, X):
        """Index of the nearest centre for each row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _assign(X.T, np.einsum("ij,ij->i", X, X), self.cluster_centers_)[0]

    def transform(self, X):
        """Euclidean distances from each row of ``X`` to each centre."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.sqrt(_squared_distances(X, np.einsum("ij,ij->i", X, X), self.cluster_centers_))

    def score(self, X, y=None):
        """Minus the K-means energy of ``X`` against the fitted centres."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        labels = _assign(X.T, np.einsum("ij,ij->i", X, X), self.cluster_centers_)[0]
        return -_inertia(X, self.cluster_centers_, labels)


# ----------------------------------------------------------------------------- kernel K-means


class KernelKMeans(ClusterMixin, BaseEstimator):
    r"""K-means in the feature space of a kernel.

    The squared distance of :math:`\phi(x_i)` to the mean of cluster ``j`` needs only the
    kernel:

    .. math:: \lVert \phi(x_i) - \mu_j\rVert^2 = K_{ii} - \frac{2}{l_j}\sum_{r\in\psi_j} K_{ir}
              + \frac{1}{l_j^2}\sum_{r,s\in\psi_j} K_{rs},

    and the energy equals :math:`\mathrm{tr}(K) - \mathrm{tr}(G^T K G)`, so kernel
    K-means maximises :math:`\mathrm{tr}(G^T K G)` over scaled indicator matrices ``G``.
    Seeding is k-means++ in feature space; empty clusters take the point farthest from
    its centre.

    Parameters
    ----------
    n_clusters : int, default=8
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
        ``rbf`` is :math:`\exp(-\gamma\lVert x-y\rVert^2)`; with ``precomputed``,
        ``fit`` takes the m x m kernel matrix and ``predict`` the kernel between new
        points (rows) and the training points (columns).
    gamma : float > 0 or None, default=None
        ``None`` means ``1 / n_features``.
    degree : int >= 1, default=3
    coef0 : float, default=1.0
    n_init : int, default=10
    max_iter : int, default=300
        When the kept run reaches it before converging, a ``ConvergenceWarning`` is given.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        Feature-space energy of the kept run.
    n_iter_ : int

    See the chapter "Spectral clustering", section "Kernel K-means and spectral
    clustering on the rings".

    Examples
    --------
    >>> from lecturelib.clustering import KernelKMeans
    >>> from lecturelib.datasets import concentric_rings
    >>> X, rings = concentric_rings(n_per_ring=30, radii=(0.0, 2.0),
    ...                             noise=0.05)
    >>> kkm = KernelKMeans(n_clusters=2, kernel="rbf", gamma=1.0,
    ...                    random_state=0).fit(X)
    >>> len(set(kkm.labels_.tolist()))
    2
    """

    _parameter_constraints = {
        "n_clusters": [_POSITIVE_INT],
        "kernel": [Options("rbf", "linear", "poly", "precomputed")],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [_POSITIVE_INT],
        "coef0": [Interval(Real, None, None)],
        "n_init": [_POSITIVE_INT],
        "max_iter": [_POSITIVE_INT],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=8, *, kernel="rbf", gamma=None, degree=3, coef0=1.0, n_init=10,
                 max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _kernel(self, X, Y):
        params = {}
        if self.kernel in ("rbf", "poly"):
            params["gamma"] = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        if self.kernel == "poly":
            params.update(degree=self.degree, coef0=self.coef0)
        return pairwise_kernels(X, Y, metric=self.kernel, **params)

    def fit(self, X, y=None):
        """Cluster ``X`` (or the kernel matrix ``X`` when precomputed); returns ``self``."""
        check_estimator_params(self)
        eps = input_eps(X)
        X = validate_data(self, X, dtype=np.float64)
        X = check_squares_finite(X, "X")
        if self.kernel == "precomputed":
            # Kernel k-means is k-means in feature space: it needs a PSD kernel, PSD here to
            # within the round-off of the input's precision (n eps max|K|, by Weyl).
            K = check_symmetric_psd(X, "X (the precomputed kernel)", tol=max(1e-8, X.shape[0] * eps),
                                    symmetry_tol=max(1e-10, 10 * eps))
        else:
            K = self._kernel(X, X)
            self.X_fit_ = X
        n = K.shape[0]
        k, n_init, max_iter = int(self.n_clusters), int(self.n_init), int(self.max_iter)
        if n < k:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}")
        rng = check_random_state(self.random_state)
        diag = np.diag(K).copy()
        best = None
        for _ in range(n_init):
            labels = self._seed(K, diag, k, rng)
            run = self._iterate(K, diag, labels, k, max_iter)
            if best is None or run[1] < best[1]:
                best = run
        self.labels_, self.inertia_, self.n_iter_, moved = best
        if moved:
            warnings.warn(f"KernelKMeans stopped at max_iter={max_iter} iterations before the "
                          f"labels settled ({moved} of {n} labels changed in the last "
                          "iteration); raise max_iter", ConvergenceWarning, stacklevel=2)
        M = _onehot(self.labels_, k)
        self._k = k
        self._within = np.sum((M @ K) * M, axis=1) / M.sum(axis=1) ** 2
        return self

    @staticmethod
    def _seed(K, diag, k, rng):
        """k-means++ on feature-space distances; returns the initial labels."""
        n = K.shape[0]
        chosen = [rng.randint(n)]
        closest = np.maximum(diag + diag[chosen[0]] - 2 * K[:, chosen[0]], 0.0)
        for _ in range(1, k):
            total = closest.sum()
            if total <= 0:
                chosen.append(rng.randint(n))
            else:
                chosen.append(min(int(np.searchsorted(np.cumsum(closest), rng.uniform() * total)), n - 1))
            closest = np.minimum(closest, np.maximum(diag + diag[chosen[-1]] - 2 * K[:, chosen[-1]], 0.0))
        dist = diag[:, None] + diag[chosen][None, :] - 2 * K[:, chosen]
        labels = np.argmin(dist, axis=1)
        return _fill_empty_clusters(labels, dist[np.arange(n), labels], k)

    @staticmethod
    def _distances(K_rows, labels, k, within):
        """Distances minus the K_ii term, for kernel rows against clusters of ``labels``."""
        counts = np.bincount(labels, minlength=k).astype(float)
        mean_k = (K_rows @ _onehot(labels, k).T) / counts
        return -2.0 * mean_k + within[None, :]

    def _iterate(self, K, diag, labels, k, max_iter):
        """Kernel Lloyd steps until no label changes; returns labels, inertia, n_iter and
        the number of labels that changed in the last step (0 when the labels settled)."""
        n = K.shape[0]
        n_iter, moved = 0, 0
        for n_iter in range(1, max_iter + 1):
            M = _onehot(labels, k)
            counts = M.sum(axis=1)
            KM = K @ M.T
            within = np.einsum("ji,ij->j", M, KM) / counts**2
            dist = diag[:, None] - 2.0 * KM / counts + within[None, :]
            new = np.argmin(dist, axis=1)
            new = _fill_empty_clusters(new, np.maximum(dist[np.arange(n), new], 0.0), k)
            moved = int(np.sum(new != labels))
            if moved == 0:
                break
            labels = new
        M = _onehot(labels, k)
        counts = M.sum(axis=1)
        inertia = float(np.trace(K) - np.sum((M @ K) * M, axis=1) @ (1.0 / counts))
        return labels, inertia, n_iter, moved

    def predict(self, X):
        """Nearest feature-space cluster mean for new points.

        With ``kernel="precomputed"``, ``X`` holds the kernel between the new points
        (rows) and the training points (columns).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            if X.shape[1] != self.labels_.shape[0]:
                raise ValueError(
                    f"X (the precomputed kernel) must have {self.labels_.shape[0]} columns, "
                    f"one per training point, got {X.shape[1]}"
                )
            K_new = X
        else:
            K_new = self._kernel(X, self.X_fit_)
        dist = self._distances(K_new, self.labels_, self._k, self._within)
        return np.argmin(dist, axis=1)


# ----------------------------------------------------------------------------- spectral


def _smallest_laplacian_eigenpairs(L, k, random_state, shift=1e-7):
    r"""The ``k`` smallest eigenpairs of a sparse symmetric PSD Laplacian ``L``.

    Lanczos (ARPACK) on :math:`(L + \sigma I)^{-1}`: the wanted eigenvalues near zero
    become the largest, far apart from the rest. ``L + sigma I`` is symmetric positive
    definite, so its sparse LU needs no pivoting and a symmetric fill-reducing ordering.
    """
    n = L.shape[0]
    M = (L + shift * sp.identity(n, format="csr")).tocsc()
    lu = splu(M, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
              options={"SymmetricMode": True})
    op = LinearOperator((n, n), matvec=lu.solve, dtype=float)
    v0 = check_random_state(random_state).uniform(-1, 1, n)
    ncv = min(n - 1, max(2 * k + 1, k + 10))
    return eigsh(L.tocsc(), k=k, sigma=-shift, which="LM", v0=v0, OPinv=op, tol=tightened(1e-10),
                 ncv=ncv)


def _smallest_laplacian_eigenpairs_amg(L, k, random_state, null_vector, tol=1e-8,
                                       max_iter=500):
    r"""The ``k`` smallest eigenpairs of a sparse symmetric PSD Laplacian ``L``, by LOBPCG.

    Locally optimal block preconditioned conjugate gradients (``scipy.sparse.linalg.lobpcg``)
    with an algebraic-multigrid V-cycle of :math:`L + 10^{-5} I` (``pyamg``'s smoothed
    aggregation, Jacobi-smoothed prolongation with Gershgorin row weights, so that no
    random estimate enters) as the preconditioner, as scikit-learn's ``eigen_solver="amg"``.
    Memory stays a few vectors of length ``m`` plus the multigrid hierarchy, whose size is
    a fixed multiple of ``nnz(L)``: nothing fills in as a sparse LU does. The start block
    holds the known null vector of ``L`` (``sqrt(d)`` for the normalised Laplacian, ones
    for ``D - K``) and ``k`` columns drawn from ``random_state``; iteration stops when every
    residual norm is below ``tol`` times the largest eigenvalue bound ``max_i 2 L_ii``.
    """
    n = L.shape[0]
    L = sp.csr_matrix(L)
    tol, max_iter = tightened(tol), iteration_cap(max_iter, tol)
    # "local" (Gershgorin) weights for the prolongation smoother: the default estimates a
    # spectral radius from numpy's global random generator, which made runs differ
    hierarchy = smoothed_aggregation_solver(L + 1e-5 * sp.identity(n, format="csr"),
                                            smooth=("jacobi", {"weighting": "local"}))
    X0 = check_random_state(random_state).standard_normal((n, k + 1))
    X0[:, 0] = null_vector
    scale = 2.0 * float(L.diagonal().max())
    with warnings.catch_warnings():
        # lobpcg warns when it stops short; the residuals are checked below instead
        warnings.simplefilter("ignore", UserWarning)
        lam, V, residuals = lobpcg(L, X0, M=hierarchy.aspreconditioner(), tol=tol * scale,
                                   maxiter=max_iter, largest=False,
                                   retResidualNormsHistory=True)
    if np.max(residuals[-1][:k]) > tol * scale * 10:
        warnings.warn(f"LOBPCG stopped after {max_iter} iterations with residual "
                      f"{np.max(residuals[-1][:k]):.1e} (wanted {tol * scale:.1e}); the spectral "
                      "embedding may be inaccurate", ConvergenceWarning, stacklevel=3)
    order = np.argsort(lam)[:k]
    return lam[order], V[:, order]


def _largest_eigenpairs_lanczos(Kp, k, random_state, max_restarts=_LANCZOS_RESTARTS):
    r"""The ``k`` largest eigenpairs of sparse symmetric ``Kp`` by plain Lanczos (ARPACK).

    Only products with ``Kp``: memory ``O(m (k + ncv))``. Fast when the wanted eigenvalues
    stand apart from the rest (a well-connected graph); when they crowd near the top (weakly
    joined clusters) the restarts run out and ``None`` is returned, for the caller to
    switch to LOBPCG with a multigrid preconditioner.
    """
    n = Kp.shape[0]
    v0 = check_random_state(random_state).uniform(-1, 1, n)
    ncv = min(n - 1, max(2 * k + 1, k + 20))
    try:
        vals, vecs = eigsh(Kp, k=k, which="LA", v0=v0, tol=tightened(1e-10), ncv=ncv,
                           maxiter=max_restarts)
    except ArpackNoConvergence:
        return None
    return 1.0 - vals, vecs


def _lanczos_then_amg(Kp, k, random_state, null_vector, max_restarts):
    """The ``k`` largest eigenpairs of sparse ``Kp``, largest first: Lanczos for at most
    ``max_restarts`` restarts (None: ARPACK's own limit), then LOBPCG with a multigrid
    preconditioner on :math:`I - K'` (``null_vector`` its known null vector) if it fails."""
    pairs = _largest_eigenpairs_lanczos(Kp, k, random_state, max_restarts)
    if pairs is None:
        L = sp.identity(Kp.shape[0], format="csr") - Kp
        pairs = _smallest_laplacian_eigenpairs_amg(L, k, random_state, null_vector)
    lam, vecs = pairs
    order = np.argsort(lam)
    return 1.0 - lam[order], vecs[:, order]


def _leading_eigenpairs_by_component(Kp, k, part, n_parts, null_vector, random_state):
    r"""The ``k`` largest eigenpairs of a sparse ``Kp`` whose graph has ``n_parts``
    connected components (``part`` labels them), component by component.

    ``Kp`` is block diagonal, so its eigenpairs are those of its blocks, each vector
    zero outside its block.  Each block has the eigenvalue 1 once, with the block's part
    of ``null_vector`` (:math:`D^{1/2}\mathbf 1` or :math:`\mathbf 1`) as its exact
    eigenvector; up to ``k - n_parts`` more come from the block itself (LAPACK for at most
    200 points, else Lanczos on the block, which is connected, and LOBPCG with a
    multigrid preconditioner when Lanczos runs out of restarts).  The ``k`` largest of
    all are returned, ties (the eigenvalue 1 of several blocks) in the order of the
    blocks, which ``connected_components`` numbers from the lowest point index.  On
    two-moon data (two components, two clusters) nothing is iterated at all.
    """
    n = Kp.shape[0]
    found = []                       # (eigenvalue, block, rank in block, points, vector)
    for b in range(n_parts):
        idx = np.flatnonzero(part == b)
        # each block's eigenvalue 1 is among the k largest as long as k >= n_parts; the
        # rest are below 1, and at most k - n_parts of them can be among the k largest
        kb = min(1 + max(0, k - n_parts), idx.size)
        top = null_vector[idx] / np.linalg.norm(null_vector[idx])
        vals, vecs = np.array([1.0]), top[:, None]
        if kb > 1:
            Kb = Kp[idx][:, idx]
            if idx.size <= 200 or kb >= idx.size - 1:
                w, V = eigh(Kb.toarray(), subset_by_index=[idx.size - kb, idx.size - 1])
                w, V = w[::-1], V[:, ::-1]
            else:
                w, V = _lanczos_then_amg(Kb, kb, random_state, null_vector[idx], _LANCZOS_RESTARTS)
            # the computed top pair is the known one, up to rounding: keep the exact one
            vals, vecs = np.r_[1.0, w[1:]], np.column_stack([top, V[:, 1:]])
        found += [(vals[r], b, r, idx, vecs[:, r]) for r in range(kb)]
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    out = np.zeros((n, k))
    for c, (_, _, _, idx, v) in enumerate(found[:k]):
        out[idx, c] = v
    return np.array([f[0] for f in found[:k]]), out


@validate_params({"K": ["array-like", _SPARSE], "n_components": [_POSITIVE_INT],
                  "normalization": [Options("normalized", "ratio")],
                  "eigen_solver": [Options("auto", "dense", "arpack", "lanczos", "amg")],
                  "random_state": ["random_state"]})
def spectral_embedding(K, n_components, *, normalization="normalized", eigen_solver="auto",
                       random_state=None):
    r"""Leading eigenvectors of the ratio-cut or normalised-cut matrix of an affinity.

    ``normalization="ratio"`` uses :math:`K' = K - D + I` (eigenvectors of the
    Laplacian ``D - K``); ``"normalized"`` uses :math:`K' = D^{-1/2} K D^{-1/2}`.
    The ``n_components`` largest eigenvalues of ``K'`` and their eigenvectors are
    returned, largest first, each vector with its largest-|entry| positive.

    Solvers: ``"dense"`` uses LAPACK on the full matrix; ``"arpack"`` uses
    ``scipy.sparse.linalg.eigsh`` on the (sparse) Laplacian in shift-invert mode around
    a small negative shift, from a fixed-seed start vector: exact to rounding, but the
    sparse LU of the Laplacian fills in (1.2 GB at m = 30,000 for a 10-NN graph in five
    dimensions); ``"amg"`` uses LOBPCG with an algebraic-multigrid preconditioner (pyamg),
    whose memory is ``O(m n_neighbors)``: the Laplacian, its multigrid hierarchy and a few
    blocks of ``m x (n_components + 1)`` vectors; it stops when every residual norm
    :math:`\lVert L v - \lambda v\rVert` is below ``1e-8`` times twice the largest
    degree (an eigenvalue error of that order); ``"lanczos"`` uses ``eigsh`` on ``K'``
    itself (largest eigenvalues, no factorisation, memory ``O(m (n_components + 20))``),
    fast when the wanted eigenvalues stand apart (0.7 s of CPU at m = 30,000 for a 10-NN
    graph in 20 dimensions, where LOBPCG + AMG took 11 s) and slow when they crowd near 1
    (weakly joined clusters, where the multigrid preconditioner shines), and blind to
    the copies of a repeated eigenvalue (it finds one vector of the eigenvalue 1 of a graph
    with several connected components). ``"auto"``, for sparse input with more than 200
    points, runs ``"lanczos"`` on a connected graph for at most 30 restarts and
    ``"amg"`` when they do not suffice; on a graph of several connected components it
    solves component by component (the matrix is block diagonal, and each block's
    eigenvalue 1 and its eigenvector are known exactly), the same way within each block;
    ``"dense"`` otherwise.

    Parameters
    ----------
    K : {array_like, sparse matrix} of shape (m, m)
        Symmetric non-negative affinities (no all-zero row for ``"normalized"``).
    n_components : int
    normalization : {"normalized", "ratio"}, default="normalized"
    eigen_solver : {"auto", "dense", "arpack", "lanczos", "amg"}, default="auto"
    random_state : int, RandomState or None, default=None

    Returns
    -------
    eigenvalues : ndarray of shape (n_components,)
    vectors : ndarray of shape (m, n_components)

    See the chapter "Spectral clustering", section "The spectral embedding".

    Examples
    --------
    >>> from lecturelib.clustering import spectral_embedding
    >>> from lecturelib.datasets import block_affinity
    >>> K, labels = block_affinity((2, 3))
    >>> eigenvalues, vectors = spectral_embedding(K, 2)
    >>> print(eigenvalues.round(4), vectors.shape)
    [1. 1.] (5, 2)
    """
    K = _check_affinity(K, "K", allow_sparse=True)
    n = K.shape[0]
    k = check_positive_int(n_components, "n_components", upper=n, upper_name="the number of points")
    if eigen_solver == "auto":
        eigen_solver = "auto" if sp.issparse(K) and n > 200 else "dense"
    # LOBPCG needs the block of k + 1 vectors to be small against n
    if ((eigen_solver in ("arpack", "lanczos") and k >= n - 1)
            or (eigen_solver in ("amg", "auto") and 5 * (k + 1) >= n)):
        eigen_solver = "dense"
    if normalization == "normalized":
        Kp = normalized_cut_matrix(K)
    else:
        _degrees(K)
        Kp = ratio_cut_matrix(K)
    if eigen_solver == "dense":
        Kp = Kp.toarray() if sp.issparse(Kp) else Kp
        vals, vecs = eigh(Kp, subset_by_index=[n - k, n - 1])
        vals, vecs = vals[::-1], vecs[:, ::-1]
    else:
        Kp = sp.csr_matrix(Kp)
        # the eigenvector of eigenvalue 1 on each connected component, known exactly
        null_vector = np.sqrt(_degrees(K)) if normalization == "normalized" else np.ones(n)
        if eigen_solver == "auto":
            # single-vector Lanczos finds one vector of a repeated eigenvalue only: a graph
            # of c > 1 components (eigenvalue 1 c times) is taken block by block
            n_parts, part = connected_components(K, directed=False)
            if n_parts > 1:
                vals, vecs = _leading_eigenpairs_by_component(Kp, k, part, n_parts,
                                                              null_vector, random_state)
            else:
                vals, vecs = _lanczos_then_amg(Kp, k, random_state, null_vector, _LANCZOS_RESTARTS)
        elif eigen_solver == "lanczos":
            vals, vecs = _lanczos_then_amg(Kp, k, random_state, null_vector, None)
        else:
            L = sp.identity(n, format="csr") - Kp
            lam, vecs = (_smallest_laplacian_eigenpairs(L, k, random_state) if eigen_solver == "arpack"
                         else _smallest_laplacian_eigenpairs_amg(L, k, random_state, null_vector))
            order = np.argsort(lam)
            vals, vecs = 1.0 - lam[order], vecs[:, order]
    return vals, _flip_signs(vecs)


class SpectralClustering(ClusterMixin, BaseEstimator):
    r"""Spectral clustering: K-means on the rows of the leading eigenvectors of ``K'``.

    Builds an affinity ``K``, forms :math:`K' = D^{-1/2}KD^{-1/2}` (normalised cut) or
    :math:`K' = K - D + I` (ratio cut), takes its ``n_clusters`` leading eigenvectors
    as the columns of ``G`` and clusters the rows of ``G`` (each point's embedding)
    with :class:`KMeans`. For the normalised cut the rows are scaled to unit length
    first (Ng, Jordan and Weiss).

    Parameters
    ----------
    n_clusters : int, default=8
    affinity : {"rbf", "knn", "precomputed"}, default="rbf"
        ``rbf``: dense :math:`\exp(-\gamma\lVert x-y\rVert^2)`, O(m^2) memory.
        ``knn`` (alias ``"nearest_neighbors"``): sparse symmetrised k-nearest-neighbour
        graph :math:`(A + A^T)/2` with :math:`A_{ij}=1` when ``j`` is among the
        ``n_neighbors`` nearest points of ``i`` (itself included), O(m n_neighbors)
        memory. ``precomputed``: ``X`` is the affinity (dense or sparse).
    gamma : float > 0, default=1.0
    n_neighbors : int >= 1, default=10
    normalization : {"normalized", "ratio"}, default="normalized"
    eigen_solver : {"auto", "dense", "arpack", "lanczos", "amg"}, default="auto"
        See :func:`spectral_embedding`; ``"auto"`` is Lanczos, then LOBPCG with a
        multigrid preconditioner if Lanczos is slow, for ``knn`` (and sparse precomputed)
        affinities of more than 200 points, so their memory is ``O(m n_neighbors)``.
    n_init : int, default=10
        Restarts of the K-means step.
    random_state : int, RandomState instance or None
        Seeds the eigensolver's start vector and the K-means step.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : ndarray or sparse matrix of shape (n_samples, n_samples)
    eigenvalues_ : ndarray of shape (n_clusters,)
        Leading eigenvalues of ``K'``, largest first.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The rows that K-means clusters.

    See the chapter "Spectral clustering", section "The spectral embedding".

    Examples
    --------
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from lecturelib.clustering import SpectralClustering
    >>> from lecturelib.datasets import concentric_rings
    >>> X, rings = concentric_rings(n_per_ring=50, radii=(0.0, 2.0),
    ...                             noise=0.05)
    >>> sc = SpectralClustering(n_clusters=2, affinity="rbf", gamma=2.0,
    ...                         random_state=0).fit(X)
    >>> adjusted_rand_score(rings, sc.labels_)
    1.0
    """

    _parameter_constraints = {
        "n_clusters": [_POSITIVE_INT],
        "affinity": [Options("rbf", "knn", "nearest_neighbors", "precomputed")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_neighbors": [_POSITIVE_INT],
        "normalization": [Options("normalized", "ratio")],
        "eigen_solver": [Options("auto", "dense", "arpack", "lanczos", "amg")],
        "n_init": [_POSITIVE_INT],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=8, *, affinity="rbf", gamma=1.0, n_neighbors=10,
                 normalization="normalized", eigen_solver="auto", n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.normalization = normalization
        self.eigen_solver = eigen_solver
        self.n_init = n_init
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags

    def fit(self, X, y=None):
        """Cluster ``X``; returns ``self``."""
        check_estimator_params(self)
        precomputed = self.affinity == "precomputed"
        X = validate_data(self, X, dtype=np.float64,
                          accept_sparse=["csr", "csc", "coo"] if precomputed else False)
        n = X.shape[0]
        k = int(self.n_clusters)
        if n < k:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}")
        if precomputed:
            W = _check_affinity(X, "X (the precomputed affinity)", allow_sparse=True)
        elif self.affinity == "rbf":
            W = rbf_kernel(X, gamma=float(self.gamma))
        else:
            nn = check_positive_int(self.n_neighbors, "n_neighbors", upper=n, upper_name="n_samples")
            A = kneighbors_graph(X, n_neighbors=nn, include_self=True)
            W = (0.5 * (A + A.T)).tocsr()
        rng = check_random_state(self.random_state)
        vals, G = spectral_embedding(W, k, normalization=self.normalization,
                                     eigen_solver=self.eigen_solver, random_state=rng)
        if self.normalization == "normalized":
            norms = np.linalg.norm(G, axis=1)
            G = G / np.where(norms > 0, norms, 1.0)[:, None]
        self.affinity_matrix_ = W
        self.eigenvalues_ = vals
        self.embedding_ = G
        self.labels_ = KMeans(k, n_init=self.n_init, random_state=rng).fit(G).labels_
        return self
