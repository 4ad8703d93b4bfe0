r"""Hyperbolic PCA: learning a subspace from equivalence constraints, and its bound.

See the chapter "Hyperbolic PCA" (``chapters/11-hpca.ipynb``), which follows A. Maurer,
"Generalization bounds for subspace selection and hyperbolic PCA".

An equivalence constraint is a triple :math:`(x, x', r)` with :math:`r=1` when the two
points are of the same type and :math:`r=-1` otherwise.  With weights
:math:`\eta_{-1} > 0` (negative pairs) and :math:`\eta_{+1} < 0` (positive pairs) the
empirical operator is

.. math:: \hat T = \frac1m\sum_{i=1}^m \eta_{r_i}\,(x_i - x_i')(x_i - x_i')^\top ,

and hyperbolic PCA projects onto the eigenvectors of its ``d`` largest eigenvalues: it
pushes different pairs apart and pulls equal pairs together.  :math:`\hat T` is
indefinite, so its quadratic form has hyperboloids as level sets.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import iteration_cap, tightened
from ._validation import (
    Elementwise,
    InstanceOf,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_label_vector,
    check_positive_int,
    check_squares_finite,
    validate_params,
)

_POSITIVE = Interval(Real, 0, None, closed="neither")
_POSITIVE_INT = Interval(Integral, 1, None)
_UNIT = Interval(Real, 0, 1, closed="neither")
# an empirical risk, a number or an array of them, each in [0, 1]
_RISK = [Interval(Real, 0, 1), Elementwise(Interval(Real, 0, 1))]

__all__ = [
    "hpca_weights",
    "HyperbolicPCA",
    "margin_loss",
    "empirical_margin_risk",
    "balanced_pair_risk",
    "best_threshold",
    "hpca_bound",
    "operator_bound",
    "one_shot_nn_error",
    "balanced_pairs",
    "pair_sq_distances",
    "transformed_sq_distances",
    "PositiveOperatorLearner",
]


@validate_params({"c": [_UNIT], "gamma": [_POSITIVE]})
def hpca_weights(c, gamma):
    r"""The weights that make the HPCA objective dominate the margin risk.

    .. math:: \eta_{-1} = \min\Big\{\frac1{1-c^2}, \frac1\gamma\Big\},\qquad
              \eta_{+1} = -\min\Big\{\frac1{c^2}, \frac1\gamma\Big\}.

    Parameters
    ----------
    c : float in (0, 1)
        Distance threshold.
    gamma : float > 0
        Margin.

    Returns
    -------
    (eta_neg, eta_pos) : tuple of float

    See the chapter "Hyperbolic PCA", section "From the margin risk to an eigenproblem".

    Examples
    --------
    >>> from lecturelib.hpca import hpca_weights
    >>> eta_neg, eta_pos = hpca_weights(0.5, 0.1)
    >>> print(round(eta_neg, 4), round(eta_pos, 4))
    1.3333 -4.0
    """
    c, gamma = float(c), float(gamma)
    # min(1/c^2, 1/gamma) compared as c^2 <= gamma: 1/c^2 overflows for tiny c
    eta_plus = 1 / gamma if c * c <= gamma else 1 / (c * c)
    return min(1 / (1 - c * c), 1 / gamma), -eta_plus


def _all_pairs_operator(X, y, w_same, w_diff):
    r""":math:`\sum_{i\ne j} a_{ij}(x_i-x_j)(x_i-x_j)^\top` with :math:`a_{ij}` = ``w_same``
    within a class and ``w_diff`` across, from centred scatters, in O(nd + d^2) memory.

    Over the ordered pairs of a set of :math:`n_S` points,
    :math:`\sum_{i,j\in S}(x_i-x_j)(x_i-x_j)^\top = 2n_S\,C_S` with :math:`C_S` its scatter
    about its mean; so the sum is :math:`w_= W + w_{\ne}(2n\,C - W)`, with
    :math:`W = \sum_c 2n_c C_c` the within-class part and :math:`C` the total scatter.
    (Centring first avoids the cancellation of :math:`X^\top A X` formed from raw sums.)
    """
    _, label, counts = np.unique(y, return_inverse=True, return_counts=True)
    means = np.stack([np.bincount(label, weights=col, minlength=counts.size)
                      for col in X.T], axis=1) / counts[:, None]
    Xc = X - means[label]                                   # each row about its class mean
    within = (Xc * (2.0 * counts[label])[:, None]).T @ Xc
    X0 = X - X.mean(axis=0)
    T = w_same * within + w_diff * (2.0 * y.size * (X0.T @ X0) - within)
    return 0.5 * (T + T.T)


def _psd_sqrt_solve(G, B, tol):
    """Eigenvectors of G A G g = lam G g through M = G^{1/2} A G^{1/2} (B = A)."""
    lam, V = np.linalg.eigh(G)
    keep = lam > tol * max(1.0, lam.max())
    V, lam = V[:, keep], lam[keep]
    half = V * np.sqrt(lam)  # G^{1/2} restricted to the range of G (m x r)
    M = half.T @ B @ half
    M = 0.5 * (M + M.T)
    mu, W = np.linalg.eigh(M)
    order = np.argsort(mu)[::-1]
    mu, W = mu[order], W[:, order]
    coef = (V / np.sqrt(lam)) @ W  # G^{-1/2} beta, so that coef' G coef = 1
    return mu, coef


def _labelled_sample(estimator, X, y):
    """``X`` and ``y`` of a ``fit`` from labels, checked; at least two classes are needed."""
    check_estimator_params(estimator)
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    n_classes = np.unique(y).size
    if n_classes < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least two classes, got {n_classes} class")
    return X, y


def _equivalence_pairs(estimator, pairs, same):
    """``fit_pairs``'s input checked: the (m, 2, n_features) pairs and a boolean ``same``."""
    check_estimator_params(estimator)
    P = as_float_array(pairs, "pairs", ndim=3)
    if P.shape[1] != 2:
        raise ValueError(f"pairs must have shape (m, 2, n_features), got {P.shape}")
    s = np.asarray(same)
    if s.shape != (P.shape[0],):
        raise ValueError(f"same must have one entry per pair ({P.shape[0]}), got shape {s.shape}")
    return P, _boolean_same(s)


def _boolean_same(s):
    """``same`` as a boolean mask: booleans, or the values -1/0 (different) and 1 (same).

    Anything else (NaN, 0.5, strings) is refused rather than read as "different".
    """
    if s.dtype == bool:
        return s
    if s.dtype.kind not in "iuf" or not set(np.unique(s).tolist()) <= {-1, 0, 1}:
        raise ValueError("same must be boolean or take values in {-1, 0, 1} (no NaN)")
    return s == 1


class HyperbolicPCA(TransformerMixin, BaseEstimator):
    r"""Hyperbolic PCA (Maurer): a projection learned from equivalence constraints.

    ``fit(X, y)`` uses all ordered pairs :math:`i\ne j` of a labelled sample,

    .. math:: \hat T = \sum_{i\ne j} a_{ij}(x_i - x_j)(x_i - x_j)^\top = X^\top A X,\qquad
              A = 2\big(\operatorname{diag}(a\mathbf 1) - a\big),

    with :math:`a_{ij} = \eta_{r_{ij}}/m^2`, or, when ``balanced``,
    :math:`a_{ij} = \eta_{r_{ij}}/(2N_{r_{ij}})` where :math:`N_{\pm1}` counts the
    ordered pairs of each kind (the positive and negative constraints get equal total
    weight, as in the paper's experiments).  ``fit_pairs(pairs, same)`` uses a list of
    pairs, :math:`\hat T = \frac1m\sum_i\eta_{r_i}(x_i-x_i')(x_i-x_i')^\top` (balanced:
    :math:`1/(2N_\pm)` in place of :math:`1/m`).

    With a kernel the directions are :math:`w = \sum_k g_k\phi(z_k)` and the
    generalised eigenproblem :math:`GAG\,g = \lambda G g` is solved stably through
    :math:`G^{1/2}AG^{1/2}` (for pairs: :math:`\Gamma D\Gamma\alpha = \lambda\Gamma\alpha`
    with :math:`\Gamma` the Gram matrix of the differences).  Without a kernel the
    ``d x d`` operator is diagonalised directly.

    Signs are fixed so that, on the training points, the projection of largest absolute
    value is positive in every component.

    Parameters
    ----------
    n_components : int, default=2
        Dimension ``d`` of the subspace.
    kernel : {None, "linear", "poly", "rbf", "cosine", "sigmoid"}, default=None
        ``None`` works in input space.
    gamma, degree, coef0 : kernel parameters, as in scikit-learn (gamma > 0 or None, degree >= 1).
    eta_neg : float > 0, default=1.0
        Weight :math:`\eta_{-1}` of the negative (different-type) pairs.
    eta_pos : float < 0, default=-1.0
        Weight :math:`\eta_{+1}` of the positive (same-type) pairs.
    balanced : bool, default=True
    tol : float in (0, 1), default=1e-10
        Relative eigenvalue below which the Gram matrix is treated as singular.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
        Largest eigenvalues of :math:`\hat T`, descending (may be negative).
    all_eigenvalues_ : ndarray
        Every (non-trivial) eigenvalue of :math:`\hat T`, descending.
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal primal directions (only when ``kernel=None``).
    operator_ : ndarray of shape (n_features, n_features)
        :math:`\hat T` (only when ``kernel=None``).  ``fit`` computes it from the class
        means and scatters, :math:`\hat T = a_= W + a_{\ne}(2mC - W)` with :math:`C` the
        scatter of the sample about its mean and :math:`W = \sum_c 2m_cC_c` (each class
        about its own mean), in O(m d^2) time and O(m d + d^2) memory, without :math:`A`.
    pair_matrix_ : ndarray of shape (m, m)
        The matrix :math:`A` of ``fit`` (all-pairs form; only with a kernel, where the
        m x m Gram matrix is formed anyway).
    dual_coef_ : ndarray of shape (n_anchor, n_components)
        Kernel version: ``transform(X) = (K(X, anchors) - K(X, anchors2)) @ dual_coef_``
        (``anchors2`` is empty for ``fit``).

    See the chapter "Hyperbolic PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.hpca import HyperbolicPCA
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 10)
    >>> X = np.hstack([5.0 * y[:, None], rng.normal(size=(30, 2))])
    >>> hpca = HyperbolicPCA(n_components=1).fit(X, y)
    >>> print(np.abs(hpca.components_).round(2))
    [[1.   0.05 0.05]]
    """

    _parameter_constraints = {
        "n_components": [_POSITIVE_INT],
        "kernel": [None, Options("linear", "poly", "rbf", "cosine", "sigmoid")],
        "gamma": [_POSITIVE, None],
        "degree": [_POSITIVE_INT],
        "coef0": [Interval(Real, None, None)],
        "eta_neg": [_POSITIVE],
        "eta_pos": [Interval(Real, None, 0, closed="neither")],
        "balanced": ["boolean"],
        # a relative eigenvalue threshold: 0 would invert rounding noise, 1 drops everything
        "tol": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, n_components=2, kernel=None, gamma=None, degree=3, coef0=1.0,
                 eta_neg=1.0, eta_pos=-1.0, balanced=True, tol=1e-10):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eta_neg = eta_neg
        self.eta_pos = eta_pos
        self.balanced = balanced
        self.tol = tol

    # -- helpers
    def _kernel(self, A, B):
        params = {}
        if self.kernel in ("poly", "rbf", "sigmoid") and self.gamma is not None:
            params["gamma"] = self.gamma
        if self.kernel == "poly":
            params["degree"] = self.degree
        if self.kernel in ("poly", "sigmoid"):
            params["coef0"] = self.coef0
        return pairwise_kernels(A, B, metric=self.kernel, **params)

    def _pair_weights(self, same):
        n_pos, n_neg = int(same.sum()), int((~same).sum())
        if self.balanced:
            if n_pos == 0 or n_neg == 0:
                raise ValueError("balanced weighting needs both positive and negative pairs")
            return np.where(same, self.eta_pos / (2 * n_pos), self.eta_neg / (2 * n_neg))
        return np.where(same, self.eta_pos, self.eta_neg) / same.size

    def _finish(self, mu):
        d = check_positive_int(self.n_components, "n_components", upper=mu.size,
                               upper_name="the rank of the problem")
        self.all_eigenvalues_ = mu
        self.eigenvalues_ = mu[:d].copy()
        return d

    def _all_pairs_weights(self, y):
        """``(a_same, a_diff)``: the weight of an ordered pair of distinct points of the
        same label, and of different labels, from the class counts."""
        m = y.size
        counts = np.unique(y, return_counts=True)[1].astype(float)
        if not self.balanced:
            return self.eta_pos / m**2, self.eta_neg / m**2
        n_pos = float(np.sum(counts * (counts - 1)))
        n_neg = float(m) ** 2 - float(np.sum(counts**2))
        if n_pos == 0:
            raise ValueError("no two points share a label: there are no positive pairs")
        return self.eta_pos / (2 * n_pos), self.eta_neg / (2 * n_neg)

    def _fix_signs(self, Z):
        idx = np.argmax(np.abs(Z), axis=0)
        return np.sign(Z[idx, np.arange(Z.shape[1])]) + (Z[idx, np.arange(Z.shape[1])] == 0)

    # -- fitting
    def fit(self, X, y):
        """Fit from a labelled sample, using every ordered pair of distinct points.

        Parameters
        ----------
        X : array_like of shape (m, n_features)
        y : array_like of shape (m,)
            Labels; pairs with equal labels are positive constraints.

        Returns
        -------
        self
        """
        X, y = _labelled_sample(self, X, y)
        w_same, w_diff = self._all_pairs_weights(y)
        if self.kernel is None:
            T = _all_pairs_operator(X, y, w_same, w_diff)
            self.operator_ = T
            mu, V = np.linalg.eigh(T)
            order = np.argsort(mu)[::-1]
            mu, V = mu[order], V[:, order]
            d = self._finish(mu)
            W = V[:, :d].T
            W *= self._fix_signs(X @ W.T)[:, None]
            self.components_ = W
        else:   # the m x m Gram matrix is needed anyway: A costs no more
            same = y[:, None] == y[None, :]
            a = np.where(same, w_same, w_diff)
            np.fill_diagonal(a, 0.0)
            A = 2.0 * (np.diag(a.sum(axis=1)) - a)
            self.pair_matrix_ = A
            G = self._kernel(X, X)
            mu, coef = _psd_sqrt_solve(G, A, self.tol)
            d = self._finish(mu)
            coef = coef[:, :d]
            coef *= self._fix_signs(G @ coef)
            self.dual_coef_ = coef
            self.anchors_ = X
            self.anchors2_ = None
        return self

    def fit_pairs(self, pairs, same):
        """Fit from a list of equivalence constraints.

        Parameters
        ----------
        pairs : array_like of shape (m, 2, n_features)
            ``pairs[i, 0]`` and ``pairs[i, 1]`` are the two points of constraint ``i``.
        same : array_like of shape (m,)
            True (or 1) where the two points are of the same type, False (or -1, 0)
            otherwise.

        Returns
        -------
        self
        """
        P, s = _equivalence_pairs(self, pairs, same)
        X1, X2 = P[:, 0], P[:, 1]
        self.n_features_in_ = P.shape[2]
        w = self._pair_weights(s)
        if self.kernel is None:
            Dlt = X1 - X2
            T = (Dlt * w[:, None]).T @ Dlt
            mu, V = np.linalg.eigh(0.5 * (T + T.T))
            order = np.argsort(mu)[::-1]
            mu, V = mu[order], V[:, order]
            d = self._finish(mu)
            W = V[:, :d].T
            W *= self._fix_signs(np.vstack([X1, X2]) @ W.T)[:, None]
            self.components_ = W
        else:
            Gam = self._kernel(X1, X1) - self._kernel(X1, X2) - self._kernel(X2, X1) + self._kernel(X2, X2)
            Gam = 0.5 * (Gam + Gam.T)
            mu, coef = _psd_sqrt_solve(Gam, np.diag(w), self.tol)
            d = self._finish(mu)
            coef = coef[:, :d]
            self.dual_coef_ = coef
            self.anchors_, self.anchors2_ = X1, X2
            Z = self._dual_transform(np.vstack([X1, X2]))
            self.dual_coef_ = coef * self._fix_signs(Z)
        return self

    def _dual_transform(self, X):
        Kx = self._kernel(X, self.anchors_)
        if self.anchors2_ is not None:
            Kx = Kx - self._kernel(X, self.anchors2_)
        return Kx @ self.dual_coef_

    def transform(self, X):
        """Coordinates of ``X`` in the learned subspace, shape (n, n_components)."""
        check_is_fitted(self, "eigenvalues_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel is None:
            return X @ self.components_.T
        return self._dual_transform(X)


# ----------------------------------------------------------------------------- risks


@validate_params({"t": [Interval(Real, None, None), "array-like"], "gamma": [_POSITIVE]})
def margin_loss(t, gamma):
    r"""The margin function :math:`f_\gamma(t)`: 1 for :math:`t\le0`, :math:`1-t/\gamma` on
    :math:`(0,\gamma)`, 0 for :math:`t\ge\gamma`.  Vectorised over ``t``.

    Examples
    --------
    >>> from lecturelib.hpca import margin_loss
    >>> print(margin_loss([-1.0, 0.05, 0.2], gamma=0.1))
    [1.  0.5 0. ]
    """
    gamma = float(gamma)
    t = as_float_array(t, "t", allow_empty=True)
    return np.clip(1.0 - t / gamma, 0.0, 1.0)


def _check_pairs(sq_dists, same):
    d = as_float_array(sq_dists, "sq_dists", ndim=1)
    if np.any(d < 0):
        raise ValueError("sq_dists must be non-negative (squared distances)")
    s = np.asarray(same)
    if s.shape != d.shape:
        raise ValueError(f"same must have the shape of sq_dists {d.shape}, got {s.shape}")
    return d, _boolean_same(s)


@validate_params({"sq_dists": ["array-like"], "same": ["array-like"], "c": [_UNIT],
                  "gamma": [_POSITIVE]})
def empirical_margin_risk(sq_dists, same, c, gamma):
    r"""Empirical margin risk :math:`\hat R_\gamma(P,c,S)` of a projection.

    .. math:: \hat R_\gamma(P,c,S)
              = \frac1m\sum_i f_\gamma\big(r_i(c^2 - \|P(x_i-x_i')\|^2)\big)

    See the chapter "Hyperbolic PCA", section "Subspaces, Hilbert-Schmidt operators and
    the margin risk".

    Parameters
    ----------
    sq_dists : array_like of shape (m,)
        Squared projected distances of the pairs.
    same : array_like of bool, shape (m,)
        True for positive pairs (:math:`r=1`), False for negative ones (:math:`r=-1`);
        the integers 1 and 0 or -1 are read the same way, anything else is refused.
    c : float in (0, 1)
    gamma : float > 0

    Returns
    -------
    float

    Examples
    --------
    >>> from lecturelib.hpca import empirical_margin_risk
    >>> sq_dists, same = [0.01, 0.5, 0.04], [True, False, False]
    >>> round(empirical_margin_risk(sq_dists, same, c=0.5, gamma=0.1), 4)
    0.3333
    """
    d, s = _check_pairs(sq_dists, same)
    c = float(c)
    r = np.where(s, 1.0, -1.0)
    return float(margin_loss(r * (c**2 - d), gamma).mean())


@validate_params({"sq_dists": ["array-like"], "same": ["array-like"],
                  "c": [Interval(Real, 0, None)]})
def balanced_pair_risk(sq_dists, same, c):
    r"""Balanced 0-1 risk of the threshold rule "same type iff distance < c".

    Half the error rate on positive pairs plus half the error rate on negative pairs;
    a distance exactly equal to ``c`` (undecided) counts as an error.

    See the chapter "Hyperbolic PCA", section "Learning a metric from pairs".

    Parameters
    ----------
    sq_dists : array_like of shape (m,)
        Squared projected distances of the pairs.
    same : array_like of bool, shape (m,)
        True for positive pairs, False for negative ones (the integers 1 and 0 or -1 are
        read the same way, anything else is refused); both kinds must occur.
    c : float >= 0
        The threshold on the distance (not squared).

    Returns
    -------
    float

    Examples
    --------
    >>> from lecturelib.hpca import balanced_pair_risk
    >>> same = [True, False, False]
    >>> round(balanced_pair_risk([0.01, 0.5, 0.04], same, c=0.15), 4)
    0.0
    """
    d, s = _check_pairs(sq_dists, same)
    if s.all() or not s.any():
        raise ValueError("balanced_pair_risk needs both positive and negative pairs")
    c2 = float(c) * float(c)      # inf for a huge c, and the comparisons still hold
    return 0.5 * float(np.mean(d[s] >= c2)) + 0.5 * float(np.mean(d[~s] <= c2))


@validate_params({"sq_dists": ["array-like"], "same": ["array-like"]})
def best_threshold(sq_dists, same):
    """The threshold ``c`` minimising :func:`balanced_pair_risk`, and that risk.

    Candidates are the midpoints between consecutive distinct distances (and points
    just outside their range).

    Parameters
    ----------
    sq_dists : array_like of shape (m,)
        Squared projected distances of the pairs.
    same : array_like of bool, shape (m,)
        True for positive pairs, False for negative ones (the integers 1 and 0 or -1 are
        read the same way, anything else is refused); both kinds must occur.

    Returns
    -------
    c : float
    risk : float

    Examples
    --------
    >>> from lecturelib.hpca import best_threshold
    >>> same = [True, True, False, False]
    >>> c, risk = best_threshold([0.01, 0.02, 0.5, 0.9], same)
    >>> print(round(risk, 4))
    0.0
    """
    d, s = _check_pairs(sq_dists, same)
    if s.all() or not s.any():
        raise ValueError("best_threshold needs both positive and negative pairs")
    root = np.unique(np.sqrt(d))
    cands = np.concatenate([[root[0] / 2], (root[:-1] + root[1:]) / 2, [root[-1] + 1.0]])
    # vectorised counts: errors on positive pairs are distances >= c
    sp, sn = np.sort(np.sqrt(d[s])), np.sort(np.sqrt(d[~s]))
    pos_err = 1 - np.searchsorted(sp, cands, side="left") / sp.size
    neg_err = np.searchsorted(sn, cands, side="right") / sn.size
    risk = 0.5 * pos_err + 0.5 * neg_err
    j = int(np.argmin(risk))
    return float(cands[j]), float(risk[j])


# ----------------------------------------------------------------------------- bounds


@validate_params({"m": [_POSITIVE_INT], "hs_norm": [_POSITIVE], "op_norm": [_POSITIVE],
                  "gamma": [_POSITIVE], "delta": [_UNIT],
                  "empirical_risk": _RISK})
def operator_bound(m, hs_norm, op_norm, gamma, delta=0.05, empirical_risk=0.0):
    r"""The margin bound for a class of positive operators (Maurer's Theorem 3).

    .. math:: R(T^{1/2}, c, \rho) \le \hat R_\gamma(T^{1/2}, c, S)
              + \frac1{\sqrt m}\Big(\frac{2(\|T\|_{HS} + \|T\|_\infty)}{\gamma}
              + \sqrt{\frac{\ln(1/\delta)}2}\Big),

    valid with probability at least :math:`1-\delta` for every operator of a class with
    Hilbert-Schmidt norms at most ``hs_norm`` and operator norms at most ``op_norm``,
    when :math:`\|\psi(x)-\psi(x')\|\le1`.

    Parameters
    ----------
    m : int
        Number of (independent) equivalence constraints.
    hs_norm, op_norm : float > 0
    gamma : float > 0
        Margin.
    delta : float in (0, 1), default=0.05
    empirical_risk : float or array_like, default=0.0
        :math:`\hat R_\gamma`, in [0, 1] (every entry of an array); the bound is
        returned with the same shape.

    See the chapter "Hyperbolic PCA", section "The bounds".

    Examples
    --------
    >>> from lecturelib.hpca import operator_bound
    >>> round(operator_bound(10000, hs_norm=1.0, op_norm=1.0, gamma=0.1), 4)
    0.4122
    """
    m, hs_norm, op_norm = int(m), float(hs_norm), float(op_norm)
    gamma, delta = float(gamma), float(delta)
    emp = as_float_array(empirical_risk, "empirical_risk")
    excess = (2 * (hs_norm + op_norm) / gamma + math.sqrt(math.log(1 / delta) / 2)) / math.sqrt(m)
    out = emp + excess
    return float(out) if out.ndim == 0 else out


@validate_params({"m": [_POSITIVE_INT], "d": [_POSITIVE_INT], "gamma": [_POSITIVE],
                  "delta": [_UNIT], "empirical_risk": _RISK})
def hpca_bound(m, d, gamma, delta=0.05, empirical_risk=0.0):
    r"""The bound for ``d``-dimensional projections (Maurer's Theorem 1).

    With probability at least :math:`1-\delta`, for every ``d``-dimensional projection
    :math:`P`,

    .. math:: R(P,\rho) \le \inf_{c\in(0,1)}\hat R_\gamma(P,c,S)
              + \frac1{\sqrt m}\Big(\frac{2(\sqrt d + 1)}{\gamma} + \sqrt{\frac{\ln(1/\delta)}2}\Big).

    This is :func:`operator_bound` with :math:`\|P\|_{HS}=\sqrt d` and
    :math:`\|P\|_\infty = 1`.  The result can exceed 1 (the bound is then vacuous).

    Parameters
    ----------
    m : int
        Number of independent equivalence constraints.
    d : int
        Dimension of the projection.
    gamma : float > 0
    delta : float in (0, 1), default=0.05
    empirical_risk : float or array_like, default=0.0
        In [0, 1] (every entry of an array).

    See the chapter "Hyperbolic PCA", section "The bounds".

    Examples
    --------
    >>> from lecturelib.hpca import hpca_bound
    >>> round(hpca_bound(10000, d=5, gamma=0.1), 4)
    0.6595
    >>> round(hpca_bound(40000, d=5, gamma=0.1), 4)
    0.3297
    """
    return operator_bound(m, math.sqrt(d), 1.0, gamma, delta, empirical_risk)


# ----------------------------------------------------------------------------- evaluation


@validate_params({"Z": ["array-like"], "y": ["array-like"]})
def one_shot_nn_error(Z, y):
    r"""Expected error of 1-NN with one random training example per class.

    For every query point :math:`x` (class :math:`y`), one prototype is drawn uniformly
    from each class (for class :math:`y`, among the other members), and :math:`x` is
    classified correctly when its own prototype is strictly closer than every other
    prototype.  The expectation over the draws is computed exactly:

    .. math:: P(\text{correct}\mid x) = \frac1{n_y-1}\sum_{j\in y,\,j\ne x}
              \prod_{c\ne y}\Pr_{j'\in c}\big(d(x,j') > d(x,j)\big),

    and the function returns the mean over queries of :math:`1-P(\text{correct}\mid x)`
    (ties count as errors).  This is the paper's "all possible choices of training data"
    protocol, without enumerating the choices.

    Parameters
    ----------
    Z : array_like of shape (n, n_features)
        Points in the representation to evaluate (Euclidean distance).
    y : array_like of shape (n,)
        Labels; every class needs at least two points.

    Returns
    -------
    float

    See the chapter "Hyperbolic PCA", section "The transfer experiment".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.hpca import one_shot_nn_error
    >>> Z = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> round(one_shot_nn_error(Z, [0, 0, 1, 1]), 4)
    0.0
    """
    Z, y = _labelled_rows(Z, y, "Z")
    classes, yi = np.unique(y, return_inverse=True)
    counts = np.bincount(yi)
    if classes.size < 2 or counts.min() < 2:
        raise ValueError("y must have at least two classes with at least two points each "
                         "(one_shot_nn_error draws a prototype other than the query)")
    D = _sq_distance_matrix(Z)
    members = [np.flatnonzero(yi == c) for c in range(classes.size)]
    errs = np.empty(Z.shape[0])
    for q in range(Z.shape[0]):
        own = members[yi[q]]
        own = own[own != q]
        dj = D[q, own]
        p = np.ones(dj.size)
        for c, idx in enumerate(members):
            if c == yi[q]:
                continue
            srt = np.sort(D[q, idx])
            p *= 1.0 - np.searchsorted(srt, dj, side="right") / srt.size
        errs[q] = 1.0 - p.mean()
    return float(errs.mean())


# ----------------------------------------------------------------------------- pairs


def _sq_distance_matrix(Z):
    """All squared Euclidean distances between the rows of ``Z`` (by the Gram expansion,
    negative rounding clipped to 0)."""
    sq = np.sum(Z**2, axis=1)
    return np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0)


def _labelled_rows(X, y, name="X"):
    X = as_float_array(X, name, ndim=2)
    return X, check_label_vector(y, X.shape[0], f"row of {name}")


def _fitted_example():
    """A fitted HyperbolicPCA on three features: the generated tests' example transformer."""
    X = np.array([[0.0, 0.0, 1.0], [0.1, 1.0, 0.0], [2.0, 0.0, 1.0], [2.1, 1.0, 0.5]])
    return HyperbolicPCA(n_components=1).fit(X, [0, 0, 1, 1])


@validate_params({"X": ["array-like"], "y": ["array-like"], "n_pairs": [_POSITIVE_INT],
                  "random_state": ["seed"]})
def balanced_pairs(X, y, n_pairs, random_state=0):
    r"""Independent equivalence constraints from the balanced distribution :math:`\bar\rho`.

    Each pair is positive (same label) with probability :math:`\tfrac12`: its first point
    is drawn uniformly from the sample, its second uniformly among the *other* points
    with the same label (a positive pair) or with a different label (a negative pair).
    Pairs are drawn independently of one another, as the bounds of the chapter require.

    Parameters
    ----------
    X : array_like of shape (n, n_features)
    y : array_like of shape (n,)
        Labels; every class needs at least two points, and there must be two classes.
    n_pairs : int >= 1
    random_state : int or numpy Generator, default=0
        Seed of ``numpy.random.default_rng``; a Generator is used (and advanced) as it is,
        so that successive calls with one Generator draw fresh pairs.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2, n_features)
        ``pairs[i, 0]`` and ``pairs[i, 1]`` are the two points of constraint ``i``.
    same : ndarray of bool, shape (n_pairs,)
        True for a positive pair (:math:`r = 1`).

    See the chapter "Hyperbolic PCA", section "The bound against held-out risk".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.hpca import balanced_pairs
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> pairs, same = balanced_pairs(X, [0, 0, 1, 1], 3, random_state=0)
    >>> print(pairs.shape, same)
    (3, 2, 1) [False  True  True]
    """
    X, y = _labelled_rows(X, y)
    _, counts = np.unique(y, return_counts=True)
    if counts.size < 2 or counts.min() < 2:
        raise ValueError("balanced_pairs needs at least two classes with at least two points "
                         f"each, got class sizes {sorted(counts.tolist())[:10]}")
    rng = np.random.default_rng(random_state)
    same = rng.random(n_pairs) < 0.5
    first = rng.integers(0, len(y), n_pairs)
    second = np.empty(n_pairs, dtype=int)
    for i in range(n_pairs):
        pool = np.flatnonzero((y == y[first[i]]) == same[i])
        pool = pool[pool != first[i]]
        second[i] = rng.choice(pool)
    return np.stack([X[first], X[second]], axis=1), same


@validate_params({"Z": ["array-like"], "y": ["array-like"]})
def pair_sq_distances(Z, y):
    r"""Squared distances :math:`\|z_i - z_j\|^2` and same-label flags of all unordered
    pairs :math:`i < j` of a labelled sample, in the order of ``numpy.triu_indices``.

    The constraints of the threshold classifier on a test alphabet: pass them to
    :func:`best_threshold` or :func:`balanced_pair_risk`.

    Parameters
    ----------
    Z : array_like of shape (n, n_features)
        Points in the representation (at least two).
    y : array_like of shape (n,)

    Returns
    -------
    sq_dists : ndarray of shape (n (n - 1) / 2,)
    same : ndarray of bool, shape (n (n - 1) / 2,)

    See the chapter "Hyperbolic PCA", section "The transfer experiment".

    Examples
    --------
    >>> from lecturelib.hpca import pair_sq_distances
    >>> Z, y = [[0.0], [1.0], [3.0]], ["a", "a", "b"]
    >>> sq_dists, same = pair_sq_distances(Z, y)
    >>> print(sq_dists, same)
    [1. 9. 4.] [ True False False]
    """
    Z, y = _labelled_rows(Z, y, "Z")
    check_squares_finite(Z, "Z")
    if len(y) < 2:
        raise ValueError(f"pair_sq_distances needs at least two points, got {len(y)}")
    upper = np.triu_indices(len(y), 1)
    return _sq_distance_matrix(Z)[upper], (y[:, None] == y[None, :])[upper]


@validate_params({"transformer": [InstanceOf(TransformerMixin, "a fitted transformer, e.g. HyperbolicPCA",
                                             factory=_fitted_example)],
                  "pairs": ["array-like"]})
def transformed_sq_distances(transformer, pairs):
    r"""Squared distances :math:`\|\Phi(x_i) - \Phi(x_i')\|^2` of pairs in a fitted
    representation :math:`\Phi` (``transformer.transform``).

    Parameters
    ----------
    transformer : fitted object with a ``transform`` method
        E.g. :class:`HyperbolicPCA` or :class:`PositiveOperatorLearner`.
    pairs : array_like of shape (m, 2, n_features)
        The two points of every pair, as :func:`balanced_pairs` returns them.

    Returns
    -------
    sq_dists : ndarray of shape (m,)

    See the chapter "Hyperbolic PCA", section "The bound against held-out risk".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.hpca import HyperbolicPCA, transformed_sq_distances
    >>> X = np.array([[0.0, 0.0], [0.1, 1.0], [2.0, 0.0], [2.1, 1.0]])
    >>> h = HyperbolicPCA(n_components=1, eta_neg=1.0).fit(X, [0, 0, 1, 1])
    >>> pairs = np.stack([X[[0, 0]], X[[1, 2]]], axis=1)
    >>> print(np.round(transformed_sq_distances(h, pairs), 2))
    [0.01 4.  ]
    """
    pairs = as_float_array(pairs, "pairs", ndim=3)
    if pairs.shape[1] != 2:
        raise ValueError(f"pairs must have shape (m, 2, n_features), got {pairs.shape}")
    check_squares_finite(pairs, "pairs")
    diff = transformer.transform(pairs[:, 0]) - transformer.transform(pairs[:, 1])
    return np.sum(diff**2, axis=1)


# ----------------------------------------------------------------------------- convex alternative


def _project_psd_ball(S, bound):
    """Euclidean (Frobenius) projection onto {T >= 0, ||T||_HS <= bound}.

    Both sets are unitarily invariant, so the projection acts on the eigenvalues: clip
    the negative ones, then scale the vector of eigenvalues into the ball.
    """
    lam, V = np.linalg.eigh(0.5 * (S + S.T))
    lam = np.maximum(lam, 0.0)
    with np.errstate(over="ignore"):
        norm = float(np.sqrt(np.sum(lam**2)))
    if norm == np.inf:  # lam**2 overflowed: the same norm, scaled by the largest eigenvalue
        norm = float(lam.max() * np.sqrt(np.sum((lam / lam.max()) ** 2)))
    if norm > bound:
        lam *= bound / norm
    return (V * lam) @ V.T


# Entries (pairs x features) of one block of pair differences in PositiveOperatorLearner:
# 8 MB of float64, a few such arrays live at once.
_PAIR_BLOCK_ENTRIES = 1 << 20


class _PairBlocks:
    """The pair differences ``x_i - x_i'`` and their labels ``same``, a block at a time.

    ``of_differences(D, same)`` walks the rows of a given array (``fit_pairs``);
    ``of_all_pairs(X, y)`` forms the differences of the unordered pairs ``i < j`` of a
    sample in the order of ``np.triu_indices``, a block of rows at a time, so that its
    memory is one block (O(block x d)), not the n(n-1)/2 x d differences.
    """

    def __init__(self, n_pairs, n_same, n_features, make):
        self.n_pairs, self.n_same = n_pairs, n_same
        self.block = max(1, _PAIR_BLOCK_ENTRIES // max(n_features, 1))
        self._make = make

    @classmethod
    def of_differences(cls, D, same):
        def make(start, stop):
            return D[start:stop], same[start:stop]

        return cls(D.shape[0], int(same.sum()), D.shape[1], make)

    @classmethod
    def of_all_pairs(cls, X, y):
        n = X.shape[0]
        counts = np.unique(y, return_counts=True)[1]
        later = n - 1 - np.arange(n)                 # partners j > i of row i
        first = np.concatenate([[0], np.cumsum(later)])   # rank of the pair (i, i + 1)

        def make(start, stop):
            ranks = np.arange(start, stop)
            i = np.searchsorted(first, ranks, side="right") - 1
            j = i + 1 + (ranks - first[i])
            return X[i] - X[j], y[i] == y[j]

        return cls(n * (n - 1) // 2, int(np.sum(counts * (counts - 1)) // 2), X.shape[1], make)

    def __iter__(self):
        for start in range(0, self.n_pairs, self.block):
            yield self._make(start, min(start + self.block, self.n_pairs))


class PositiveOperatorLearner(TransformerMixin, BaseEstimator):
    r"""The convex alternative to hyperbolic PCA: a positive operator learned with a hinge loss.

    Instead of a ``d``-dimensional projection, learn a positive operator :math:`T` with
    :math:`\|T\|_{HS} \le B` (the class of the paper's Theorem 3) and replace the margin
    function :math:`f_\gamma` by the hinge loss :math:`h_\gamma(t) = \max(0, 1 - t/\gamma)
    \ge f_\gamma(t)`:

    .. math:: \min_{T \succeq 0,\ \|T\|_{HS}\le B}\ \sum_{i=1}^m a_i\,
              h_\gamma\big(r_i(c^2 - \langle T, Q_{x_i - x_i'}\rangle_{HS})\big),
              \qquad \langle T, Q_v\rangle_{HS} = v^\top T v,

    with weights :math:`a_i = 1/m`, or :math:`1/(2N_\pm)` for the two kinds of pairs when
    ``balanced``.  The problem is convex.  It is solved by accelerated projected gradient
    descent (FISTA with backtracking and adaptive restart) on the hinge loss smoothed over
    a width ``smoothing`` (a Huber-type loss within ``smoothing/2`` of the hinge); the
    projection onto the positive operators of bounded Hilbert-Schmidt norm clips the
    negative eigenvalues and rescales, one eigendecomposition per step, as in the metric
    learning of Xing et al.  ``transform`` maps :math:`x \mapsto T^{1/2}x`, so that
    squared distances become :math:`\langle T, Q_{x-x'}\rangle_{HS}`.

    Parameters
    ----------
    c : float in (0, 1), default=0.5
        Threshold: a pair is declared "same" when :math:`\langle T, Q\rangle < c^2`.  The
        paper's theorem needs :math:`c^2 < \|T\|_\infty \le B`.
    gamma : float > 0, default=0.1
        Margin of the hinge loss.
    hs_bound : float > 0, default=1.0
        :math:`B`, the bound on :math:`\|T\|_{HS}` (and hence on :math:`\|T\|_\infty`).
    balanced : bool, default=True
        Give positive and negative pairs total weight 1/2 each.
    smoothing : float > 0, default=1e-3
        Width of the smoothing of the hinge.
    max_iter : int, default=500
        Iteration cap; reaching it raises a ``ConvergenceWarning``.
    tol : float >= 0, default=1e-6
        Stop when the Frobenius norm of the gradient mapping is at most ``tol``.

    Attributes
    ----------
    operator_ : ndarray of shape (n_features, n_features)
        The learned :math:`T`.
    eigenvalues_ : ndarray of shape (n_features,)
        Its eigenvalues, descending (all non-negative).
    hs_norm_, op_norm_ : float
        :math:`\|T\|_{HS}` and :math:`\|T\|_\infty`.
    objective_ : float
        The (unsmoothed) weighted hinge loss at ``operator_``.
    n_iter_ : int

    See the chapter "Hyperbolic PCA", section "A convex alternative".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.hpca import PositiveOperatorLearner
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 10)
    >>> X = np.hstack([y[:, None], 0.3 * rng.normal(size=(30, 2))])
    >>> pol = PositiveOperatorLearner(c=0.5, gamma=0.1).fit(X, y)
    >>> print(pol.eigenvalues_.round(2))
    [0.38 0.04 0.01]
    >>> round(pol.objective_, 4)
    0.0
    """

    _parameter_constraints = {
        "c": [Interval(Real, 0, 1, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "hs_bound": [Interval(Real, 0, None, closed="neither")],
        "balanced": ["boolean"],
        "smoothing": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, c=0.5, gamma=0.1, hs_bound=1.0, balanced=True, smoothing=1e-3,
                 max_iter=500, tol=1e-6):
        self.c = c
        self.gamma = gamma
        self.hs_bound = hs_bound
        self.balanced = balanced
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.tol = tol

    def _weights(self, pairs):
        """``(a_same, a_diff)``: the weight of a positive and of a negative pair."""
        n_pos, n_neg = pairs.n_same, pairs.n_pairs - pairs.n_same
        if self.balanced:
            if n_pos == 0 or n_neg == 0:
                raise ValueError("balanced weighting needs both positive and negative pairs")
            return 1.0 / (2 * n_pos), 1.0 / (2 * n_neg)
        return 1.0 / pairs.n_pairs, 1.0 / pairs.n_pairs

    def _solve(self, pairs):
        """FISTA on the pairs of ``pairs`` (a :class:`_PairBlocks`), a block at a time."""
        p = self.n_features_in_
        a_same, a_diff = self._weights(pairs)
        c2, g, mu, B = float(self.c) ** 2, float(self.gamma), float(self.smoothing), float(self.hs_bound)

        def weighted_margins(T):
            """(block, r, a, margin) per block: the hinge's argument of every pair."""
            for D, same in pairs:
                r = np.where(same, 1.0, -1.0)
                a = np.where(same, a_same, a_diff)
                yield D, r, a, 1.0 - r * (c2 - np.sum((D @ T) * D, axis=1)) / g

        def smooth(T):
            value, grad = 0.0, np.zeros((p, p))
            for D, r, a, z in weighted_margins(T):
                val = np.where(z >= mu, z - mu / 2, np.clip(z, 0.0, mu) ** 2 / (2 * mu))
                slope = np.clip(z / mu, 0.0, 1.0)
                value += float(a @ val)
                grad += (D * (a * slope * r / g)[:, None]).T @ D
            return value, 0.5 * (grad + grad.T)

        def scales():
            # the loss's curvature is about (squared distance)^2 / (gamma * smoothing):
            # either a tiny gamma or smoothing, or huge distances, can put it out of range
            with np.errstate(over="ignore"):
                largest = max(float(np.max(np.sum(D * D, axis=1))) for D, _ in pairs)
            return (f"largest squared pair distance {largest:.3g}, gamma={g:g}, "
                    f"smoothing={mu:g}")

        advice = ("raise gamma or smoothing if they are tiny against the squared pair "
                  "distances, else scale X towards 1")
        T = np.zeros((p, p))
        Y, t_k, L = T.copy(), 1.0, 1.0
        f_prev = np.inf
        converged = False
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        for it in range(1, max_iter + 1):
            fY, gY = smooth(Y)
            if not (np.isfinite(fY) and np.all(np.isfinite(gY))):
                raise ValueError(
                    f"PositiveOperatorLearner broke down at iteration {it}: the smoothed loss "
                    f"or its gradient is not finite ({scales()}); {advice}")
            L = max(L / 2.0, 1e-12)
            while True:
                T_new = _project_psd_ball(Y - gY / L, B)
                step = T_new - Y
                f_new, _ = smooth(T_new)
                if f_new <= fY + np.sum(gY * step) + 0.5 * L * np.sum(step**2) + 1e-15:
                    break
                if L >= 1e300:
                    # a finite smooth loss passes the test once the step is tiny: this
                    # backtracking would never end
                    raise ValueError(
                        f"PositiveOperatorLearner broke down at iteration {it}: the line "
                        f"search found no step (the loss there is {f_new}; {scales()}); "
                        f"{advice}")
                L *= 2.0
            gap = L * float(np.sqrt(np.sum(step**2)))
            if f_new > f_prev:  # adaptive restart: drop the momentum
                t_k, Y = 1.0, T.copy()
                f_prev = np.inf
                continue
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t_k**2))
            Y = T_new + (t_k - 1.0) / t_next * (T_new - T)
            T, t_k, f_prev = T_new, t_next, f_new
            if gap <= tol:
                converged = True
                break
        if not converged:
            warnings.warn(f"PositiveOperatorLearner stopped at max_iter={max_iter} before "
                          f"the gradient mapping fell below tol={tol} (last {gap:.3g}); "
                          "raise max_iter", ConvergenceWarning, stacklevel=3)
        T = 0.5 * (T + T.T)
        lam, V = np.linalg.eigh(T)
        lam, V = np.maximum(lam[::-1], 0.0), V[:, ::-1]
        self.operator_ = T
        self.eigenvalues_ = lam
        self.sqrt_operator_ = (V * np.sqrt(lam)) @ V.T
        self.hs_norm_ = float(np.sqrt(np.sum(lam**2)))
        self.op_norm_ = float(lam[0])
        self.objective_ = float(sum(a @ np.maximum(z, 0.0)
                                    for _, _, a, z in weighted_margins(T)))
        self.n_iter_ = it
        return self

    def fit(self, X, y):
        """Fit from a labelled sample, using every unordered pair of distinct points.

        Parameters
        ----------
        X : array_like of shape (m, n_features)
        y : array_like of shape (m,)
            Labels; pairs with equal labels are positive constraints.

        Returns
        -------
        self
        """
        X, y = _labelled_sample(self, X, y)
        pairs = _PairBlocks.of_all_pairs(X, y)
        if pairs.n_same == 0:
            raise ValueError("no two points share a label: there are no positive pairs")
        return self._solve(pairs)

    def fit_pairs(self, pairs, same):
        """Fit from a list of equivalence constraints.

        Parameters
        ----------
        pairs : array_like of shape (m, 2, n_features)
        same : array_like of shape (m,)
            True (or 1) for pairs of the same type, False (or -1, 0) otherwise.

        Returns
        -------
        self
        """
        P, s = _equivalence_pairs(self, pairs, same)
        self.n_features_in_ = P.shape[2]
        return self._solve(_PairBlocks.of_differences(P[:, 0] - P[:, 1], s))

    def transform(self, X):
        r""":math:`T^{1/2}x` for every row, so that :math:`\|T^{1/2}(x-x')\|^2 = \langle T, Q_{x-x'}\rangle_{HS}`."""
        check_is_fitted(self, "operator_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.sqrt_operator_
