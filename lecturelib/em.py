"""The EM algorithm for mixtures: coins (Bernoulli), Gaussians, and bags of words.

See the chapter "The EM algorithm and mixtures" (``chapters/03-em.ipynb``).

Every estimator alternates an E-step (the posterior of the hidden component given each
data point, the tight choice of the lower bound) and an M-step (the weighted maximum
likelihood fit of each component), computes in log space with log-sum-exp, and records
the total log-likelihood of the training data in ``loglik_history_``: entry ``t`` is the
log-likelihood of the parameters after ``t`` M-steps, so the history never decreases.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import xlogy
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tolerance import iteration_cap, tightened
from ._validation import (
    check_squares_finite,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_probability_vector,
)

__all__ = ["BernoulliMixture", "GaussianMixture", "MultinomialMixture"]

_EPS = 10 * np.finfo(np.float64).eps  # keeps an empty component's weight positive


def logsumexp(a, axis):
    """log(sum(exp(a))) along ``axis``, shifted by the maximum (no overflow)."""
    m = np.max(a, axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    with np.errstate(divide="ignore"):  # log 0 = -inf: a row the model cannot produce
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)


# The parameters every mixture shares (the classes add their own).
_COMMON_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None)],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None)],
    "n_init": [Interval(Integral, 1, None)],
    "random_state": ["random_state"],
}


def _check_n_components(est, n_samples):
    k = est.n_components
    if k > n_samples:
        raise ValueError(
            f"n_components={k} is larger than the number of samples ({n_samples})"
        )
    return k


def _check_em_step(est, history, n_iter):
    """A log-likelihood that is not finite is a numerical breakdown, not a result."""
    if not np.isfinite(history[-1]):
        raise ValueError(
            f"{type(est).__name__}: EM broke down at iteration {n_iter}: the log-likelihood "
            f"is {history[-1]} (a component or weight collapsed, or the data overflow "
            "float64); scale the data, or raise reg_covar where the estimator has it")


def _warn_em_stop(est, history, converged, max_iter, tol, n, stacklevel):
    """The ConvergenceWarning of the EM loops, when the kept start stopped at the cap (as
    scikit-learn, the other starts are not judged: the kept one is the result)."""
    if not converged:
        change = abs(history[-1] - history[-2]) / n
        warnings.warn(
            f"{type(est).__name__}: EM stopped at max_iter={max_iter} iterations with the "
            f"last change of the mean log-likelihood {change:.3g} >= tol={tol:g}; raise "
            "max_iter (or tol).", ConvergenceWarning, stacklevel=stacklevel)


class _PointMixture(DensityMixin, BaseEstimator):
    """Shared EM loop for mixtures whose hidden variable is one component per row.

    Subclasses implement ``_init_params(X, rng)``, ``_log_components(X, params)``
    (log P(x_i | component j), shape (n, k)) and ``_m_step(X, resp)`` returning params;
    params is a dict that always holds ``"weights"``.
    """

    _param_names: tuple = ()

    def _validate_X(self, X, reset):
        X = validate_data(self, X, dtype=np.float64, reset=reset,
                          ensure_min_samples=2 if reset else 1)
        return check_squares_finite(X, "X")

    def _log_joint(self, X, params):
        with np.errstate(divide="ignore"):
            return np.log(params["weights"]) + self._log_components(X, params)

    def fit(self, X, y=None):
        """Fit by EM, keeping the best of ``n_init`` starts.  ``y`` is ignored."""
        self._fit(X)
        return self

    def fit_predict(self, X, y=None):
        """Fit by EM and return the most probable component of each row."""
        return self._fit(X)

    def _fit(self, X):
        check_estimator_params(self)
        X = self._validate_X(X, reset=True)
        self._check_params(X)
        rng = check_random_state(self.random_state)
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        best = None
        for _ in range(self.n_init):
            params = self._init_params(X, rng)
            history, converged, n_iter = [], False, 0
            for n_iter in range(1, max_iter + 1):
                log_norm, log_resp = self._e_step(X, params)
                history.append(float(log_norm.sum()))
                _check_em_step(self, history, n_iter)
                params = self._m_step(X, np.exp(log_resp))
                if len(history) > 1 and abs(history[-1] - history[-2]) / X.shape[0] < tol:
                    converged = True
                    break
            log_norm, log_resp = self._e_step(X, params)
            history.append(float(log_norm.sum()))
            _check_em_step(self, history, n_iter)
            if best is None or history[-1] > best[0][-1]:
                best = (history, params, converged, n_iter, log_resp)
        history, params, converged, n_iter, log_resp = best
        _warn_em_stop(self, history, converged, max_iter, tol, X.shape[0], stacklevel=4)
        for name in self._param_names:
            setattr(self, name + "_", params[name])
        self._set_derived(params)
        self.loglik_history_ = np.array(history)
        self.converged_ = converged
        self.n_iter_ = n_iter
        self.lower_bound_ = history[-1] / X.shape[0]
        return np.argmax(log_resp, axis=1)

    def _set_derived(self, params):
        pass

    def _params(self):
        return {name: getattr(self, name + "_") for name in self._param_names}

    def _e_step(self, X, params):
        log_joint = self._log_joint(X, params)
        log_norm = logsumexp(log_joint, axis=1)
        with np.errstate(invalid="ignore"):  # -inf - -inf; refused by the callers
            return log_norm, log_joint - log_norm[:, None]

    def score_samples(self, X):
        r"""Log-likelihood :math:`\ln \sum_j \lambda_j P(x_i \mid \phi_j)` of each row."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return logsumexp(self._log_joint(X, self._params()), axis=1)

    def score(self, X, y=None):
        """Mean log-likelihood per row."""
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X):
        """Posterior probability of each component for each row (the E-step weights)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        log_norm, log_resp = self._e_step(X, self._params())
        impossible = np.flatnonzero(np.isneginf(log_norm))
        if impossible.size:
            raise ValueError(
                f"{type(self).__name__}: row(s) {impossible[:10].tolist()} of X have "
                "probability 0 under the fitted model (every component gives them zero "
                "likelihood), so their posterior over the components is undefined; "
                "score_samples gives their log-likelihood, -inf")
        return np.exp(log_resp)

    def predict(self, X):
        """The most probable component of each row."""
        return np.argmax(self.predict_proba(X), axis=1)

    def _check_weights_init(self, k):
        if self.weights_init is None:
            return None
        w = check_probability_vector(self.weights_init, "weights_init")
        if w.shape != (k,):
            raise ValueError(f"weights_init must have shape ({k},), got {w.shape}")
        return w


class BernoulliMixture(_PointMixture):
    r"""A mixture of coins: each row is a run of tosses of one coin, chosen at random.

    Coin :math:`j` is picked with probability :math:`\lambda_j` and tossed
    ``n_tosses`` times with head probability :math:`p_j`.  A row with :math:`n_i`
    heads out of :math:`T` tosses has likelihood

    .. math:: P(x_i) = \sum_j \lambda_j\, p_j^{n_i} (1 - p_j)^{T - n_i}.

    EM (with :math:`m` rows and the responsibilities :math:`r_{ij}`, the posterior
    probability that coin :math:`j` produced row :math:`i`):

    .. math:: \lambda_j = \frac1m \sum_i r_{ij},\qquad
              p_j = \frac{\sum_i r_{ij}\, n_i}{T \sum_i r_{ij}}.

    With two coins and three tosses this is the coins example of the notes, with the
    normaliser of :math:`\lambda` corrected to the number of runs.

    Parameters
    ----------
    n_components : int, default=2
        Number of coins.
    tol : float, default=1e-8
        Stop when the log-likelihood per row changes by less than ``tol``.
    max_iter : int, default=500
        Reaching it in the kept start gives a ``ConvergenceWarning``.
    n_init : int, default=1
        Number of random starts; the one of highest likelihood is kept.
    weights_init, p_init : array_like of shape (n_components,), default=None
        Starting :math:`\lambda` and :math:`p`; random when not given (uniform
        weights, head probabilities uniform on [0.1, 0.9]).
    binarize : float or None, default=None
        As in scikit-learn's ``BernoulliNB``: if a number, entries above it count as
        heads and the others as tails; if None, ``X`` must already be 0/1.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    p_ : ndarray of shape (n_components,)
        Head probability of each coin.
    loglik_history_ : ndarray of shape (n_iter_ + 1,)
        Total log-likelihood after each M-step (entry 0: the start).
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Final log-likelihood per row.

    Notes
    -----
    ``X`` is a 0/1 matrix, one row per run and one column per toss; 1 is a head.

    See the chapter "The EM algorithm and mixtures", section "The coins example".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.em import BernoulliMixture
    >>> rng = np.random.default_rng(0)
    >>> coin = rng.random(400) < 0.4
    >>> p = np.where(coin, 0.8, 0.3)[:, None]
    >>> X = (rng.random((400, 3)) < p).astype(int)
    >>> mix = BernoulliMixture(n_components=2, random_state=0).fit(X)
    >>> print(np.sort(mix.p_).round(1))
    [0.2 0.7]
    >>> bool(np.all(np.diff(mix.loglik_history_) > -1e-9))
    True
    """

    _param_names = ("weights", "p")
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "weights_init": ["array-like", None],
        "p_init": ["array-like", None],
        "binarize": [Interval(Real, None, None), None],
    }

    def __init__(self, n_components=2, *, tol=1e-8, max_iter=500, n_init=1,
                 weights_init=None, p_init=None, binarize=None, random_state=None):
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.weights_init = weights_init
        self.p_init = p_init
        self.binarize = binarize
        self.random_state = random_state

    def _validate_X(self, X, reset):
        X = validate_data(self, X, dtype=np.float64, reset=reset,
                          ensure_min_samples=2 if reset else 1)
        if self.binarize is not None:
            return (X > self.binarize).astype(np.float64)
        if not np.all((X == 0) | (X == 1)):
            raise ValueError("X must contain only 0 and 1 (1 = head), one row per run of tosses")
        return X

    def _check_params(self, X):
        k = _check_n_components(self, X.shape[0])
        self._checked_weights = self._check_weights_init(k)
        if self.p_init is None:
            self._checked_p = None
        else:
            p = as_float_array(self.p_init, "p_init", ndim=1)
            if p.shape != (k,) or np.any((p < 0) | (p > 1)):
                raise ValueError(f"p_init must be {k} probabilities in [0, 1], got {p}")
            self._checked_p = p

    def _init_params(self, X, rng):
        k = self.n_components
        w = np.full(k, 1.0 / k) if self._checked_weights is None else self._checked_weights
        p = rng.uniform(0.1, 0.9, size=k) if self._checked_p is None else self._checked_p
        return {"weights": w.copy(), "p": p.copy()}

    def _log_components(self, X, params):
        heads = X.sum(axis=1)[:, None]
        tails = X.shape[1] - heads
        p = params["p"][None, :]
        return xlogy(heads, p) + xlogy(tails, 1.0 - p)

    def _m_step(self, X, resp):
        heads = X.sum(axis=1)
        nk = resp.sum(axis=0) + _EPS
        return {"weights": nk / X.shape[0], "p": (resp.T @ heads) / (X.shape[1] * nk)}


_COV_TYPES = ("full", "diag", "spherical")


class GaussianMixture(_PointMixture):
    r"""A mixture of Gaussians fitted by EM.

    .. math:: P(x) = \sum_j \lambda_j\, \mathcal N(x; c_j, \Sigma_j)

    E-step: :math:`r_{ij} \propto \lambda_j \mathcal N(x_i; c_j, \Sigma_j)`.  M-step
    (each Gaussian fitted to the points weighted by :math:`r_{ij}`):

    .. math:: \lambda_j = \frac1m\sum_i r_{ij},\quad
              c_j = \frac{\sum_i r_{ij} x_i}{\sum_i r_{ij}},\quad
              \Sigma_j = \frac{\sum_i r_{ij}(x_i - c_j)(x_i - c_j)^\top}{\sum_i r_{ij}}.

    ``covariance_type="spherical"`` is the model of the notes,
    :math:`\Sigma_j = \sigma_j^2 I` with
    :math:`\sigma_j^2 = \frac{1}{d\sum_i r_{ij}}\sum_i r_{ij}\lVert x_i - c_j\rVert^2`;
    ``"diag"`` keeps one variance per coordinate; ``"full"`` a full covariance.
    ``reg_covar`` is added to every variance, as in scikit-learn, so that a
    component that collapses onto one point does not make the likelihood infinite.
    It is absolute, in the squared units of ``X``, as scikit-learn's, so the fit is not
    scale-free: data scaled by 1e-150 have variances near 1e-300, which the default
    1e-6 would swamp (every component the same broad Gaussian, the clusters lost without
    a word, as in scikit-learn).  ``fit`` refuses when ``reg_covar`` is larger than the
    largest feature variance of ``X``; rescale ``X`` or pass ``reg_covar`` in its units
    (``1e-6 * c**2`` for data scaled by ``c`` gives the same clusters at any scale).
    The initialisation follows scikit-learn's ``GaussianMixture`` (same random
    stream), so the two give the same fit for the same ``random_state``.

    Parameters
    ----------
    n_components : int, default=2
    covariance_type : {"full", "diag", "spherical"}, default="full"
    tol : float, default=1e-3
        Stop when the log-likelihood per sample changes by less than ``tol``.
    reg_covar : float, default=1e-6
    max_iter : int, default=100
        Reaching it in the kept start gives a ``ConvergenceWarning``.
    n_init : int, default=1
    init_params : {"kmeans", "random", "random_from_data"}, default="kmeans"
        How the first responsibilities are drawn (then one M-step gives the start).
    weights_init : array_like of shape (n_components,), default=None
    means_init : array_like of shape (n_components, n_features), default=None
    covariances_init : array_like, default=None
        Shape (k,) for spherical, (k, d) for diag, (k, d, d) for full.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    means_ : ndarray of shape (n_components, n_features)
    covariances_ : ndarray
        Shape as ``covariances_init``.
    loglik_history_ : ndarray of shape (n_iter_ + 1,)
        Total log-likelihood after each M-step (entry 0: the start).
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Final log-likelihood per sample.

    See the chapter "The EM algorithm and mixtures", section "Gaussian mixtures".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.em import GaussianMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.5, (100, 2)),
    ...                rng.normal(4, 0.5, (100, 2))])
    >>> gm = GaussianMixture(n_components=2, random_state=0).fit(X)
    >>> print(np.sort(gm.means_[:, 0]).round(0) + 0.0)
    [0. 4.]
    >>> print(gm.weights_.round(2))
    [0.5 0.5]
    """

    _param_names = ("weights", "means", "covariances")
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "covariance_type": [Options(*_COV_TYPES)],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
        "init_params": [Options("kmeans", "random", "random_from_data")],
        "weights_init": ["array-like", None],
        "means_init": ["array-like", None],
        "covariances_init": ["array-like", None],
    }

    def __init__(self, n_components=2, *, covariance_type="full", tol=1e-3, reg_covar=1e-6,
                 max_iter=100, n_init=1, init_params="kmeans", weights_init=None,
                 means_init=None, covariances_init=None, random_state=None):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.covariances_init = covariances_init
        self.random_state = random_state

    def _check_params(self, X):
        k = _check_n_components(self, X.shape[0])
        d = X.shape[1]
        largest_variance = float(X.var(axis=0).max())
        if 0.0 < largest_variance < self.reg_covar:
            raise ValueError(
                f"reg_covar={self.reg_covar:g} is larger than the largest feature variance of "
                f"X ({largest_variance:.3g}): every covariance would be mostly reg_covar and "
                "the clusters lost; rescale X or set reg_covar in the units of X squared")
        self._checked_weights = self._check_weights_init(k)
        self._checked_means = None
        if self.means_init is not None:
            m = as_float_array(self.means_init, "means_init", ndim=2)
            if m.shape != (k, d):
                raise ValueError(f"means_init must have shape ({k}, {d}), got {m.shape}")
            self._checked_means = m
        self._checked_covs = None
        if self.covariances_init is not None:
            shape = {"full": (k, d, d), "diag": (k, d), "spherical": (k,)}[self.covariance_type]
            c = as_float_array(self.covariances_init, "covariances_init")
            if c.shape != shape:
                raise ValueError(f"covariances_init must have shape {shape}, got {c.shape}")
            if self.covariance_type == "full":
                for j in range(k):
                    self._cholesky(c[j], f"covariances_init[{j}]")
            elif np.any(c <= 0):
                raise ValueError("covariances_init must be positive (variances)")
            self._checked_covs = c

    def _init_params(self, X, rng):
        n, k = X.shape[0], self.n_components
        if self.init_params == "kmeans":
            resp = np.zeros((n, k))
            labels = KMeans(n_clusters=k, n_init=1, random_state=rng).fit(X).labels_
            resp[np.arange(n), labels] = 1
        elif self.init_params == "random":
            resp = rng.uniform(size=(n, k))
            resp /= resp.sum(axis=1)[:, None]
        else:
            resp = np.zeros((n, k))
            resp[rng.choice(n, size=k, replace=False), np.arange(k)] = 1
        params = self._m_step(X, resp)
        if self._checked_weights is not None:
            params["weights"] = self._checked_weights.copy()
        if self._checked_means is not None:
            params["means"] = self._checked_means.copy()
        if self._checked_covs is not None:
            params["covariances"] = self._checked_covs.copy()
        return params

    def _m_step(self, X, resp):
        nk = resp.sum(axis=0) + _EPS
        means = (resp.T @ X) / nk[:, None]
        d = X.shape[1]
        if self.covariance_type == "full":
            covs = np.empty((len(nk), d, d))
            for j in range(len(nk)):
                diff = X - means[j]
                covs[j] = (resp[:, j] * diff.T) @ diff / nk[j]  # weighted scatter
                covs[j].flat[:: d + 1] += self.reg_covar
        else:
            sq = np.stack([(resp[:, j] @ (X - means[j]) ** 2) / nk[j] for j in range(len(nk))])
            covs = sq + self.reg_covar
            if self.covariance_type == "spherical":
                covs = covs.mean(axis=1)
        return {"weights": nk / X.shape[0], "means": means, "covariances": covs}

    @staticmethod
    def _cholesky(cov, name):
        try:
            return np.linalg.cholesky(np.atleast_2d(cov))
        except np.linalg.LinAlgError:
            raise ValueError(
                f"{name} is not positive definite (a component collapsed; increase reg_covar)"
            ) from None

    def _log_components(self, X, params):
        n, d = X.shape
        means, covs = params["means"], params["covariances"]
        out = np.empty((n, len(means)))
        const = d * math.log(2 * math.pi)
        for j in range(len(means)):
            if self.covariance_type == "full":
                L = self._cholesky(covs[j], f"covariance of component {j}")
                # z = L^{-1}(x - c): one triangular inverse, then a matrix product.
                inv_L_T = solve_triangular(L, np.eye(d), lower=True, check_finite=False).T
                z = X @ inv_L_T - means[j] @ inv_L_T
                logdet = 2.0 * np.sum(np.log(np.diag(L)))
                maha = np.einsum("ij,ij->i", z, z)
            else:
                var = np.broadcast_to(covs[j], (d,))
                if np.any(var <= 0):
                    raise ValueError(f"variance of component {j} is not positive; increase reg_covar")
                logdet = float(np.sum(np.log(var)))
                diff = X - means[j]
                maha = np.sum(diff * diff / var, axis=1)
            out[:, j] = -0.5 * (const + logdet + maha)
        return out


class MultinomialMixture(BaseEstimator):
    r"""The aspect model of a word-document count matrix (a multinomial mixture, PLSA).

    A hidden topic :math:`z \in \{1..k\}` makes words and documents independent:

    .. math:: P(w, d) = \sum_j \lambda_j\, u_j(w)\, v_j(d),

    a non-negative rank-:math:`k` factorisation of the normalised count matrix.  With
    :math:`G_{dw}` the count of word :math:`w` in document :math:`d`, EM maximises
    :math:`\sum_{d,w} G_{dw} \ln P(w, d)` with the count-weighted updates

    .. math::

        \begin{aligned}
        r_{dwj} &= \frac{\lambda_j u_j(w) v_j(d)}{\sum_l \lambda_l u_l(w) v_l(d)},&
        \lambda_j &\propto \sum_{d,w} G_{dw} r_{dwj},\\
        u_j(w) &\propto \sum_d G_{dw} r_{dwj},&
        v_j(d) &\propto \sum_w G_{dw} r_{dwj}.
        \end{aligned}

    (The notes weight the word update by the word frequency :math:`N(w)` instead; that
    update is wrong and can lower the likelihood.)  Only the non-zero cells of ``X``
    are visited.

    Parameters
    ----------
    n_components : int, default=2
        Number of topics.
    tol : float, default=1e-7
        Stop when the log-likelihood per word token changes by less than ``tol``.
    max_iter : int, default=500
        Reaching it in the kept start gives a ``ConvergenceWarning``.
    n_init : int, default=1
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        :math:`\lambda_j = P(z = j)`.
    topic_word_ : ndarray of shape (n_components, n_words)
        :math:`u_j(w) = P(w \mid z = j)`; rows sum to one.
    topic_document_ : ndarray of shape (n_components, n_documents)
        :math:`v_j(d) = P(d \mid z = j)`; rows sum to one.
    document_topic_ : ndarray of shape (n_documents, n_components)
        :math:`P(z = j \mid d)`; rows sum to one (zero rows for empty documents).
    word_topic_ : ndarray of shape (n_words, n_components)
        :math:`P(z = j \mid w)`.
    loglik_history_ : ndarray of shape (n_iter_ + 1,)
        Total log-likelihood :math:`\sum_{d,w} G_{dw}\ln P(w,d)` after each M-step.
    converged_ : bool
    n_iter_ : int

    Notes
    -----
    ``X`` has one row per document and one column per word (the transpose of the
    notes' word-by-document matrix); entries are non-negative counts.

    See the chapter "The EM algorithm and mixtures", section "Bags of words".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.em import MultinomialMixture
    >>> counts = np.array([[5, 4, 0, 0], [4, 6, 0, 1],
    ...                    [0, 1, 5, 6], [0, 0, 6, 4]])
    >>> plsa = MultinomialMixture(n_components=2, random_state=0)
    >>> plsa = plsa.fit(counts)
    >>> print(plsa.weights_.shape, plsa.topic_word_.shape)
    (2,) (2, 4)
    >>> bool(np.all(np.diff(plsa.loglik_history_) > -1e-9))
    True
    """

    _parameter_constraints = dict(_COMMON_CONSTRAINTS)

    def __init__(self, n_components=2, *, tol=1e-7, max_iter=500, n_init=1, random_state=None):
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def fit(self, X, y=None):
        """Fit the aspect model by EM.  ``y`` is ignored."""
        check_estimator_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if np.any(X < 0):
            raise ValueError("Negative values in data passed to MultinomialMixture: X must hold non-negative counts")
        total = X.sum()
        if total == 0:
            raise ValueError("X contains no counts (all entries are zero)")
        k = _check_n_components(self, X.shape[0])
        n_docs, n_words = X.shape
        rows, cols = np.nonzero(X)
        counts = X[rows, cols]
        rng = check_random_state(self.random_state)
        tol, max_iter = tightened(self.tol), iteration_cap(self.max_iter, self.tol)
        best = None
        for _ in range(self.n_init):
            lam = np.full(k, 1.0 / k)
            u = rng.uniform(0.5, 1.5, size=(k, n_words))
            u /= u.sum(axis=1, keepdims=True)
            v = rng.uniform(0.5, 1.5, size=(k, n_docs))
            v /= v.sum(axis=1, keepdims=True)
            history, converged, n_iter = [], False, 0
            for n_iter in range(1, max_iter + 1):
                loglik, resp = self._e_step(lam, u, v, rows, cols, counts)
                history.append(loglik)
                _check_em_step(self, history, n_iter)
                wr = resp * counts[:, None]
                nk = wr.sum(axis=0)
                lam = nk / total
                u = np.stack([np.bincount(cols, wr[:, j], minlength=n_words) for j in range(k)])
                v = np.stack([np.bincount(rows, wr[:, j], minlength=n_docs) for j in range(k)])
                u /= np.maximum(nk, _EPS)[:, None]
                v /= np.maximum(nk, _EPS)[:, None]
                if len(history) > 1 and abs(history[-1] - history[-2]) / total < tol:
                    converged = True
                    break
            history.append(self._e_step(lam, u, v, rows, cols, counts)[0])
            _check_em_step(self, history, n_iter)
            if best is None or history[-1] > best[0][-1]:
                best = (history, lam, u, v, converged, n_iter)
        history, lam, u, v, converged, n_iter = best
        _warn_em_stop(self, history, converged, max_iter, tol, total, stacklevel=3)
        self.weights_, self.topic_word_, self.topic_document_ = lam, u, v
        joint_d = lam[None, :] * v.T
        sums = joint_d.sum(axis=1, keepdims=True)
        self.document_topic_ = np.divide(joint_d, sums, out=np.zeros_like(joint_d), where=sums > 0)
        joint_w = lam[None, :] * u.T
        sums = joint_w.sum(axis=1, keepdims=True)
        self.word_topic_ = np.divide(joint_w, sums, out=np.zeros_like(joint_w), where=sums > 0)
        self.loglik_history_ = np.array(history)
        self.converged_ = converged
        self.n_iter_ = n_iter
        return self

    @staticmethod
    def _e_step(lam, u, v, rows, cols, counts):
        with np.errstate(divide="ignore"):
            logits = np.log(lam)[None, :] + np.log(u[:, cols].T) + np.log(v[:, rows].T)
        log_norm = logsumexp(logits, axis=1)
        return float(counts @ log_norm), np.exp(logits - log_norm[:, None])
