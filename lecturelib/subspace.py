r"""Subspace methods as learning, and their generalisation bounds.

See the chapter "Subspace methods and their bounds" (``chapters/10-subspace.ipynb``),
which follows J. Shawe-Taylor's lecture on the statistical analysis of subspace methods.

Kernel PCA here is *uncentred*, as in the lecture: the eigenvalues of the Gram matrix
:math:`K` are sums of squared projection norms, not variances.  For a sample
:math:`x_1,\dots,x_m` with eigenvalues :math:`\hat\lambda_1\ge\dots\ge\hat\lambda_m` of
:math:`K`,

.. math:: \sum_{i\le k}\hat\lambda_i = \sum_j \|P_{\hat V_k}\phi(x_j)\|^2,\qquad
          \hat\lambda^{>k} = \sum_{i>k}\hat\lambda_i = \operatorname{tr}K - \sum_{i\le k}\hat\lambda_i .

Contents: the residual of a projection onto the kernel-PCA subspace for new points, the
kernel-PCA residual bound (the lecture's main theorem) and the process-versus-empirical
eigenvalue bounds, the sparsity bound of greedy Gram-Schmidt, the kernel CCA bound,
the pivoted incomplete Cholesky factorisation (the lecture's sparse kernel Gram-Schmidt)
and the two-view SVM-2K.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import cvxpy_settings, solve_with_clarabel
from ._validation import (
    check_squares_finite,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_positive_int,
    check_symmetric_psd,
    input_eps,
    validate_params,
)

__all__ = [
    "kernel_pca_eigenvalues",
    "kernel_pca_features",
    "projection_residuals",
    "kernel_pca_residual_bound",
    "eigenvalue_bounds",
    "gram_schmidt_bound",
    "kcca_bound",
    "IncompleteCholesky",
    "SVM2K",
    "svm2k_disagreement_bound",
    "svm2k_mcdiarmid_term",
    "svm2k_rademacher_estimate",
]

_KERNELS = ("linear", "poly", "rbf", "cosine", "sigmoid")
_POSITIVE_INT = Interval(Integral, 1, None)
_POSITIVE = Interval(Real, 0, None, closed="neither")
_DELTA = Interval(Real, 0, 1, closed="neither")
# gamma scales the kernel (rbf width, poly/sigmoid scale): 0 or less is no kernel at all;
# a polynomial kernel has degree at least 1.
_KERNEL_PARAMETER_CONSTRAINTS = {
    "gamma": [_POSITIVE, None],
    "degree": [_POSITIVE_INT],
    "coef0": [Interval(Real, None, None)],
}


# ----------------------------------------------------------------------------- kernel PCA


@validate_params({"K": ["array-like"]})
def kernel_pca_eigenvalues(K):
    r"""Eigenvalues of the (uncentred) Gram matrix, largest first.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Symmetric positive semi-definite kernel matrix.

    Returns
    -------
    ndarray of shape (m,)
        :math:`\hat\lambda_1\ge\dots\ge\hat\lambda_m`; rounding negatives (above
        ``-1e-8`` times the scale, allowed by the PSD check) are set to zero.

    See the chapter "Subspace methods and their bounds", section "Kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import kernel_pca_eigenvalues
    >>> K = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> print(kernel_pca_eigenvalues(K))
    [3. 1.]
    """
    K = check_symmetric_psd(K, "K")
    lam = np.linalg.eigvalsh(K)[::-1]
    return np.maximum(lam, 0.0)


@validate_params({"K": ["array-like"], "K_new": ["array-like"], "k": [_POSITIVE_INT]})
def kernel_pca_features(K, K_new, k):
    r"""Coordinates of points on the first ``k`` (uncentred) kernel-PCA directions.

    With :math:`K u_j = \hat\lambda_j u_j`, the unit direction is
    :math:`w_j = \hat\lambda_j^{-1/2}\sum_i (u_j)_i\phi(x_i)` and the coordinate of a
    point is :math:`w_j^\top\phi(x) = u_j^\top k_x/\sqrt{\hat\lambda_j}`.  Eigenvector
    signs follow scikit-learn's ``svd_flip`` (largest-magnitude entry of each
    :math:`u_j` positive).

    Parameters
    ----------
    K : array_like of shape (m, m)
        Training Gram matrix.
    K_new : array_like of shape (n, m)
        Kernel values between the points to project and the training points (pass
        ``K`` itself for the training coordinates).
    k : int

    Returns
    -------
    ndarray of shape (n, k)

    See the chapter "Subspace methods and their bounds", section "Kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import kernel_pca_features
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> K = X @ X.T
    >>> F = kernel_pca_features(K, K, 2)
    >>> np.allclose(F @ F.T, K)
    True
    """
    K = check_symmetric_psd(K, "K")
    m = K.shape[0]
    K_new = as_float_array(K_new, "K_new", ndim=2)
    if K_new.shape[1] != m:
        raise ValueError(f"K_new must have {m} columns (one per training point), got {K_new.shape[1]}")
    k = check_positive_int(k, "k", upper=m, upper_name="the number of training points")
    lam, U = np.linalg.eigh(K)
    lam, U = lam[::-1][:k], U[:, ::-1][:, :k]
    if lam[-1] <= 1e-12 * max(1.0, lam[0]):
        raise ValueError(f"k={k} exceeds the numerical rank of K")
    rows = np.argmax(np.abs(U), axis=0)
    U = U * np.sign(U[rows, np.arange(k)])
    return K_new @ U / np.sqrt(lam)


@validate_params({"K": ["array-like"], "K_new": ["array-like"], "diag_new": ["array-like"],
                  "k": [_POSITIVE_INT, "array-like"]})
def projection_residuals(K, K_new, diag_new, k):
    r"""Squared residuals of new points after projection onto the kernel-PCA subspace.

    With :math:`K u_j = \hat\lambda_j u_j` (training Gram matrix) the projection of
    :math:`\phi(x)` onto the span :math:`\hat V_k` of the first ``k`` principal directions
    has squared norm :math:`\sum_{j\le k}(u_j^\top k_x)^2/\hat\lambda_j`, where
    :math:`(k_x)_i = \kappa(x_i, x)`.  The residual is

    .. math:: \|P^\perp_{\hat V_k}\phi(x)\|^2 = \kappa(x,x) - \sum_{j\le k}\frac{(u_j^\top k_x)^2}{\hat\lambda_j}.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Training Gram matrix.
    K_new : array_like of shape (n, m)
        ``K_new[a, i] = kappa(x_new_a, x_i)``.
    diag_new : array_like of shape (n,)
        ``kappa(x_new_a, x_new_a)``.
    k : int or array_like of int
        Dimension of the subspace, ``1 <= k <= rank(K)``; several values give one
        column each (one eigendecomposition for all).

    Returns
    -------
    ndarray of shape (n,), or (n, len(k)) for several ``k``

    See the chapter "Subspace methods and their bounds", section "Kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import projection_residuals
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> K = X @ X.T
    >>> print(projection_residuals(K, K, np.diag(K), 2).round(6))
    [0. 0. 0.]
    >>> print(projection_residuals(K, K, np.diag(K), 1).round(4))
    [0.916  0.3359 0.4453]
    """
    K = check_symmetric_psd(K, "K")
    m = K.shape[0]
    K_new = as_float_array(K_new, "K_new", ndim=2)
    if K_new.shape[1] != m:
        raise ValueError(f"K_new must have {m} columns (one per training point), got {K_new.shape[1]}")
    diag_new = as_float_array(diag_new, "diag_new", ndim=1)
    if diag_new.shape[0] != K_new.shape[0]:
        raise ValueError("diag_new must have one entry per row of K_new")
    if np.any(diag_new < 0):
        raise ValueError("diag_new must be non-negative: its entries are kernel values "
                         f"k(x, x) = |phi(x)|^2, got {diag_new.min():.4g}")
    scalar = np.ndim(k) == 0
    if not scalar and np.asarray(k).dtype.kind not in "iu":
        raise ValueError(f"k must be an integer or an array of integers, got dtype "
                         f"{np.asarray(k).dtype}")
    ks = [check_positive_int(kk if scalar else int(kk), "k", upper=m,
                             upper_name="the number of training points")
          for kk in np.atleast_1d(k)]
    kmax = max(ks)
    lam, U = np.linalg.eigh(K)
    lam, U = lam[::-1][:kmax], U[:, ::-1][:, :kmax]
    if lam[-1] <= 1e-12 * max(1.0, lam[0]):
        raise ValueError(f"k={kmax} exceeds the numerical rank of K")
    with np.errstate(over="ignore", invalid="ignore"):
        captured = np.cumsum((K_new @ U) ** 2 / lam, axis=1)[:, np.array(ks) - 1]
        out = diag_new[:, None] - captured
    if not np.all(np.isfinite(out)):
        raise ValueError("the squared projections overflow float64: K_new is too large for "
                         "the eigenvalues of K; rescale the kernel")
    return out[:, 0] if scalar else out


def _kpca_excess(diag, k, m, delta, R2):
    """Complexity and confidence terms of the kernel-PCA bound (p = 2 form)."""
    complexity = 4.0 * math.sqrt((k + 1) / m) * math.sqrt(2.0 / m * float(np.sum(diag**2)))
    confidence = R2 * math.sqrt(18.0 * math.log(2.0 / delta) / m)
    return complexity, confidence


@validate_params({"K": ["array-like"], "k": [_POSITIVE_INT], "delta": [_DELTA],
                  "R2": [_POSITIVE, None], "return_terms": ["boolean"]})
def kernel_pca_residual_bound(K, k, delta=0.05, R2=None, return_terms=False):
    r"""The lecture's kernel-PCA generalisation theorem: a bound on the expected residual.

    With probability at least :math:`1-\delta` over the sample of size ``m``,

    .. math::

        \begin{aligned}
        E\big[\|P^\perp_{\hat V_k}\phi(x)\|^2\big] \le{}& \frac1m\hat\lambda^{>k}
          + 4\sqrt{\frac{k+1}{m}}\sqrt{\frac2m\sum_{i=1}^m\kappa(x_i,x_i)^2}\\
          &+ R^2\sqrt{\frac{18\ln(2/\delta)}{m}},
        \end{aligned}

    where :math:`R^2 \ge \kappa(x,x)` on the support.  The lecture prints the power of
    :math:`\kappa(x_i,x_i)` as 1 in one place and 4 in another; 2 is the value that makes
    the term scale like :math:`\kappa`, and for a normalised kernel
    (:math:`\kappa(x,x)=1`) all three coincide: the middle term is
    :math:`4\sqrt2\sqrt{(k+1)/m}`.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Gram matrix of the sample.
    k : int
        Dimension of the kernel-PCA subspace.
    delta : float in (0, 1), default=0.05
    R2 : float, default=None
        Bound on :math:`\kappa(x,x)`; by default the largest diagonal entry of ``K``.
    return_terms : bool, default=False
        Also return the three terms.

    Returns
    -------
    bound : float
    terms : dict, only if ``return_terms``
        ``empirical``, ``complexity``, ``confidence``.

    See the chapter "Subspace methods and their bounds", section "A bound for kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import kernel_pca_residual_bound
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) / 3
    >>> bound, terms = kernel_pca_residual_bound(X @ X.T, k=2,
    ...                                          return_terms=True)
    >>> print(round(bound, 4))
    0.913
    >>> print({name: round(value, 4) for name, value in terms.items()})
    {'empirical': 0.1021, 'complexity': 0.1839, 'confidence': 0.627}
    """
    K = check_symmetric_psd(K, "K")
    K = check_squares_finite(K, "K")
    m = K.shape[0]
    k = check_positive_int(k, "k", upper=m, upper_name="the sample size")
    delta = float(delta)
    diag = np.diag(K)
    R2 = _check_R2(R2, diag)
    lam = kernel_pca_eigenvalues(K)
    empirical = float(lam[k:].sum()) / m
    complexity, confidence = _kpca_excess(diag, k, m, delta, float(R2))
    bound = empirical + complexity + confidence
    if return_terms:
        return bound, {"empirical": empirical, "complexity": complexity, "confidence": confidence}
    return bound


def _check_R2(R2, diag):
    """The bound on kappa(x, x): the sample's largest by default, never below it."""
    if R2 is None:
        return float(diag.max())
    if R2 < diag.max() * (1 - 1e-12):
        raise ValueError(f"R2={R2} is smaller than the largest kappa(x, x) of the sample ({diag.max():.4g})")
    return float(R2)


@validate_params({"K": ["array-like"], "ks": [_POSITIVE_INT, "array-like"], "delta": [_DELTA],
                  "R2": [_POSITIVE, None]})
def eigenvalue_bounds(K, ks, delta=0.05, R2=None):
    r"""Empirical eigenvalue sums and the bound on the process tail, for several ``k``.

    The eigenvalues :math:`\lambda_i` of the kernel operator of the distribution
    (the "process" eigenvalues) satisfy

    .. math:: \sum_{i>k}\lambda_i =
              \min_{\dim V=k}E\|P^\perp_V\phi(x)\|^2 \le E\|P^\perp_{\hat V_k}\phi(x)\|^2,

    so the kernel-PCA bound also bounds the process tail:

    .. math:: \sum_{i>k}\lambda_i \le \frac1m\hat\lambda^{>k}
              + 4\sqrt{\frac{k+1}{m}}\sqrt{\frac2m\sum_i\kappa(x_i,x_i)^2}
              + R^2\sqrt{\frac{18\ln(2/\delta)}{m}} .

    The other direction holds exactly in expectation: :math:`\frac1m\sum_{i\le k}
    \hat\lambda_i \ge \hat E\|P_{V_k}\phi\|^2`, whose expectation is
    :math:`\sum_{i\le k}\lambda_i`.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Symmetric positive semi-definite kernel matrix of the sample.
    ks : int or array_like of int
    delta : float in (0, 1), default=0.05
    R2 : float, default=None
        Bound on :math:`\kappa(x,x)`; by default the largest diagonal entry.

    Returns
    -------
    dict of ndarrays, one entry per ``k``
        ``k``; ``empirical_head`` :math:`\frac1m\sum_{i\le k}\hat\lambda_i`;
        ``empirical_tail`` :math:`\frac1m\hat\lambda^{>k}`; ``excess`` (complexity plus
        confidence term); ``tail_upper`` (empirical tail plus excess).

    See the chapter "Subspace methods and their bounds", section "Process and empirical eigenvalues".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import eigenvalue_bounds
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)) / 3
    >>> table = eigenvalue_bounds(X @ X.T, ks=[1, 2])
    >>> sorted(table)
    ['empirical_head', 'empirical_tail', 'excess', 'k', 'tail_upper']
    >>> print(table["k"])
    [1 2]
    """
    K = check_symmetric_psd(K, "K")
    K = check_squares_finite(K, "K")
    m = K.shape[0]
    ks = np.atleast_1d(np.asarray(ks))
    if ks.ndim != 1 or not np.issubdtype(ks.dtype, np.integer):
        raise ValueError("ks must be an integer or a 1-D array of integers")
    for k in ks:
        check_positive_int(int(k), "k", upper=m, upper_name="the sample size")
    delta = float(delta)
    diag = np.diag(K)
    R2 = _check_R2(R2, diag)
    lam = kernel_pca_eigenvalues(K)
    csum = np.concatenate([[0.0], np.cumsum(lam)])
    head = csum[ks] / m
    tail = (csum[-1] - csum[ks]) / m
    excess = np.array([sum(_kpca_excess(diag, int(k), m, delta, R2)) for k in ks])
    return {"k": ks.copy(), "empirical_head": head, "empirical_tail": tail,
            "excess": excess, "tail_upper": tail + excess}


@validate_params({"empirical_residual": [Interval(Real, 0, None)], "k": [_POSITIVE_INT],
                  "m": [_POSITIVE_INT], "delta": [_DELTA], "R": [_POSITIVE]})
def gram_schmidt_bound(empirical_residual, k, m, delta=0.05, R=1.0):
    r"""Sparsity (compression) bound for the subspace spanned by ``k`` pivots.

    Greedy Gram-Schmidt picks ``k`` of the ``m`` training points; the other
    :math:`m-k` act as a test set for the residual of the projection onto their span.
    The residual lies in :math:`[0, R^2]`, so Hoeffding's inequality with a union bound
    over the :math:`\binom mk` possible index sets gives, with probability at least
    :math:`1-\delta`,

    .. math:: E\|P^\perp\phi(x)\|^2 \le \hat E_{m-k}\|P^\perp\phi(x)\|^2
              + R^2\sqrt{\frac{\ln\binom mk + \ln(2/\delta)}{2(m-k)}},

    where :math:`\hat E_{m-k}` is the mean residual over the non-pivot points.  The
    lecture prints :math:`k\ln(m/k)` for :math:`\ln\binom mk` and :math:`R` for
    :math:`R^2`; both make the bound smaller than the proof allows (with a normalised
    kernel, :math:`R = 1`, only the first matters).  :math:`\ln\binom mk` is computed
    from log-gamma values, so large ``m`` does not overflow.

    Parameters
    ----------
    empirical_residual : float
        Mean squared residual over the ``m - k`` non-pivot points, in :math:`[0, R^2]`.
    k, m : int
        Number of pivots and sample size, ``k < m``.
    delta : float in (0, 1), default=0.05
    R : float, default=1.0
        Bound on the feature norm, :math:`\kappa(x, x) \le R^2`.

    Returns
    -------
    float

    See the chapter "Subspace methods and their bounds", section "Sparse kernel Gram-Schmidt".

    Examples
    --------
    >>> from lecturelib.subspace import gram_schmidt_bound
    >>> round(gram_schmidt_bound(0.05, k=5, m=1000), 4)
    0.1796
    """
    m, k = int(m), int(k)
    if k >= m:
        raise ValueError(f"k={k} must be smaller than m={m}")
    delta, emp, R = float(delta), float(empirical_residual), float(R)
    if not math.isfinite(R * R):
        raise ValueError(f"R={R!r} is too large: R**2 overflows a float")
    if emp > R * R * (1 + 1e-12):
        raise ValueError(f"empirical_residual={emp!r} is larger than R**2={R * R!r}: a squared "
                         "residual lies in [0, kappa(x, x)] and kappa(x, x) <= R**2, so their "
                         "mean cannot exceed R**2; pass the R of the kernel")
    log_binom = math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1)
    bound = emp + R * R * math.sqrt((log_binom + math.log(2 / delta)) / (2 * (m - k)))
    if not math.isfinite(bound):
        raise ValueError(f"the bound overflows a float (empirical_residual={emp!r}, R={R!r})")
    return bound


@validate_params({"correlations": ["array-like"], "A2": [_POSITIVE], "B2": [_POSITIVE],
                  "diag_a": ["array-like"], "diag_b": ["array-like"], "R": [_POSITIVE],
                  "delta": [_DELTA]})
def kcca_bound(correlations, A2, B2, diag_a, diag_b, R=1.0, delta=0.05):
    r"""The lecture's bound on the distance between the two views' KCCA projections.

    For :math:`g(x) = \|W_a^\top\phi_a(x) - W_b^\top\phi_b(x)\|^2` over ``k`` directions
    with unit empirical variance, :math:`\|w_a\|^2\le A^2`, :math:`\|w_b\|^2\le B^2`,
    with probability at least :math:`1-\delta`

    .. math::

        \begin{aligned}
        E[g] \le{}& \sum_{i=1}^k 2(1-\rho_i) + 3R(A^2+B^2)\sqrt{\frac{\ln(2/\delta)}{2m}}\\
          &+ \frac{4(A^2+B^2)k}{m}
          \sqrt{\sum_{i=1}^m\big(\kappa_a(x_i,x_i)+\kappa_b(x_i,x_i)\big)^2}.
        \end{aligned}

    The first term is the empirical value: with unit variances,
    :math:`\hat E(a-b)^2 = 2(1-\rho)` for each direction.

    Parameters
    ----------
    correlations : array_like of shape (k,)
        Canonical correlations :math:`\rho_i` of the directions kept.
    A2, B2 : float
        Bounds on the squared norms of the directions in the two feature spaces.
    diag_a, diag_b : array_like of shape (m,)
        :math:`\kappa_a(x_i,x_i)` and :math:`\kappa_b(x_i,x_i)` on the sample.
    R : float, default=1.0
    delta : float in (0, 1), default=0.05

    Returns
    -------
    float

    See the chapter "Subspace methods and their bounds", section "Kernel CCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import kcca_bound
    >>> diag = np.ones(1000)
    >>> norms = dict(A2=1.0, B2=1.0, diag_a=diag, diag_b=diag)
    >>> round(kcca_bound([0.9, 0.8], **norms), 4)
    1.8696
    >>> round(kcca_bound([0.9, 0.8], **norms, delta=0.01), 4)
    1.9207
    """
    rho = as_float_array(correlations, "correlations", ndim=1)
    if np.any(rho < 0) or np.any(rho > 1 + 1e-9):
        raise ValueError("correlations must lie in [0, 1] (canonical correlations are the "
                         f"largest correlations of the directions, never negative), got "
                         f"{rho.min():.4g} to {rho.max():.4g}")
    diag_a = as_float_array(diag_a, "diag_a", ndim=1)
    diag_b = as_float_array(diag_b, "diag_b", ndim=1)
    for name, diag in (("diag_a", diag_a), ("diag_b", diag_b)):
        if np.any(diag < 0):
            raise ValueError(f"{name} must be non-negative: its entries are kernel values "
                             f"k(x, x) = |phi(x)|^2, got {diag.min():.4g}")
    if diag_a.shape != diag_b.shape:
        raise ValueError("diag_a and diag_b must have the same length (one entry per sample)")
    delta = float(delta)
    m, k = diag_a.size, rho.size
    s = A2 + B2
    # the norm of diag_a + diag_b, scaled first so that huge kernel values do not overflow
    scale = max(float(diag_a.max(initial=0)), float(diag_b.max(initial=0))) or 1.0
    norm = scale * math.sqrt(float(np.sum((diag_a / scale + diag_b / scale) ** 2)))
    bound = (float(np.sum(2 * (1 - rho))) + 3 * R * s * math.sqrt(math.log(2 / delta) / (2 * m))
             + 4 * s * k / m * norm)
    if not math.isfinite(bound):
        raise ValueError(f"kcca_bound overflows float64: A2 + B2 = {s:.3g} and the kernel "
                         f"values diag_a, diag_b up to {scale:.3g} are too large; rescale them")
    return bound


# ----------------------------------------------------------------------------- kernels


def _kernel_params(est):
    params = {}
    if est.kernel in ("poly", "rbf", "sigmoid") and est.gamma is not None:
        params["gamma"] = est.gamma
    if est.kernel == "poly":
        params["degree"] = est.degree
    if est.kernel in ("poly", "sigmoid"):
        params["coef0"] = est.coef0
    return params


def _kernel_diag(X, kernel, params):
    """kappa(x, x) for every row, without forming the Gram matrix."""
    sq = np.einsum("ij,ij->i", X, X)
    gamma = params.get("gamma", 1.0 / X.shape[1])
    if kernel == "linear":
        return sq
    if kernel == "rbf":
        return np.ones(X.shape[0])
    if kernel == "cosine":
        return (sq > 0).astype(float)
    if kernel == "poly":
        return (gamma * sq + params["coef0"]) ** params["degree"]
    return np.tanh(gamma * sq + params["coef0"])  # sigmoid


# ----------------------------------------------------------------------------- Gram-Schmidt


_FACTOR_START_COLUMNS = 32  # IncompleteCholesky's first allocation; doubled as the rank grows


class IncompleteCholesky(TransformerMixin, BaseEstimator):
    r"""Sparse kernel Gram-Schmidt: the pivoted incomplete Cholesky factorisation.

    Greedy Gram-Schmidt in feature space picks, at each step, the training point whose
    residual norm is largest and orthogonalises every point against it.  In the dual
    this is the lecture's pseudo-code (with ``norm[i]`` the squared residual norm):

    .. code-block:: text

        norm[i] = kappa(x_i, x_i)
        for j = 1..T:
            i_j = argmax_i norm[i];  s_j = sqrt(norm[i_j])
            psi[i, j] = (kappa(x_i, x_{i_j})
                         - sum_{t<j} psi[i, t] psi[i_j, t]) / s_j
            norm[i] -= psi[i, j]^2

    so that :math:`K \approx \Psi\Psi^\top`.  The residual :math:`K-\Psi\Psi^\top` is
    positive semi-definite with diagonal ``norm``; the loop stops when the largest
    residual norm is at most ``tol`` times the largest diagonal entry
    :math:`\max_i \kappa(x_i, x_i)` (then every entry of the residual is at most that in
    absolute value) or when the rank reaches ``max_rank``.  Both thresholds are relative,
    so the factorisation is scale-free: the kernel multiplied by any :math:`c > 0` (data
    scaled by 1e-150 under a linear kernel, say) gives the same pivots and the factor
    multiplied by :math:`\sqrt c`.

    Parameters
    ----------
    tol : float, default=1e-8
        Stop when :math:`\max_i` ``norm[i]`` :math:`\le` ``tol`` :math:`\cdot\max_i
        \kappa(x_i, x_i)`.  ``tol=0`` runs until ``max_rank`` or until the residual
        vanishes (norms at rounding level, below ``1e-12`` times the largest diagonal
        entry, count as zero).  A precomputed Gram
        matrix is judged at its own precision: for float32 input, residual norms within
        ``m * eps(float32)`` times the largest diagonal entry count as zero, and only a
        residual more negative than that shows that the matrix is not PSD.
    max_rank : int, default=None
        Largest number of pivots; ``None`` means no cap.
    kernel : {"precomputed", "linear", "poly", "rbf", "cosine", "sigmoid"} or callable, default="precomputed"
        With ``"precomputed"``, ``fit`` takes the Gram matrix ``K``; otherwise ``fit``
        takes the data and evaluates only the kernel columns of the pivots
        (:math:`O(mT)` kernel evaluations instead of :math:`m^2`).
    gamma, degree, coef0 : kernel parameters, as in scikit-learn (gamma > 0 or None, degree >= 1).

    Attributes
    ----------
    factor_ : ndarray of shape (m, r)
        :math:`\Psi`, one row of new features per training point.
    pivots_ : ndarray of shape (r,)
        Indices :math:`i_1,\dots,i_r` of the chosen points, in order.
    pivot_norms_ : ndarray of shape (r,)
        :math:`s_j`, the residual norm of each pivot when it was chosen.
    residual_norms_ : ndarray of shape (m,)
        Final squared residual norms, the diagonal of :math:`K-\Psi\Psi^\top`.
    rank_ : int

    See the chapter "Subspace methods and their bounds", section "Sparse kernel Gram-Schmidt".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import IncompleteCholesky
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    >>> K = X @ X.T
    >>> icd = IncompleteCholesky(tol=1e-10).fit(K)
    >>> icd.rank_
    2
    >>> np.allclose(icd.factor_ @ icd.factor_.T, K)
    True
    """

    _parameter_constraints = {
        "tol": [Interval(Real, 0, None)],
        "max_rank": [_POSITIVE_INT, None],
        "kernel": [Options("precomputed", *_KERNELS), "callable"],
        **_KERNEL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, tol=1e-8, max_rank=None, kernel="precomputed", gamma=None, degree=3,
                 coef0=1.0):
        self.tol = tol
        self.max_rank = max_rank
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _column_fn(self, X):
        if self.kernel == "precomputed":
            return lambda i: X[:, i], np.diag(X).copy()
        params = _kernel_params(self)
        if callable(self.kernel):
            diag = np.array([self.kernel(x, x) for x in X], dtype=float)
            return (lambda i: np.array([self.kernel(x, X[i]) for x in X], dtype=float)), diag
        diag = _kernel_diag(X, self.kernel, params)
        return (lambda i: pairwise_kernels(X, X[i:i + 1], metric=self.kernel, **params)[:, 0]), diag

    def fit(self, X, y=None):
        """Run greedy Gram-Schmidt on the Gram matrix (or on the data, with a kernel).

        Parameters
        ----------
        X : array_like of shape (m, m) if ``kernel="precomputed"``, else (m, n_features)
        y : ignored

        Returns
        -------
        self
        """
        check_estimator_params(self)
        # A precomputed Gram matrix is known only to its own precision (float32 round-off
        # makes a PSD matrix slightly indefinite): the tolerances below scale with it.
        eps = input_eps(X) if self.kernel == "precomputed" else np.finfo(np.float64).eps
        X = validate_data(self, X, dtype=np.float64)
        m = X.shape[0]
        if self.kernel == "precomputed":
            if X.shape[1] != m:
                raise ValueError(f"with kernel='precomputed', X must be a square Gram matrix, got shape {X.shape}")
            atol = max(1e-10, 10 * eps) * np.abs(X).max()
            if not np.allclose(X, X.T, rtol=0, atol=atol):
                raise ValueError("the Gram matrix X must be symmetric")
        cap = m if self.max_rank is None else int(self.max_rank)
        cap = min(cap, m)
        column, norm = self._column_fn(X)
        if np.any(norm < -1e-10 * np.abs(norm).max()):
            raise ValueError("the kernel has negative diagonal entries: it is not positive semi-definite")
        norm = norm.astype(float).copy()
        # every threshold is relative to the largest diagonal entry (scale-free); an
        # all-zero kernel has rank 0
        scale = float(norm.max())
        # Round-off of the input: a residual within m * eps * scale of zero is zero
        # (Weyl: the rounding error moves each eigenvalue by at most its norm, <= m eps scale).
        rounding = m * eps
        floor = max(1e-12, rounding) * scale
        # the factor grows with the rank (doubling its columns), so that memory follows
        # the rank found, not the cap: max_rank=None allowed an m x m factor up front
        psi = np.zeros((m, min(cap, _FACTOR_START_COLUMNS)))
        pivots, snorms = [], []
        for j in range(cap):
            i_j = int(np.argmax(norm))
            if norm[i_j] <= max(float(self.tol) * scale, floor):
                break
            if j == psi.shape[1]:
                psi = np.hstack([psi, np.zeros((m, min(cap, 2 * j) - j))])
            s = math.sqrt(norm[i_j])
            psi[:, j] = (column(i_j) - psi[:, :j] @ psi[i_j, :j]) / s
            norm -= psi[:, j] ** 2
            norm[i_j] = 0.0
            # The residual diagonal of a PSD kernel stays non-negative; a clearly negative
            # entry means the matrix is not a kernel Gram matrix.
            if norm.min() < -max(1e-8, rounding) * scale:
                raise ValueError(
                    "the kernel is not positive semi-definite: a residual diagonal entry "
                    f"became negative ({norm.min():.3g}) after {j + 1} pivot(s)"
                )
            pivots.append(i_j)
            snorms.append(s)
        r = len(pivots)
        self.factor_ = psi[:, :r].copy()
        self.pivots_ = np.array(pivots, dtype=int)
        self.pivot_norms_ = np.array(snorms)
        self.residual_norms_ = norm
        self.rank_ = r
        if self.kernel != "precomputed":
            self.X_fit_ = X
        return self

    def transform(self, X):
        r"""New features of new points, coordinate by coordinate:

        .. math:: \psi_x[j] = \Big(\kappa(x, x_{i_j}) - \sum_{t<j}\psi_x[t]\Psi[i_j,t]\Big)/s_j.

        Parameters
        ----------
        X : array_like
            With ``kernel="precomputed"``, the kernel values between the new points and
            the training points, shape (n, m); otherwise the new data.

        Returns
        -------
        ndarray of shape (n, rank_)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.rank_ == 0:  # the kernel is zero on the training points: no feature
            return np.zeros((X.shape[0], 0))
        if self.kernel == "precomputed":
            Kp = X[:, self.pivots_]
        elif callable(self.kernel):
            Kp = np.array([[self.kernel(x, self.X_fit_[i]) for i in self.pivots_] for x in X])
        else:
            Kp = pairwise_kernels(X, self.X_fit_[self.pivots_], metric=self.kernel,
                                  **_kernel_params(self))
        out = np.zeros((X.shape[0], self.rank_))
        P = self.factor_[self.pivots_]  # r x r lower triangular
        for j in range(self.rank_):
            out[:, j] = (Kp[:, j] - out[:, :j] @ P[j, :j]) / self.pivot_norms_[j]
        return out


# ----------------------------------------------------------------------------- SVM-2K


class SVM2K(ClassifierMixin, BaseEstimator):
    r"""The two-view SVM-2K: two SVMs tied by a consistency constraint, solved as a QP.

    The columns of ``X`` are split into two views A and B.  With kernels
    :math:`\kappa_A, \kappa_B` and :math:`f_A(x) = \langle w_A,\phi_A(x)\rangle + b_A`,
    :math:`f_B` likewise, SVM-2K solves

    .. math::

        \begin{aligned}
        \min\ & \tfrac12\|w_A\|^2 + \tfrac12\|w_B\|^2 + C_A\sum_i\xi^A_i
              + C_B\sum_i\xi^B_i + D\sum_i\eta_i\\
        \text{s.t.}\ & |f_A(x_i) - f_B(x_i)| \le \eta_i + \varepsilon,\\
        & y_i f_A(x_i) \ge 1-\xi^A_i,\quad y_i f_B(x_i) \ge 1-\xi^B_i,\quad
        \xi^A,\xi^B,\eta\ge0,
        \end{aligned}

    and predicts with the sign of :math:`\tfrac12(f_A(x)+f_B(x))`.  The lecture's
    formulation has no bias terms; ``fit_intercept=False`` gives exactly that problem.  The QP is
    written in the empirical feature space of each view (:math:`K = U\Lambda U^\top`,
    features :math:`U\Lambda^{1/2}`), where :math:`\|w\|^2` is a plain squared norm, and
    solved with cvxpy (Clarabel).  With ``D = 0`` the two views decouple into two
    ordinary soft-margin SVMs.

    Parameters
    ----------
    C_A, C_B : float, default=1.0
        Slack penalties of the two views.
    D : float, default=1.0
        Penalty on violations of the consistency constraint.
    epsilon : float, default=0.0
        Tolerated disagreement between the two views.
    views : int, or pair of index arrays, default=None
        Column split: an int ``s`` means view A is ``X[:, :s]`` and view B ``X[:, s:]``;
        a pair gives the columns of each view; ``None`` splits the columns in half.
    kernel : {"linear", "poly", "rbf", "cosine", "sigmoid"}, default="linear"
        Kernel of both views.
    gamma, degree, coef0 : kernel parameters, as in scikit-learn (gamma > 0 or None, degree >= 1).
    fit_intercept : bool, default=True
        Use the biases :math:`b_A, b_B`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    dual_coef_A_, dual_coef_B_ : ndarray of shape (m + u,)
        :math:`\alpha` with :math:`f_A(x) = \sum_i\alpha_i\kappa_A(x_i,x) + b_A`.
    intercept_A_, intercept_B_ : float
    slack_consistency_ : ndarray of shape (m + u,)
        :math:`\eta_i` at the optimum (labelled points first, then unlabelled ones).
    objective_ : float

    See the chapter "Subspace methods and their bounds", section "SVM-2K".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import SVM2K
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([-1, 1], 20)
    >>> XA = rng.normal(size=(40, 2)) + 2 * y[:, None]
    >>> XB = rng.normal(size=(40, 3)) + 2 * y[:, None]
    >>> clf = SVM2K(views=2).fit(np.hstack([XA, XB]), y)
    >>> float((clf.predict(np.hstack([XA, XB])) == y).mean())
    1.0
    """

    _parameter_constraints = {
        "C_A": [_POSITIVE],
        "C_B": [_POSITIVE],
        "D": [Interval(Real, 0, None)],
        "epsilon": [Interval(Real, 0, None)],
        "views": [None, _POSITIVE_INT, "array-like"],
        "kernel": [Options(*_KERNELS)],
        **_KERNEL_PARAMETER_CONSTRAINTS,
        "fit_intercept": ["boolean"],
    }

    def __init__(self, C_A=1.0, C_B=1.0, D=1.0, epsilon=0.0, views=None, kernel="linear",
                 gamma=None, degree=3, coef0=1.0, fit_intercept=True):
        self.C_A = C_A
        self.C_B = C_B
        self.D = D
        self.epsilon = epsilon
        self.views = views
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _view_columns(self, n_features):
        if self.views is None:
            if n_features < 2:
                raise ValueError(f"SVM2K needs at least two features to form two views, got {n_features} feature(s)")
            s = n_features // 2
            return np.arange(s), np.arange(s, n_features)
        if isinstance(self.views, Integral):
            s = int(self.views)
            if not 0 < s < n_features:
                raise ValueError(f"views={s} must split the {n_features} columns into two non-empty views")
            return np.arange(s), np.arange(s, n_features)
        try:
            a, b = self.views
        except (TypeError, ValueError):
            raise ValueError("views must be None, an int, or a pair of column-index arrays") from None
        a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
        if a.size == 0 or b.size == 0 or a.max() >= n_features or b.max() >= n_features:
            raise ValueError("each view must list at least one valid column index")
        return a, b

    def _gram(self, X1, X2):
        return pairwise_kernels(X1, X2, metric=self.kernel, **_kernel_params(self))

    @staticmethod
    def _feature_map(K, view):
        lam, U = np.linalg.eigh(K)
        keep = lam > 1e-10 * max(1.0, lam.max())
        if not np.any(keep):
            raise ValueError(
                f"SVM2K: the kernel matrix of view {view} is numerically zero (largest "
                f"eigenvalue {lam.max():.3g}); scale the data (e.g. with "
                "sklearn.preprocessing.StandardScaler) or choose another kernel")
        return U[:, keep] * np.sqrt(lam[keep]), U[:, keep] / np.sqrt(lam[keep])

    def fit(self, X, y, X_unlabelled=None):
        """Solve the SVM-2K quadratic programme.

        Parameters
        ----------
        X : array_like of shape (m, n_features)
            Both views side by side (see ``views``).
        y : array_like of shape (m,)
            Two classes.
        X_unlabelled : array_like of shape (u, n_features), default=None
            Semi-supervised variant: the consistency constraint needs no label, so it is
            imposed on these points too (with their own slacks :math:`\\eta`).  The
            directions then live in the span of all ``m + u`` points.

        Returns
        -------
        self
        """
        import cvxpy as cp

        check_estimator_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.size != 2:
            raise ValueError(f"Only binary classification is supported. SVM2K got y with "
                             f"{self.classes_.size} class(es)")
        ys = 2.0 * y_idx - 1.0
        cols_a, cols_b = self._view_columns(X.shape[1])
        self.columns_A_, self.columns_B_ = cols_a, cols_b
        m = X.shape[0]
        X_all = X
        if X_unlabelled is not None:
            U = as_float_array(X_unlabelled, "X_unlabelled", ndim=2)
            if U.shape[1] != X.shape[1]:
                raise ValueError(f"X_unlabelled must have {X.shape[1]} columns like X, got {U.shape[1]}")
            X_all = np.vstack([X, U])
        n_all = X_all.shape[0]
        maps = [self._feature_map(self._gram(X_all[:, c], X_all[:, c]), view)
                for c, view in ((cols_a, "A"), (cols_b, "B"))]
        (Fa, Sa), (Fb, Sb) = maps
        va, vb = cp.Variable(Fa.shape[1]), cp.Variable(Fb.shape[1])
        ba, bb = cp.Variable(), cp.Variable()
        xa, xb = cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True)
        eta = cp.Variable(n_all, nonneg=True)
        fa = Fa @ va + (ba if self.fit_intercept else 0)
        fb = Fb @ vb + (bb if self.fit_intercept else 0)
        objective = (0.5 * cp.sum_squares(va) + 0.5 * cp.sum_squares(vb) + self.C_A * cp.sum(xa)
                     + self.C_B * cp.sum(xb) + self.D * cp.sum(eta))
        constraints = [cp.multiply(ys, fa[:m]) >= 1 - xa, cp.multiply(ys, fb[:m]) >= 1 - xb,
                       cp.abs(fa - fb) <= eta + self.epsilon]
        problem = cp.Problem(cp.Minimize(objective), constraints)
        advice = ("scale the data (e.g. with sklearn.preprocessing.StandardScaler; the kernel "
                  "values should be of order 1) and keep C_A, C_B and D moderate")
        try:
            problem.solve(solver=cp.CLARABEL, **cvxpy_settings(cp.CLARABEL))
        except Exception as exc:  # cvxpy and the solver fail with assorted exception types
            raise ValueError(f"SVM2K: the QP solver (Clarabel, through cvxpy) failed "
                             f"with {type(exc).__name__}); {advice}") from exc
        if problem.status not in ("optimal", "optimal_inaccurate") or va.value is None:
            raise ValueError(f"SVM2K: the QP solver (Clarabel, through cvxpy) returned status "
                             f"{problem.status!r}, not a solution; {advice}")
        if problem.status == "optimal_inaccurate":
            warnings.warn(f"SVM2K: the QP solver (Clarabel) stopped short of its tolerances "
                          f"after {_solver_iterations(problem)} iterations (status "
                          f"optimal_inaccurate); {advice}", ConvergenceWarning, stacklevel=2)
        self.dual_coef_A_ = Sa @ va.value
        self.dual_coef_B_ = Sb @ vb.value
        self.intercept_A_ = float(ba.value) if self.fit_intercept else 0.0
        self.intercept_B_ = float(bb.value) if self.fit_intercept else 0.0
        self.slack_consistency_ = np.asarray(eta.value)
        self.objective_ = float(problem.value)
        self.X_fit_ = X_all
        return self

    def decision_function_views(self, X):
        """The two views' scores ``(f_A(x), f_B(x))`` for every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        fa = self._gram(X[:, self.columns_A_], self.X_fit_[:, self.columns_A_]) @ self.dual_coef_A_
        fb = self._gram(X[:, self.columns_B_], self.X_fit_[:, self.columns_B_]) @ self.dual_coef_B_
        return fa + self.intercept_A_, fb + self.intercept_B_

    def decision_function(self, X):
        r""":math:`\tfrac12(f_A(x)+f_B(x))`; positive means ``classes_[1]``."""
        fa, fb = self.decision_function_views(X)
        return 0.5 * (fa + fb)

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the averaged score is positive."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


# ----------------------------------------------------------------------------- SVM-2K analysis


def _solve_cone_programme(problem, cp, certified_gap):
    """Solve with Clarabel and return the optimal value.

    Clarabel's "almost solved" (status ``optimal_inaccurate``: its tolerances were out of
    reach, as a tight constraint on a nearly singular Gram matrix can make them) is
    accepted silently only when ``certified_gap()``, lecturelib's own relative duality gap
    at the returned point, is at most ``CERTIFIED_GAP``; otherwise the value is returned with
    a ``ConvergenceWarning``.  A solver failure, a Rust panic inside Clarabel included
    (pyo3's ``PanicException``, a ``BaseException``), becomes a ``ValueError``."""
    advice = ("keep disagreement away from 0, or the Gram matrices away from singular "
              "(e.g. add a small multiple of the identity)")
    solve_with_clarabel(problem, "svm2k_rademacher_estimate", advice,
                        solver="cone programme's solver")
    if problem.status not in ("optimal", "optimal_inaccurate") or problem.value is None:
        raise ValueError("svm2k_rademacher_estimate: the cone programme's solver (Clarabel) "
                         f"returned status {problem.status!r}, not a solution; {advice}")
    if problem.status == "optimal_inaccurate":
        gap = certified_gap()
        if not gap <= CERTIFIED_GAP:
            warnings.warn("svm2k_rademacher_estimate: the cone programme's solver (Clarabel) "
                          f"stopped short of its tolerances after {_solver_iterations(problem)} "
                          f"iterations (status optimal_inaccurate) with a certified relative "
                          f"gap of {gap:.2g} > {CERTIFIED_GAP:g}, so the value may be off in "
                          "its last digits; "
                          f"{advice}", ConvergenceWarning, stacklevel=4)
    return float(problem.value)


# The relative duality gap at which an "almost solved" cone programme is accepted: the
# estimate is then certified to six significant digits.
CERTIFIED_GAP = 1e-6


def _svm2k_duality_bounds(Fa, Fb, signs, disagreement, wa, wb, multiplier):
    r"""A feasible value and a weak-duality upper bound of the SVM-2K Rademacher programme
    at unit scale (see :func:`svm2k_rademacher_estimate`), as ``(lower, upper)``.

    Lower bound: the objective at ``(wa, wb)`` shrunk into the feasible set.  Upper bound:
    for any :math:`\lambda \ge 0` and :math:`|z_j| \le \lambda`, since
    :math:`z^\top(f_A - f_B)/n \le \lambda\hat D` on the feasible set,

    .. math::

        F \le \lambda\hat D + \|F_A^\top(e - z/n)\| + \|F_B^\top(e + z/n)\|,
        \qquad e = (\sigma/m, 0).

    :math:`\lambda` is the solver's multiplier of the agreement constraint,
    :math:`z_j = \lambda\,\mathrm{sign}(f_A - f_B)_j` where the views disagree, and on
    the points where they agree (ties) the values in :math:`[-\lambda, \lambda]` that
    minimise the bound (L-BFGS-B; any value gives a valid bound).
    """
    from scipy.optimize import minimize

    n, m = Fa.shape[0], len(signs)
    e = np.zeros(n)
    e[:m] = signs / m
    wa = wa / max(1.0, np.linalg.norm(wa))
    wb = wb / max(1.0, np.linalg.norm(wb))
    diff = Fa @ wa - Fb @ wb
    spread = np.abs(diff).sum() / n
    if spread > disagreement:  # a point outside by the solver's feasibility tolerance
        shrink = disagreement / spread
        wa, wb, diff = wa * shrink, wb * shrink, diff * shrink
    lower = e @ (Fa @ wa + Fb @ wb)
    lam = max(float(multiplier), 0.0)
    ties = np.abs(diff) <= 1e-7

    def bound(u_ties):
        z = lam * np.sign(diff)
        z[ties] = lam * u_ties
        a, b = Fa.T @ (e - z / n), Fb.T @ (e + z / n)
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        grad = lam / n * (-(Fa[ties] @ a) / max(na, 1e-300) + (Fb[ties] @ b) / max(nb, 1e-300))
        return lam * disagreement + na + nb, grad

    upper = bound(np.zeros(ties.sum()))[0]
    if ties.any() and lam > 0:
        found = minimize(bound, np.zeros(ties.sum()), jac=True, method="L-BFGS-B",
                         bounds=[(-1.0, 1.0)] * int(ties.sum()), options={"maxiter": 500})
        upper = min(upper, bound(np.clip(found.x, -1.0, 1.0))[0])
    return lower, upper


def _relative_gap(lower, upper):
    return max(upper - lower, 0.0) / max(abs(upper), np.finfo(float).tiny)


def _solver_iterations(problem):
    """The conic solver's iteration count, as cvxpy reports it ("?" when it does not)."""
    n = getattr(problem.solver_stats, "num_iters", None)
    return "?" if n is None else int(n)


@validate_params({
    "empirical_disagreement": [Interval(Real, 0, None, closed="left")],
    "m": [Interval(Integral, 1, None, closed="left")],
    "C": [Interval(Real, 0, None, closed="neither")],
    "trace_sum": [Interval(Real, 0, None, closed="left")],
    "R": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "constants": [Options("book", "slides")],
})
def svm2k_disagreement_bound(empirical_disagreement, m, C, trace_sum, R=1.0, delta=0.05,
                             constants="book"):
    r"""Bounds between the true and the empirical disagreement of the two views of SVM-2K.

    For :math:`g(x) = \langle w_A,\phi_A(x)\rangle - \langle w_B,\phi_B(x)\rangle` with
    :math:`\|w_A\|,\|w_B\|\le C` and :math:`\kappa_A(x,x),\kappa_B(x,x)\le R^2`, the
    function :math:`|g|` takes values in :math:`[0, 2RC]`.  The chapter's Rademacher
    theorem (for :math:`[0,1]`-valued classes, :math:`\hat R_m` with the factor
    :math:`2/m`), the complexity :math:`(2\sqrt2C/m)\sqrt{\operatorname{tr}K_A+\operatorname{tr}K_B}`
    of the linear class and the contraction factor 2 for the absolute value give, with
    probability at least :math:`1-\delta`,

    .. math::

        \begin{aligned}
        D := E|g| \le{}& \hat E|g|
          + \frac{4\sqrt2\,C}{m}\sqrt{\operatorname{tr}K_A+\operatorname{tr}K_B}\\
          &+ 2RC\sqrt{\frac{18\ln(2/\delta)}{m}}
        \end{aligned}

    (``constants="book"``).  The reverse direction holds with the same excess, so with
    probability at least :math:`1-\delta` also :math:`\hat E|g| \le D + \text{excess}`,
    and the lecture's :math:`\hat D` is the empirical value plus twice the excess.  The
    lecture prints the excess as :math:`\frac{2C}m\sqrt{\operatorname{tr}K_A+\operatorname{tr}K_B}
    + 3\sqrt{\ln(2/\delta)/m}` (``constants="slides"``), which leaves the range of
    :math:`|g|` and the contraction step out.

    Parameters
    ----------
    empirical_disagreement : float
        :math:`\hat E|g|` on the ``m`` points (for the SVM-2K solution at most
        :math:`\varepsilon + \frac1m\sum_i\eta_i`).
    m : int
        Number of points the disagreement is measured on (labelled or not).
    C : float
        Bound on :math:`\|w_A\|` and :math:`\|w_B\|`.
    trace_sum : float
        :math:`\operatorname{tr}K_A + \operatorname{tr}K_B` on those points.
    R : float, default=1.0
        Bound on :math:`\sqrt{\kappa_A(x,x)}` and :math:`\sqrt{\kappa_B(x,x)}`.
    delta : float in (0, 1), default=0.05
    constants : {"book", "slides"}, default="book"

    Returns
    -------
    dict
        ``complexity``, ``confidence`` (the two excess terms), ``D`` (empirical plus
        excess, the bound on the true disagreement) and ``D_hat`` (empirical plus twice
        the excess, the slides' :math:`\hat D`).

    See the chapter "Subspace methods and their bounds", section "Rademacher analysis of SVM-2K".

    Examples
    --------
    >>> from lecturelib.subspace import svm2k_disagreement_bound
    >>> b = svm2k_disagreement_bound(0.1, m=1000, C=1.0, trace_sum=2000.0)
    >>> print({k: round(v, 4) for k, v in b.items()})
    {'complexity': 0.253, 'confidence': 0.5154, 'D': 0.8683, 'D_hat': 1.6367}
    >>> b = svm2k_disagreement_bound(0.1, m=1000, C=1.0, trace_sum=2000.0,
    ...                              constants="slides")
    >>> round(b["D"], 4)
    0.3717
    """
    if constants == "book":
        complexity = 4.0 * math.sqrt(2.0) * C / m * math.sqrt(trace_sum)
        confidence = 2.0 * R * C * math.sqrt(18.0 * math.log(2.0 / delta) / m)
    else:
        complexity = 2.0 * C / m * math.sqrt(trace_sum)
        confidence = 3.0 * math.sqrt(math.log(2.0 / delta) / m)
    excess = complexity + confidence
    return {"complexity": complexity, "confidence": confidence,
            "D": float(empirical_disagreement) + excess,
            "D_hat": float(empirical_disagreement) + 2.0 * excess}


@validate_params({
    "m": [Interval(Integral, 1, None, closed="left")],
    "C": [Interval(Real, 0, None, closed="neither")],
    "R": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "n_draws": [Interval(Integral, 1, None, closed="left")],
    "constants": [Options("book", "slides")],
})
def svm2k_mcdiarmid_term(m, C, R=1.0, delta=0.05, n_draws=1, constants="book"):
    r"""The McDiarmid term that turns one draw of the signs into a bound on the expectation.

    .. math:: F(\sigma) = \sup_{w}\frac1m\sum_i\sigma_i\,(g_A(x_i)+g_B(x_i))

    over a class with :math:`|g_A + g_B| \le 2RC` changes by at most :math:`4RC/m` when
    one sign flips.  Averaged over ``n_draws`` independent sign vectors (:math:`mn`
    independent signs, each moving the average by at most :math:`4RC/(mn)`),
    McDiarmid's inequality gives, with
    probability at least :math:`1-\delta`,

    .. math:: E_\sigma F \le \frac1n\sum_{j=1}^n F(\sigma^{(j)}) + 2RC\sqrt{\frac{2\ln(1/\delta)}{mn}}

    (``constants="book"``).  The lecture prints :math:`RC\sqrt{(2/m)\ln(1/\delta)}` for one
    draw (``constants="slides"``, divided by :math:`\sqrt n` for ``n`` draws), half the
    value the bounded differences give.

    Parameters
    ----------
    m : int
        Number of labelled points carrying the signs.
    C : float
        Bound on :math:`\|w_A\|, \|w_B\|`.
    R : float, default=1.0
        Bound on :math:`\sqrt{\kappa(x,x)}` in both views.
    delta : float in (0, 1), default=0.05
    n_draws : int, default=1
    constants : {"book", "slides"}, default="book"

    Returns
    -------
    float

    See the chapter "Subspace methods and their bounds", section "Rademacher analysis of SVM-2K".

    Examples
    --------
    >>> from lecturelib.subspace import svm2k_mcdiarmid_term
    >>> round(svm2k_mcdiarmid_term(m=1000, C=1.0), 4)
    0.1548
    >>> round(svm2k_mcdiarmid_term(m=1000, C=1.0, n_draws=10), 4)
    0.049
    >>> round(svm2k_mcdiarmid_term(m=1000, C=1.0, constants="slides"), 4)
    0.0774
    """
    scale = 2.0 if constants == "book" else 1.0
    return scale * R * C * math.sqrt(2.0 * math.log(1.0 / delta) / (m * n_draws))


@validate_params({
    "K_A": ["array-like"],
    "K_B": ["array-like"],
    "C": [Interval(Real, 0, None, closed="neither")],
    "disagreement": [Interval(Real, 0, None, closed="left"), None],
    "n_labelled": [Interval(Integral, 1, None, closed="left"), None],
    "n_draws": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
})
def svm2k_rademacher_estimate(K_A, K_B, C, disagreement=None, n_labelled=None, n_draws=1,
                              random_state=None):
    r"""Estimate of the Rademacher complexity of the SVM-2K class, by optimisation.

    For each draw of independent random signs :math:`\sigma_1,\dots,\sigma_m` on the
    first ``n_labelled`` points, solve

    .. math::

        \begin{aligned}
        F(\sigma) = \max_{w_A, w_B}\ & \frac1m\sum_{i=1}^m\sigma_i\big(\langle w_A,
          \phi_A(x_i)\rangle + \langle w_B,\phi_B(x_i)\rangle\big)\\
        \text{s.t.}\ & \|w_A\|\le C,\ \|w_B\|\le C,\\
        & \frac1n\sum_{j=1}^n\big|\langle w_A,\phi_A(x_j)\rangle
          - \langle w_B,\phi_B(x_j)\rangle\big|\le\hat D,
        \end{aligned}

    where the consistency constraint runs over all ``n`` points of the Gram matrices
    (labelled and unlabelled).  This is the lecture's estimate of
    :math:`\hat R^*_m(\mathcal F_C)` (add :func:`svm2k_mcdiarmid_term` for a bound).
    By the representer argument the maximiser lies in the span of the ``n`` points, so
    the problem is written in each view's empirical feature space
    (:math:`K = U\Lambda U^\top`, features :math:`U\Lambda^{1/2}`) as a second-order cone
    programme and solved with cvxpy (Clarabel).  Without the constraint
    (``disagreement=None``) the maximum has the closed form
    :math:`\frac Cm\big(\sqrt{\sigma^\top K_A^{(m)}\sigma} + \sqrt{\sigma^\top K_B^{(m)}\sigma}\big)`
    (:math:`K^{(m)}` the labelled block), which is used instead.  :math:`F` is
    homogeneous,

    .. math::

        F(\sigma; K, C, \hat D) = CR\,F(\sigma; K/R^2, 1, \hat D/(CR)),

    with :math:`R^2` the largest diagonal entry of the two matrices, and the programme is
    solved at that unit scale, so that the result does not depend on the solver's absolute
    tolerances; a constraint with :math:`\hat D \ge 2CR` cannot bind and gives the closed
    form.  When Clarabel stops short of its tolerances ("almost solved"), the value is
    accepted only if a duality gap computed here certifies it to a relative
    ``1e-6``; otherwise a ``ConvergenceWarning`` says so.

    Parameters
    ----------
    K_A, K_B : array_like of shape (n, n)
        Gram matrices of the two views on the same ``n`` points, labelled points first.
    C : float
        Bound on :math:`\|w_A\|` and :math:`\|w_B\|`.
    disagreement : float >= 0 or None, default=None
        :math:`\hat D`, the bound on the mean absolute disagreement over the ``n`` points;
        ``None`` drops the constraint (two independent SVMs).
    n_labelled : int, default=None
        Number ``m`` of points carrying signs; ``None`` means all ``n``.
    n_draws : int, default=1
        Number of independent sign vectors averaged.
    random_state : None, int or numpy generator, default=None

    Returns
    -------
    dict
        ``estimate`` (mean of :math:`F` over the draws), ``values`` (one per draw) and
        ``unconstrained`` (the closed-form value without the constraint, for the same
        signs).

    Raises
    ------
    ValueError
        When :math:`C\sqrt{\max_j K_{jj}}` overflows, or the cone programme's solver
        fails (its status, or its exception, is named in the message).

    See the chapter "Subspace methods and their bounds", section "Rademacher analysis of SVM-2K".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.subspace import svm2k_rademacher_estimate
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> K_A, K_B = X @ X.T, X[:, :2] @ X[:, :2].T
    >>> r = svm2k_rademacher_estimate(
    ...     K_A, K_B, C=1.0, disagreement=0.2, n_labelled=10, n_draws=2,
    ...     random_state=0)
    >>> print(r["values"].round(2), r["unconstrained"].round(2))
    [0.35 0.76] [0.45 0.81]
    >>> round(r["estimate"], 2)
    0.56
    """
    import cvxpy as cp
    from sklearn.utils import check_random_state

    K_A = check_symmetric_psd(K_A, "K_A")
    K_B = check_symmetric_psd(K_B, "K_B")
    if K_A.shape != K_B.shape:
        raise ValueError(f"K_A and K_B must describe the same points, got shapes {K_A.shape} and {K_B.shape}")
    n = K_A.shape[0]
    m = n if n_labelled is None else n_labelled
    if m > n:
        raise ValueError(f"n_labelled={m} is larger than the number of points ({n})")
    rng = check_random_state(random_state)
    signs = rng.choice([-1.0, 1.0], size=(n_draws, m))
    # F is homogeneous: F(sigma; K, C, D) = C R F(sigma; K / R^2, 1, D / (C R)) with R^2 the
    # largest diagonal entry, so the programme is solved at unit scale whatever the scale of
    # K and C (Clarabel's absolute tolerances, and an overflow of s'Ks, would otherwise
    # decide the value).
    R2 = max(float(K_A.diagonal().max()), float(K_B.diagonal().max()))
    unit = C * math.sqrt(R2)  # the largest |f(x)| in the class
    if not math.isfinite(unit):
        raise ValueError(f"svm2k_rademacher_estimate: C * sqrt(max diag K) = {C:.3g} * "
                         f"sqrt({R2:.3g}) overflows float64; scale C or K_A and K_B down")
    if unit == 0.0:  # zero kernels, or every |F| <= 2 C R below float64's smallest number
        zeros = np.zeros(n_draws)
        return {"estimate": 0.0, "values": zeros, "unconstrained": zeros}
    K_A, K_B = K_A / R2, K_B / R2
    free = unit * np.array([(math.sqrt(max(s @ K_A[:m, :m] @ s, 0.0))
                             + math.sqrt(max(s @ K_B[:m, :m] @ s, 0.0))) / m for s in signs])
    if disagreement is None or disagreement / unit >= 2.0:
        # at unit scale |f_A(x_j) - f_B(x_j)| <= 2 for every w: the constraint is void
        return {"estimate": float(free.mean()), "values": free, "unconstrained": free}
    (Fa, _), (Fb, _) = SVM2K._feature_map(K_A, "A"), SVM2K._feature_map(K_B, "B")
    va, vb = cp.Variable(Fa.shape[1]), cp.Variable(Fb.shape[1])
    s_par = cp.Parameter(m)
    fa, fb = Fa @ va, Fb @ vb
    agreement = cp.sum(cp.abs(fa - fb)) / n <= disagreement / unit
    problem = cp.Problem(cp.Maximize(s_par @ (fa[:m] + fb[:m]) / m),
                         [cp.norm(va) <= 1.0, cp.norm(vb) <= 1.0, agreement])
    values = np.empty(n_draws)
    for j, s in enumerate(signs):
        s_par.value = s
        gap = lambda: _relative_gap(*_svm2k_duality_bounds(  # noqa: B023, E731
            Fa, Fb, s, disagreement / unit, va.value, vb.value, agreement.dual_value))
        values[j] = unit * _solve_cone_programme(problem, cp, gap)
    return {"estimate": float(values.mean()), "values": values, "unconstrained": free}
