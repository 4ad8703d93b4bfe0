"""Shattering, the growth function, Sauer's lemma and the double-sampling bound.

See the chapters "The VC dimension" (``chapters/08-vc.ipynb``) and "The double-sampling
theorem" (``chapters/09-double-sampling.ipynb``).

A *concept class* is one of the strings

``"thresholds"``  :math:`\\{x \\mapsto [x \\ge \\theta]\\}` on the line (VC dimension 1);
``"intervals"``   :math:`\\{x \\mapsto [a \\le x \\le b]\\}` on the line (VC dimension 2);
``"rectangles"``  axis-aligned boxes in :math:`\\mathbb{R}^n` (VC dimension :math:`2n`);
``"halfplanes"``  half-spaces :math:`\\{x : w^\\top x + b \\ge 0\\}` in :math:`\\mathbb{R}^n`
                  (VC dimension :math:`n+1`), decided by linear-programming feasibility;

or a finite list of callables, each mapping one point to 0/1 (see :func:`finite_class`).
Labels are 0/1 and a dichotomy is the tuple :math:`(h(x_1), \\dots, h(x_m))`.
"""

from __future__ import annotations

import itertools
import math
from numbers import Integral, Real

import numpy as np
from scipy.optimize import linprog
from sklearn.utils.validation import check_random_state

from ._validation import InstanceOf, Interval, Options, as_float_array, validate_params

__all__ = [
    "BUILTIN_CLASSES",
    "finite_class",
    "dichotomies",
    "is_shattered",
    "is_realizable",
    "separating_halfplane",
    "vc_dimension",
    "growth_function",
    "sauer_bound",
    "sauer_exponential_bound",
    "sine_points",
    "sine_frequency",
    "sine_labels",
    "balls_probability",
    "chernoff_lower_tail_bound",
    "double_sampling_bound",
    "vc_sample_size",
    "margin_vc_bound",
    "lower_bound_expected_error",
    "lower_bound_sample_size",
]

BUILTIN_CLASSES = ("thresholds", "intervals", "rectangles", "halfplanes")
_CONCEPT_CLASS = [Options(*BUILTIN_CLASSES),
                  InstanceOf((list, tuple), "a list of callables (a finite class)")]
_POSITIVE = Interval(Integral, 1, None)
_NONNEGATIVE = Interval(Integral, 0, None)
_UNIT = Interval(Real, 0, 1, closed="neither")


# ----------------------------------------------------------------------------- classes


@validate_params({"table": ["array-like"]})
def finite_class(table):
    """A finite concept class from a 0/1 table (one row per concept, one column per point).

    Parameters
    ----------
    table : array_like of shape (n_concepts, n_points)
        The label of each point under each concept, 0/1 entries.

    Returns
    -------
    list of callable
        A callable ``c(i)`` per row, giving the label of point ``i`` (an integer index
        into the columns), to be used with points ``range(n_points)``.

    Examples
    --------
    The chapter's first example, four concepts on three points (rows c1..c4):

    >>> C = finite_class([[1, 1, 1], [0, 1, 1], [1, 0, 0], [0, 0, 0]])
    >>> len(dichotomies([0, 2], C))
    4
    """
    t = as_float_array(table, "table", ndim=2)
    if not np.all((t == 0) | (t == 1)):
        raise ValueError("table must contain only 0 and 1")
    t = t.astype(int)
    return [(lambda i, row=row: int(row[int(i)])) for row in t]


def _points_1d(points):
    x = as_float_array(points, "points", ndim=(1, 2))
    if x.ndim == 2:
        if x.shape[1] != 1:
            raise ValueError(f"points must be one-dimensional for this class, got shape {x.shape}")
        x = x[:, 0]
    return x


def _points_nd(points):
    x = as_float_array(points, "points", ndim=(1, 2))
    return x[:, None] if x.ndim == 1 else x


# Beyond these sizes the exact computations below take more than a few seconds, so they
# are refused up front (with the reason) rather than left to run for minutes.
MAX_LP_POINTS = 10          # half-spaces beyond the plane: one LP per labelling, 2^m LPs
MAX_BOX_TESTS = 40_000_000  # rectangles: (box spanned by the points) x (point) tests
MAX_SUBSETS = 100_000       # growth of a finite class: one dichotomy count per m-subset
MAX_SAUER_TERMS = 10_000    # sauer_bound: exact big-integer binomial sums
MAX_LABEL_ENTRIES = 50_000_000  # dichotomies: labellings x points in the returned array


def _check_output_size(n_labellings, m, concept_class):
    if n_labellings * m > MAX_LABEL_ENTRIES:
        raise ValueError(
            f"{concept_class} induce up to {n_labellings} labellings of {m} points, more than "
            f"the {MAX_LABEL_ENTRIES} entries listed at most (growth_function counts them "
            "without listing)")


def _rectangle_dichotomies(X):
    """Labellings by axis-aligned boxes: every non-empty one is the set of points inside
    the box spanned by its own points, so boxes with faces at the points' coordinates
    give them all (with the empty labelling)."""
    m, d = X.shape
    per_axis = []
    for k in range(d):
        v = np.unique(X[:, k])
        lo, hi = np.triu_indices(v.size)
        per_axis.append((v[lo], v[hi]))
    n_boxes = math.prod(len(lo) for lo, _ in per_axis)
    if n_boxes * m > MAX_BOX_TESTS:
        raise ValueError(
            f"rectangles on {m} points in {d} dimensions span {n_boxes} boxes, {n_boxes * m} "
            f"box-point tests; at most {MAX_BOX_TESTS} are made (use fewer points or dimensions)")
    inside = np.ones((1, m), dtype=bool)
    for (lo, hi), x in zip(per_axis, X.T):
        axis_inside = (x[None, :] >= lo[:, None]) & (x[None, :] <= hi[:, None])
        inside = (inside[:, None, :] & axis_inside[None, :, :]).reshape(-1, m)
        inside = np.unique(inside, axis=0)
    rows = {tuple(r) for r in inside.astype(int)}
    rows.add((0,) * m)
    return rows


def _halfplane_dichotomies(X):
    """Labellings of points in the plane by half-planes, without one LP per labelling.

    A labelling realised by a half-plane is realised by one whose normal avoids the
    finitely many directions orthogonal to a difference of two points (strict
    separation survives a small turn).  Between two consecutive such directions the
    order of the projections does not change, so one direction per arc, and every
    threshold of its sorted projections, give all the labellings.
    """
    m = X.shape[0]
    diff = X[:, None, :] - X[None, :, :]
    iu = np.triu_indices(m, 1)
    dx, dy = diff[..., 0][iu], diff[..., 1][iu]
    keep = (dx != 0) | (dy != 0)
    critical = np.arctan2(dy[keep], dx[keep]) + np.pi / 2
    critical = np.unique(np.concatenate([np.mod(critical, np.pi), np.mod(critical, np.pi) + np.pi]))
    if critical.size == 0:
        critical = np.array([0.0])
    nxt = np.append(critical[1:], critical[0] + 2 * np.pi)
    angles = (critical + nxt) / 2
    rows = {(0,) * m, (1,) * m}
    for theta in angles:
        proj = X @ np.array([np.cos(theta), np.sin(theta)])
        for t in np.unique(proj):
            rows.add(tuple((proj >= t).astype(int)))
    return rows


@validate_params({
    "points": ["array-like"],
    "labels": ["array-like"],
    "concept_class": _CONCEPT_CLASS,
})
def is_realizable(points, labels, concept_class):
    """True when some concept of the class labels ``points`` exactly as ``labels`` (0/1).

    For ``"halfplanes"`` this solves the feasibility LP
    :math:`(2y_i - 1)(w^\\top x_i + b) \\ge 1` with :func:`scipy.optimize.linprog`
    (strict separation, rescaled).  For ``"rectangles"`` (and intervals, thresholds) a
    labelling is realizable iff the bounding box of the positives contains no negative.

    Parameters
    ----------
    points : array_like of shape (m,) or (m, d)
        As for :func:`dichotomies`.
    labels : array_like of shape (m,)
        The labelling, 0/1 entries.
    concept_class : str or list of callable
        One of ``BUILTIN_CLASSES``, or a finite class from :func:`finite_class`.

    Returns
    -------
    bool

    Examples
    --------
    >>> from lecturelib.vc import is_realizable
    >>> is_realizable([0.0, 1.0, 2.0], [1, 0, 1], "intervals")
    False
    >>> is_realizable([0.0, 1.0, 2.0], [0, 1, 1], "intervals")
    True
    >>> square = [[0, 0], [1, 1], [1, 0], [0, 1]]
    >>> is_realizable(square, [1, 1, 0, 0], "halfplanes")
    False
    """
    y = np.asarray(labels)
    n_points = len(points)
    if y.ndim != 1 or y.size != n_points:
        raise ValueError(f"labels must be a 1-D array with one entry per point ({n_points}), "
                         f"got shape {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must contain only 0 and 1")
    y = y.astype(int)
    if isinstance(concept_class, str):
        if concept_class == "halfplanes":
            return _halfspace_feasible(_points_nd(points), y)
        if concept_class in ("rectangles", "intervals"):
            X = _points_nd(points) if concept_class == "rectangles" else _points_1d(points)[:, None]
            return _box_realizable(X, y)
        x = _points_1d(points)  # "thresholds"
        if not y.any():
            return True
        return bool(np.all(x[y == 0] < x[y == 1].min()))
    return tuple(y) in set(map(tuple, dichotomies(points, concept_class)))


def _box_realizable(X, y):
    pos = y == 1
    if not pos.any():
        return True
    lo, up = X[pos].min(axis=0), X[pos].max(axis=0)
    inside = np.all((X >= lo) & (X <= up), axis=1)
    return not bool(np.any(inside & ~pos))


def _halfspace_feasible(X, y):
    return _separator(X, y) is not None


def _separator(X, y):
    n, d = X.shape
    if y.min() == y.max():
        return np.zeros(d), (1.0 if y[0] == 1 else -1.0)
    s = 2.0 * y - 1.0
    # variables (w, b); constraints -s_i (w.x_i + b) <= -1
    A = -s[:, None] * np.hstack([X, np.ones((n, 1))])
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=-np.ones(n),
                  bounds=[(None, None)] * (d + 1), method="highs")
    if res.status not in (0, 2):
        raise ValueError(f"the linear programme of the half-space test failed ({res.message}); "
                         "rescale the points to a unit range and try again")
    if res.status == 2:
        return None
    return res.x[:d], float(res.x[d])


@validate_params({"points": ["array-like"], "labels": ["array-like"]})
def separating_halfplane(points, labels):
    r"""A half-space :math:`\{x : w^\top x + b \ge 0\}` that realises ``labels`` (0/1).

    Solves the feasibility LP :math:`(2y_i - 1)(w^\top x_i + b) \ge 1` with
    :func:`scipy.optimize.linprog`.  Returns ``(w, b)``, or ``None`` when no half-space
    produces the labelling.  For a constant labelling ``w = 0`` and ``b = +1`` or ``-1``.

    Parameters
    ----------
    points : array_like of shape (m, d)
    labels : array_like of shape (m,)
        The labelling, 0/1 entries.

    See the chapter "The VC dimension", section "Half-planes".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.vc import separating_halfplane
    >>> X = np.array([[0.0, 0.0], [2.0, 2.0]])
    >>> w, b = separating_halfplane(X, [0, 1])
    >>> print((X @ w + b >= 0).astype(int))
    [0 1]
    """
    X = _points_nd(points)
    y = np.asarray(labels)
    if y.ndim != 1 or y.size != X.shape[0]:
        raise ValueError(f"labels must be a 1-D array with one entry per point ({X.shape[0]}), "
                         f"got shape {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must contain only 0 and 1")
    return _separator(X, y.astype(int))


@validate_params({"points": ["array-like"], "concept_class": _CONCEPT_CLASS})
def dichotomies(points, concept_class):
    """The set :math:`\\Pi_C(S)` of labellings the class induces on ``points``.

    Thresholds, intervals, rectangles and half-planes in the plane are enumerated
    directly (polynomial in the number of points: boxes spanned by the points, or one
    direction per arc between critical directions); half-spaces in three or more
    dimensions need one LP per labelling and are refused beyond ``MAX_LP_POINTS`` points.

    Parameters
    ----------
    points : array_like of shape (m,) or (m, d)
        Points on the line (thresholds, intervals), in the plane (rectangles, half-planes)
        or in :math:`\\mathbb R^d` (half-spaces); column indices for a finite class.
    concept_class : str or list of callable
        One of ``BUILTIN_CLASSES``, or a finite class from :func:`finite_class`.

    Returns
    -------
    ndarray of shape (n_dichotomies, m), dtype int
        The distinct 0/1 rows, sorted lexicographically; ``len(...)`` is
        :math:`|\\Pi_C(S)|`.

    See the chapter "The VC dimension", section "Dichotomies and shattering".

    Examples
    --------
    >>> from lecturelib.vc import dichotomies
    >>> print(dichotomies([0.0, 1.0], "thresholds"))
    [[0 0]
     [0 1]
     [1 1]]
    >>> len(dichotomies([0.0, 1.0, 2.0], "intervals"))
    7
    """
    if isinstance(concept_class, str):
        if concept_class == "thresholds":
            x = _points_1d(points)
            _check_output_size(x.size + 1, x.size, concept_class)
            cuts = np.concatenate([np.unique(x), [np.inf]])
            rows = {tuple((x >= t).astype(int)) for t in cuts}
        elif concept_class == "intervals":
            x = _points_1d(points)
            _check_output_size(x.size * (x.size + 1) // 2 + 1, x.size, concept_class)
            v = np.unique(x)
            rows = {tuple([0] * x.size)}
            for i in range(v.size):
                for j in range(i, v.size):
                    rows.add(tuple(((x >= v[i]) & (x <= v[j])).astype(int)))
        elif concept_class == "rectangles":
            rows = _rectangle_dichotomies(_points_nd(points))
        else:
            X = _points_nd(points)
            if X.shape[1] <= 2:
                rows = _halfplane_dichotomies(np.hstack([X, np.zeros((X.shape[0], 2 - X.shape[1]))]))
            else:
                if X.shape[0] > MAX_LP_POINTS:
                    raise ValueError(
                        f"half-spaces in {X.shape[1]} dimensions are enumerated with one LP per "
                        f"labelling (2^m of them); at most {MAX_LP_POINTS} points, got {X.shape[0]}")
                rows = {
                    lab for lab in itertools.product((0, 1), repeat=X.shape[0])
                    if is_realizable(X, np.array(lab, dtype=int), concept_class)
                }
    else:
        try:
            concepts = list(concept_class)
        except TypeError:
            raise TypeError("concept_class must be a string or a list of callables") from None
        if not concepts or not all(callable(c) for c in concepts):
            raise ValueError("a finite concept_class must be a non-empty list of callables")
        pts = list(points) if not isinstance(points, np.ndarray) else list(points)
        rows = set()
        for c in concepts:
            lab = tuple(int(c(p)) for p in pts)
            if not set(lab) <= {0, 1}:
                raise ValueError("concepts must return 0 or 1")
            rows.add(lab)
    m = len(next(iter(rows)))
    out = np.array(sorted(rows), dtype=int).reshape(len(rows), m)
    return out


@validate_params({"points": ["array-like"], "concept_class": _CONCEPT_CLASS})
def is_shattered(points, concept_class):
    """True iff the class realises all :math:`2^m` labellings of the ``m`` points.

    Parameters
    ----------
    points : array_like of shape (m,) or (m, d)
        As for :func:`dichotomies`.
    concept_class : str or list of callable
        One of ``BUILTIN_CLASSES``, or a finite class from :func:`finite_class`.

    See the chapter "The VC dimension", section "Dichotomies and shattering".

    Examples
    --------
    >>> from lecturelib.vc import is_shattered
    >>> is_shattered([0.0, 1.0], "intervals")
    True
    >>> is_shattered([0.0, 1.0, 2.0], "intervals")
    False
    """
    d = dichotomies(points, concept_class)
    return d.shape[0] == 2 ** d.shape[1]


@validate_params({"concept_class": _CONCEPT_CLASS, "domain": ["array-like"]})
def vc_dimension(concept_class, domain):
    """VC dimension of a class restricted to a finite ``domain`` (exact, by enumeration).

    Tries subsets of increasing size; the answer is the largest size with a shattered
    subset.  Exponential in the size of ``domain``: keep it small (at most 12 points).

    Parameters
    ----------
    concept_class : str or list of callable
        One of ``BUILTIN_CLASSES``, or a finite class from :func:`finite_class`.
    domain : array_like of shape (m,) or (m, d)
        The points, as for :func:`dichotomies`.

    Returns
    -------
    int

    Examples
    --------
    >>> from lecturelib.vc import vc_dimension
    >>> vc_dimension("intervals", [0.0, 1.0, 2.0, 3.0])
    2
    >>> vc_dimension("thresholds", [0.0, 1.0, 2.0, 3.0])
    1
    """
    pts = list(domain) if not isinstance(domain, np.ndarray) else list(domain)
    if len(pts) > 12:
        raise ValueError(f"domain has {len(pts)} points; at most 12 are supported")
    best = 0
    for k in range(1, len(pts) + 1):
        found = any(
            is_shattered(_subset(domain, idx), concept_class)
            for idx in itertools.combinations(range(len(pts)), k)
        )
        if not found:
            break
        best = k
    return best


def _subset(domain, idx):
    if isinstance(domain, np.ndarray):
        return domain[list(idx)]
    return [domain[i] for i in idx]


@validate_params({
    "concept_class": _CONCEPT_CLASS,
    "m": [_POSITIVE],
    "domain": ["array-like", None],
    "n_configurations": [_POSITIVE],
    "random_state": ["random_state"],
})
def growth_function(concept_class, m, *, domain=None, n_configurations=20, random_state=0):
    """The growth function :math:`\\Pi_C(m) = \\max_{|S|=m} |\\Pi_C(S)|`.

    * A finite class (list of callables) with a finite ``domain``: exact, the maximum over
      every ``m``-subset of ``domain``.
    * ``"thresholds"``, ``"intervals"``: every set of ``m`` distinct points gives the same
      count, :math:`m+1` and :math:`m(m+1)/2+1` (the closed forms; ``dichotomies`` lists
      the labellings, and the tests check the two agree).
    * ``"halfplanes"`` in the plane: every set in general position gives the maximum, and
      random points are in general position with probability one.
    * ``"rectangles"`` (and half-planes in higher dimension): the maximum over
      ``n_configurations`` random point sets in the unit square, a *lower* estimate that
      is exact whenever one of them attains the maximum.

    Parameters
    ----------
    concept_class : str or list of callables
    m : int >= 1
    domain : array_like, optional
        Required for a finite class (its points).  For ``"rectangles"`` and
        ``"halfplanes"`` only its number of columns is used, as the dimension of the
        random configurations (default 2).
    n_configurations : int, default=20
        Random configurations tried for ``"rectangles"`` (and half-spaces beyond the plane).
    random_state : int, RandomState instance or None, default=0

    See the chapter "The VC dimension", section "The growth function and Sauer's lemma".

    Examples
    --------
    >>> from lecturelib.vc import growth_function
    >>> [growth_function("intervals", m) for m in range(1, 5)]
    [2, 4, 7, 11]
    """
    if not isinstance(concept_class, str):
        if domain is None:
            raise ValueError("a finite concept_class needs a finite domain")
        pts = list(domain)
        if m > len(pts):
            raise ValueError(f"m={m} is larger than the domain ({len(pts)} points)")
        if math.comb(len(pts), m) > MAX_SUBSETS:
            raise ValueError(
                f"the domain has {math.comb(len(pts), m)} subsets of {m} points; at most "
                f"{MAX_SUBSETS} are enumerated (use a smaller domain)")
        return max(
            len(dichotomies(_subset(domain, idx), concept_class))
            for idx in itertools.combinations(range(len(pts)), m)
        )
    rng = check_random_state(random_state)
    if concept_class == "thresholds":
        return int(m) + 1
    if concept_class == "intervals":
        return int(m) * (int(m) + 1) // 2 + 1
    n_features = 2 if domain is None else _points_nd(domain).shape[1]
    n_conf = 1 if (concept_class == "halfplanes" and n_features == 2) else int(n_configurations)
    best = 0
    for _ in range(n_conf):
        best = max(best, len(dichotomies(rng.random_sample((m, n_features)), concept_class)))
        if best == 2**m:
            break
    return best


@validate_params({"m": [_NONNEGATIVE], "d": [_NONNEGATIVE]})
def sauer_bound(m, d):
    """:math:`\\Phi_d(m) = \\sum_{i=0}^{d} \\binom{m}{i}`, Sauer's bound on the growth function.

    An exact Python integer.  It satisfies :math:`\\Phi_d(m) = \\Phi_d(m-1) +
    \\Phi_{d-1}(m-1)` with :math:`\\Phi_d(0) = \\Phi_0(m) = 1`, and equals :math:`2^m` for
    :math:`m \\le d`.

    See the chapter "The VC dimension", section "The growth function and Sauer's lemma".

    Examples
    --------
    >>> from lecturelib.vc import sauer_bound
    >>> [sauer_bound(m, 2) for m in range(1, 6)]
    [2, 4, 7, 11, 16]
    """
    m, d = int(m), int(d)
    if min(d, m) > MAX_SAUER_TERMS:
        raise ValueError(
            f"the exact sum has min(d, m) + 1 = {min(d, m) + 1} big-integer terms; at most "
            f"{MAX_SAUER_TERMS + 1} are summed (use sauer_exponential_bound)")
    return sum(math.comb(m, i) for i in range(min(d, m) + 1))


_LOG_FLOAT_MAX = math.log(np.finfo(float).max)


@validate_params({"m": [_NONNEGATIVE], "d": [_POSITIVE]})
def sauer_exponential_bound(m, d):
    """:math:`(em/d)^d`, which bounds :math:`\\Phi_d(m)` for :math:`m \\ge d \\ge 1`.

    Examples
    --------
    >>> from lecturelib.vc import sauer_bound, sauer_exponential_bound
    >>> round(sauer_exponential_bound(10, 2), 4)
    184.7264
    >>> sauer_bound(10, 2)
    56

    Below its range (``m < d``) the expression is no bound of :math:`\\Phi_d(m) = 2^m`
    (``(e/2)**2 = 1.85 < 2`` at m=1, d=2) and is refused, as is a bound beyond float64.
    """
    m, d = int(m), int(d)
    if m < d:
        raise ValueError(f"sauer_exponential_bound needs m >= d (its range), got m={m} < d={d}; "
                         "for m < d the growth function is 2**m")
    log_value = d * (1.0 + math.log(m / d))
    if log_value > _LOG_FLOAT_MAX:
        raise ValueError(f"(e m/d)^d overflows float64 for m={m}, d={d} (its log is "
                         f"{log_value:.4g})")
    return math.exp(log_value) if d > 50 else (math.e * m / d) ** d


# ----------------------------------------------------------------------------- sine class


@validate_params({"m": [Interval(Integral, 1, 12)]})
def sine_points(m):
    """The points :math:`x_i = 10^{-i}`, :math:`i = 1, \\dots, m`, shattered by
    :math:`\\{x \\mapsto [\\sin(\\omega x) > 0]\\}`.

    Examples
    --------
    >>> from lecturelib.vc import sine_points
    >>> print(sine_points(3))
    [0.1   0.01  0.001]
    """
    return 10.0 ** -np.arange(1, int(m) + 1)


@validate_params({"labels": ["array-like"]})
def sine_frequency(labels):
    """Frequency :math:`\\omega = \\pi(1 + \\sum_i (1 - y_i) 10^i)` that gives the labels
    ``y`` (0/1) on :func:`sine_points`: :math:`[\\sin(\\omega x_i) > 0] = y_i`.

    Parameters
    ----------
    labels : array_like of shape (m,)
        The labelling :math:`y`, 0/1 entries.

    Returns
    -------
    float

    Examples
    --------
    >>> from lecturelib.vc import sine_frequency, sine_labels, sine_points
    >>> labels = [1, 0, 1]
    >>> omega = sine_frequency(labels)
    >>> print(sine_labels(omega, sine_points(3)))
    [1 0 1]
    """
    y = np.asarray(labels)
    if y.ndim != 1 or not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be a 1-D array of 0/1")
    if y.size > 12:
        raise ValueError("at most 12 labels are supported")
    return math.pi * (1 + sum(int(1 - yi) * 10 ** (i + 1) for i, yi in enumerate(y)))


@validate_params({"omega": [Interval(Real, None, None)], "x": ["array-like"]})
def sine_labels(omega, x):
    """Labels :math:`[\\sin(\\omega x) > 0]` as 0/1 integers.

    Parameters
    ----------
    omega : float
        The frequency :math:`\\omega`.
    x : array_like of shape (n,)
        Finite points; :math:`\\omega x` must be finite in float64 too.

    Returns
    -------
    ndarray of int, of the shape of ``x``

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.vc import sine_labels
    >>> print(sine_labels(np.pi, [0.25, 0.75, 1.25]))
    [1 1 0]
    """
    x = as_float_array(x, "x", allow_empty=True)
    with np.errstate(over="ignore"):
        phase = float(omega) * x
    if not np.all(np.isfinite(phase)):
        raise ValueError(f"omega * x overflows float64 (omega={float(omega):.3g}, largest |x| "
                         f"{np.abs(x).max():.3g}): sin of an infinite phase is undefined")
    return (np.sin(phase) > 0).astype(int)


# ----------------------------------------------------------------------------- double sampling


@validate_params({"m": [_POSITIVE], "l": [_NONNEGATIVE]})
def balls_probability(m, l):
    """Probability that all ``l`` red balls land in the second half when ``2m`` balls are
    split at random into two halves of ``m``:

    .. math:: \\binom{m}{l}/\\binom{2m}{l} = \\prod_{i<l}(m-i)/(2m-i) \\le 2^{-l}.

    Examples
    --------
    >>> from lecturelib.vc import balls_probability
    >>> round(balls_probability(10, 3), 6)
    0.105263
    >>> round(2.0 ** -3, 6)
    0.125
    """
    m, l = int(m), int(l)
    if l > 2 * m:
        raise ValueError(f"l={l} exceeds the number of balls 2m={2 * m}")
    return math.comb(m, l) / math.comb(2 * m, l)


@validate_params({"mu": [Interval(Real, 0, None, closed="neither")], "psi": [_UNIT]})
def chernoff_lower_tail_bound(mu, psi):
    """Chernoff's lower tail :math:`P(Z < (1-\\psi)\\mu) \\le e^{-\\mu\\psi^2/2}`.

    Examples
    --------
    >>> from lecturelib.vc import chernoff_lower_tail_bound
    >>> round(chernoff_lower_tail_bound(10.0, 0.5), 6)
    0.286505
    """
    return math.exp(-float(mu) * float(psi)**2 / 2)


@validate_params({
    "m": [_POSITIVE],
    "eps": [_UNIT],
    "d": [_POSITIVE],
    "growth": [Options("exponential", "exact")],
})
def double_sampling_bound(m, eps, d, growth="exponential"):
    r"""Bound on the probability that a consistent learner has error above ε.

    The double-sampling argument gives, for :math:`m \ge (8/\varepsilon)\ln 2`,

    .. math::

        \begin{aligned}
        P(\exists h \in C \text{ consistent}, \mathrm{err}(h) > \varepsilon)
        &\le 2\,\Pi_C(2m)\,2^{-\varepsilon m/2}\\
        &\le 2\,\Phi_d(2m)\,2^{-\varepsilon m/2}\\
        &\le 2\,(2em/d)^d\,2^{-\varepsilon m/2}.
        \end{aligned}

    ``growth="exponential"`` uses :math:`(2em/d)^d`, ``growth="exact"`` uses
    :math:`\Phi_d(2m)`.  Below :math:`m = (8/\varepsilon)\ln 2` the argument does not
    apply and the trivial bound 1 is returned.  Otherwise the value is returned as
    computed, even when it exceeds 1.

    See the chapter "The double-sampling theorem".

    Examples
    --------
    >>> from lecturelib.vc import double_sampling_bound
    >>> [f"{double_sampling_bound(m, 0.1, 3):.2e}" for m in (1000, 2000)]
    ['1.06e-05', '7.51e-20']
    """
    m, eps, d = int(m), float(eps), int(d)
    if m < 8 / eps * math.log(2):
        return 1.0
    if growth == "exponential":
        log2_growth = d * math.log2(2 * math.e * m / d)
    else:
        log2_growth = math.log2(sauer_bound(2 * m, d))
    return 2.0 ** (1 + log2_growth - eps * m / 2)


@validate_params({
    "eps": [_UNIT],
    "delta": [_UNIT],
    "d": [_POSITIVE],
    "growth": [Options("exponential", "exact")],
})
def vc_sample_size(eps, delta, d, growth="exponential"):
    r"""Smallest :math:`m \ge \max(d/2, (8/\varepsilon)\ln 2)` with
    :math:`G(2m)\,2^{-\varepsilon m/2} \le \delta/2`.

    :math:`G(2m)` is :math:`(2em/d)^d` (``growth="exponential"``) or :math:`\Phi_d(2m)`
    (``growth="exact"``).  Any consistent learner for a class of VC dimension ``d`` then
    has :math:`P(\mathrm{err} > \varepsilon) \le \delta` (the chapter's double-sampling
    theorem, with the constant made explicit).

    See the chapter "The double-sampling theorem", section "Sample sizes".

    Examples
    --------
    >>> from lecturelib.vc import vc_sample_size
    >>> vc_sample_size(0.1, 0.05, 3)
    729
    """
    eps, delta, d = float(eps), float(delta), int(d)
    m = max(math.ceil(d / 2), math.ceil(8 / eps * math.log(2)), 1)

    def ok(k):
        if growth == "exponential":
            lg = d * math.log2(2 * math.e * k / d)
        else:
            lg = math.log2(sauer_bound(2 * k, d))
        return lg - eps * k / 2 <= math.log2(delta / 2)

    # exponential search for an upper end, then bisection (the condition is monotone
    # beyond its first crossing for these m; a final linear scan confirms minimality).
    hi = m
    while not ok(hi):
        hi *= 2
    lo = m
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@validate_params({
    "radius": [Interval(Real, 0, None, closed="neither")],
    "margin": [Interval(Real, 0, None, closed="neither")],
    "n_features": [_POSITIVE],
})
def margin_vc_bound(radius, margin, n_features):
    r"""Upper bound on the VC dimension of separating hyperplanes with margin γ on data
    of norm at most R in :math:`\mathbb{R}^n`: :math:`\min(\lceil R^2/\gamma^2\rceil, n) + 1`.

    See the chapter "The double-sampling theorem", section "Optimality of the SVM revisited".

    Examples
    --------
    >>> from lecturelib.vc import margin_vc_bound
    >>> margin_vc_bound(radius=1.0, margin=0.25, n_features=100)
    17
    >>> margin_vc_bound(radius=1.0, margin=0.01, n_features=5)
    6
    """
    R, g, n = float(radius), float(margin), int(n_features)
    try:
        return int(min(math.ceil(R**2 / g**2), n) + 1)
    except (OverflowError, ZeroDivisionError):     # R**2 or g**2 beyond float64's range
        ratio = R / g if g > 0 else math.inf
        return n + 1 if ratio >= math.sqrt(n) else int(min(math.ceil(ratio * ratio), n) + 1)


# ----------------------------------------------------------------------------- lower bound


@validate_params({
    "m": [Interval(Integral, 0, None, closed="left")],
    "d": [Interval(Integral, 2, None, closed="left")],
    "eps": [Interval(Real, 0, 0.125, closed="right")],
})
def lower_bound_expected_error(m, d, eps):
    r"""Expected error in the :math:`\Omega(d/\varepsilon)` lower-bound construction.

    A class of VC dimension ``d`` shatters :math:`x_0, \dots, x_{d-1}`.  The distribution
    puts mass :math:`1 - 8\varepsilon` on :math:`x_0` and :math:`8\varepsilon/(d-1)` on
    each other point, and the target labels :math:`x_1, \dots, x_{d-1}` by fair coins.
    On a point the sample of size ``m`` missed, every learner is wrong with probability
    1/2, so the expected error on :math:`x_1,\dots,x_{d-1}` is at least

    .. math:: \frac12\sum_{i=1}^{d-1}\frac{8\varepsilon}{d-1}\Big(1-\frac{8\varepsilon}{d-1}\Big)^m
              = 4\varepsilon\Big(1-\frac{8\varepsilon}{d-1}\Big)^m,

    with equality for a learner that is right on every point it has seen.

    Parameters
    ----------
    m : int >= 0
        Sample size.
    d : int >= 2
        VC dimension.
    eps : float in (0, 1/8]

    Returns
    -------
    float

    See the chapter "The VC dimension", section "VC dimension and PAC learning".

    Examples
    --------
    >>> from lecturelib.vc import lower_bound_expected_error
    >>> round(lower_bound_expected_error(m=0, d=11, eps=0.05), 4)
    0.2
    >>> round(lower_bound_expected_error(m=100, d=11, eps=0.05), 4)
    0.0034
    """
    return 4.0 * eps * (1.0 - 8.0 * eps / (d - 1)) ** m


@validate_params({
    "d": [Interval(Integral, 2, None, closed="left")],
    "eps": [Interval(Real, 0, 0.125, closed="neither")],
})
def lower_bound_sample_size(d, eps):
    r"""The largest ``m`` for which the lower-bound construction keeps the expected error at least :math:`2\varepsilon`.

    :math:`4\varepsilon(1 - 8\varepsilon/(d-1))^m \ge 2\varepsilon` holds exactly for
    :math:`m \le \ln 2 / (-\ln(1 - 8\varepsilon/(d-1)))`, and this is at least
    :math:`\ln 2\,\big(\frac{d-1}{8\varepsilon} - 1\big)` (the integer returned is at least
    its floor).  With at most that many
    examples, for every learner some target has :math:`P(\mathrm{err} > \varepsilon) \ge 1/7`,
    so PAC learning with :math:`\delta < 1/7` needs more examples: :math:`\Omega(d/\varepsilon)`.

    Parameters
    ----------
    d : int >= 2
    eps : float in (0, 1/8)

    Returns
    -------
    int

    See the chapter "The VC dimension", section "VC dimension and PAC learning".

    Examples
    --------
    >>> from lecturelib.vc import (lower_bound_expected_error,
    ...                            lower_bound_sample_size)
    >>> lower_bound_sample_size(d=11, eps=0.05)
    16
    >>> [round(lower_bound_expected_error(m, d=11, eps=0.05), 4)
    ...  for m in (16, 17)]
    [0.1041, 0.0999]
    """
    x = 8.0 * eps / (d - 1)  # < 1 since eps < 1/8 and d >= 2
    return int(math.floor(math.log(2.0) / -math.log1p(-x) + 1e-12))
