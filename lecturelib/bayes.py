"""Bayesian decision theory: joint tables, Bayes' rule, decisions, ML estimates.

See the chapter "Bayesian decision theory" (``chapters/01-bayes.ipynb``).

Conventions used throughout: classes (hypotheses) ``h_j`` index the *rows* of a table
and the observed values ``x_i`` its *columns*; a likelihood vector holds ``P(x | h_j)``
for one observation ``x`` and every class ``j``.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import (
    check_squares_finite,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_nonnegative,
    check_probability_vector,
    rounding_tolerance,
    validate_params,
)

__all__ = [
    "JointTable",
    "posterior",
    "map_decision",
    "ml_decision",
    "expected_risk",
    "bayes_risk_decision",
    "incremental_posterior",
    "bernoulli_mle",
    "gaussian_mle",
    "gaussian_log_likelihood",
    "free_parameters",
    "GaussianBayesClassifier",
]


class JointTable:
    r"""A joint distribution P(h, x) estimated from a table of hit counts.

    .. math::

        P(h_j, x_i) = \frac{\mathrm{hits}(j, i)}{N},\quad
        P(h_j) = \sum_i P(h_j, x_i),\quad P(x_i) = \sum_j P(h_j, x_i),

        P(h_j \mid x_i) = \frac{P(h_j, x_i)}{P(x_i)},\qquad
        P(x_i \mid h_j) = \frac{P(h_j, x_i)}{P(h_j)}.

    Parameters
    ----------
    counts : array_like of shape (n_classes, n_values)
        Non-negative hit counts; rows are classes ``h``, columns are values ``x``.

    Attributes
    ----------
    counts : ndarray of shape (n_classes, n_values)
    joint : ndarray of shape (n_classes, n_values)
        ``P(h, x)``.
    prior : ndarray of shape (n_classes,)
        ``P(h)``, the row sums of ``joint``.
    evidence : ndarray of shape (n_values,)
        ``P(x)``, the column sums of ``joint``.
    likelihood : ndarray of shape (n_classes, n_values)
        ``P(x | h)``; each row sums to one.
    posterior : ndarray of shape (n_classes, n_values)
        ``P(h | x)``; each column sums to one.  A column whose value never occurred
        (``P(x) = 0``) has no posterior and is filled with NaN.

    See the chapter "Bayesian decision theory", section "Joint tables".

    Examples
    --------
    >>> from lecturelib.bayes import JointTable
    >>> table = JointTable([[2, 6], [6, 2]])
    >>> print(table.prior)
    [0.5 0.5]
    >>> print(table.posterior)
    [[0.25 0.75]
     [0.75 0.25]]
    >>> print(table.map_decisions())
    [1 0]
    """

    @validate_params({"counts": ["array-like"]})
    def __init__(self, counts):
        counts = check_nonnegative(counts, "counts", ndim=2)
        total = counts.sum()
        if total == 0:
            raise ValueError("counts must contain at least one hit (all entries are zero)")
        if np.any(counts.sum(axis=1) == 0):
            empty = np.flatnonzero(counts.sum(axis=1) == 0).tolist()
            raise ValueError(f"counts has classes with no hits (rows {empty}); P(x|h) is undefined")
        self.counts = counts
        self.joint = counts / total
        self.prior = self.joint.sum(axis=1)
        self.evidence = self.joint.sum(axis=0)
        self.likelihood = self.joint / self.prior[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            self.posterior = np.where(self.evidence > 0, self.joint / self.evidence, np.nan)

    def map_decisions(self):
        """The MAP class (row index) for every value ``x`` (column); -1 where P(x) = 0."""
        seen = self.evidence > 0
        out = np.full(self.joint.shape[1], -1)
        out[seen] = np.argmax(self.joint[:, seen], axis=0)
        return out

    def __repr__(self):
        return f"JointTable(counts={self.counts.tolist()})"


def _as_likelihood(likelihood, n_classes=None, name="likelihood"):
    lik = check_nonnegative(likelihood, name, ndim=(1, 2))
    if n_classes is not None and lik.shape[-1] != n_classes:
        raise ValueError(
            f"{name} has {lik.shape[-1]} classes but prior has {n_classes}"
        )
    return lik


@validate_params({"likelihood": ["array-like"], "prior": ["array-like"]})
def posterior(likelihood, prior):
    r"""Bayes' rule for one observation (or one per row).

    .. math:: P(h_j \mid x) = \frac{P(x \mid h_j)\,P(h_j)}{\sum_k P(x \mid h_k)\,P(h_k)}

    Parameters
    ----------
    likelihood : array_like of shape (n_classes,) or (n_obs, n_classes)
        ``P(x | h_j)`` for every class ``j`` (densities are fine).
    prior : array_like of shape (n_classes,)
        ``P(h_j)``; must sum to one.

    Returns
    -------
    ndarray of the shape of ``likelihood``; each row sums to one.

    Raises
    ------
    ValueError
        If the evidence ``P(x)`` is zero: the observation is impossible under every
        class that has prior mass, and the posterior is undefined.

    Examples
    --------
    >>> from lecturelib.bayes import posterior
    >>> print(posterior([0.9, 0.2], prior=[0.1, 0.9]).round(4))
    [0.3333 0.6667]
    """
    prior = check_probability_vector(prior, "prior")
    if prior.ndim != 1:
        raise ValueError(f"prior must be one-dimensional, got shape {prior.shape}")
    lik = _as_likelihood(likelihood, prior.size)
    joint = lik * prior
    evidence = joint.sum(axis=-1, keepdims=True)
    if np.any(evidence == 0):
        raise ValueError("the evidence P(x) is zero: x is impossible under every class")
    return joint / evidence


@validate_params({"likelihood": ["array-like"], "prior": ["array-like"]})
def map_decision(likelihood, prior):
    r"""Maximum a posteriori class: :math:`\arg\max_j P(x \mid h_j) P(h_j)`.

    Returns the class index (an int, or an array of ints for 2-D ``likelihood``).
    Ties go to the lowest index.

    Parameters
    ----------
    likelihood : array_like of shape (n_classes,) or (n_obs, n_classes)
        ``P(x | h_j)`` for every class ``j``, as in :func:`posterior`.
    prior : array_like of shape (n_classes,)
        ``P(h_j)``; must sum to one.

    Returns
    -------
    int or ndarray of shape (n_obs,)

    Examples
    --------
    >>> from lecturelib.bayes import map_decision
    >>> map_decision([0.9, 0.2], prior=[0.1, 0.9])
    1
    >>> map_decision([0.9, 0.2], prior=[0.5, 0.5])
    0
    """
    post = posterior(likelihood, prior)
    return _argmax(post)


@validate_params({"likelihood": ["array-like"]})
def ml_decision(likelihood):
    r"""Maximum likelihood class: :math:`\arg\max_j P(x \mid h_j)` (MAP with a uniform prior).

    Parameters
    ----------
    likelihood : array_like of shape (n_classes,) or (n_obs, n_classes)
        ``P(x | h_j)`` for every class ``j`` (non-negative; densities are fine).

    Returns
    -------
    int, or ndarray of int of shape (n_obs,)

    Examples
    --------
    >>> from lecturelib.bayes import ml_decision
    >>> ml_decision([0.9, 0.2])
    0
    >>> print(ml_decision([[0.9, 0.2], [0.1, 0.3]]))
    [0 1]
    """
    lik = _as_likelihood(likelihood)
    return _argmax(lik)


def _argmax(a):
    idx = np.argmax(a, axis=-1)
    return int(idx) if np.ndim(idx) == 0 else idx


def _check_loss(loss, n_classes):
    loss = as_float_array(loss, "loss", ndim=2)
    if loss.shape != (n_classes, n_classes):
        raise ValueError(
            f"loss must have shape ({n_classes}, {n_classes}) for {n_classes} classes, "
            f"got {loss.shape}"
        )
    return loss


@validate_params({"posterior_probs": ["array-like"], "loss": ["array-like"]})
def expected_risk(posterior_probs, loss):
    r"""Expected loss of each decision: :math:`R(h_i \mid x) = \sum_j \ell(h_i, h_j) P(h_j \mid x)`.

    Parameters
    ----------
    posterior_probs : array_like of shape (n_classes,) or (n_obs, n_classes)
        :math:`P(h_j \mid x)`: a probability vector (non-negative, sums to one), or one
        per row.
    loss : array_like of shape (n_classes, n_classes)
        ``loss[i, j]`` is the cost of deciding ``h_i`` when ``h_j`` is true.

    Returns
    -------
    ndarray of the shape of ``posterior_probs``: the risk of each decision.

    Examples
    --------
    >>> from lecturelib.bayes import expected_risk
    >>> loss = [[0, 10], [1, 0]]
    >>> print(expected_risk([0.3, 0.7], loss))
    [7.  0.3]
    """
    post = check_probability_vector(posterior_probs, "posterior_probs")
    loss = _check_loss(loss, post.shape[-1])
    return post @ loss.T


@validate_params({"posterior_probs": ["array-like"], "loss": ["array-like"]})
def bayes_risk_decision(posterior_probs, loss):
    r"""The proper Bayes decision: :math:`\arg\min_i R(h_i \mid x)`.

    Under the 0/1 loss this is the MAP decision.  Ties go to the lowest index.

    Parameters
    ----------
    posterior_probs : array_like of shape (n_classes,) or (n_obs, n_classes)
        :math:`P(h_j \mid x)`: a probability vector (non-negative, sums to one), or one
        per row.
    loss : array_like of shape (n_classes, n_classes)
        ``loss[i, j]`` is the cost of deciding ``h_i`` when ``h_j`` is true.

    Returns
    -------
    int, or ndarray of int of shape (n_obs,)

    Examples
    --------
    >>> from lecturelib.bayes import bayes_risk_decision
    >>> bayes_risk_decision([0.3, 0.7], [[0, 1], [1, 0]])
    1
    >>> bayes_risk_decision([0.3, 0.7], [[0, 1], [5, 0]])
    0
    """
    risk = expected_risk(posterior_probs, loss)
    idx = np.argmin(risk, axis=-1)
    return int(idx) if np.ndim(idx) == 0 else idx


@validate_params({"prior": ["array-like"], "likelihoods": ["array-like"]})
def incremental_posterior(prior, likelihoods):
    r"""Sequential Bayes: the posterior after each of a sequence of observations.

    With observations conditionally independent given the class, the posterior after
    ``n`` observations is the prior of the next update:

    .. math:: P(h_i \mid x^{(n)}, x) = \frac{P(x \mid h_i) P(h_i \mid x^{(n)})}
              {\sum_j P(x \mid h_j) P(h_j \mid x^{(n)})}.

    Parameters
    ----------
    prior : array_like of shape (n_classes,)
        ``P(h_j)``, a probability vector (non-negative, sums to one).
    likelihoods : array_like of shape (n_obs, n_classes)
        One row of class likelihoods ``P(x_t | h_j)`` per observation (non-negative).

    Returns
    -------
    ndarray of shape (n_obs, n_classes): the posterior after each observation.

    Examples
    --------
    >>> from lecturelib.bayes import incremental_posterior
    >>> heads = [0.5, 0.9]
    >>> post = incremental_posterior([0.5, 0.5], [heads, heads, heads])
    >>> print(post.round(4))
    [[0.3571 0.6429]
     [0.2358 0.7642]
     [0.1464 0.8536]]
    """
    prior = check_probability_vector(prior, "prior")
    lik = _as_likelihood(likelihoods, prior.size, "likelihoods")
    if lik.ndim != 2:
        raise ValueError(
            f"likelihoods must have one row per observation (2-D), got shape {lik.shape}"
        )
    out = np.empty_like(lik)
    current = prior
    for t, row in enumerate(lik):
        current = posterior(row, current)
        out[t] = current
    return out


@validate_params({"tosses": ["array-like"], "head": [Options(0, 1)]})
def bernoulli_mle(tosses, head=0):
    r"""Maximum likelihood estimate of the probability of ``head`` from 0/1 tosses.

    Maximising :math:`\lambda \log q + (m - \lambda)\log(1 - q)`, with
    :math:`\lambda` the number of heads among ``m`` tosses, gives :math:`q^* = \lambda / m`.
    The book records a head as 1 (chapters 1 and 3) and calls ``bernoulli_mle(tosses,
    head=1)``; the default ``head=0`` is the encoding of Shashua's notes.  See the
    chapter "Bayesian decision theory".

    Parameters
    ----------
    tosses : array_like of shape (m,)
        The tosses, 0/1 entries.
    head : {0, 1}, default=0
        The value that records a head.

    Returns
    -------
    float

    Examples
    --------
    >>> from lecturelib.bayes import bernoulli_mle
    >>> bernoulli_mle([1, 1, 0, 1], head=1)
    0.75
    >>> bernoulli_mle([0, 0, 1, 0], head=0)
    0.75
    """
    x = as_float_array(tosses, "tosses", ndim=1)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("tosses must contain only 0 and 1")
    return float(np.mean(x == head))


@validate_params({
    "X": ["array-like"],
    "covariance_type": [Options("full", "diagonal", "spherical")],
})
def gaussian_mle(X, covariance_type="full"):
    r"""Maximum likelihood fit of a Gaussian :math:`N(\mu, \Sigma)` to the rows of ``X``.

    .. math::

        \begin{aligned}
        \hat\mu &= \frac1k\sum_i x_i,\\
        \hat\Sigma &= \frac1k\sum_i (x_i-\hat\mu)(x_i-\hat\mu)^\top \ \text{(full)},\\
        \hat\sigma^2 &= \frac1{kn}\sum_i \lVert x_i-\hat\mu\rVert^2 \ \text{(spherical)}
        \end{aligned}

    for ``k`` samples in ``n`` dimensions.  The ML covariance divides by ``k``, not ``k - 1``.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    covariance_type : {"full", "diagonal", "spherical"}

    Returns
    -------
    mean : ndarray of shape (n_features,)
    covariance : ndarray of shape (n_features, n_features)
        For "spherical" this is :math:`\hat\sigma^2 I`.

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.bayes import gaussian_mle
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> mean, cov = gaussian_mle(X)
    >>> print(mean)
    [1. 1.]
    >>> print(cov)
    [[1. 0.]
     [0. 1.]]
    """
    X = as_float_array(X, "X", ndim=2)
    X = check_squares_finite(X, "X")
    mean = X.mean(axis=0)
    Z = X - mean
    if covariance_type == "full":
        cov = Z.T @ Z / X.shape[0]
    elif covariance_type == "diagonal":
        cov = np.diag(np.mean(Z**2, axis=0))
    else:
        cov = np.mean(Z**2) * np.eye(X.shape[1])
    return mean, cov


@validate_params({"X": ["array-like"], "mean": ["array-like"], "covariance": ["array-like"]})
def gaussian_log_likelihood(X, mean, covariance):
    r"""Total log-likelihood of the rows of ``X`` under :math:`N(\mu, \Sigma)`.

    .. math:: L = -\frac k2\log\lvert\Sigma\rvert - \frac{kn}2\log 2\pi
              - \frac12\sum_i (x_i-\mu)^\top\Sigma^{-1}(x_i-\mu)

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        The observations, one per row (:math:`k` = n_samples, :math:`n` = n_features).
    mean : array_like of shape (n_features,)
        :math:`\mu`.
    covariance : array_like of shape (n_features, n_features)
        :math:`\Sigma`, symmetric positive definite.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.bayes import gaussian_log_likelihood
    >>> X = np.array([[0.0], [1.0]])
    >>> round(gaussian_log_likelihood(X, mean=[0.0], covariance=[[1.0]]), 4)
    -2.3379
    """
    X = check_squares_finite(as_float_array(X, "X", ndim=2), "X")
    mean = check_squares_finite(as_float_array(mean, "mean", ndim=1), "mean")
    cov = as_float_array(covariance, "covariance", ndim=2)
    n = X.shape[1]
    if mean.shape != (n,) or cov.shape != (n, n):
        raise ValueError(
            f"mean and covariance must have shapes ({n},) and ({n}, {n}) for X with "
            f"{n} features, got {mean.shape} and {cov.shape}"
        )
    # Cholesky reads one triangle only: a non-symmetric matrix would be silently replaced
    # by the symmetric matrix of its lower triangle
    sym_tol = rounding_tolerance(covariance, 10, floor=1e-10) * max(1.0, float(np.abs(cov).max()))
    if not np.allclose(cov, cov.T, rtol=0, atol=sym_tol):
        raise ValueError("covariance must be symmetric")
    chol = _cholesky(cov, "covariance")
    Z = np.linalg.solve(chol, (X - mean).T)
    logdet = 2.0 * np.sum(np.log(np.diag(chol)))
    k = X.shape[0]
    return float(-0.5 * k * logdet - 0.5 * k * n * math.log(2 * math.pi) - 0.5 * np.sum(Z**2))


def _cholesky(cov, name):
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} is not positive definite") from None


@validate_params({
    "shape": ["array-like"],
    "structure": [Options("full", "independent", "conditionally_independent")],
})
def free_parameters(shape, structure="full"):
    r"""Number of free parameters of a joint distribution over discrete variables.

    Parameters
    ----------
    shape : sequence of int
        Number of values of each variable, e.g. ``(k, l)`` for P(X, Y).
    structure : {"full", "independent", "conditionally_independent"}
        "full": :math:`\prod_i k_i - 1`.
        "independent" (all variables mutually independent, a rank-1 tensor):
        :math:`\sum_i k_i - n`.
        "conditionally_independent": the *last* variable is the class H with ``s``
        values and the others are independent given H; each of the ``s`` slices is a
        rank-1 tensor, plus the ``s - 1`` free entries of P(H):
        :math:`s\,(\sum_{i<n} k_i - (n-1)) + s - 1`.

    Examples
    --------
    >>> from lecturelib.bayes import free_parameters
    >>> free_parameters((2, 2, 2))
    7
    >>> free_parameters((2, 2, 2), structure="independent")
    3
    """
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise TypeError("shape must be a sequence of integers")
    try:
        sizes = [int(k) for k in shape]
    except (TypeError, ValueError, OverflowError):      # NaN, inf, text
        raise ValueError(f"shape must contain positive integers, got {list(shape)!r:.80}") from None
    if len(sizes) < 2:
        raise ValueError(f"shape must list at least two variables, got {list(shape)}")
    if any(k < 1 for k in sizes) or any(float(k) != float(s) for k, s in zip(sizes, shape)):
        raise ValueError(f"shape must contain positive integers, got {list(shape)}")
    if structure == "full":
        return math.prod(sizes) - 1
    if structure == "independent":
        return sum(sizes) - len(sizes)
    *others, s = sizes  # "conditionally_independent"
    return s * (sum(others) - len(others)) + s - 1


class GaussianBayesClassifier(ClassifierMixin, BaseEstimator):
    r"""The Bayes classifier for Gaussian class likelihoods, fitted by maximum likelihood.

    Each class :math:`h_j` has likelihood :math:`N(\mu_j, \Sigma_j)` and prior
    :math:`\pi_j`; a point goes to the class of largest posterior
    :math:`\log\pi_j + \log N(x; \mu_j, \Sigma_j)`.

    With ``shared_covariance=True`` all classes share the pooled ML covariance
    :math:`\Sigma = \frac1N\sum_j\sum_{i\in j}(x_i-\mu_j)(x_i-\mu_j)^\top` and the
    decision function is linear.  For two classes the boundary is the hyperplane

    .. math::

        \begin{aligned}
        &w^\top x + b = 0,\quad w = \Sigma^{-1}(\mu_1-\mu_0),\\
        &b = -\tfrac12(\mu_1+\mu_0)^\top\Sigma^{-1}(\mu_1-\mu_0) + \log\frac{\pi_1}{\pi_0},
        \end{aligned}

    which with equal priors is the notes' Claim 1 (the boundary passes through the
    midpoint of the means).  ``classes_[1]`` is on the positive side, as in
    scikit-learn.  With ``shared_covariance=False`` each class has its own
    covariance and the boundary is quadratic.

    Parameters
    ----------
    shared_covariance : bool, default=True
    priors : array_like of shape (n_classes,), default=None
        Class priors; by default the class frequencies of the training data.
    reg : float, default=0.0
        Added to the diagonal of every covariance estimate (needed when a class has
        fewer samples than features).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        Pooled covariance (shared model only).
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        Per-class covariances (a copy of the pooled one in the shared model).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Shared model only: the linear decision function, as in scikit-learn's
        ``LinearDiscriminantAnalysis``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Shared model only.

    See the chapter "Bayesian decision theory", section "Two Gaussian classes".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.bayes import GaussianBayesClassifier
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0],
    ...               [3.0, 3.0], [4.0, 3.0], [3.0, 4.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = GaussianBayesClassifier().fit(X, y)
    >>> print(clf.predict([[0.5, 0.5], [3.5, 3.5]]))
    [0 1]
    >>> print(clf.predict_proba([[1.8, 1.9]]).round(3))
    [[0.289 0.711]]
    """

    _parameter_constraints = {
        "shared_covariance": ["boolean"],
        "priors": ["array-like", None],
        "reg": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, shared_covariance=True, priors=None, reg=0.0):
        self.shared_covariance = shared_covariance
        self.priors = priors
        self.reg = reg

    def fit(self, X, y):
        check_estimator_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64)
        X = check_squares_finite(X, "X")
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        n_classes = self.classes_.size
        if n_classes < 2:
            raise ValueError(
                f"GaussianBayesClassifier needs at least two classes, got {n_classes} class"
            )
        if self.priors is None:
            self.priors_ = np.bincount(y_idx, minlength=n_classes) / y_idx.size
        else:
            pri = check_probability_vector(self.priors, "priors")
            if pri.shape != (n_classes,):
                raise ValueError(f"priors must have {n_classes} entries, got shape {pri.shape}")
            self.priors_ = pri
        n_features = X.shape[1]
        self.means_ = np.stack([X[y_idx == j].mean(axis=0) for j in range(n_classes)])
        centred = X - self.means_[y_idx]
        ridge = self.reg * np.eye(n_features)
        if self.shared_covariance:
            self.covariance_ = centred.T @ centred / X.shape[0] + ridge
            self.covariances_ = np.repeat(self.covariance_[None], n_classes, axis=0)
        else:
            self.covariances_ = np.stack(
                [
                    centred[y_idx == j].T @ centred[y_idx == j] / np.sum(y_idx == j) + ridge
                    for j in range(n_classes)
                ]
            )
        self._chols = [
            _cholesky(c, f"the covariance of class {self.classes_[j]!r} (try reg > 0)")
            for j, c in enumerate(self.covariances_)
        ]
        if self.shared_covariance:
            self._fit_linear()
        return self

    def _fit_linear(self):
        prec_means = np.linalg.solve(self.covariance_, self.means_.T).T  # Sigma^-1 mu_j
        coef = prec_means
        intercept = -0.5 * np.sum(self.means_ * prec_means, axis=1) + np.log(self.priors_)
        if self.classes_.size == 2:
            coef = coef[1:] - coef[:1]
            intercept = intercept[1:] - intercept[:1]
        self.coef_ = coef
        self.intercept_ = intercept

    def _joint_log_likelihood(self, X):
        """log pi_j + log N(x; mu_j, Sigma_j) for every row of X and class j."""
        out = np.empty((X.shape[0], self.classes_.size))
        n_features = X.shape[1]
        for j, chol in enumerate(self._chols):
            Z = np.linalg.solve(chol, (X - self.means_[j]).T)
            logdet = 2.0 * np.sum(np.log(np.diag(chol)))
            out[:, j] = (
                np.log(self.priors_[j])
                - 0.5 * (logdet + n_features * math.log(2 * math.pi))
                - 0.5 * np.sum(Z**2, axis=0)
            )
        return out

    def predict_log_proba(self, X):
        """Log posterior :math:`\\log P(h_j \\mid x)` for every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        jll = self._joint_log_likelihood(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posterior :math:`P(h_j \\mid x)`; each row sums to one."""
        return np.exp(self.predict_log_proba(X))

    def decision_function(self, X):
        """Log posterior ratio; for two classes, positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        jll = self._joint_log_likelihood(X)
        if self.classes_.size == 2:
            return jll[:, 1] - jll[:, 0]
        return jll

    def predict(self, X):
        """The MAP class of every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.classes_[np.argmax(self._joint_log_likelihood(X), axis=1)]
