"""Input checks shared by the lecturelib modules.

Every public function validates its input up front and raises a ``ValueError`` that
names the argument and the problem.  Nothing is clipped, renormalised or dropped
silently.  Estimators use scikit-learn's public ``validate_data``/``check_array``;
these helpers cover the plain arrays (probability vectors, count tables, kernel
matrices) that scikit-learn has no checker for.
"""

from __future__ import annotations

import functools
import inspect
import re
from numbers import Integral, Real

import numpy as np

__all__ = [
    "as_float_array",
    "check_probability_vector",
    "check_nonnegative",
    "check_square",
    "check_symmetric",
    "check_symmetric_psd",
    "input_eps",
    "rounding_tolerance",
    "check_squares_finite",
    "check_label_vector",
    "check_positive_int",
    "InvalidParameterError",
    "Interval",
    "Options",
    "InstanceOf",
    "Elementwise",
    "Matches",
    "check_params",
    "check_estimator_params",
    "validate_params",
]


def as_float_array(x, name, *, ndim=None, allow_empty=False):
    """Return ``x`` as a finite float array, or raise ``ValueError`` naming ``name``.

    Parameters
    ----------
    x : array_like
    name : str
        The argument's name, used in the error message.
    ndim : int or tuple of int, optional
        Required number of dimensions.
    allow_empty : bool, default=False
    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {type(x).__name__}: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(
                f"{name} must have {' or '.join(map(str, allowed))} dimension(s), "
                f"got shape {arr.shape}"
            )
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def check_nonnegative(x, name, *, ndim=None):
    """Finite float array with no negative entry."""
    arr = as_float_array(x, name, ndim=ndim)
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries (min {arr.min():.4g})")
    return arr


def check_probability_vector(p, name, *, axis=-1, atol=1e-8):
    """Non-negative array whose entries along ``axis`` sum to one.

    Within ``atol``, or within the round-off of a sum of ``n`` entries given in the input's
    precision (:func:`rounding_tolerance`), whichever is larger: a float32 vector that sums
    to one in float32 is accepted.
    """
    arr = check_nonnegative(p, name)
    if arr.ndim:
        atol = rounding_tolerance(p, arr.shape[axis], floor=atol)
    sums = arr.sum(axis=axis)
    if not np.allclose(sums, 1.0, rtol=0, atol=atol):
        raise ValueError(
            f"{name} must sum to 1 along axis {axis}, got sum(s) "
            f"{np.round(np.atleast_1d(sums)[:5], 6).tolist()}"
        )
    return arr


def check_square(K, name):
    """Finite square 2-D float array."""
    arr = as_float_array(K, name, ndim=2)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    return arr


def input_eps(x):
    """Machine epsilon of the precision ``x`` was given in (float64's for integers and others).

    A float32 matrix carries float32 round-off even after conversion to float64, so
    tolerances on it (symmetry, positive semi-definiteness) must scale with this.
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None and hasattr(x, "dtypes"):  # a pandas DataFrame
        try:
            dtype = np.result_type(*x.dtypes)
        except TypeError:
            dtype = None
    if dtype is not None and np.dtype(dtype).kind == "f":
        return max(float(np.finfo(dtype).eps), float(np.finfo(np.float64).eps))
    return float(np.finfo(np.float64).eps)


def rounding_tolerance(x, n_terms=1, *, floor=0.0):
    """``max(floor, n_terms * eps)`` with ``eps`` the machine epsilon of ``x``'s precision.

    The one rule for the tolerance of a check computed from ``n_terms`` entries of ``x``
    (a sum to one, a smallest eigenvalue): float64 input keeps ``floor``, float32 input
    is allowed its own round-off.
    """
    return max(float(floor), float(n_terms) * input_eps(x))


def check_squares_finite(X, name):
    """``X`` itself if its sums of squared entries (Gram matrices, covariances, squared
    distances) are finite in float64; else a ``ValueError`` saying to rescale ``X``.

    The test is on the largest entry: ``n_features * max|x|^2`` must stay below the
    largest float (with a factor 4 of headroom for a distance, a difference of two points).
    """
    arr = np.asarray(X)
    if arr.size and arr.dtype.kind == "f":
        big = max(float(arr.max()), -float(arr.min()))  # max |x| without a temporary |X|
        width = arr.shape[-1] if arr.ndim > 1 else 1
        if big > np.sqrt(np.finfo(np.float64).max / (4.0 * width)):
            raise ValueError(f"{name} has entries so large (max |entry| {big:.3g}) that their "
                             "squares overflow float64; scale it down")
    return X


def check_label_vector(y, n, per):
    """``y`` as an array of ``n`` finite labels, one ``per`` item (e.g. ``"row of X"``);
    else a ``ValueError`` naming the shape it has, or the NaN or infinity it holds."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have one label per {per} ({n}), got shape {y.shape}")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y must hold finite labels, got NaN or infinity")
    return y


def check_symmetric(K, name, *, symmetry_tol=1e-10):
    """Finite square matrix equal to its transpose within rounding.

    Entries of ``K`` and ``K.T`` may differ by ``symmetry_tol`` times
    ``max(1, largest |entry|)``, at least ``10 eps`` of the input's precision
    (:func:`rounding_tolerance`).
    """
    arr = check_square(K, name)
    symmetry_tol = rounding_tolerance(K, 10, floor=symmetry_tol)
    scale = max(1.0, float(np.abs(arr).max()))
    if not np.allclose(arr, arr.T, rtol=0, atol=symmetry_tol * scale):
        raise ValueError(f"{name} must be symmetric")
    return arr


def check_symmetric_psd(K, name, *, tol=1e-8, symmetry_tol=1e-10):
    """Symmetric positive semi-definite matrix (a kernel Gram matrix).

    The smallest eigenvalue may be as low as ``-tol * max(1, largest |entry|)``,
    to allow for rounding; anything below is reported as not PSD.  Entries of ``K`` and
    ``K.T`` may differ by ``symmetry_tol`` times the same scale.  Both tolerances are at
    least the round-off of the input's precision (:func:`rounding_tolerance`): ``n eps``
    for the eigenvalue (Weyl's inequality), ``10 eps`` for symmetry, so that a float32
    Gram matrix of a PSD kernel passes.
    """
    arr = check_symmetric(K, name, symmetry_tol=symmetry_tol)
    tol = rounding_tolerance(K, arr.shape[0], floor=tol)
    scale = max(1.0, float(np.abs(arr).max()))
    eigmin = float(np.linalg.eigvalsh(arr)[0])
    if eigmin < -tol * scale:
        raise ValueError(
            f"{name} is not positive semi-definite (smallest eigenvalue {eigmin:.3g})"
        )
    return arr


def check_positive_int(k, name, *, upper=None, upper_name=None):
    """Integer ``k >= 1`` and, if given, ``k <= upper``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"{name} must be at least 1, got {k}")
    if upper is not None and k > upper:
        what = upper_name or str(upper)
        raise ValueError(f"{name}={k} is larger than {what} ({upper})")
    return int(k)


# --------------------------------------------------------------------------------------
# Parameter constraints
#
# Every estimator declares the valid values of each constructor parameter in a class-level
# table ``_parameter_constraints`` (name -> list of constraints, any one of which may hold),
# in the style of scikit-learn's own tables, and checks it at the start of ``fit`` with
# ``check_estimator_params``.  Public functions declare theirs with ``@validate_params``.
# A constraint is an ``Interval``, an ``Options`` set, an ``InstanceOf`` type, ``None``, or
# one of the strings "array-like", "boolean", "random_state" (as scikit-learn's),
# "seed" (for ``np.random.default_rng``: an int or a Generator), "callable".  Each constraint
# can also produce a value it accepts and values it refuses, which the tests use to
# generate invalid input for every declared parameter.
# --------------------------------------------------------------------------------------

class InvalidParameterError(ValueError, TypeError):
    """A parameter outside its declared range (a ``ValueError``, also a ``TypeError``)."""


def _is_integer(value):
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


class Interval:
    """Numbers of a type (``Integral`` or ``Real``) between ``left`` and ``right``.

    ``None`` for an end means unbounded.  ``closed`` is one of "both", "left", "right",
    "neither".  A ``Real`` interval takes integers too; NaN and the infinities are never
    inside (no parameter of the course takes an infinite value).
    """

    def __init__(self, kind, left, right, *, closed="both"):
        if kind not in (Integral, Real):
            raise ValueError("kind must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, value):
        ok_type = _is_integer(value) if self.kind is Integral else _is_real(value)
        if not ok_type or not np.isfinite(value):
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        kind = "an int" if self.kind is Integral else "a float"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        lb = "[" if self.left is not None and self.closed in ("both", "left") else "("
        rb = "]" if self.right is not None and self.closed in ("both", "right") else ")"
        return f"{kind} in {lb}{lo}, {hi}{rb}"

    def valid_example(self):
        if self.left is not None and self.right is not None:
            mid = (self.left + self.right) / 2
        elif self.left is not None:
            mid = self.left + 1
        elif self.right is not None:
            mid = self.right - 1
        else:
            mid = 0
        return int(np.ceil(mid)) if self.kind is Integral else float(mid)

    def invalid_examples(self):
        out = ["text"]
        if self.left is not None:
            out.append(self.left if self.closed in ("right", "neither") else self.left - 1)
        if self.right is not None:
            out.append(self.right if self.closed in ("left", "neither") else self.right + 1)
        if self.kind is Integral:
            out.append(self.valid_example() + 0.5)
        else:
            out += [float("nan"), float("inf")]
        return out


class Options:
    """One of a fixed set of values (strings, or integers such as the labels 0 and 1)."""

    def __init__(self, *options):
        self.options = tuple(options)

    def is_satisfied_by(self, value):
        for option in self.options:
            if isinstance(option, str):
                if isinstance(value, str) and value == option:
                    return True
            elif _is_integer(option):
                if _is_integer(value) and value == option:
                    return True
            elif not isinstance(value, (bool, np.bool_, str)) and value == option:
                return True
        return False

    def __str__(self):
        return "one of " + ", ".join(map(repr, self.options))

    def valid_example(self):
        return self.options[0]

    def invalid_examples(self):
        out = ["no-such-option"]
        numbers = [o for o in self.options if _is_integer(o)]
        if numbers:
            out += [max(numbers) + 1, float(numbers[0])]
        return out


class Elementwise:
    """A non-empty array (or list) whose every entry lies in an ``Interval``.

    For ``Interval(Integral, ...)`` the array must have an integer dtype: ``[1.5]`` and
    ``[2.0]`` are refused alike, as the scalar ``2.0`` is.
    """

    def __init__(self, interval):
        self.interval = interval

    def is_satisfied_by(self, value):
        if not _is_array_like(value):
            return False
        try:
            arr = np.asarray(value)
        except Exception:
            return False
        if arr.size == 0 or arr.dtype.kind not in ("iu" if self.interval.kind is Integral else "iuf"):
            return False
        flat = arr.ravel()
        lo, hi = flat.min(), flat.max()
        item = int if self.interval.kind is Integral else float
        return self.interval.is_satisfied_by(item(lo)) and self.interval.is_satisfied_by(item(hi)) \
            and (arr.dtype.kind != "f" or not np.isnan(flat).any())

    def __str__(self):
        kind = "ints" if self.interval.kind is Integral else "floats"
        return f"an array of {kind} in {str(self.interval).split(' in ', 1)[1]}"

    def valid_example(self):
        return [self.interval.valid_example()]

    def invalid_examples(self):
        return [[v] for v in self.interval.invalid_examples() if not isinstance(v, str)] + [[]]


class InstanceOf:
    """An instance of ``types`` (a type or tuple of types), described as ``description``.

    ``example`` is an accepted value for the generated tests; ``factory`` makes one when a
    value cannot be built at import time (a matplotlib ``Axes``).
    """

    def __init__(self, types, description, *, example=None, factory=None):
        self.types, self.description = types, description
        self.example, self.factory = example, factory

    def is_satisfied_by(self, value):
        return isinstance(value, self.types)

    def __str__(self):
        return self.description

    def valid_example(self):
        if self.factory is not None:
            return self.factory()
        if self.example is None:
            raise NotImplementedError(f"no generic example of {self.description}")
        return self.example

    def invalid_examples(self):
        return [object()]


class Matches:
    """A string that matches the regular expression ``pattern`` in full.

    ``description`` says in words what matches (it is the error message's "must be ...");
    ``example`` is a matching string for the generated tests.
    """

    def __init__(self, pattern, description, *, example):
        self.pattern, self.description, self.example = re.compile(pattern), description, example

    def is_satisfied_by(self, value):
        return isinstance(value, str) and self.pattern.fullmatch(value) is not None

    def __str__(self):
        return self.description

    def valid_example(self):
        return self.example

    def invalid_examples(self):
        return ["", "two words", "semi;colon", 3]


def _is_array_like(value):
    if isinstance(value, (str, bytes, dict, set)):
        return False
    return isinstance(value, (list, tuple, np.ndarray)) or hasattr(value, "__array__")


_NAMED = {
    "array-like": (_is_array_like, "an array-like", [[0.0]], ["text", object()]),
    "boolean": (lambda v: isinstance(v, (bool, np.bool_)), "a bool", True, ["text", 2]),
    "random_state": (
        lambda v: v is None or _is_integer(v) and 0 <= v < 2**32
        or isinstance(v, (np.random.RandomState, np.random.Generator)),
        "None, an int in [0, 2**32) or a numpy random generator", 0, [-1, "text", 1.5]),
    "callable": (callable, "a callable", print, ["text"]),
    "seed": (lambda v: _is_integer(v) and 0 <= v < 2**63 or isinstance(v, np.random.Generator),
             "an int in [0, 2**63) or a numpy Generator", 0, [None, -1, 1.5, "text"]),
}


def _named(constraint):
    if constraint not in _NAMED:
        raise ValueError(f"unknown constraint {constraint!r}")
    return _NAMED[constraint]


def constraint_satisfied(constraint, value):
    """True if ``value`` satisfies one constraint."""
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        return bool(_named(constraint)[0](value))
    return constraint.is_satisfied_by(value)


def describe_constraint(constraint):
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return _named(constraint)[1]
    return str(constraint)


def valid_example(constraint):
    """A value the constraint accepts (used by the generated tests)."""
    if constraint is None:
        return None
    if isinstance(constraint, str):
        return _named(constraint)[2]
    return constraint.valid_example()


def invalid_examples(constraints):
    """Values that satisfy none of ``constraints`` (used by the generated tests)."""
    candidates = [None]
    for c in constraints:
        candidates += _named(c)[3] if isinstance(c, str) else ([] if c is None else c.invalid_examples())
    out = []
    for value in candidates:
        if not any(constraint_satisfied(c, value) for c in constraints):
            if not any(value is o or (type(value) is type(o) and _same(value, o)) for o in out):
                out.append(value)
    return out


def _same(a, b):
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:
        return False


def check_params(constraints, params, owner):
    """Raise ``InvalidParameterError`` for the first parameter that satisfies none of its constraints.

    The message names the owner, the parameter, the value and the valid values.
    """
    for name, value in params.items():
        if name not in constraints:
            raise InvalidParameterError(f"{owner}: parameter {name!r} has no declared constraints")
        allowed = constraints[name]
        if any(constraint_satisfied(c, value) for c in allowed):
            continue
        valid = " or ".join(describe_constraint(c) for c in allowed)
        raise InvalidParameterError(
            f"{owner}: {name}={_short_repr(value)} is not valid; {name} must be {valid}")


def _short_repr(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_estimator_params(estimator):
    """Check an estimator's constructor parameters against its ``_parameter_constraints``.

    Called first thing in ``fit``; raises ``InvalidParameterError`` naming the parameter.
    """
    check_params(type(estimator)._parameter_constraints, estimator.get_params(deep=False),
                 type(estimator).__name__)


def validate_params(constraints):
    """Decorator: check a function's arguments against ``constraints`` before it runs.

    ``constraints`` maps every parameter name of the function (``self`` aside, so that a
    class can decorate its ``__init__``) to a list of constraints; a name missing from the
    table is an error when the function is defined.  The table is
    kept on the function as ``__parameter_constraints__``.
    """
    def decorate(func):
        signature = inspect.signature(func)
        names = [p.name for p in signature.parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]
        missing = set(names) - set(constraints)
        extra = set(constraints) - set(names)
        if missing or extra:
            raise ValueError(f"{func.__qualname__}: constraints missing for {sorted(missing)}, "
                             f"unknown names {sorted(extra)}")

        owner = func.__qualname__.replace(".__init__", "")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            check_params(constraints, {k: v for k, v in bound.arguments.items() if k in constraints},
                         owner)
            return func(*args, **kwargs)

        wrapper.__parameter_constraints__ = constraints
        return wrapper

    return decorate
