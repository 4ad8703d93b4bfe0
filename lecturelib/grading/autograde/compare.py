"""Comparing a student's decoded answers with the solution's, in the grader's process.

Only plain data reaches this module (see :mod:`.safejson`): numbers, strings, lists, dicts,
sets and numpy arrays of numbers.  A reason for a mismatch says *how* the answer differs
(form, shape, which elements), never what the expected values are, and it describes the
student's answer only by its kind (an array, a list, ...): its sizes, and so anything a
notebook could encode in them, are never shown.
"""

from __future__ import annotations

import builtins
import collections
import numbers

import numpy as np

from ..core.safejson import SetAnswer
from .budget import OverBudget, run_in_budget


class Mismatch(Exception):
    """An answer that does not match; the message is the reason shown to the student."""


def _numeric_array(v):
    if v is None or isinstance(v, (bool, str, dict, SetAnswer)):
        return None
    if isinstance(v, np.ndarray):
        return v if v.dtype.kind in "iufc" else None
    if isinstance(v, numbers.Number):
        return np.asarray(v)
    if isinstance(v, list):
        try:
            arr = np.asarray(v)
        except (ValueError, TypeError):
            return None
        return arr if arr.dtype.kind in "iufc" else None
    return None


def describe(v) -> str:
    """The form of a (reference) value, with its sizes."""
    if isinstance(v, np.ndarray):
        return f"an array of shape {v.shape}"
    if isinstance(v, list):
        return f"a list of length {len(v)}"
    return kind(v)


def kind(v) -> str:
    """The kind of a student's value, from a fixed set of words (no sizes, no names)."""
    if isinstance(v, np.ndarray):
        return "an array"
    if isinstance(v, SetAnswer):
        return "a set"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a dict"
    if v is None:
        return "None"
    name = type(v).__name__
    return f"a value of type {name}" if name in _SCALAR_TYPES else "a value of another type"


_SCALAR_TYPES = {"bool", "int", "float", "complex", "str"}


def _compare_allclose(got, want, rtol, atol, path):
    want_arr = _numeric_array(want)
    if want_arr is not None:
        got_arr = _numeric_array(got)
        if got_arr is None:
            raise Mismatch(f"{path}: expected a number or numeric array, got {kind(got)}")
        if got_arr.shape != want_arr.shape:
            raise Mismatch(f"{path}: the answer has the wrong shape (expected {want_arr.shape})")
        if not np.allclose(got_arr, want_arr, rtol=rtol, atol=atol, equal_nan=True):
            wrong = int(np.sum(~np.isclose(got_arr, want_arr, rtol=rtol, atol=atol, equal_nan=True)))
            where = "the value is" if want_arr.size == 1 else f"{wrong} of {want_arr.size} values are"
            raise Mismatch(f"{path}: {where} not the expected one{'s' if want_arr.size > 1 else ''}")
        return
    if isinstance(want, SetAnswer):
        _compare_set(got, want, path)
    elif isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            raise Mismatch(f"{path}: expected a dict with keys {sorted(want)}")
        for key in want:
            _compare_allclose(got[key], want[key], rtol, atol, f"{path}[{key!r}]")
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            raise Mismatch(f"{path}: expected a list of length {len(want)}, got {_another(got, list)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare_allclose(g, w, rtol, atol, f"{path}[{i}]")
    elif type(got) is not type(want):
        raise Mismatch(f"{path}: expected {describe(want)}, got {kind(got)}")
    elif got != want:
        raise Mismatch(f"{path}: not the expected {type(want).__name__}")


def _another(got, cls) -> str:
    return f"{kind(got)} of another length" if isinstance(got, cls) and not isinstance(got, SetAnswer) \
        else kind(got)


def _hashable(v):
    if isinstance(v, np.ndarray):
        return ("array", v.shape, tuple(_hashable(x) for x in v.ravel().tolist()))
    if isinstance(v, SetAnswer):
        return frozenset(_hashable(x) for x in v)
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _members(v, path):
    if isinstance(v, (SetAnswer, list)):
        return list(v)
    if isinstance(v, np.ndarray):
        return list(v) if v.ndim else [v]
    raise Mismatch(f"{path}: expected a collection, got {kind(v)}")


def _compare_set(got, want, path):
    g = {_hashable(x) for x in _members(got, path)}
    w = {_hashable(x) for x in _members(want, path)}
    if g != w:
        extra = ", and unexpected ones" if g - w else ""
        raise Mismatch(f"{path}: {len(w - g)} expected element(s) missing{extra}")


def _compare_up_to_sign(got, want, rtol, atol, path):
    want_arr, got_arr = _numeric_array(want), _numeric_array(got)
    if want_arr is None or got_arr is None:
        raise Mismatch(f"{path}: expected a numeric array, got {kind(got)}")
    if got_arr.shape != want_arr.shape:
        raise Mismatch(f"{path}: the answer has the wrong shape (expected {want_arr.shape})")
    g = got_arr.reshape(got_arr.shape[0], -1) if got_arr.ndim else got_arr.reshape(1, 1)
    w = want_arr.reshape(want_arr.shape[0], -1) if want_arr.ndim else want_arr.reshape(1, 1)
    for j in range(w.shape[1]):
        if not (np.allclose(g[:, j], w[:, j], rtol=rtol, atol=atol)
                or np.allclose(g[:, j], -w[:, j], rtol=rtol, atol=atol)):
            raise Mismatch(f"{path}: column {j} differs even after flipping its sign")


def compare(got, want, how="allclose", rtol=1e-6, atol=1e-9) -> str | None:
    """``None`` if decoded ``got`` matches decoded ``want`` under ``how``, else a reason."""
    try:
        if how == "set":
            _compare_set(got, want, "answer")
        elif how == "up_to_sign":
            _compare_up_to_sign(got, want, rtol, atol, "answer")
        else:
            _compare_allclose(got, want, rtol, atol, "answer")
    except Mismatch as exc:
        return str(exc)
    except (TypeError, ValueError):
        return "the answer could not be compared with the expected one"
    return None


# --------------------------------------------------------------------------------------
# Post-processing in the grader
# --------------------------------------------------------------------------------------

def _numpy_import(name, globals=None, locals=None, fromlist=(), level=0):
    """The only import a ``post`` expression can cause: NumPy's own.  Methods such as
    ``value.sum()`` import NumPy's submodules lazily from C, through the builtins of the
    frame that calls them, which for a ``post`` are the ones below."""
    if level == 0 and (name == "numpy" or name.startswith("numpy.")):
        return builtins.__import__(name, globals, locals, fromlist, level)
    raise ImportError(f"a post expression cannot import {name!r}")


_POST_BUILTINS = {name: getattr(builtins, name) for name in ("abs", "all", "any", "bool", "float", "int", "len", "list", "max",
                               "min", "range", "round", "sorted", "sum", "tuple", "zip")}
_POST_BUILTINS["__import__"] = _numpy_import


WRONG_SHAPE = "the answer has the wrong shape"


def form(v):
    """A hashable description of ``v``'s structure: every array's shape, every list's
    length and every dict's keys, recursively (what ``post`` may compute with)."""
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.kind == "b", v.shape)
    if isinstance(v, SetAnswer):
        return ("set", frozenset(collections.Counter(form(x) for x in v).items()))
    arr = _numeric_array(v)
    if arr is not None:
        return ("array", False, arr.shape)
    if isinstance(v, list):
        return ("list", tuple(form(x) for x in v))
    if isinstance(v, dict):
        return ("dict", frozenset((k, form(x)) for k, x in v.items()))
    return ("value", type(v).__name__)


def same_form(got, want) -> None:
    """Raise :class:`Mismatch` (:data:`WRONG_SHAPE`) unless ``got`` has exactly the
    structure of ``want``: checked before a ``post`` expression runs on ``got``, so that the
    grader computes with a student's data no more than with the solution's."""
    if form(got) != form(want):
        raise Mismatch(WRONG_SHAPE)


def size(v) -> int:
    """How many values ``v`` holds, counting arrays' elements and strings' characters."""
    if isinstance(v, np.ndarray):
        return max(v.size, 1)
    if isinstance(v, (list, tuple, set, frozenset)):
        return 1 + sum(size(x) for x in v)
    if isinstance(v, dict):
        return 1 + sum(size(x) for x in v.values())
    if isinstance(v, str):
        return 1 + len(v)
    return 1


def apply_post(expr: str, value):
    """Evaluate the instructor's ``post`` expression on decoded data (grader side)."""
    return eval(expr, {"__builtins__": _POST_BUILTINS, "np": np}, {"value": value})


POST_MEMORY_MB = 1024  # address space a post may add to the grader's, in a child process
POST_TIMEOUT = 10.0  # seconds
POST_OVER_BUDGET = "the operation on the answer went over its memory or time budget"


def post_both(expr: str, got, want):
    """``post`` applied to the student's ``got`` and the solution's ``want``.

    Refused (:class:`Mismatch`, :data:`WRONG_SHAPE`) when ``got`` has not exactly the
    structure of ``want``, or when its result holds more than 4 times the values of the
    solution's (plus 1000): a ``post`` whose cost depends on the values themselves.  Both
    are computed in a forked child process limited to :data:`POST_MEMORY_MB` more address
    space and :data:`POST_TIMEOUT` seconds; past either, :class:`Mismatch`
    (:data:`POST_OVER_BUDGET`), and the grader's own process never holds the allocation.
    An exception of ``post`` itself is raised again here.
    """
    same_form(got, want)
    outcome = run_in_budget(_post_pair, expr, got, want, memory_mb=POST_MEMORY_MB,
                            timeout=POST_TIMEOUT)
    if isinstance(outcome, OverBudget):
        raise Mismatch(POST_OVER_BUDGET)
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _post_pair(expr, got, want):
    want = apply_post(expr, want)
    got = apply_post(expr, got)
    if size(got) > 4 * size(want) + 1000:
        raise Mismatch(WRONG_SHAPE)
    return got, want
