"""Maximum likelihood and maximum entropy: entropy, relative entropy, Gibbs distributions.

See the chapter "Maximum likelihood and maximum entropy" (``chapters/02-maxent.ipynb``).

Conventions: a distribution over a finite alphabet of ``n`` outcomes is a vector of
length ``n``; a feature matrix ``features`` has one row per outcome and one column per
constraint, so that ``features.T @ p`` are the expectations :math:`E_p[f_j]`.
Logarithms are natural (nats) unless ``base`` is given.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import iteration_cap, tightened
from ._validation import (
    Interval,
    as_float_array,
    check_estimator_params,
    check_nonnegative,
    check_probability_vector,
    validate_params,
)

__all__ = [
    "entropy",
    "relative_entropy",
    "kl_divergence",
    "empirical_distribution",
    "project_relative_entropy",
    "project_least_squares",
    "gibbs_distribution",
    "maxent_distribution",
    "GibbsModel",
]


def _log_base(base):
    if base is None:
        return 1.0
    b = float(base)
    if not (b > 0 and b != 1 and math.isfinite(b)):
        raise ValueError(f"base must be a positive number other than 1, got {base!r}")
    return math.log(b)


@validate_params({"p": ["array-like"], "base": [Interval(Real, 0, None, closed="neither"), None]})
def entropy(p, base=None):
    r"""Shannon entropy of a probability vector.

    .. math:: H(p) = -\sum_i p_i \ln p_i, \qquad 0 \ln 0 = 0.

    Parameters
    ----------
    p : array_like of shape (n,)
        A probability vector (non-negative, sums to one).
    base : float, optional
        Logarithm base (2 for bits); natural logarithm (nats) by default.

    Returns
    -------
    float

    See the chapter "Maximum likelihood and maximum entropy", section "Maximum entropy".

    Examples
    --------
    >>> from lecturelib.maxent import entropy
    >>> round(entropy([0.5, 0.25, 0.25], base=2), 4)
    1.5
    """
    p = check_probability_vector(p, "p")
    if p.ndim != 1:
        raise ValueError(f"p must be one-dimensional, got shape {p.shape}")
    nz = p > 0
    return float(-np.sum(p[nz] * np.log(p[nz])) / _log_base(base))


@validate_params({"x": ["array-like"], "y": ["array-like"]})
def relative_entropy(x, y):
    r"""Relative entropy of two non-negative vectors (the generalised KL divergence).

    .. math:: D(x \,\|\, y) = \sum_i x_i \ln\frac{x_i}{y_i} - \sum_i x_i + \sum_i y_i

    with the conventions :math:`0 \ln(0/0) = 0`, :math:`0 \ln(0/y) = 0` and
    :math:`x \ln(x/0) = \infty` for :math:`x > 0`.  For probability vectors the last two
    sums cancel and :math:`D` is the Kullback-Leibler divergence.  :math:`D \ge 0`,
    with equality only when :math:`x = y`; it is not symmetric.

    Parameters
    ----------
    x, y : array_like of shape (n,)
        Non-negative vectors of the same length (not necessarily normalised).

    Returns
    -------
    float
        ``inf`` when some :math:`x_i > 0` has :math:`y_i = 0`.

    See the chapter "Maximum likelihood and maximum entropy", section "Relative entropy".

    Examples
    --------
    >>> from lecturelib.maxent import relative_entropy
    >>> round(relative_entropy([0.5, 0.5], [0.9, 0.1]), 4)
    0.5108
    >>> round(relative_entropy([1.0, 2.0], [1.0, 2.0]), 4)
    0.0
    """
    x = check_nonnegative(x, "x", ndim=1)
    y = check_nonnegative(y, "y", ndim=1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    if np.any((x > 0) & (y == 0)):
        return math.inf
    nz = x > 0
    return float(np.sum(x[nz] * np.log(x[nz] / y[nz])) - x.sum() + y.sum())


@validate_params({
    "p": ["array-like"],
    "q": ["array-like"],
    "base": [Interval(Real, 0, None, closed="neither"), None],
})
def kl_divergence(p, q, base=None):
    r"""Kullback-Leibler divergence of two probability vectors.

    .. math:: \mathrm{KL}(p \,\|\, q) = \sum_i p_i \ln\frac{p_i}{q_i}

    The special case of :func:`relative_entropy` for vectors that sum to one.

    Parameters
    ----------
    p, q : array_like of shape (n,)
        Probability vectors.
    base : float, optional
        Logarithm base; natural logarithm by default.

    See the chapter "Maximum likelihood and maximum entropy", section "Relative entropy".

    Examples
    --------
    >>> from lecturelib.maxent import kl_divergence
    >>> round(kl_divergence([0.5, 0.5], [0.9, 0.1], base=2), 4)
    0.737
    """
    p = check_probability_vector(p, "p")
    q = check_probability_vector(q, "q")
    if p.ndim != 1 or q.ndim != 1:
        raise ValueError("p and q must be one-dimensional probability vectors")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    if np.any((p > 0) & (q == 0)):
        return math.inf
    nz = p > 0
    return float(np.sum(p[nz] * np.log(p[nz] / q[nz])) / _log_base(base))


@validate_params({"counts": ["array-like"]})
def empirical_distribution(counts):
    r"""The empirical distribution of occurrence counts: the ML estimate on a simplex.

    .. math:: \hat P(a) = \frac{f(a)}{\sum_\alpha f(\alpha)}

    Parameters
    ----------
    counts : array_like of shape (n,)
        Occurrence counts :math:`f(a)` of the letters of an alphabet (non-negative).

    See the chapter "Maximum likelihood and maximum entropy", section
    "The empirical distribution is the ML estimate".

    Examples
    --------
    >>> from lecturelib.maxent import empirical_distribution
    >>> print(empirical_distribution([3, 1, 0, 4]))
    [0.375 0.125 0.    0.5  ]
    """
    return _scaled_to_sum_one(counts, "counts",
                              "counts are all zero; the empirical distribution is undefined")


def _scaled_to_sum_one(f, name, if_zero):
    """``f / sum(f)`` for a non-negative vector ``f``; ``if_zero`` is the error's message
    when every entry is zero."""
    f = check_nonnegative(f, name, ndim=1)
    total = f.sum()
    if total == 0:
        raise ValueError(if_zero)
    return f / total


@validate_params({"f": ["array-like"]})
def project_relative_entropy(f):
    r"""Projection of a non-negative vector onto the simplex under relative entropy.

    .. math:: \hat p = \arg\min_{p \ge 0,\ \sum_i p_i = 1} D(f \,\|\, p) = \frac{f}{\sum_i f_i}

    The minimiser is a scaling of ``f``, so it never leaves the simplex.

    Parameters
    ----------
    f : array_like of shape (n,)
        A non-negative vector, not all zero.

    See the chapter "Maximum likelihood and maximum entropy", section "Relative entropy".

    Examples
    --------
    >>> from lecturelib.maxent import project_relative_entropy
    >>> print(project_relative_entropy([1.0, 3.0]))
    [0.25 0.75]
    """
    return _scaled_to_sum_one(f, "f", "f is all zero; it has no projection onto the simplex")


@validate_params({"f": ["array-like"]})
def project_least_squares(f):
    r"""Euclidean projection of a vector onto the hyperplane :math:`\sum_i p_i = 1`.

    .. math:: p = f - \frac{\sum_i f_i - 1}{n}\,\mathbf 1

    Unlike the relative-entropy projection this point can have negative coordinates:
    least squares does not keep the projection inside the simplex.

    See the chapter "Maximum likelihood and maximum entropy", section "Relative entropy".

    Examples
    --------
    >>> from lecturelib.maxent import project_least_squares
    >>> print(project_least_squares([1.0, 3.0]))
    [-0.5  1.5]
    """
    f = as_float_array(f, "f", ndim=1)
    return f - (f.sum() - 1.0) / f.size


def _check_features(features, prior=None):
    F = as_float_array(features, "features", ndim=(1, 2))
    if F.ndim == 1:
        F = F[:, None]
    n = F.shape[0]
    if prior is None:
        log_p0 = np.full(n, -math.log(n))
    else:
        p0 = check_probability_vector(prior, "prior")
        if p0.shape != (n,):
            raise ValueError(f"prior must have one entry per outcome ({n}), got shape {p0.shape}")
        with np.errstate(divide="ignore"):
            log_p0 = np.log(p0)
    return F, log_p0


@validate_params({
    "features": ["array-like"],
    "multipliers": ["array-like"],
    "prior": ["array-like", None],
})
def gibbs_distribution(features, multipliers, prior=None):
    r"""The Gibbs distribution with the given Lagrange multipliers.

    .. math:: p_i = \frac{1}{Z(\mu)}\, p^0_i \exp\Big(\sum_j \mu_j f_{ij}\Big),\qquad
              Z(\mu) = \sum_i p^0_i \exp\Big(\sum_j \mu_j f_{ij}\Big)

    Parameters
    ----------
    features : array_like of shape (n_outcomes, n_constraints) or (n_outcomes,)
    multipliers : array_like of shape (n_constraints,)
    prior : array_like of shape (n_outcomes,), optional
        The base distribution :math:`p^0`, a probability vector (sums to one); uniform by
        default.

    See the chapter "Maximum likelihood and maximum entropy", section "Maximum entropy".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.maxent import gibbs_distribution
    >>> faces = np.arange(1, 7.0)[:, None]
    >>> print(gibbs_distribution(faces, [0.0]).round(4))
    [0.1667 0.1667 0.1667 0.1667 0.1667 0.1667]
    >>> print(gibbs_distribution(faces, [0.1]).round(4))
    [0.1279 0.1414 0.1562 0.1727 0.1908 0.2109]
    """
    F, log_p0 = _check_features(features, prior)
    mu = as_float_array(multipliers, "multipliers", ndim=(0, 1)).reshape(-1)
    if mu.size != F.shape[1]:
        raise ValueError(f"multipliers must have {F.shape[1]} entries, got {mu.size}")
    logits = log_p0 + F @ mu
    return np.exp(logits - logsumexp(logits))


@validate_params({
    "features": ["array-like"],
    "targets": ["array-like"],
    "prior": ["array-like", None],
    "return_multipliers": ["boolean"],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None)],
})
def maxent_distribution(features, targets, prior=None, *, return_multipliers=False,
                        tol=1e-10, max_iter=100):
    r"""The distribution of maximum entropy (minimum relative entropy to a prior)
    under linear expectation constraints.

    Solves

    .. math:: \min_{p \ge 0} D(p \,\|\, p^0) \quad\text{s.t.}\quad \sum_i p_i = 1,\quad
              \sum_i f_{ij}\, p_i = b_j \ (j = 1..k),

    whose solution is the Gibbs distribution :math:`p_i \propto p^0_i \exp(\sum_j \mu_j
    f_{ij})`.  With a uniform prior this maximises the entropy :math:`H(p)`.  The
    multipliers :math:`\mu` are found from the convex dual
    :math:`\min_\mu \ln Z(\mu) - \mu^\top b` by Newton's method with backtracking
    (gradient :math:`E_p[f] - b`, Hessian the covariance of :math:`f` under :math:`p`).

    Parameters
    ----------
    features : array_like of shape (n_outcomes, n_constraints) or (n_outcomes,)
        :math:`f_{ij}`, the value of feature ``j`` on outcome ``i``.
    targets : array_like of shape (n_constraints,)
        The required expectations :math:`b_j`.
    prior : array_like of shape (n_outcomes,), optional
        The base distribution :math:`p^0`, a probability vector (sums to one); uniform by
        default.
    return_multipliers : bool, default=False
        Also return :math:`\mu`.
    tol : float, default=1e-10
        Stop when every constraint holds to within ``tol``.
    max_iter : int, default=100

    Returns
    -------
    p : ndarray of shape (n_outcomes,)
    mu : ndarray of shape (n_constraints,)
        Only with ``return_multipliers=True``.

    Raises
    ------
    ValueError
        If the targets cannot be met by a distribution with full support on the
        prior's support (they lie outside, or on the boundary of, the convex hull of
        the feature vectors), so that no finite multipliers exist.

    See the chapter "Maximum likelihood and maximum entropy", section "Maximum entropy".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.maxent import maxent_distribution
    >>> faces = np.arange(1, 7.0)[:, None]
    >>> p = maxent_distribution(faces, [4.5])
    >>> print(p.round(4))
    [0.0544 0.0788 0.1142 0.1654 0.2398 0.3475]
    >>> round(float(p @ faces[:, 0]), 6)
    4.5
    """
    F, log_p0 = _check_features(features, prior)
    b = as_float_array(targets, "targets", ndim=(0, 1)).reshape(-1)
    if b.size != F.shape[1]:
        raise ValueError(
            f"targets must have one entry per constraint ({F.shape[1]}), got {b.size}"
        )
    support = np.isfinite(log_p0)
    Fs, lp = F[support], log_p0[support]
    # Work with centred features: the dual is unchanged and better conditioned.
    scale = np.maximum(np.abs(Fs).max(axis=0), 1.0)
    G = (Fs - b) / scale

    def dual(mu):
        logits = lp + G @ mu
        return logsumexp(logits), logits

    mu = np.zeros(F.shape[1])
    value, logits = dual(mu)
    converged, n_steps = False, 0
    tol, max_iter = tightened(tol), iteration_cap(max_iter, tol)
    for _ in range(max_iter):
        p = np.exp(logits - value)
        grad = G.T @ p
        if np.max(np.abs(grad * scale)) <= tol:
            converged = True
            break
        hess = (G * p[:, None]).T @ G - np.outer(grad, grad)
        step = np.linalg.lstsq(hess, -grad, rcond=1e-12)[0]
        t = 1.0
        while True:
            new_value, new_logits = dual(mu + t * step)
            if new_value <= value + 1e-4 * t * grad @ step or t < 1e-12:
                break
            t *= 0.5
        if t < 1e-12:
            break
        mu, value, logits = mu + t * step, new_value, new_logits
        n_steps += 1
    if not converged:
        # an error, not a warning: the usual cause is targets with no finite multipliers
        p = np.exp(logits - value)
        gap = float(np.max(np.abs(G.T @ p * scale)))
        how = (f"after {max_iter} Newton steps (max_iter)" if n_steps == max_iter else
               f"when the line search failed after {n_steps} Newton steps")
        # an expectation of n_outcomes terms is exact only to its rounding: a tol below it
        # (tol=0, 1e-300) cannot be met however attainable the targets are
        reach = 8.0 * np.finfo(float).eps * Fs.shape[0] * max(1.0, float(np.abs(Fs).max()),
                                                               float(np.abs(b).max()))
        if gap <= reach:
            raise ValueError(
                f"maxent_distribution: the constraints hold to {gap:.3g} {how}, within the "
                f"rounding of float64 expectations ({reach:.1g}), but tol={tol:g} asks for "
                f"less: raise tol to at least {reach:.1g}")
        raise ValueError(
            "targets are not attainable by a distribution of full support: the "
            f"constraints still miss by {gap:.3g} > tol={tol:g} {how}: the "
            "targets lie outside or on the boundary of the convex hull of the features "
            "(or, if they lie inside, max_iter is too small)"
        )
    out = np.zeros(F.shape[0])
    out[support] = np.exp(logits - value)
    mu = mu / scale
    return (out, mu) if return_multipliers else out


class GibbsModel(BaseEstimator):
    r"""A Gibbs (log-linear) model on a finite set of outcomes, fitted by maximum
    likelihood with generalized iterative scaling (Darroch and Ratcliff, 1972).

    Every outcome :math:`i` has a feature vector :math:`f_i`; the model is

    .. math:: q_\mu(i) = \frac{1}{Z(\mu)}\, p^0_i \exp(\mu^\top f_i).

    ``fit`` takes a sample of feature vectors, one row per observation.  The outcomes
    are the rows of ``support`` (by default the distinct rows of the sample) and the
    empirical distribution :math:`\hat p` counts how often each occurs.  GIS raises
    the likelihood :math:`\sum_i \hat p_i \ln q_\mu(i)` at every step with

    .. math:: \mu_j \leftarrow \mu_j + \frac1C \ln\frac{E_{\hat p}[g_j]}{E_{q_\mu}[g_j]},

    where :math:`g` are the features shifted to be non-negative plus a slack feature
    that makes :math:`\sum_j g_{ij} = C` for every outcome (a reparametrisation that
    leaves the family unchanged).  At convergence :math:`E_{q}[f] = E_{\hat p}[f]`:
    the ML Gibbs model is also the maximum-entropy distribution under these
    constraints (the duality theorem).

    Parameters
    ----------
    support : array_like of shape (n_outcomes, n_features), default=None
        Feature vectors of all outcomes.  Every row of the training sample must be one
        of them.  By default the distinct rows of the training sample.
    prior : array_like of shape (n_outcomes,), default=None
        Base distribution :math:`p^0` over ``support``, a probability vector (sums to
        one; only with ``support``); uniform by default.
    max_iter : int, default=5000
    tol : float, default=1e-9
        Stop when every moment :math:`|E_q[f_j] - E_{\hat p}[f_j]|` is below ``tol``
        (features scaled to unit range).

    Attributes
    ----------
    support_ : ndarray of shape (n_outcomes, n_features)
    empirical_ : ndarray of shape (n_outcomes,)
        :math:`\hat p`.
    probabilities_ : ndarray of shape (n_outcomes,)
        The fitted :math:`q_\mu` on ``support_``.
    multipliers_ : ndarray of shape (n_features,)
        :math:`\mu` for the original features.
    log_partition_ : float
        :math:`\ln Z(\mu)`.
    loglik_history_ : ndarray of shape (n_iter_ + 1,)
        Mean log-likelihood :math:`\sum_i \hat p_i \ln q(i)` before each GIS step and
        at the end; it never decreases.
    n_iter_ : int
    converged_ : bool

    See the chapter "Maximum likelihood and maximum entropy", section
    "Iterative scaling".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.maxent import GibbsModel
    >>> faces = np.arange(1, 7.0)[:, None]
    >>> rolls = np.repeat(faces, [1, 1, 2, 3, 6, 7], axis=0)
    >>> model = GibbsModel(support=faces).fit(rolls)
    >>> print(model.probabilities_.round(4))
    [0.0426 0.0661 0.1025 0.1591 0.2468 0.3829]
    >>> round(float(model.probabilities_ @ faces[:, 0]), 6)
    4.65
    """

    _parameter_constraints = {
        "support": ["array-like", None],
        "prior": ["array-like", None],
        "max_iter": [Interval(Integral, 1, None)],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, support=None, prior=None, max_iter=5000, tol=1e-9):
        self.support = support
        self.prior = prior
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y=None):
        """Fit by generalized iterative scaling.  ``y`` is ignored."""
        check_estimator_params(self)
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"GibbsModel needs at least 2 samples, got {X.shape[0]} sample")
        if self.support is None:
            if self.prior is not None:
                raise ValueError("prior needs an explicit support (one entry per outcome)")
            support, inverse = np.unique(X, axis=0, return_inverse=True)
        else:
            support = as_float_array(self.support, "support", ndim=2)
            if support.shape[1] != X.shape[1]:
                raise ValueError(
                    f"support has {support.shape[1]} features but X has {X.shape[1]}"
                )
            match = np.all(X[:, None, :] == support[None, :, :], axis=2)
            if not np.all(match.any(axis=1)):
                bad = np.flatnonzero(~match.any(axis=1))[:5].tolist()
                raise ValueError(f"rows {bad} of X are not outcomes in support")
            inverse = np.argmax(match, axis=1)
        inverse = np.asarray(inverse).reshape(-1)
        n_out = support.shape[0]
        _, log_p0 = _check_features(support, self.prior)
        p_hat = np.bincount(inverse, minlength=n_out) / X.shape[0]

        # Non-negative features with constant row sums C (GIS's requirement).
        lo = support.min(axis=0)
        span = support.max(axis=0) - lo
        active = span > 0
        g = (support[:, active] - lo[active]) / span[active]
        C = float(g.sum(axis=1).max()) if g.shape[1] else 0.0
        g = np.column_stack([g, C - g.sum(axis=1)])
        target = p_hat @ g
        nu = np.zeros(g.shape[1])
        if C > 0 and np.any(target <= 0):
            raise ValueError(
                "the empirical moments lie on the boundary of the attainable set; no "
                "Gibbs distribution with finite multipliers matches them"
            )
        history = []
        self.converged_ = C == 0
        n_iter = 0
        seen = p_hat > 0
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        for n_iter in range(max_iter + 1):
            logits = log_p0 + g @ nu
            top = logits.max()
            w = np.exp(logits - top)
            logZ = top + math.log(w.sum())
            q = w / w.sum()
            history.append(float(p_hat[seen] @ (logits[seen] - logZ)))
            if C == 0:
                break
            expected = q @ g
            gap = float(np.max(np.abs(expected - target)))
            if gap <= tol:
                self.converged_ = True
                break
            if not np.isfinite(gap) or not np.all(expected > 0):
                raise ValueError(
                    f"GibbsModel broke down at iteration {n_iter}: the model's moments are "
                    "not finite and positive in float64 (the multipliers overflowed); the "
                    "empirical moments may lie too close to the boundary of the attainable set")
            if n_iter == max_iter:
                break
            nu = nu + np.log(target / expected) / C
        if not self.converged_:
            warnings.warn(
                f"GibbsModel did not converge in {max_iter} iterations: the largest moment "
                f"error is {gap:.3g} > tol={tol:g}; increase max_iter or tol",
                ConvergenceWarning, stacklevel=2)
        mu = np.zeros(X.shape[1])
        mu[active] = (nu[:-1] - nu[-1]) / span[active]
        self.support_ = support
        self.empirical_ = p_hat
        self.multipliers_ = mu
        base = support @ mu + (0.0 if self.prior is None else log_p0)
        self.log_partition_ = float(logsumexp(base))
        self.probabilities_ = np.exp(base - self.log_partition_)
        self.loglik_history_ = np.array(history)
        self.n_iter_ = n_iter
        self._log_p0 = log_p0
        return self

    def score_samples(self, X):
        r"""Log-probability :math:`\mu^\top f(x) - \ln Z(\mu)` of each row (an outcome's
        feature vector); with a prior, rows must be outcomes of ``support_``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = X @ self.multipliers_ - self.log_partition_
        if self.prior is not None:
            match = np.all(X[:, None, :] == self.support_[None, :, :], axis=2)
            if not np.all(match.any(axis=1)):
                raise ValueError("with a prior, every row of X must be an outcome in support")
            out = out + self._log_p0[np.argmax(match, axis=1)]
        return out

    def score(self, X, y=None):
        """Mean log-probability of the rows of ``X``."""
        return float(np.mean(self.score_samples(X)))
