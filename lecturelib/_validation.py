"""Input checks shared by the lecturelib modules.

Every public function validates its input up front and raises a ``ValueError`` that
names the argument and the problem.  Nothing is clipped, renormalised or dropped
silently.  Estimators use scikit-learn's public ``validate_data``/``check_array``;
these helpers cover the plain arrays (probability vectors, count tables, kernel
matrices) that scikit-learn has no checker for.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_float_array",
    "check_probability_vector",
    "check_nonnegative",
    "check_square",
    "check_symmetric_psd",
    "check_positive_int",
    "check_in_open_interval",
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
    """Non-negative array whose entries along ``axis`` sum to one (within ``atol``)."""
    arr = check_nonnegative(p, name)
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


def check_symmetric_psd(K, name, *, tol=1e-8):
    """Symmetric positive semi-definite matrix (a kernel Gram matrix).

    The smallest eigenvalue may be as low as ``-tol * max(1, largest |eigenvalue|)``,
    to allow for rounding; anything below is reported as not PSD.
    """
    arr = check_square(K, name)
    scale = max(1.0, float(np.abs(arr).max()))
    if not np.allclose(arr, arr.T, rtol=0, atol=1e-10 * scale):
        raise ValueError(f"{name} must be symmetric")
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


def check_in_open_interval(x, name, low=0.0, high=1.0):
    """Real number strictly between ``low`` and ``high``."""
    try:
        val = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}") from None
    if not (low < val < high):
        raise ValueError(f"{name} must lie strictly between {low} and {high}, got {x}")
    return val
