"""Spectral methods I: PCA, kernel PCA, Fisher's LDA, CCA and kernel CCA.

See the chapter "PCA, LDA and CCA" (``chapters/05-spectral.ipynb``).  ``KernelCCA``
with regularisation is also used in the chapter "Subspace methods and their bounds".

Conventions: data matrices have one *row* per sample (scikit-learn's layout), with
:math:`m` samples and :math:`n` features, as in the chapter; the notes write the samples
as the columns of :math:`A`, so :math:`AA^\\top` there is :math:`X^\\top X` here.
Eigenvectors and canonical directions get a deterministic sign: the entry of largest
absolute value is positive, as scikit-learn's ``svd_flip`` does.  Eigensolvers are
LAPACK's ``syevr`` through ``scipy.linalg.eigh`` with ``subset_by_index``, so only the
eigenpairs asked for are computed.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from scipy.linalg.blas import dsyrk
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import iteration_cap, tightened
from ._validation import (
    InstanceOf,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_label_vector,
    check_symmetric_psd,
    check_squares_finite,
    input_eps,
    validate_params,
)

__all__ = ["PCA", "KernelPCA", "LDA", "CCA", "KernelCCA", "power_iteration", "separates_classes"]

_BLOCK_ELEMENTS = 1 << 18  # rows per block in the blocked X'X: about 2 MB of float64
_NYSTROEM_BLOCK_ROWS = 4096  # rows of K_XZ formed at once by the Nystroem route


# ----------------------------------------------------------------------------- helpers


def _flip_columns(V, *others):
    """Make the largest-|entry| of every column of ``V`` positive (and flip ``others`` alike)."""
    if V.shape[1] == 0:
        return (V, *others)
    rows = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[rows, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return (V * signs, *(O * signs for O in others))


def _centred_gram_of_columns(X, mean):
    """:math:`(X-1\\mu^\\top)^\\top (X-1\\mu^\\top)` by blocks of rows, with BLAS ``syrk``.

    Only one block of centred rows exists at any time (no copy of ``X``), and ``syrk``
    does half the work of a general product.  Returns the full symmetric matrix.
    """
    n, d = X.shape
    block = max(256, _BLOCK_ELEMENTS // max(d, 1))
    C = np.zeros((d, d), order="F")
    for start in range(0, n, block):
        B = X[start:start + block] - mean          # C-ordered (b, d); B.T is Fortran-ordered
        C = dsyrk(1.0, B.T, beta=1.0, c=C, trans=0, lower=0, overwrite_c=1)
    iu = np.triu_indices(d, 1)
    C[(iu[1], iu[0])] = C[iu]
    return C


def _scatter_matrix(X, mean):
    r""":math:`X_c^\top X_c` for centred ``X``, without a centred copy when that is safe.

    :math:`X^\top X - n\mu\mu^\top` (one BLAS ``syrk``) loses about
    :math:`\log_{10}(1+\mu_i^2/\sigma_i^2)` digits on feature ``i``; when that exceeds 3
    digits the matrix is recomputed from blocks of centred rows.
    """
    n = X.shape[0]
    S = X.T @ X
    raw_diag = np.diag(S).copy()
    S -= n * np.outer(mean, mean)
    if np.any(np.diag(S) * 1e3 < raw_diag):
        S = _centred_gram_of_columns(X, mean)
    return S


def _top_eigh(S, k, B=None, overwrite=False):
    """The ``k`` largest eigenpairs of symmetric ``S`` (or of the pencil ``(S, B)``), descending.

    A few eigenpairs of a large matrix: LAPACK ``syevx`` (bisection and inverse
    iteration after the tridiagonal reduction); otherwise ``syevr``.

    When the top eigenvalue is highly repeated (the centred identity, an RBF kernel of
    large ``gamma``), both drivers can return fewer eigenpairs than asked, even none;
    the full spectrum is then computed, and its last ``k`` eigenvectors are an
    orthonormal basis of the top eigenspace, as valid as any other.  With ``overwrite``
    LAPACK destroys only the lower triangle and the diagonal of ``S``, so ``S`` is
    rebuilt from its strict upper triangle and a copy of the diagonal.
    """
    n = S.shape[0]
    diagonal = np.diag(S).copy() if overwrite else None
    driver = "evx" if (B is None and n >= 200 and 10 * k <= n) else None
    w, V = linalg.eigh(S, B, subset_by_index=[n - k, n - 1], overwrite_a=overwrite,
                       check_finite=False, driver=driver)
    if w.shape[0] < k:
        if overwrite:
            S = _symmetric_from_upper(S, diagonal)
        w, V = linalg.eigh(S, B, check_finite=False)
        w, V = w[n - k:], V[:, n - k:]
    return w[::-1], V[:, ::-1]


def _symmetric_from_upper(S, diagonal):
    """The symmetric matrix with the strict upper triangle of ``S`` and the given diagonal."""
    U = np.triu(S, 1)
    U += U.T
    U[np.diag_indices_from(U)] = diagonal
    return U


def _check_n_components(k, upper, what):
    """``n_components`` (already checked against the parameter table) against the data."""
    if k is not None and k > upper:
        raise ValueError(f"n_components={k} is larger than {what} ({upper})")
    return None if k is None else int(k)


def _check_precomputed_gram(K, name, eps):
    """A precomputed Gram matrix, PSD to within the round-off of its input precision ``eps``.

    A float32 Gram matrix of a PSD kernel is slightly indefinite after rounding: Weyl's
    inequality moves each eigenvalue by at most ``n * eps * max|K|``.
    """
    n = np.shape(K)[0]
    return check_symmetric_psd(K, name, tol=max(1e-8, n * eps),
                               symmetry_tol=max(1e-10, 10 * eps))


def _check_at_least_two_samples(n, name):
    if n < 2:
        raise ValueError(f"{name} needs at least 2 samples, got {n} sample")


def _kernel(X, Y, kernel, gamma, degree, coef0, kernel_params):
    if kernel == "precomputed":
        return np.asarray(X, dtype=float)
    params = dict(kernel_params or {})
    if not callable(kernel):
        params.update(gamma=gamma, degree=degree, coef0=coef0)
    return pairwise_kernels(X, Y, metric=kernel, filter_params=True, **params)


def _kernel_diag(X, kernel, gamma, degree, coef0, kernel_params):
    """:math:`k(x_i, x_i)` for every row, in closed form for the built-in kernels."""
    if kernel == "precomputed":
        raise ValueError("with kernel='precomputed' pass diag = k(x, x) for every new point")
    if isinstance(kernel, str) and not kernel_params:
        g = 1.0 / X.shape[1] if gamma is None else gamma
        sq = np.einsum("ij,ij->i", X, X)
        if kernel == "linear":
            return sq
        if kernel in ("rbf", "laplacian", "cosine"):
            return np.ones(X.shape[0])
        if kernel in ("poly", "polynomial"):
            return (g * sq + coef0) ** degree
        if kernel == "sigmoid":
            return np.tanh(g * sq + coef0)
    return np.array([_kernel(x[None], x[None], kernel, gamma, degree, coef0, kernel_params)[0, 0]
                     for x in X])


_KERNEL_NAMES = ("linear", "poly", "polynomial", "rbf", "sigmoid", "cosine", "laplacian",
                 "precomputed")

# Valid values of the kernel parameters shared by KernelPCA and KernelCCA: the width gamma
# of rbf/laplacian (and the scale of poly/sigmoid) is positive (gamma = 0 makes every kernel
# value constant, so nothing is left after centring); a polynomial has degree at least 1.
_KERNEL_CONSTRAINTS = {
    "kernel": [Options(*_KERNEL_NAMES), "callable"],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Integral, 1, None)],
    "coef0": [Interval(Real, None, None)],
    "kernel_params": [InstanceOf(dict, "a dict"), None],
}
_N_COMPONENTS = [Interval(Integral, 1, None), None]


# ----------------------------------------------------------------------------- PCA


class PCA(TransformerMixin, BaseEstimator):
    r"""Principal component analysis, from the covariance or from the Gram matrix.

    With centred data :math:`X_c` (one row per sample), the principal axes are the
    leading eigenvectors of the scatter matrix :math:`X_c^\top X_c`; they maximise
    :math:`\operatorname{tr}(U^\top X_c^\top X_c U)` subject to :math:`U^\top U = I`
    and minimise the reconstruction error

    .. math:: \|X_c - X_c U U^\top\|_F^2 = \operatorname{tr}(X_c^\top X_c)
              - \operatorname{tr}(U^\top X_c^\top X_c U) = \sum_{i>k}\lambda_i ,

    with :math:`k` axes kept and :math:`\lambda_1 \ge \lambda_2 \ge \dots` the
    eigenvalues of :math:`X_c^\top X_c`.  With :math:`m` samples and :math:`n`
    features, two routes compute them:

    * ``"covariance"``: eigendecompose the :math:`n\times n` matrix
      :math:`X_c^\top X_c` (built block by block with BLAS ``syrk``, without a centred
      copy of ``X``);
    * ``"gram"`` (the case :math:`n \gg m`, more features than samples):
      eigendecompose the :math:`m\times m` Gram matrix :math:`X_c X_c^\top = QDQ^\top`
      and map back, :math:`U = X_c^\top Q D^{-1/2}`.

    ``solver="auto"`` takes the Gram route when there are more features than samples.

    Parameters
    ----------
    n_components : int, default=None
        Number of axes kept; all ``min(n_samples, n_features)`` by default.
    solver : {"auto", "covariance", "gram"}, default="auto"
    ddof : {0, 1}, default=1
        Variances are scatter / (n_samples - ddof): 1 as in scikit-learn, 0 for the
        1/m convention of the lecture slides.  The axes do not depend on it.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Principal axes (rows), orthonormal.
    explained_variance_ : ndarray of shape (n_components,)
        Variance of each principal component, :math:`\lambda_i/(m-\mathrm{ddof})`.
    explained_variance_ratio_ : ndarray of shape (n_components,)
    total_variance_ : float
        Trace of the covariance matrix (sum of all the variances).
    singular_values_ : ndarray of shape (n_components,)
        :math:`\sqrt{\lambda_i}`, the singular values of :math:`X_c`.
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_samples_ : int
    solver_ : str
        The route that ran: ``"covariance"`` or ``"gram"``.

    See the chapter "PCA, LDA and CCA", sections "PCA" and "More features than samples".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import PCA
    >>> X = np.array([[2.0, 0.0], [0.0, 1.0], [-2.0, 0.0], [0.0, -1.0]])
    >>> pca = PCA(n_components=1).fit(X)
    >>> print(pca.components_)
    [[1. 0.]]
    >>> print(pca.explained_variance_ratio_.round(4))
    [0.8]
    """

    _parameter_constraints = {
        "n_components": _N_COMPONENTS,
        "solver": [Options("auto", "covariance", "gram")],
        "ddof": [Interval(Integral, 0, 1)],
    }

    def __init__(self, n_components=None, solver="auto", ddof=1):
        self.n_components = n_components
        self.solver = solver
        self.ddof = ddof

    def fit(self, X, y=None):
        """Fit the principal axes to ``X`` of shape (n_samples, n_features)."""
        check_estimator_params(self)
        X = check_squares_finite(validate_data(self, X, dtype=np.float64), "X")
        n, d = X.shape
        _check_at_least_two_samples(n, "PCA")
        k = _check_n_components(self.n_components, min(n, d), "min(n_samples, n_features)")
        k = min(n, d) if k is None else k
        solver = self.solver
        if solver == "auto":
            solver = "gram" if d > n else "covariance"
        self.mean_ = X.mean(axis=0)
        if solver == "covariance":
            S = _scatter_matrix(X, self.mean_)
            total = float(np.trace(S))
            lam, U = _top_eigh(S, k, overwrite=True)
        else:
            Xc = X - self.mean_
            G = Xc @ Xc.T
            total = float(np.trace(G))
            lam, Q = _top_eigh(G, k, overwrite=True)
            U = self._axes_from_gram(Xc, lam, Q)
        tol = max(lam[0], 0.0) * max(n, d) * np.finfo(float).eps
        lam = np.where(lam > tol, lam, 0.0)  # rounding noise of a zero eigenvalue
        (U,) = _flip_columns(U)
        scale = n - self.ddof
        self.components_ = np.ascontiguousarray(U.T)
        self.explained_variance_ = lam / scale
        self.total_variance_ = total / scale
        self.explained_variance_ratio_ = (lam / total if total > 0 else np.zeros_like(lam))
        self.singular_values_ = np.sqrt(lam)
        self.n_components_ = k
        self.n_samples_ = n
        self.solver_ = solver
        return self

    @staticmethod
    def _axes_from_gram(Xc, lam, Q):
        """:math:`U = X_c^\\top Q D^{-1/2}`; axes of zero variance completed orthonormally."""
        tol = max(lam[0], 0.0) * max(Xc.shape) * np.finfo(float).eps if lam.size else 0.0
        good = lam > tol
        U = np.empty((Xc.shape[1], lam.size))
        U[:, good] = (Xc.T @ Q[:, good]) / np.sqrt(lam[good])
        if not np.all(good):
            # directions with no variance: any orthonormal completion will do
            basis = linalg.null_space(U[:, good].T) if np.any(good) else np.eye(Xc.shape[1])
            U[:, ~good] = basis[:, : np.count_nonzero(~good)]
        return U

    def transform(self, X):
        """Principal components :math:`y = U^\\top(x-\\mu)` of every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, Z):
        """Reconstruction :math:`\\hat x = \\mu + U y` from principal components ``Z``."""
        check_is_fitted(self)
        Z = as_float_array(Z, "Z", ndim=2)
        if Z.shape[1] != self.n_components_:
            raise ValueError(f"Z has {Z.shape[1]} columns but the model has "
                             f"{self.n_components_} components")
        return Z @ self.components_ + self.mean_


# ----------------------------------------------------------------------------- kernel PCA


class KernelPCA(TransformerMixin, BaseEstimator):
    r"""Kernel PCA: PCA in the feature space of a kernel, through the Gram matrix.

    With the (centred) Gram matrix :math:`K = QDQ^\top`, the principal axes in feature
    space are :math:`U = \Phi^\top V` with :math:`V = QD^{-1/2}`, so a new point
    projects to :math:`y = V^\top k_x`, :math:`k_x = (k(x_1,x),\dots,k(x_m,x))^\top`.
    Its squared distance to the principal subspace is

    .. math:: \|\phi(x) - UU^\top\phi(x)\|^2 = k(x,x) - \|y\|^2 .

    By default the feature vectors are centred (:math:`\tilde K = HKH`,
    :math:`H = I - \tfrac1m 11^\top`, and the same centring for :math:`k_x` and
    :math:`k(x,x)`), as in scikit-learn; ``center=False`` gives the uncentred form of
    the notes.

    **Low rank** (``n_landmarks=r``): the exact route stores the :math:`m \times m` Gram
    matrix (MemoryError at :math:`m = 30{,}000`). The Nystroem route draws ``r`` landmark
    rows :math:`Z` uniformly (``random_state``) and replaces :math:`K` by
    :math:`\hat K = F F^\top`, :math:`F = K_{XZ} K_{ZZ}^{+1/2}` (an :math:`m \times r`
    feature matrix, as scikit-learn's ``Nystroem``); kernel PCA of :math:`\hat K` is the
    SVD of the centred :math:`F`, so time is :math:`O(m r^2)` and memory :math:`O(m r)`, and
    a new point needs only its kernel values against the landmarks. The error is known
    after the fit: :math:`E = K - \hat K` is positive semidefinite (a Schur complement),
    so by Weyl's inequality every eigenvalue satisfies

    .. math:: 0 \le \lambda_j(HKH) - \lambda_j(H\hat KH) \le \operatorname{tr} E
              = \textstyle\sum_i \big(k(x_i,x_i) - \lVert F_i\rVert^2\big),

    stored as ``approximation_error_`` (zero, to rounding, when ``r >= m``: every point
    is a landmark); this guaranteed bound is loose (0.22 :math:`\lambda_1` in the case
    below). Measured against the exact solution (RBF, :math:`\gamma = 0.5`, the
    3-feature, three-class data of ``benchmarks/large_n.py``, :math:`m = 1{,}500`, 5
    components, ``r = 200``, five landmark draws): every eigenvalue within
    :math:`8.4 \times 10^{-4}\,\lambda_1` of the exact one, and the largest principal
    angle between the approximate and exact 5-dimensional subspaces (on the training
    points) with sine at most 0.012 (at :math:`m = 3{,}000`, ``r = 300``:
    :math:`4.3 \times 10^{-4}\,\lambda_1` and 0.004). ``tests/test_spectral.py`` holds
    the stated error, :math:`10^{-3}\,\lambda_1` and sine :math:`2 \times 10^{-2}`.

    Parameters
    ----------
    n_components : int, default=None
        Number of components; by default every eigenvalue that is not zero.
    kernel : {"linear", "poly", "rbf", "sigmoid", "cosine", "laplacian", "precomputed"} or callable, default="linear"
    gamma : float > 0, default=None
        Kernel coefficient of rbf, poly, sigmoid and laplacian; 1/n_features if None.
    degree : int >= 1, default=3
    coef0 : float, default=1
    kernel_params : dict, default=None
        Extra arguments of a callable kernel.
    center : bool, default=True
    n_landmarks : int >= 1, default=None
        ``None``: the exact Gram matrix. An int ``r``: the Nystroem approximation with ``r``
        landmarks (every point when ``r >= n_samples``); not with ``kernel="precomputed"``.
    random_state : int, RandomState instance or None, default=None
        Draws the landmarks (only with ``n_landmarks``).

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues :math:`D` of the (centred) Gram matrix, descending (of
        :math:`H\hat KH` with ``n_landmarks``).
    eigenvectors_ : ndarray of shape (n_samples, n_components)
        Unit eigenvectors :math:`Q`.
    dual_coef_ : ndarray of shape (n_samples, n_components)
        :math:`V = QD^{-1/2}` (zero columns for zero eigenvalues); with ``n_landmarks``,
        of shape ``(r, n_components)``: :math:`K_{ZZ}^{+1/2} W`, with :math:`W` the right
        singular vectors of the centred :math:`F`.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training points (the landmarks :math:`Z` with ``n_landmarks``).
    approximation_error_ : float
        :math:`\operatorname{tr}(K - \hat K)`, the bound above (0.0 for the exact route).
    n_components_ : int

    See the chapter "PCA, LDA and CCA", section "Kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import KernelPCA
    >>> X = np.array([[2.0, 0.0], [0.0, 1.0], [-2.0, 0.0], [0.0, -1.0]])
    >>> kpca = KernelPCA(n_components=2, kernel="linear").fit(X)
    >>> print(kpca.eigenvalues_.round(4))
    [8. 2.]
    >>> print(np.abs(kpca.transform(X)).round(4))
    [[2. 0.]
     [0. 1.]
     [2. 0.]
     [0. 1.]]
    """

    _parameter_constraints = {
        "n_components": _N_COMPONENTS,
        **_KERNEL_CONSTRAINTS,
        "center": ["boolean"],
        "n_landmarks": [Interval(Integral, 1, None), None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, kernel="linear", gamma=None, degree=3, coef0=1,
                 kernel_params=None, center=True, n_landmarks=None, random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.center = center
        self.n_landmarks = n_landmarks
        self.random_state = random_state

    def _get_kernel(self, X, Y=None):
        return _kernel(X, Y, self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params)

    def fit(self, X, y=None):
        """Fit on ``X`` (or on a Gram matrix with ``kernel="precomputed"``)."""
        check_estimator_params(self)
        eps = input_eps(X)
        X = check_squares_finite(validate_data(self, X, dtype=np.float64), "X")
        m = X.shape[0]
        _check_at_least_two_samples(m, "KernelPCA")
        if self.n_landmarks is not None:
            if self.kernel == "precomputed":
                raise ValueError("n_landmarks needs the kernel function: with "
                                 "kernel='precomputed' the whole Gram matrix is already given")
            return self._fit_nystroem(X, _check_n_components(self.n_components, m, "n_samples"))
        self._offset = None
        self.approximation_error_ = 0.0
        if self.kernel == "precomputed":
            K = _check_precomputed_gram(X, "the precomputed kernel matrix X", eps).copy()
        else:
            K = self._get_kernel(X)
        k = _check_n_components(self.n_components, m, "n_samples")
        if self.center:
            self._col_means = K.mean(axis=0)
            self._all_mean = float(self._col_means.mean())
            K -= self._col_means
            K -= self._col_means[:, None]
            K += self._all_mean
        lam, Q = _top_eigh(K, m if k is None else k, overwrite=True)
        # rounding noise of a zero eigenvalue (at the precision of a precomputed input)
        tol = max(lam[0], 0.0) * m * (eps if self.kernel == "precomputed" else np.finfo(float).eps)
        self._set_eigenpairs(lam, Q, tol, k)
        self.dual_coef_ = self.eigenvectors_ * self._inverse_sqrt(self.eigenvalues_)
        self.X_fit_ = X
        return self

    @staticmethod
    def _inverse_sqrt(lam):
        inv_sqrt = np.zeros_like(lam)
        inv_sqrt[lam > 0] = 1.0 / np.sqrt(lam[lam > 0])
        return inv_sqrt

    def _set_eigenpairs(self, lam, Q, tol, k):
        """``eigenvalues_``, ``eigenvectors_`` and ``n_components_`` from descending pairs."""
        lam = np.where(lam > tol, lam, 0.0)
        if k is None:
            keep = lam > 0
            if not np.any(keep):
                raise ValueError("the (centred) kernel matrix is zero: every point has the same "
                                 "feature vector, so there is no principal component")
            lam, Q = lam[keep], Q[:, keep]
        (Q,) = _flip_columns(Q)
        self.eigenvalues_ = lam
        self.eigenvectors_ = Q
        self.n_components_ = lam.size

    def _fit_nystroem(self, X, k):
        r"""Kernel PCA of :math:`\hat K = FF^\top`, :math:`F = K_{XZ}K_{ZZ}^{+1/2}`."""
        m = X.shape[0]
        r = min(int(self.n_landmarks), m)
        rng = check_random_state(self.random_state)
        landmarks = np.arange(m) if r == m else np.sort(rng.choice(m, size=r, replace=False))
        Z = X[landmarks]
        w, P = linalg.eigh(self._get_kernel(Z), check_finite=False)
        # K_ZZ^{+1/2}: the eigenvalues at rounding level of the largest are dropped
        keep = w > max(w[-1], 0.0) * r * np.finfo(float).eps
        T = P[:, keep] / np.sqrt(w[keep])
        F = np.empty((m, T.shape[1]))
        for start in range(0, m, _NYSTROEM_BLOCK_ROWS):  # one block of K_XZ at a time
            rows = slice(start, start + _NYSTROEM_BLOCK_ROWS)
            F[rows] = self._get_kernel(X[rows], Z) @ T
        diag = _kernel_diag(X, self.kernel, self.gamma, self.degree, self.coef0,
                            self.kernel_params)
        self.approximation_error_ = max(float(diag.sum() - np.einsum("ij,ij->", F, F)), 0.0)
        mean = F.mean(axis=0) if self.center else np.zeros(F.shape[1])
        F -= mean
        n_keep = F.shape[1] if k is None else min(k, F.shape[1])
        s2, W = _top_eigh(F.T @ F, n_keep)
        tol = max(s2[0], 0.0) * m * np.finfo(float).eps
        s2 = np.where(s2 > tol, s2, 0.0)
        U = (F @ W) * self._inverse_sqrt(s2)
        if k is not None and k > n_keep:  # fewer landmarks than components: zero columns
            s2 = np.r_[s2, np.zeros(k - n_keep)]
            U = np.c_[U, np.zeros((m, k - n_keep))]
            W = np.c_[W, np.zeros((W.shape[0], k - n_keep))]
        self._set_eigenpairs(s2, U, tol, k)
        # the same sign flips on W as on U keep transform(X_train) = U D^{1/2}
        signs = np.sign(np.sum(self.eigenvectors_ * U[:, :self.n_components_], axis=0))
        W = W[:, :self.n_components_] * np.where(signs == 0, 1.0, signs)
        W[:, self.eigenvalues_ == 0] = 0.0
        self.dual_coef_ = T @ W
        self._offset = mean @ W
        self._feature_mean = mean
        self._landmark_root = T
        self._components = W
        self.X_fit_ = Z
        return self

    def _test_kernel(self, X):
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            if X.shape[1] != self.X_fit_.shape[0]:
                raise ValueError("a precomputed test kernel needs one column per training sample")
            Kx = X.copy()
            raw = X
        else:
            Kx = self._get_kernel(X, self.X_fit_)
            raw = X
        row_means = Kx.mean(axis=1)
        if self.center:
            Kx -= self._col_means
            Kx -= row_means[:, None]
            Kx += self._all_mean
        return Kx, row_means, raw

    def _nystroem_features(self, X):
        """Validated ``X`` and its uncentred Nystroem features :math:`K_{xZ}K_{ZZ}^{+1/2}`."""
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X, self._get_kernel(X, self.X_fit_) @ self._landmark_root

    def transform(self, X):
        """Projections :math:`y = V^\\top k_x` onto the principal axes."""
        check_is_fitted(self)
        if self._offset is not None:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return self._get_kernel(X, self.X_fit_) @ self.dual_coef_ - self._offset
        Kx, _, _ = self._test_kernel(X)
        return Kx @ self.dual_coef_

    def fit_transform(self, X, y=None):
        """Fit, then return the training projections :math:`Q D^{1/2}`."""
        self.fit(X)
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_)

    def squared_distance_to_subspace(self, X, diag=None):
        r"""Squared distance in feature space from each row of ``X`` to the principal subspace.

        :math:`\tilde k(x,x) - \|y\|^2`, with

        .. math:: \tilde k(x,x) = k(x,x) - \tfrac2m\sum_i k(x_i,x)
                  + \tfrac1{m^2}\sum_{ij}k(x_i,x_j)

        when the model is centred and :math:`k(x,x)` otherwise. With ``n_landmarks`` the
        means of the kernel values are those of :math:`\\hat K`, through the Nystroem
        features.

        Parameters
        ----------
        X : array_like of shape (n, n_features)
            New points (or, with ``kernel="precomputed"``, their kernel rows against
            the training points).
        diag : array_like of shape (n,), optional
            :math:`k(x,x)` of each new point; required with ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n,)
        """
        check_is_fitted(self)
        if self._offset is not None:
            raw, f = self._nystroem_features(X)
            row_means, all_mean = f @ self._feature_mean, self._feature_mean @ self._feature_mean
            Y = f @ self._components - self._offset
        else:
            Kx, row_means, raw = self._test_kernel(X)
            all_mean = getattr(self, "_all_mean", 0.0)
            Y = Kx @ self.dual_coef_
        if diag is None:
            diag = _kernel_diag(raw, self.kernel, self.gamma, self.degree, self.coef0,
                                self.kernel_params)
        else:
            diag = as_float_array(diag, "diag", ndim=1)
            if diag.shape[0] != Y.shape[0]:
                raise ValueError(f"diag has {diag.shape[0]} entries for {Y.shape[0]} points")
        if self.center:
            diag = diag - 2.0 * row_means + all_mean
        return diag - np.einsum("ij,ij->i", Y, Y)


# ----------------------------------------------------------------------------- LDA


class LDA(ClassifierMixin, TransformerMixin, BaseEstimator):
    r"""Fisher's linear discriminant analysis.

    With :math:`m_j` of the :math:`m` samples in class :math:`C_j`, class means
    :math:`\mu_j`, priors :math:`\pi_j = m_j/m`, overall mean :math:`\mu`, pooled
    within-class scatter
    :math:`S_w = \frac1m\sum_j\sum_{x\in C_j}(x-\mu_j)(x-\mu_j)^\top` and between-class
    scatter :math:`S_b = \sum_j \pi_j(\mu_j-\mu)(\mu_j-\mu)^\top`, the discriminant
    directions maximise the Rayleigh quotient

    .. math:: J(w) = \frac{w^\top S_b w}{w^\top S_w w},

    i.e. solve the generalised symmetric-definite eigenproblem :math:`S_b w = J\,S_w w`
    (real eigenvalues; ``scipy.linalg.eigh(S_b, S_w)``), normalised so that
    :math:`W^\top S_w W = I`: the transform whitens the within-class scatter.  For two
    classes the single direction is :math:`S_w^{-1}(\mu_1-\mu_0)`.

    Classification uses the Bayes rule for Gaussian classes with the shared covariance
    :math:`S_w`; for two classes with equal priors its boundary is the midpoint rule

    .. math:: x^\top S_w^{-1}(\mu_1-\mu_0) - \tfrac12(\mu_1+\mu_0)^\top S_w^{-1}(\mu_1-\mu_0) = 0.

    Parameters
    ----------
    n_components : int, default=None
        Number of directions, at most ``min(n_classes - 1, n_features)`` (the default).
    shrinkage : float in [0, 1], default=None
        Replace :math:`S_w` by :math:`(1-\alpha)S_w + \alpha\,\tfrac{\operatorname{tr}S_w}{n}I`.
        Without it a singular :math:`S_w` is an error.

    Attributes
    ----------
    classes_, priors_, means_ : class labels, frequencies and means
    xbar_ : ndarray of shape (n_features,)
        Overall mean (the transform is centred on it).
    covariance_ : ndarray of shape (n_features, n_features)
        :math:`S_w` (after shrinkage).
    between_scatter_ : ndarray of shape (n_features, n_features)
        :math:`S_b`.
    scalings_ : ndarray of shape (n_features, n_components)
        The directions :math:`W`, with :math:`W^\top S_w W = I`.
    eigenvalues_ : ndarray of shape (n_components,)
        :math:`J(w)` of each direction, descending.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Each eigenvalue over the sum of all of them.
    coef_, intercept_ : the linear decision function (as in scikit-learn's LDA)

    See the chapter "PCA, LDA and CCA", section "Fisher's linear discriminant".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import LDA
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0],
    ...               [4.0, 0.0], [5.0, 1.0], [4.0, 1.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> lda = LDA(n_components=1).fit(X, y)
    >>> print(lda.predict([[0.5, 0.5], [4.5, 0.5]]))
    [0 1]
    >>> print(lda.transform(X).shape)
    (6, 1)
    """

    _parameter_constraints = {
        "n_components": _N_COMPONENTS,
        "shrinkage": [Interval(Real, 0, 1), None],
    }

    def __init__(self, n_components=None, shrinkage=None):
        self.n_components = n_components
        self.shrinkage = shrinkage

    def fit(self, X, y):
        """Fit the scatter matrices and the discriminant directions."""
        check_estimator_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        q = self.classes_.size
        if q < 2:
            raise ValueError(f"LDA needs at least two classes, got {q} class")
        n, d = X.shape
        k = _check_n_components(self.n_components, min(q - 1, d), "min(n_classes - 1, n_features)")
        k = min(q - 1, d) if k is None else k
        counts = np.bincount(y_idx, minlength=q)
        self.priors_ = counts / n
        self.means_ = np.empty((q, d))
        Sw = np.zeros((d, d))
        for j in range(q):
            Xj = X[y_idx == j]
            self.means_[j] = Xj.mean(axis=0)
            Sw += _centred_gram_of_columns(Xj, self.means_[j])
        Sw /= n
        if self.shrinkage:
            a = float(self.shrinkage)
            mu = np.trace(Sw) / d
            Sw *= 1.0 - a
            Sw.flat[:: d + 1] += a * mu
        self.xbar_ = self.priors_ @ self.means_
        B = (self.means_ - self.xbar_) * np.sqrt(self.priors_)[:, None]
        Sb = B.T @ B
        self._check_within_scatter(Sw)
        self.covariance_ = Sw
        self.between_scatter_ = Sb
        lam, W = _top_eigh(Sb, k, B=Sw)
        (W,) = _flip_columns(W)
        self.scalings_ = W
        self.eigenvalues_ = np.maximum(lam, 0.0)
        all_eigs = linalg.eigh(Sb, Sw, eigvals_only=True, check_finite=False)
        total = float(np.sum(np.maximum(all_eigs, 0.0)))
        self.explained_variance_ratio_ = self.eigenvalues_ / total if total > 0 else self.eigenvalues_
        self._fit_decision(Sw)
        return self

    @staticmethod
    def _check_within_scatter(Sw):
        w = linalg.eigvalsh(Sw, check_finite=False)
        if w[-1] <= 0 or w[0] <= 1e-12 * w[-1]:
            raise ValueError(
                "the within-class scatter S_w is singular (smallest eigenvalue "
                f"{w[0]:.3g}, largest {w[-1]:.3g}): there are collinear features or fewer "
                "samples than features; pass shrinkage (e.g. shrinkage=0.1)"
            )

    def _fit_decision(self, Sw):
        chol = linalg.cho_factor(Sw, check_finite=False)
        prec_means = linalg.cho_solve(chol, self.means_.T, check_finite=False).T
        coef = prec_means
        intercept = -0.5 * np.sum(self.means_ * prec_means, axis=1) + np.log(self.priors_)
        if self.classes_.size == 2:
            coef = coef[1:] - coef[:1]
            intercept = intercept[1:] - intercept[:1]
        self.coef_ = coef
        self.intercept_ = intercept

    def fisher_criterion(self, w):
        r"""Fisher's criterion :math:`J(w) = w^\top S_b w / w^\top S_w w` of a direction.

        With the fitted scatter matrices ``between_scatter_`` and ``covariance_`` (after
        shrinkage, if any).  It does not depend on the length of :math:`w`; its maximum
        over :math:`w` is ``eigenvalues_[0]``, reached at the first column of
        ``scalings_``.

        Parameters
        ----------
        w : array_like of shape (n_features,) or (n_features, k)
            A direction, or one direction per column; none may be zero.

        Returns
        -------
        float, or ndarray of shape (k,) for a matrix of directions

        Examples
        --------
        >>> import numpy as np
        >>> from lecturelib.spectral import LDA
        >>> X = np.array([[0.0, 0.0], [1.0, 2.0], [1.0, 0.0],
        ...               [4.0, 1.0], [5.0, 3.0], [6.0, 1.0]])
        >>> lda = LDA().fit(X, [0, 0, 0, 1, 1, 1])
        >>> J = lda.fisher_criterion(np.array([[1.0, 0.0], [0.0, 1.0]]))
        >>> print(np.round(J, 2), round(float(lda.eigenvalues_[0]), 2))
        [10.56  0.28] 10.56
        """
        check_is_fitted(self)
        W = as_float_array(w, "w")
        if W.ndim not in (1, 2) or W.shape[0] != self.n_features_in_:
            raise ValueError(f"w must have shape ({self.n_features_in_},) or "
                             f"({self.n_features_in_}, k), got {W.shape}")
        W2 = W.reshape(W.shape[0], -1)
        if np.any(np.all(W2 == 0, axis=0)):
            raise ValueError("w must be non-zero: J(0) is 0/0")
        between = np.einsum("ik,ij,jk->k", W2, self.between_scatter_, W2)
        within = np.einsum("ik,ij,jk->k", W2, self.covariance_, W2)
        J = between / within
        return float(J[0]) if W.ndim == 1 else J

    def transform(self, X):
        """Discriminant coordinates :math:`W^\\top(x - \\mu)`."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.xbar_) @ self.scalings_

    def decision_function(self, X):
        """Linear scores ``X @ coef_.T + intercept_`` (one column for two classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if self.classes_.size == 2 else scores

    def predict_log_proba(self, X):
        """Log posteriors under the shared-covariance Gaussian model."""
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            scores = np.c_[np.zeros_like(scores), scores]
        return scores - logsumexp(scores, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posteriors under the shared-covariance Gaussian model."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of largest posterior."""
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


# ----------------------------------------------------------------------------- CCA


def _second_view(Y, y):
    """The second view, passed as ``Y`` (the course's name) or ``y`` (scikit-learn's)."""
    if Y is not None and y is not None:
        raise ValueError("pass the second view once, as Y or as y, not both")
    second = Y if Y is not None else y
    if second is None:
        raise ValueError("the second view Y is missing: CCA requires y to be passed, but the target y is None")
    return second


def _as_two_views(est, X, Y, reset=True):
    if hasattr(Y, "toarray") or hasattr(Y, "sparse"):   # scipy.sparse or a sparse pandas frame
        raise TypeError(f"Sparse data was passed for the second view Y of {type(est).__name__}, "
                        "but dense data is required; use Y.toarray()")
    X, Y = validate_data(est, X, Y, dtype=np.float64, multi_output=True, y_numeric=True,
                         reset=reset)
    # validate_data converts X only: the second view keeps its dtype (float32, int, bool),
    # so convert it once, explicitly, and compute everything in float64.
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    return X, Y


class CCA(TransformerMixin, BaseEstimator):
    r"""Canonical correlation analysis by QR factorisations followed by an SVD.

    With (centred) views :math:`X_a` (:math:`m\times n_a`) and :math:`X_b`
    (:math:`m\times n_b`), maximise :math:`w_a^\top X_a^\top X_b w_b` subject to
    :math:`\|X_aw_a\| = \|X_bw_b\| = 1`.  Writing :math:`X_a = Q_aR_a`,
    :math:`X_b = Q_bR_b`, the problem becomes
    :math:`\max \hat w_a^\top Q_a^\top Q_b\hat w_b` over unit vectors; with the SVD
    :math:`Q_a^\top Q_b = \hat W_a\operatorname{diag}(\rho_j)\hat W_b^\top`,

    .. math:: W_a = R_a^{-1}\hat W_a,\qquad W_b = R_b^{-1}\hat W_b,\qquad
              \rho_j = \cos\theta_j,

    the singular values being the cosines of the principal angles between the column
    spaces of :math:`X_a` and :math:`X_b`.  The canonical variates :math:`X_aW_a` and
    :math:`X_bW_b` have orthonormal columns.

    Parameters
    ----------
    n_components : int, default=None
        Number of canonical pairs; ``min(n_features_x, n_features_y)`` by default.
    center : bool, default=True
        Centre each view first (classical CCA).  ``False`` follows the notes, which
        work with the raw columns.

    Attributes
    ----------
    correlations_ : ndarray of shape (n_components,)
        Canonical correlations :math:`\rho_1 \ge \rho_2 \ge \dots`.
    x_weights_ : ndarray of shape (n_features_x, n_components)
        :math:`W_a` (each column with :math:`\|X_a w\| = 1`).
    y_weights_ : ndarray of shape (n_features_y, n_components)
        :math:`W_b`.
    x_mean_, y_mean_ : ndarray
        Means subtracted from each view (zeros when ``center=False``).

    See the chapter "PCA, LDA and CCA", section "Canonical correlation analysis".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import CCA
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(200, 1))
    >>> X = np.hstack([z, rng.normal(size=(200, 1))])
    >>> Y = np.hstack([-2 * z, rng.normal(size=(200, 1))])
    >>> cca = CCA(n_components=2).fit(X, Y)
    >>> print(cca.correlations_.round(2))
    [1.   0.06]
    """

    _parameter_constraints = {"n_components": _N_COMPONENTS, "center": ["boolean"]}

    def __init__(self, n_components=None, center=True):
        self.n_components = n_components
        self.center = center

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    @staticmethod
    def _qr(M, name):
        Q, R = linalg.qr(M, mode="economic", check_finite=False)
        diag = np.abs(np.diag(R))
        if diag.size == 0 or diag.max() == 0 or diag.min() <= 1e-10 * diag.max():
            raise ValueError(
                f"{name} does not have full column rank"
                f"{' after centring' if name else ''} (collinear or constant columns, or "
                "fewer samples than columns); CCA needs each view of full column rank "
                "(use KernelCCA with reg > 0 otherwise)"
            )
        return Q, R

    def fit(self, X, Y=None, y=None):
        """Fit the canonical directions of the views ``X`` (m, n_a) and ``Y`` (m, n_b)."""
        check_estimator_params(self)
        X, Y = _as_two_views(self, X, _second_view(Y, y))
        n = X.shape[0]
        _check_at_least_two_samples(n, "CCA")
        p, s = X.shape[1], Y.shape[1]
        k = _check_n_components(self.n_components, min(p, s), "min(n_features_x, n_features_y)")
        k = min(p, s) if k is None else k
        self.x_mean_ = X.mean(axis=0) if self.center else np.zeros(p)
        self.y_mean_ = Y.mean(axis=0) if self.center else np.zeros(s)
        QA, RA = self._qr(X - self.x_mean_, "X")
        QB, RB = self._qr(Y - self.y_mean_, "Y")
        Uh, sigma, Vht = linalg.svd(QA.T @ QB, full_matrices=False, check_finite=False,
                                    lapack_driver="gesdd")
        Uh, Vh = Uh[:, :k], Vht[:k].T
        U = linalg.solve_triangular(RA, Uh, check_finite=False)
        V = linalg.solve_triangular(RB, Vh, check_finite=False)
        U, V = _flip_columns(U, V)
        self.correlations_ = np.clip(sigma[:k], 0.0, None)
        self.x_weights_ = U
        self.y_weights_ = V
        self.n_components_ = k
        self._n_features_y = s
        return self

    def transform(self, X, Y=None):
        """Canonical variates :math:`(x-\\mu_x)^\\top W_a` (and :math:`(y-\\mu_y)^\\top W_b` if ``Y`` is given)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        x_scores = (X - self.x_mean_) @ self.x_weights_
        if Y is None:
            return x_scores
        Y = as_float_array(Y, "Y", ndim=(1, 2))
        Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
        if Y.shape[1] != self._n_features_y:
            raise ValueError(f"Y has {Y.shape[1]} features, but CCA was fitted with "
                             f"{self._n_features_y}")
        return x_scores, (Y - self.y_mean_) @ self.y_weights_

    def fit_transform(self, X, Y=None, y=None):
        """Fit, then return the canonical variates of both views (as scikit-learn's CCA)."""
        Y = _second_view(Y, y)
        return self.fit(X, Y).transform(X, Y)


# ----------------------------------------------------------------------------- kernel CCA


class KernelCCA(TransformerMixin, BaseEstimator):
    r"""Regularised kernel canonical correlation analysis.

    Directions in the two feature spaces are :math:`w_a = \Phi_a^\top\alpha_a`,
    :math:`w_b = \Phi_b^\top\alpha_b`; with (centred) Gram matrices :math:`K_a, K_b`
    and the regularisation :math:`\tau\in[0,1]` of the lecture, the canonical pairs
    solve

    .. math::

        \begin{aligned}
        \max_{\alpha_a,\alpha_b}\ & \alpha_a^\top K_aK_b\alpha_b\\
        \text{s.t.}\ & \alpha_a^\top\big((1-\tau)K_a^2+\tau K_a\big)\alpha_a
          = \alpha_b^\top\big((1-\tau)K_b^2+\tau K_b\big)\alpha_b = 1,
        \end{aligned}

    the generalised eigenproblem

    .. math::

        \begin{aligned}
        &\begin{pmatrix}0&K_aK_b\\K_bK_a&0\end{pmatrix}\alpha\\
        &\quad= \rho
        \begin{pmatrix}(1-\tau)K_a^2+\tau K_a&0\\0&(1-\tau)K_b^2+\tau K_b\end{pmatrix}\alpha.
        \end{aligned}

    It is solved stably in the range of each kernel: with :math:`K_a = U_aS_aU_a^\top`
    and feature coordinates :math:`F_a = U_aS_a^{1/2}` the problem is linear CCA with
    covariances :math:`(1-\tau)S_a+\tau I` and cross-product :math:`F_a^\top F_b`,
    solved by one SVD.  With :math:`\tau = 0` and full-rank kernels every correlation is
    1 (the overfitting the regularisation prevents).  The regulariser is not
    scale-invariant: the correlations stay below 1 for every :math:`\tau` when the
    kernel matrices have eigenvalues at most 1 (scale them, e.g. by their largest
    eigenvalue), and then decrease as :math:`\tau` grows.

    Parameters
    ----------
    n_components : int, default=None
        Number of canonical pairs; by default the smaller rank of the two (centred)
        kernel matrices.
    kernel : {"linear", "poly", "rbf", "sigmoid", "cosine", "laplacian", "precomputed"} or callable, default="linear"
        The same kernel for both views; with "precomputed", ``X`` and ``Y`` are the two
        Gram matrices.
    gamma, degree, coef0, kernel_params : kernel parameters (as in ``KernelPCA``: gamma > 0, degree >= 1)
    reg : float in [0, 1], default=0.1
        :math:`\tau`.
    center : bool, default=True
        Centre both views in feature space.

    Attributes
    ----------
    correlations_ : ndarray of shape (n_components,)
        Regularised canonical correlations :math:`\rho_i`, descending.
    x_dual_coef_, y_dual_coef_ : ndarray of shape (n_samples, n_components)
        :math:`\alpha_a` and :math:`\alpha_b` for each pair.
    x_sq_norms_, y_sq_norms_ : ndarray of shape (n_components,)
        :math:`\|w_a\|^2 = \alpha_a^\top K_a\alpha_a` and :math:`\|w_b\|^2`.
    X_fit_, Y_fit_ : training views

    See the chapter "PCA, LDA and CCA", section "Kernel CCA", and the chapter
    "Subspace methods and their bounds".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import KernelCCA
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(60, 1))
    >>> X = np.hstack([z, rng.normal(size=(60, 1))])
    >>> Y = np.hstack([z ** 3, rng.normal(size=(60, 1))])
    >>> kcca = KernelCCA(n_components=1, kernel="rbf", gamma=0.5,
    ...                  reg=0.1).fit(X, Y)
    >>> print(kcca.correlations_.shape)
    (1,)
    >>> bool(kcca.correlations_[0] > 0.5)
    True
    """

    _parameter_constraints = {
        "n_components": _N_COMPONENTS,
        **_KERNEL_CONSTRAINTS,
        "reg": [Interval(Real, 0, 1)],
        "center": ["boolean"],
    }

    def __init__(self, n_components=None, kernel="linear", gamma=None, degree=3, coef0=1,
                 kernel_params=None, reg=0.1, center=True):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.reg = reg
        self.center = center

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _gram(self, X, Y=None):
        return _kernel(X, Y, self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params)

    @staticmethod
    def _centre(K):
        col = K.mean(axis=0)
        allm = float(col.mean())
        return K - col - col[:, None] + allm, col, allm

    @staticmethod
    def _range(K, tau, eps=np.finfo(float).eps):
        s, U = linalg.eigh(K, check_finite=False)
        keep = s > max(s[-1], 0.0) * K.shape[0] * eps * 10
        s, U = s[keep], U[:, keep]
        return s, U, 1.0 / np.sqrt((1.0 - tau) * s + tau)

    def fit(self, X, Y=None, y=None):
        """Fit the canonical pairs of the views ``X`` and ``Y`` (or their Gram matrices)."""
        check_estimator_params(self)
        Y = _second_view(Y, y)
        eps_x, eps_y = input_eps(X), input_eps(Y)
        X, Y = _as_two_views(self, X, Y)
        m = X.shape[0]
        _check_at_least_two_samples(m, "KernelCCA")
        tau = float(self.reg)
        if self.kernel == "precomputed":
            Ka = _check_precomputed_gram(X, "the precomputed kernel matrix X", eps_x)
            Kb = _check_precomputed_gram(Y, "the precomputed kernel matrix Y", eps_y)
            if Ka.shape != Kb.shape:
                raise ValueError(f"the two kernel matrices differ in shape: {Ka.shape} and {Kb.shape}")
        else:
            Ka, Kb = self._gram(X), self._gram(Y)
        if self.center:
            Ka, self._xcol, self._xall = self._centre(Ka)
            Kb, self._ycol, self._yall = self._centre(Kb)
        if self.kernel != "precomputed":
            eps_x = eps_y = np.finfo(float).eps
        sa, Ua, ca = self._range(Ka, tau, eps_x)
        sb, Ub, cb = self._range(Kb, tau, eps_y)
        rank = min(sa.size, sb.size)
        if rank == 0:
            raise ValueError("a kernel matrix is zero after centring: a view is constant")
        k = _check_n_components(self.n_components, rank,
                                "the rank of the (centred) kernel matrices")
        k = rank if k is None else k
        # whitened cross-product  C_aa^{-1/2} F_a' F_b C_bb^{-1/2},  F = U S^{1/2}
        M = (np.sqrt(sa) * ca)[:, None] * (Ua.T @ Ub) * (np.sqrt(sb) * cb)[None, :]
        P, rho, Qt = linalg.svd(M, full_matrices=False, check_finite=False)
        P, Q = P[:, :k], Qt[:k].T
        # w = C^{-1/2} p in feature coordinates; alpha = U S^{-1/2} w
        alpha_a = Ua @ ((ca / np.sqrt(sa))[:, None] * P)
        alpha_b = Ub @ ((cb / np.sqrt(sb))[:, None] * Q)
        alpha_a, alpha_b = _flip_columns(alpha_a, alpha_b)
        self.correlations_ = np.clip(rho[:k], 0.0, None)
        self.x_dual_coef_ = alpha_a
        self.y_dual_coef_ = alpha_b
        self.x_sq_norms_ = np.einsum("ij,ij->j", alpha_a, Ka @ alpha_a)
        self.y_sq_norms_ = np.einsum("ij,ij->j", alpha_b, Kb @ alpha_b)
        self.n_components_ = k
        self.X_fit_, self.Y_fit_ = X, Y
        return self

    def _test_gram(self, Xnew, fit, col, allm, name):
        if self.kernel == "precomputed":
            K = as_float_array(Xnew, name, ndim=2)
            if K.shape[1] != fit.shape[0]:
                raise ValueError(f"a precomputed test kernel {name} needs one column per "
                                 "training sample")
        else:
            K = self._gram(Xnew, fit)
        if self.center:
            K = K - col - K.mean(axis=1, keepdims=True) + allm
        return K

    def transform(self, X, Y=None):
        """Projections :math:`\\alpha_a^\\top k_a(x)` (and :math:`\\alpha_b^\\top k_b(y)`)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        xs = self._test_gram(X, self.X_fit_, getattr(self, "_xcol", None),
                             getattr(self, "_xall", None), "X") @ self.x_dual_coef_
        if Y is None:
            return xs
        Y = as_float_array(Y, "Y", ndim=(1, 2))
        Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
        if self.kernel != "precomputed" and Y.shape[1] != self.Y_fit_.shape[1]:
            raise ValueError(f"Y has {Y.shape[1]} features, but KernelCCA was fitted with "
                             f"{self.Y_fit_.shape[1]}")
        ys = self._test_gram(Y, self.Y_fit_, getattr(self, "_ycol", None),
                             getattr(self, "_yall", None), "Y") @ self.y_dual_coef_
        return xs, ys

    def fit_transform(self, X, Y=None, y=None):
        """Fit, then return the projections of the first view only.

        (``transform(X, Y)`` gives both views; scikit-learn's transformer contract
        wants ``fit_transform(X, y)`` equal to ``fit(X, y).transform(X)``.)
        """
        return self.fit(X, Y, y).transform(X)


# ----------------------------------------------------------------------------- power method


@validate_params({
    "S": ["array-like"],
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
    "return_history": ["boolean"],
})
def power_iteration(S, n_components=1, max_iter=1000, tol=1e-10, random_state=None,
                    return_history=False):
    r"""The leading eigenpairs of a symmetric PSD matrix by (block) power iteration.

    Starting from a random orthonormal :math:`Q_0 \in \mathbb R^{p\times k}`, repeat
    :math:`Q_{t+1}R_{t+1} = SQ_t` (a QR factorisation keeps the columns orthonormal, so
    that they do not all collapse onto the top eigenvector).  The span of :math:`Q_t`
    converges to that of the top ``k`` eigenvectors at the rate
    :math:`(\lambda_{k+1}/\lambda_k)^t`; each step costs :math:`O(kp^2)`, against
    :math:`O(p^3)` for a full eigendecomposition.  The iteration stops when
    :math:`\|Q_{t+1} - Q_tQ_t^\top Q_{t+1}\|_F \le` ``tol`` (the subspace has stopped
    moving); a final Rayleigh-Ritz step diagonalises :math:`Q^\top SQ`.  Signs follow
    ``svd_flip`` (largest-magnitude entry of each vector positive).

    Parameters
    ----------
    S : array_like of shape (p, p)
        Symmetric positive semi-definite matrix (a covariance or Gram matrix).
    n_components : int, default=1
        Number ``k`` of eigenpairs, at most ``p``.
    max_iter : int, default=1000
        Iteration cap; reaching it raises a ``ConvergenceWarning``.  Entries of ``S``
        so large that :math:`SQ` overflows raise a ``ValueError``.
    tol : float >= 0, default=1e-10
    random_state : None, int or numpy generator, default=None
        Seed of the random start.
    return_history : bool, default=False
        Also return the Rayleigh quotients :math:`\operatorname{diag}(Q_t^\top SQ_t)` of
        every iteration.

    Returns
    -------
    eigenvalues : ndarray of shape (k,)
        Descending.
    eigenvectors : ndarray of shape (p, k)
    n_iter : int
    history : ndarray of shape (n_iter, k), only if ``return_history``

    See the chapter "PCA, LDA and CCA", section "The power method".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.spectral import power_iteration
    >>> S = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> lam, V, n_iter = power_iteration(S, random_state=0)
    >>> print(lam.round(4), V[:, 0].round(4))
    [3.] [0.7071 0.7071]
    >>> S = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]])
    >>> lam, V, n_iter = power_iteration(S, n_components=2, random_state=0)
    >>> print(lam.round(4), np.linalg.eigvalsh(S)[::-1][:2].round(4))
    [4.618 2.382] [4.618 2.382]
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils import check_random_state

    S = check_symmetric_psd(S, "S")
    p = S.shape[0]
    if n_components > p:
        raise ValueError(f"n_components={n_components} is larger than the size of S ({p})")
    rng = check_random_state(random_state)
    Q, _ = np.linalg.qr(rng.standard_normal((p, n_components)))
    history = []
    converged = False
    tol, max_iter = tightened(tol), iteration_cap(max_iter, tol)
    for it in range(1, max_iter + 1):
        Q_new, R = np.linalg.qr(S @ Q)
        Q_new = Q_new * np.where(np.diag(R) < 0, -1.0, 1.0)
        moved = float(np.linalg.norm(Q_new - Q @ (Q.T @ Q_new)))
        if not np.isfinite(moved):
            raise ValueError(f"power_iteration broke down at iteration {it}: S @ Q is not "
                             f"finite (entries of S up to {float(np.abs(S).max()):.3g} overflow "
                             "float64); scale S towards 1 first")
        Q = Q_new
        if return_history:
            history.append(np.einsum("ij,ij->j", Q, S @ Q))
        if moved <= tol:
            converged = True
            break
    if not converged:
        warnings.warn(f"power_iteration stopped at max_iter={max_iter} before the subspace "
                      f"settled (last move {moved:.3g} > tol={tol}); raise max_iter (the "
                      "iteration is slow when the eigenvalues k and k + 1 are close)",
                      ConvergenceWarning, stacklevel=3)  # the caller, past validate_params
    lam, W = np.linalg.eigh(Q.T @ S @ Q)
    lam, V = lam[::-1], Q @ W[:, ::-1]
    V = _flip_columns(V)[0]
    if return_history:
        return lam, V, it, np.array(history)
    return lam, V, it


@validate_params({"z": ["array-like"], "y": ["array-like"]})
def separates_classes(z, y):
    """True when the classes occupy disjoint intervals of a one-dimensional score.

    Ordered by their medians, each class's largest value lies strictly below the next
    class's smallest: a threshold between consecutive classes classifies every point.
    Used to ask whether the first kernel-PCA component puts three concentric sets apart.

    Parameters
    ----------
    z : array_like of shape (n,)
        One score per point (e.g. a principal component).
    y : array_like of shape (n,)
        Labels; at least two classes.

    Returns
    -------
    bool

    See the chapter "PCA, LDA and CCA", section "Kernel PCA".

    Examples
    --------
    >>> from lecturelib.spectral import separates_classes
    >>> separates_classes([0.1, 0.2, 1.5, 1.1, -3.0], [0, 0, 1, 1, 2])
    True
    >>> separates_classes([0.1, 1.2, 1.5, 1.1], [0, 0, 1, 1])
    False
    """
    z = as_float_array(z, "z", ndim=1)
    y = check_label_vector(y, z.size, "entry of z")
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"separates_classes needs at least two classes, got {classes.size}")
    order = classes[np.argsort([np.median(z[y == c]) for c in classes])]
    return bool(all(z[y == a].max() < z[y == b].min() for a, b in zip(order[:-1], order[1:])))
