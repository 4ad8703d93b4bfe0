"""The PAC model: the rectangle game, finite classes, Hoeffding's inequality.

See the chapter "The formal (PAC) learning model" (``chapters/07-pac.ipynb``).

Every bound here is paired with a simulation helper that estimates the probability the
bound controls, so that a chapter can draw the two side by side.  Labels are 0/1 as in
the notes (1 = inside the concept).  Sample-size functions return the real number
:math:`m_0` of the theorem; any integer :math:`m \\ge m_0` (``math.ceil(m0)`` is the
smallest) satisfies the guarantee.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ._validation import (
    Elementwise,
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    validate_params,
)

__all__ = [
    "RectangleLearner",
    "rectangle_sample_size",
    "rectangle_failure_bound",
    "finite_class_sample_size",
    "finite_class_failure_bound",
    "hoeffding_bound",
    "uniform_convergence_bound",
    "box_error_uniform",
    "simulate_rectangle_errors",
    "simulate_threshold_errors",
    "simulate_hoeffding_deviation",
]


# ----------------------------------------------------------------------------- learner


class RectangleLearner(ClassifierMixin, BaseEstimator):
    r"""The tightest-fit axis-aligned box (rectangle in the plane).

    The hypothesis is the smallest box :math:`R' = \prod_k [\ell_k, u_k]` containing every
    positive training example; a point is labelled positive iff it lies in :math:`R'`.
    With no positive example the box is empty and every point is labelled negative.
    In the realizable case :math:`R' \subseteq R` for the target box :math:`R`, so the
    learner is consistent and :math:`\mathrm{err}(R') = w(R \setminus R')`.

    Works in any dimension (an interval on the line, a rectangle in the plane).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive one (the larger label).
    lower_, upper_ : ndarray of shape (n_features,)
        Corners of the fitted box; NaN when there is no positive example.
    empty_ : bool
        True when the training set has no positive example.

    See the chapter "The formal (PAC) learning model", section "The rectangle game".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.pac import RectangleLearner
    >>> X = np.array([[0.3, 0.2], [0.5, 0.4], [0.9, 0.9], [0.1, 0.8]])
    >>> y = np.array([1, 1, 0, 0])
    >>> box = RectangleLearner().fit(X, y)
    >>> print(box.lower_, box.upper_)
    [0.3 0.2] [0.5 0.4]
    >>> print(box.predict([[0.4, 0.3], [0.6, 0.3]]))
    [1 0]
    """

    _parameter_constraints: dict = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        check_estimator_params(self)
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type not in ("binary", "unknown") and np.unique(y).size > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target "
                f"is {y_type}."
            )
        self.classes_ = np.unique(y)
        if self.classes_.size == 1:
            # A single label was seen: the box of all training points is stored, and
            # predict returns that label everywhere.
            pos = np.ones(len(y), dtype=bool)
        else:
            pos = y == self.classes_[1]
        self.empty_ = not bool(pos.any())
        if self.empty_:
            self.lower_ = np.full(X.shape[1], np.nan)
            self.upper_ = np.full(X.shape[1], np.nan)
        else:
            self.lower_ = X[pos].min(axis=0)
            self.upper_ = X[pos].max(axis=0)
        return self

    def contains(self, X):
        """Boolean mask: which rows of ``X`` lie in the fitted box (boundary included)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if self.empty_:
            return np.zeros(X.shape[0], dtype=bool)
        return np.all((X >= self.lower_) & (X <= self.upper_), axis=1)

    def predict(self, X):
        inside = self.contains(X)
        if self.classes_.size == 1:
            return np.full(inside.shape[0], self.classes_[0])
        return np.where(inside, self.classes_[1], self.classes_[0])


@validate_params({
    "lower": ["array-like"],
    "upper": ["array-like"],
    "target_lower": ["array-like"],
    "target_upper": ["array-like"],
})
def box_error_uniform(lower, upper, target_lower, target_upper):
    r"""Error of the box ``[lower, upper]`` against the target box under the uniform law.

    With :math:`D` uniform on :math:`[0, 1]^d` the error is the volume of the symmetric
    difference, :math:`\mathrm{vol}(R) + \mathrm{vol}(R') - 2\,\mathrm{vol}(R \cap R')`.
    An empty hypothesis (NaN corners) has error :math:`\mathrm{vol}(R)`.  A hypothesis may
    reach outside the unit cube, with infinite corners too (a box unbounded on that side):
    the law puts no mass outside :math:`[0, 1]^d`, so only its part inside the cube counts
    (its corners are clipped to :math:`[0, 1]`).

    Parameters
    ----------
    lower, upper : array_like of shape (d,) or (n, d)
        Corners of one or many hypotheses (rows), ``lower <= upper``, possibly infinite;
        NaN rows (in both) are empty boxes.
    target_lower, target_upper : array_like of shape (d,)
        Corners of the target, inside :math:`[0, 1]^d`.

    Examples
    --------
    >>> from lecturelib.pac import box_error_uniform
    >>> err = box_error_uniform([0.3, 0.2], [0.6, 0.5],
    ...                         [0.2, 0.1], [0.7, 0.6])
    >>> round(err, 6)
    0.16
    """
    tl = as_float_array(target_lower, "target_lower", ndim=1)
    tu = as_float_array(target_upper, "target_upper", ndim=1)
    if tl.shape != tu.shape or np.any(tl > tu) or np.any(tl < 0) or np.any(tu > 1):
        raise ValueError("target box must satisfy 0 <= target_lower <= target_upper <= 1")
    lo = np.atleast_2d(np.asarray(lower, dtype=float))
    up = np.atleast_2d(np.asarray(upper, dtype=float))
    if lo.ndim != 2 or lo.shape != up.shape or lo.shape[1] != tl.size:
        raise ValueError("lower and upper must have the target's dimension, in one row "
                         "per box")
    empty = np.isnan(lo).all(axis=1) & np.isnan(up).all(axis=1)
    if np.isnan(lo[~empty]).any() or np.isnan(up[~empty]).any():
        raise ValueError("lower and upper have NaN corners in a box that is not empty: an "
                         "empty box is a row of NaN in both, any other NaN is an error")
    if np.any(lo[~empty] > up[~empty]):
        raise ValueError("lower must not exceed upper (an empty box is a row of NaN in both)")
    lo_c = np.where(empty[:, None], 0.0, np.clip(lo, 0, 1))
    up_c = np.where(empty[:, None], 0.0, np.clip(up, 0, 1))
    vol_h = np.where(empty, 0.0, np.prod(np.maximum(up_c - lo_c, 0), axis=1))
    inter = np.prod(np.maximum(np.minimum(up_c, tu) - np.maximum(lo_c, tl), 0), axis=1)
    inter = np.where(empty, 0.0, inter)
    err = np.prod(tu - tl) + vol_h - 2 * inter
    return err if np.ndim(lower) > 1 else float(err[0])


# ----------------------------------------------------------------------------- bounds

_UNIT = Interval(Real, 0, 1, closed="neither")
_POSITIVE = Interval(Integral, 1, None)
_POSITIVE_REAL = Interval(Real, 0, None, closed="neither")
_REAL = Interval(Real, None, None)
# A sample size, or an array of them (to draw a bound against m).
_SAMPLE_SIZES_FROM_0 = [Interval(Integral, 0, None), Elementwise(Interval(Integral, 0, None))]


def _sizes(m):
    """``m`` (validated) as a float array of dimension 0 or 1."""
    return as_float_array(m, "m", ndim=(0, 1))


@validate_params({"eps": [_UNIT], "delta": [_UNIT]})
def rectangle_sample_size(eps, delta):
    r"""Sample size of the tightest-fit rectangle: :math:`m_0 = (4/\varepsilon)\ln(4/\delta)`.

    From

    .. math:: P(\mathrm{err}(R') > \varepsilon) \le 4(1-\varepsilon/4)^m \le
              4 e^{-\varepsilon m/4} \le \delta.

    Returns the real number :math:`m_0`.

    See the chapter "The formal (PAC) learning model", section "The rectangle game".

    Examples
    --------
    >>> from lecturelib.pac import rectangle_sample_size
    >>> round(rectangle_sample_size(0.1, 0.05), 4)
    175.2811
    """
    return 4.0 / eps * math.log(4.0 / delta)


@validate_params({"m": _SAMPLE_SIZES_FROM_0, "eps": [_UNIT], "exponential": ["boolean"]})
def rectangle_failure_bound(m, eps, exponential=False):
    r"""Bound on :math:`P(\mathrm{err}(R') > \varepsilon)` after ``m`` examples.

    :math:`4(1-\varepsilon/4)^m`, or the weaker :math:`4e^{-\varepsilon m/4}` when
    ``exponential=True``.  Values above 1 are returned as computed (the bound is then
    vacuous).  ``m`` may be an array of non-negative integers.

    Examples
    --------
    >>> from lecturelib.pac import rectangle_failure_bound
    >>> round(rectangle_failure_bound(100, 0.1), 6)
    0.318069
    >>> round(rectangle_failure_bound(100, 0.1, exponential=True), 6)
    0.32834
    """
    m = _sizes(m)
    out = 4 * np.exp(-eps * m / 4) if exponential else 4 * (1 - eps / 4) ** m
    return float(out) if out.ndim == 0 else out


@validate_params({
    "eps": [_UNIT],
    "delta": [_UNIT],
    "size": [_POSITIVE],
    "realizable": ["boolean"],
    "excess": [Options("eps", "2eps")],
})
def finite_class_sample_size(eps, delta, size, realizable=True, excess="eps"):
    r"""Sample size for a finite class of ``size`` hypotheses.

    Realizable case (any consistent learner; the theorem "Consistent learners over a
    finite class" of the chapter):

    .. math:: m_0 = \frac{1}{\varepsilon}\ln\frac{|C|}{\delta}.

    Unrealizable case (empirical risk minimisation).  Hoeffding and the union bound give

    .. math:: P(\max_h |\widehat{\mathrm{err}}(h) - \mathrm{err}(h)| \ge \tau)
              \le 2|C|e^{-2\tau^2 m};

    on the complement the ERM hypothesis has
    :math:`\mathrm{err} \le \mathrm{Opt}(C) + 2\tau`.  Hence

    * ``excess="2eps"`` (:math:`\tau = \varepsilon`, error at most Opt + 2ε):
      :math:`m_0 = \frac{1}{2\varepsilon^2}\ln\frac{2|C|}{\delta}`;
    * ``excess="eps"`` (:math:`\tau = \varepsilon/2`, error at most Opt + ε, Theorem 6):
      :math:`m_0 = \frac{2}{\varepsilon^2}\ln\frac{2|C|}{\delta}`.

    Parameters
    ----------
    eps, delta : float in (0, 1)
    size : int >= 1
        :math:`|C|`.
    realizable : bool, default=True
    excess : {"eps", "2eps"}, default="eps"
        Only used when ``realizable=False``.

    See the chapter "The formal (PAC) learning model", section "Finite concept classes".

    Examples
    --------
    >>> from lecturelib.pac import finite_class_sample_size
    >>> round(finite_class_sample_size(0.1, 0.05, size=1000), 4)
    99.0349
    >>> m = finite_class_sample_size(0.1, 0.05, size=1000, realizable=False)
    >>> round(m, 4)
    2119.3269
    """
    if realizable:
        return math.log(size / delta) / eps
    if excess == "eps":
        return 2.0 / eps**2 * math.log(2 * size / delta)
    return 1.0 / (2 * eps**2) * math.log(2 * size / delta)  # "2eps"


@validate_params({"m": _SAMPLE_SIZES_FROM_0, "eps": [_UNIT], "size": [_POSITIVE]})
def finite_class_failure_bound(m, eps, size):
    r"""Realizable union bound :math:`|C| e^{-\varepsilon m}` on the probability that some
    consistent hypothesis has error above ε (``m`` may be an array).

    Examples
    --------
    >>> from lecturelib.pac import finite_class_failure_bound
    >>> round(finite_class_failure_bound(100, 0.1, size=1000), 6)
    0.0454
    """
    out = size * np.exp(-eps * _sizes(m))
    return float(out) if out.ndim == 0 else out


@validate_params({
    "m": _SAMPLE_SIZES_FROM_0,
    "eps": [_POSITIVE_REAL],
    "a": [_REAL],
    "b": [_REAL],
    "two_sided": ["boolean"],
})
def hoeffding_bound(m, eps, a=0.0, b=1.0, two_sided=True):
    r"""Hoeffding's bound for the mean of ``m`` i.i.d. variables with values in [a, b].

    .. math::

        P\Big(\Big|\frac1m\sum_i f(x_i) - \mathbb{E} f\Big| \ge \varepsilon\Big)
        \le 2\exp\!\Big(-\frac{2\varepsilon^2 m}{(b-a)^2}\Big)

    (without the factor 2 for one side).  For an error indicator ``a=0, b=1`` this is
    the chapter's bound :math:`2e^{-2\varepsilon^2 m}`.  ``m`` may be an array.

    See the chapter "The formal (PAC) learning model", section "Hoeffding's inequality".

    Examples
    --------
    >>> from lecturelib.pac import hoeffding_bound
    >>> round(hoeffding_bound(100, 0.1), 6)
    0.270671
    >>> round(hoeffding_bound(100, 0.1, two_sided=False), 6)
    0.135335
    """
    if not (float(b) > float(a)):
        raise ValueError(f"need a < b, got a={a}, b={b}")
    m = _sizes(m)
    try:
        exponent = -2 * float(eps) ** 2 * m / (b - a) ** 2
    except (OverflowError, ZeroDivisionError):   # eps**2 or (b - a)**2 beyond float64
        with np.errstate(over="ignore"):         # an infinite exponent gives exp = 0
            ratio = float(eps) / (np.float64(b) - np.float64(a))
            exponent = -2 * ratio * ratio * m
    out = (2.0 if two_sided else 1.0) * np.exp(exponent)
    return float(out) if out.ndim == 0 else out


@validate_params({"m": _SAMPLE_SIZES_FROM_0, "eps": [_POSITIVE_REAL], "size": [_POSITIVE]})
def uniform_convergence_bound(m, eps, size):
    r"""Claim 11, uniform convergence: the bound :math:`2|C|e^{-2\varepsilon^2 m}`.

    .. math:: P(\max_{h\in C}|\widehat{\mathrm{err}}(h)-\mathrm{err}(h)|\ge
              \varepsilon) \le 2|C|e^{-2\varepsilon^2 m}.

    Examples
    --------
    >>> from lecturelib.pac import uniform_convergence_bound
    >>> round(uniform_convergence_bound(500, 0.1, size=10), 6)
    0.000908
    """
    return size * hoeffding_bound(m, eps)


# ----------------------------------------------------------------------------- simulations


def _check_box(lower, upper):
    lo = as_float_array(lower, "target_lower", ndim=1)
    up = as_float_array(upper, "target_upper", ndim=1)
    if lo.shape != up.shape or np.any(lo > up) or np.any(lo < 0) or np.any(up > 1):
        raise ValueError("target box must satisfy 0 <= target_lower <= target_upper <= 1")
    return lo, up


@validate_params({
    "m": [_POSITIVE],
    "target_lower": ["array-like"],
    "target_upper": ["array-like"],
    "n_trials": [_POSITIVE],
    "random_state": ["random_state"],
})
def simulate_rectangle_errors(m, target_lower=(0.2, 0.1), target_upper=(0.7, 0.6),
                              n_trials=2000, random_state=None):
    r"""True errors of the tightest-fit box over ``n_trials`` independent training sets.

    Each training set has ``m`` points drawn uniformly from :math:`[0,1]^d`, labelled by the
    target box; the error of the fitted box is computed exactly with
    :func:`box_error_uniform`.  ``np.mean(errors > eps)`` estimates
    :math:`P(\mathrm{err}(R') > \varepsilon)`.

    Returns
    -------
    errors : ndarray of shape (n_trials,)

    Examples
    --------
    >>> from lecturelib.pac import simulate_rectangle_errors
    >>> errors = simulate_rectangle_errors(50, n_trials=200, random_state=0)
    >>> print(errors.shape, bool(errors.min() >= 0),
    ...       bool(errors.mean() < 0.2))
    (200,) True True
    """
    tl, tu = _check_box(target_lower, target_upper)
    rng = check_random_state(random_state)
    X = rng.random_sample((n_trials, m, tl.size))
    pos = np.all((X >= tl) & (X <= tu), axis=2)
    Xp = np.where(pos[:, :, None], X, np.nan)
    any_pos = pos.any(axis=1)
    lo = np.full((n_trials, tl.size), np.nan)
    up = np.full((n_trials, tl.size), np.nan)
    lo[any_pos] = np.nanmin(Xp[any_pos], axis=1)
    up[any_pos] = np.nanmax(Xp[any_pos], axis=1)
    return box_error_uniform(lo, up, tl, tu)


@validate_params({
    "m": [_POSITIVE],
    "size": [Interval(Integral, 2, None)],
    "target_index": [Interval(Integral, 0, None), None],
    "n_trials": [_POSITIVE],
    "random_state": ["random_state"],
})
def simulate_threshold_errors(m, size, target_index=None, n_trials=2000, random_state=None):
    r"""Worst error of a consistent hypothesis in a finite class of thresholds.

    The class is

    .. math:: C = \{h_k(x) = [x \ge k/(\mathrm{size}-1)] : k = 0, \dots,
              \mathrm{size}-1\}

    on :math:`[0,1]` with :math:`D` uniform, so
    :math:`\mathrm{err}(h_k) = |k - k^*|/(\mathrm{size}-1)`.  For each of ``n_trials``
    samples of size ``m`` this returns the largest error among the hypotheses consistent
    with the sample: a failure of *every* consistent learner is a failure here, so
    ``np.mean(errors > eps)`` is the quantity the bound :math:`|C|e^{-\varepsilon m}`
    controls.

    Returns
    -------
    errors : ndarray of shape (n_trials,)

    Examples
    --------
    >>> from lecturelib.pac import simulate_threshold_errors
    >>> errors = simulate_threshold_errors(50, size=20, n_trials=200,
    ...                                    random_state=0)
    >>> print(errors.shape, bool(errors.max() <= 1))
    (200,) True
    """
    k_star = (size - 1) // 2 if target_index is None else int(target_index)
    if not 0 <= k_star < size:
        raise ValueError(f"target_index must lie in [0, {size - 1}], got {target_index}")
    grid = np.arange(size) / (size - 1)
    theta = grid[k_star]
    rng = check_random_state(random_state)
    X = rng.random_sample((n_trials, m))
    # h_k is consistent iff no sample point falls between theta and grid[k].
    below = np.where(X < theta, X, -np.inf).max(axis=1)      # largest negative point
    above = np.where(X >= theta, X, np.inf).min(axis=1)      # smallest positive point
    # consistent k: below < grid[k] <= above
    ok = (grid[None, :] > below[:, None]) & (grid[None, :] <= above[:, None])
    err = np.abs(np.arange(size) - k_star) / (size - 1)
    return np.where(ok, err[None, :], 0.0).max(axis=1)


@validate_params({
    "m": [_POSITIVE, Elementwise(_POSITIVE)],
    "eps": [_POSITIVE_REAL],
    "p": [_UNIT],
    "n_trials": [_POSITIVE],
    "random_state": ["random_state"],
})
def simulate_hoeffding_deviation(m, eps, p=0.3, n_trials=20000, random_state=None):
    r"""Monte-Carlo estimate of :math:`P(|\hat p - p| \ge \varepsilon)` for the mean of
    ``m`` Bernoulli(``p``) variables (the empirical error of one fixed hypothesis whose
    true error is ``p``).  ``m`` may be an array; one estimate per entry is returned.

    Examples
    --------
    >>> from lecturelib.pac import (simulate_hoeffding_deviation,
    ...                             hoeffding_bound)
    >>> rate = simulate_hoeffding_deviation(100, 0.1, n_trials=2000,
    ...                                     random_state=0)
    >>> bool(rate <= hoeffding_bound(100, 0.1))
    True
    """
    rng = check_random_state(random_state)
    ms = np.atleast_1d(np.asarray(m))
    if ms.ndim != 1:
        raise ValueError(f"m must be a positive integer or a 1-D array of them, got shape {ms.shape}")
    out = np.array([
        np.mean(np.abs(rng.binomial(int(k), p, n_trials) / k - p) >= eps - 1e-12) for k in ms
    ])
    return float(out[0]) if np.ndim(m) == 0 else out
