"""Kernel functions, Gram matrices, explicit feature maps and Mercer's condition.

See the chapter "Support vector machines and kernels" (``chapters/04-svm.ipynb``).

A kernel :math:`k(x, y) = \\phi(x)^\\top\\phi(y)` is an inner product in some feature
space.  Every kernel function here takes two data matrices (one point per row) and
returns the matrix of kernel values between their rows; ``Y=None`` means ``Y = X``.
Parameter names follow scikit-learn (``gamma``, ``degree``, ``coef0``).
"""

from __future__ import annotations

import itertools
import math
from numbers import Integral, Real

import numpy as np

from ._validation import Interval, Options, as_float_array, check_square, validate_params

__all__ = [
    "linear_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "sigmoid_kernel",
    "negative_distance_kernel",
    "gram_matrix",
    "kernel_diagonal",
    "normalised_gram_matrix",
    "polynomial_exponents",
    "polynomial_feature_map",
    "feature_space_dimension",
    "rbf_feature_map",
    "min_eigenvalue",
    "is_psd",
]


def _pair(X, Y):
    X = as_float_array(X, "X", ndim=2)
    if Y is None:
        return X, X
    Y = as_float_array(Y, "Y", ndim=2)
    if Y.shape[1] != X.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}"
        )
    return X, Y


_DEGREE = Interval(Integral, 1, None)
_OFFSET = Interval(Real, 0, None)
_GAMMA = Interval(Real, 0, None, closed="neither")
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)
# explicit feature maps are refused beyond this many entries (n_samples x dimension)
MAX_FEATURE_ENTRIES = 10_000_000


def _finite_values(values, what, advice="scale X down"):
    """``values`` if every entry is finite; else a ``ValueError`` saying that they overflow.

    The kernels are computed in float64 with overflow warnings silenced here and turned
    into this error: an inf or NaN Gram matrix is never returned.
    """
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what}: the values overflow float64 (inf or NaN) for this input; "
                         f"{advice}")
    return values


def _check_feature_dimension(n_samples, dimension, name, value):
    if n_samples * dimension > MAX_FEATURE_ENTRIES:
        raise ValueError(f"{name}={value} gives {dimension} features for {n_samples} points, "
                         f"more than {MAX_FEATURE_ENTRIES} entries in all")


def _gamma_value(gamma, n_features):
    """``gamma``, or ``1 / n_features`` for ``None``."""
    return 1.0 / n_features if gamma is None else float(gamma)


@validate_params({"X": ["array-like"], "Y": ["array-like", None]})
def linear_kernel(X, Y=None):
    r"""The linear kernel :math:`k(x, y) = x^\top y`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None (``Y = X``)

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "The kernel trick".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import linear_kernel
    >>> X = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> print(linear_kernel(X))
    [[1. 1.]
     [1. 5.]]
    """
    X, Y = _pair(X, Y)
    with np.errstate(over="ignore", invalid="ignore"):
        values = X @ Y.T
    return _finite_values(values, "linear_kernel")


@validate_params({
    "X": ["array-like"],
    "Y": ["array-like", None],
    "degree": [_DEGREE],
    "coef0": [_OFFSET],
    "gamma": [_GAMMA, None],
})
def polynomial_kernel(X, Y=None, degree=2, coef0=0.0, gamma=1.0):
    r"""The polynomial kernel :math:`k(x, y) = (\gamma\, x^\top y + \theta)^d`.

    With ``coef0`` :math:`\theta = 0` the kernel is homogeneous: its feature space holds
    the monomials of degree exactly :math:`d`.  With :math:`\theta > 0` it holds every
    monomial of degree at most :math:`d` (see :func:`polynomial_feature_map`).

    Parameters
    ----------
    X : array_like of shape (n, k)
    Y : array_like of shape (m, k), default=None
    degree : int, default=2
        The exponent :math:`d \ge 1`.
    coef0 : float, default=0.0
        The offset :math:`\theta \ge 0`.
    gamma : float, default=1.0
        Scale of the inner product.

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "Polynomial kernels".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import polynomial_kernel
    >>> X = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> print(polynomial_kernel(X, degree=2, coef0=1.0))
    [[ 4.  4.]
     [ 4. 36.]]
    """
    X, Y = _pair(X, Y)
    gamma = _gamma_value(gamma, X.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        values = (gamma * (X @ Y.T) + float(coef0)) ** int(degree)
    return _finite_values(values, "polynomial_kernel", f"lower the degree ({int(degree)}), gamma "
                          f"({gamma:g}) or coef0 ({float(coef0):g}), or scale X down")


def _squared_distances(X, Y):
    """||x_i - y_j||^2 = ||x_i||^2 + ||y_j||^2 - 2 x_i'y_j, computed in place."""
    D = X @ Y.T
    D *= -2.0
    D += np.einsum("ij,ij->i", X, X)[:, None]
    D += np.einsum("ij,ij->i", Y, Y)[None, :]
    return np.maximum(D, 0.0, out=D)  # rounding can make a zero distance slightly negative


@validate_params({"X": ["array-like"], "Y": ["array-like", None], "gamma": [_GAMMA, None]})
def rbf_kernel(X, Y=None, gamma=None):
    r"""The Gaussian (RBF) kernel :math:`k(x, y) = \exp(-\gamma\,\|x - y\|^2)`.

    The notes write it as :math:`\exp(-\|x-y\|^2 / (2\sigma^2))`, that is
    :math:`\gamma = 1 / (2\sigma^2)`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None
    gamma : float, default=None
        Positive width parameter; ``None`` means ``1 / d``.

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "The RBF kernel".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import rbf_kernel
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> print(rbf_kernel(X, gamma=0.5).round(4))
    [[1.     0.3679]
     [0.3679 1.    ]]
    """
    X, Y = _pair(X, Y)
    gamma = _gamma_value(gamma, X.shape[1])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        D = _squared_distances(X, Y)
        D *= -gamma
        values = np.exp(D, out=D)
    return _finite_values(values, "rbf_kernel")


@validate_params({
    "X": ["array-like"],
    "Y": ["array-like", None],
    "gamma": [Interval(Real, None, None)],
    "coef0": [Interval(Real, None, None)],
})
def sigmoid_kernel(X, Y=None, gamma=1.0, coef0=-1.0):
    r"""The "sigmoid kernel" :math:`\tanh(\gamma\,x^\top y + c)`: **not** a Mercer kernel.

    Its Gram matrices are in general not positive semi-definite (with the default
    :math:`\gamma = 1, c = -1` a point with :math:`\|x\| < 1` already has
    :math:`k(x, x) < 0`).  It is here as a counter-example for :func:`is_psd`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None
    gamma : float, default=1.0
    coef0 : float, default=-1.0

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "Mercer's condition".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import sigmoid_kernel, is_psd
    >>> X = np.array([[1.0], [2.0]])
    >>> K = sigmoid_kernel(X, gamma=1.0, coef0=-1.0)
    >>> print(K.round(4))
    [[0.     0.7616]
     [0.7616 0.9951]]
    >>> is_psd(K)
    False
    """
    X, Y = _pair(X, Y)
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.tanh(float(gamma) * (X @ Y.T) + float(coef0))
    return _finite_values(values, "sigmoid_kernel")


@validate_params({"X": ["array-like"], "Y": ["array-like", None]})
def negative_distance_kernel(X, Y=None):
    r"""The function :math:`k(x, y) = -\|x - y\|`: **not** a Mercer kernel.

    Its Gram matrix has a zero diagonal, hence trace zero; for two or more distinct
    points it is not the zero matrix, so some eigenvalue is negative.  A
    counter-example for :func:`is_psd`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "Mercer's condition".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import negative_distance_kernel
    >>> X = np.array([[0.0], [3.0]])
    >>> print(negative_distance_kernel(X) + 0.0)
    [[ 0. -3.]
     [-3.  0.]]
    """
    X, Y = _pair(X, Y)
    with np.errstate(over="ignore", invalid="ignore"):
        values = -np.sqrt(_squared_distances(X, Y))
    return _finite_values(values, "negative_distance_kernel")


_KERNELS = {
    "linear": linear_kernel,
    "poly": polynomial_kernel,
    "polynomial": polynomial_kernel,
    "rbf": rbf_kernel,
    "sigmoid": sigmoid_kernel,
    "negative_distance": negative_distance_kernel,
}


@validate_params({
    "X": ["array-like"],
    "Y": ["array-like", None],
    "kernel": [Options(*_KERNELS), "callable"],
})
def gram_matrix(X, Y=None, kernel="rbf", **params):
    r"""The matrix of kernel values :math:`K_{ij} = k(x_i, y_j)`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None
        ``None`` gives the Gram matrix of ``X`` with itself.
    kernel : {"linear", "poly", "rbf", "sigmoid", "negative_distance"} or callable
        A callable is called as ``kernel(x, y)`` on pairs of rows (slow, but any
        function of two vectors works) and must return a number.
    **params
        Passed to the named kernel (``gamma``, ``degree``, ``coef0``).

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Support vector machines and kernels", section "The kernel trick".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import gram_matrix
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> print(gram_matrix(X, kernel="polynomial", degree=2, coef0=1.0))
    [[4. 1.]
     [1. 4.]]
    >>> print(gram_matrix(X, kernel="rbf", gamma=1.0).round(4))
    [[1.     0.1353]
     [0.1353 1.    ]]
    """
    if callable(kernel):
        X, Y = _pair(X, Y)
        K = np.array([[float(kernel(x, y, **params)) for y in Y] for x in X])
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel returned NaN or infinity")
        return K
    return _KERNELS[kernel](X, Y, **params)


@validate_params({"X": ["array-like"], "kernel": [Options(*_KERNELS), "callable"]})
def kernel_diagonal(X, kernel="rbf", **params):
    r"""The diagonal :math:`k(x_i, x_i)` of the Gram matrix, without forming the matrix.

    Parameters
    ----------
    X : array_like of shape (n, d)
    kernel, **params
        As in :func:`gram_matrix`.

    Returns
    -------
    diag : ndarray of shape (n,)

    See the chapter "Support vector machines and kernels".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import kernel_diagonal
    >>> X = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> print(kernel_diagonal(X, kernel="linear"))
    [1. 5.]
    >>> print(kernel_diagonal(X, kernel="rbf", gamma=1.0))
    [1. 1.]
    """
    X = as_float_array(X, "X", ndim=2)
    sq = np.sum(X * X, axis=1)
    if kernel == "linear":
        return sq
    if kernel in ("poly", "polynomial"):
        polynomial_kernel(X[:1], **params)  # checks the parameters as the kernel does
        degree, coef0 = params.get("degree", 2), params.get("coef0", 0.0)
        gamma = _gamma_value(params.get("gamma", 1.0), X.shape[1])
        return (gamma * sq + coef0) ** degree
    if kernel == "rbf":
        rbf_kernel(X[:1], **params)  # checks gamma as the kernel does
        return np.ones(X.shape[0])
    return np.array([gram_matrix(x[None, :], None, kernel, **params)[0, 0] for x in X])


@validate_params({
    "X": ["array-like"],
    "Y": ["array-like", None],
    "kernel": [Options(*_KERNELS), "callable"],
})
def normalised_gram_matrix(X, Y=None, kernel="rbf", **params):
    r"""The Gram matrix of the normalised kernel
    :math:`\tilde k(x, y) = k(x, y)/\sqrt{k(x, x)\,k(y, y)}`.

    The normalised kernel is the cosine of the angle between :math:`\phi(x)` and
    :math:`\phi(y)`: every point has unit norm in its feature space,
    :math:`\tilde k(x, x) = 1`, so that a squared residual lies in :math:`[0, 1]` and the
    bounds of chapter 10 hold with :math:`R = 1`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), default=None
        ``None`` gives the matrix of ``X`` with itself (its diagonal is exactly 1).
    kernel, **params
        As in :func:`gram_matrix`. The kernel must be positive on the diagonal,
        :math:`k(x, x) > 0` for every point.

    Returns
    -------
    K : ndarray of shape (n, m)

    See the chapter "Subspace methods and their bounds", section "Kernel PCA".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import normalised_gram_matrix
    >>> X = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> print(normalised_gram_matrix(X, kernel="poly", degree=2, coef0=1.0))
    [[1.         0.33333333]
     [0.33333333 1.        ]]
    """
    K = gram_matrix(X, Y, kernel, **params)
    diag_x = np.diag(K).copy() if Y is None else kernel_diagonal(X, kernel, **params)
    diag_y = diag_x if Y is None else kernel_diagonal(Y, kernel, **params)
    for name, diag in (("X", diag_x), ("Y", diag_y)):
        if np.any(diag <= 0):
            raise ValueError(f"normalised_gram_matrix: k(x, x) must be positive, got "
                             f"{float(diag.min()):g} for a row of {name}: the {kernel!r} "
                             "kernel cannot be normalised there")
    with np.errstate(over="ignore"):
        scale = np.sqrt(np.outer(diag_x, diag_y))
    if not np.all(np.isfinite(scale)):  # k(x, x) k(y, y) overflows: take the roots first
        scale = np.sqrt(diag_x)[:, None] * np.sqrt(diag_y)[None, :]
    return K / scale


@validate_params({
    "n_features": [Interval(Integral, 1, None)],
    "degree": [_DEGREE],
    "homogeneous": ["boolean"],
})
def polynomial_exponents(n_features, degree, homogeneous=True):
    r"""The exponent vectors of the monomials in the polynomial feature space.

    Homogeneous kernel: all :math:`n \in \mathbb{N}^k` with :math:`\sum_i n_i = d`.
    With an offset: all :math:`n` with :math:`\sum_i n_i \le d` (the missing power
    :math:`d - \sum_i n_i` goes to the extra coordinate :math:`\sqrt\theta`).

    Order: by decreasing total degree, and within one degree by decreasing
    lexicographic order, e.g. :math:`x_1^2, x_1x_2, x_2^2, x_1, x_2, 1` for
    :math:`k = d = 2` with an offset.

    Parameters
    ----------
    n_features : int
        :math:`k`.
    degree : int
        :math:`d`.
    homogeneous : bool, default=True

    Returns
    -------
    exponents : ndarray of shape (dimension, n_features), integer

    See the chapter "Support vector machines and kernels", section "Polynomial kernels".

    Examples
    --------
    >>> from lecturelib.kernels import polynomial_exponents
    >>> print(polynomial_exponents(2, 2))
    [[2 0]
     [1 1]
     [0 2]]
    """
    k, d = int(n_features), int(degree)
    degrees = [d] if homogeneous else range(d, -1, -1)
    rows = []
    for total in degrees:
        block = []
        for combo in itertools.combinations_with_replacement(range(k), total):
            block.append(np.bincount(np.array(combo, dtype=int), minlength=k))
        if total == 0:
            block = [np.zeros(k, dtype=int)]
        block.sort(key=lambda e: tuple(-e))
        rows.extend(block)
    return np.array(rows, dtype=int).reshape(-1, k)


@validate_params({
    "n_features": [Interval(Integral, 1, None)],
    "degree": [_DEGREE],
    "homogeneous": ["boolean"],
})
def feature_space_dimension(n_features, degree, homogeneous=True):
    r"""Dimension of the polynomial feature space.

    .. math::

        \dim = \binom{k + d - 1}{d}\ \text{(homogeneous)},\qquad
        \dim = \binom{k + d}{d}\ \text{(with offset)}.

    Parameters
    ----------
    n_features : int
        :math:`k`, the input dimension.
    degree : int
        :math:`d`.
    homogeneous : bool, default=True

    Returns
    -------
    int

    See the chapter "Support vector machines and kernels", section "Polynomial kernels".

    Examples
    --------
    >>> from lecturelib.kernels import feature_space_dimension
    >>> feature_space_dimension(2, 2)
    3
    >>> feature_space_dimension(256, 5, homogeneous=False)
    9711475137
    """
    k, d = int(n_features), int(degree)
    return math.comb(k + d - 1, d) if homogeneous else math.comb(k + d, d)


def _multinomial(total, exps):
    out = math.factorial(total)
    for e in exps:
        out //= math.factorial(int(e))
    return out


@validate_params({"X": ["array-like"], "degree": [_DEGREE], "theta": [_OFFSET]})
def polynomial_feature_map(X, degree, theta=0.0):
    r"""The explicit feature vector of the polynomial kernel :math:`(x^\top y + \theta)^d`.

    Homogeneous case (:math:`\theta = 0`), one coordinate per exponent vector
    :math:`n` with :math:`\sum_i n_i = d`:

    .. math:: \phi(x)_n = \sqrt{\binom{d}{n_1,\dots,n_k}}\; x_1^{n_1}\cdots x_k^{n_k}.

    With an offset, add the coordinate :math:`x_{k+1} = \sqrt\theta`; the exponent
    vectors then run over :math:`\sum_{i\le k} n_i \le d` with
    :math:`n_{k+1} = d - \sum_{i\le k} n_i`, and

    .. math:: \phi(x)_n = \sqrt{\binom{d}{n_1,\dots,n_{k+1}}}\;
              x_1^{n_1}\cdots x_k^{n_k}\,\theta^{n_{k+1}/2}.

    For :math:`k = d = 2` this is
    :math:`(x_1^2, \sqrt2 x_1x_2, x_2^2, \sqrt{2\theta}x_1, \sqrt{2\theta}x_2, \theta)`;
    the notes print the last coordinate as :math:`\sqrt\theta`, which is wrong.
    Coordinates are ordered as in :func:`polynomial_exponents`.

    Parameters
    ----------
    X : array_like of shape (n, k)
    degree : int
    theta : float, default=0.0
        The offset; ``0`` gives the homogeneous map.

    Returns
    -------
    Phi : ndarray of shape (n, dimension)
        ``Phi @ Phi.T`` equals ``polynomial_kernel(X, degree=degree, coef0=theta)``.

    See the chapter "Support vector machines and kernels", section "Polynomial kernels".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import (polynomial_feature_map,
    ...                                 polynomial_kernel)
    >>> X = np.array([[1.0, 2.0], [3.0, -1.0]])
    >>> Phi = polynomial_feature_map(X, degree=2)
    >>> print(Phi.shape)
    (2, 3)
    >>> np.allclose(Phi @ Phi.T, polynomial_kernel(X, degree=2))
    True
    """
    X = as_float_array(X, "X", ndim=2)
    d, theta = int(degree), float(theta)
    homogeneous = theta == 0.0
    _check_feature_dimension(X.shape[0], feature_space_dimension(X.shape[1], d, homogeneous),
                             "degree", d)
    exps = polynomial_exponents(X.shape[1], d, homogeneous=homogeneous)
    cols = []
    with np.errstate(over="ignore", invalid="ignore"):
        for e in exps:
            rest = d - int(e.sum())
            try:
                coef = math.sqrt(_multinomial(d, list(e) + [rest])) * theta ** (rest / 2.0)
            except OverflowError:    # a coefficient beyond float64: refused below
                coef = math.inf
            cols.append(coef * np.prod(X ** e[None, :], axis=1))
        values = np.stack(cols, axis=1)
    return _finite_values(values, "polynomial_feature_map", "lower the degree or scale X down")


@validate_params({
    "X": ["array-like"],
    "max_degree": [Interval(Integral, 0, None)],
    "gamma": [_GAMMA, None],
})
def rbf_feature_map(X, max_degree, gamma=0.5):
    r"""The RBF feature map truncated after the degree ``max_degree`` terms.

    From

    .. math:: e^{-\gamma\|x-y\|^2} = e^{-\gamma\|x\|^2} e^{-\gamma\|y\|^2}
              \sum_{j\ge0} (2\gamma)^j (x^\top y)^j / j!,

    the coordinates of degree :math:`j` are

    .. math:: \phi(x)_{j,n} = e^{-\gamma\|x\|^2}\sqrt{\frac{(2\gamma)^j}{j!}}
              \sqrt{\binom{j}{n}}\, x_1^{n_1}\cdots x_k^{n_k}, \qquad \sum_i n_i = j.

    With :math:`\gamma = 1/2` (the notes' :math:`\sigma = 1`) this is the notes' map,
    with the prefactor written as :math:`e^{-\|x\|^2/2}/\sqrt{j!}` (the notes' form is
    undefined at :math:`j = 0`).  ``Phi @ Phi.T`` tends to the RBF Gram matrix as
    ``max_degree`` grows.

    Parameters
    ----------
    X : array_like of shape (n, k)
    max_degree : int
        Largest :math:`j` kept (``0`` keeps only the constant term).
    gamma : float, default=0.5

    Returns
    -------
    Phi : ndarray of shape (n, sum_j dim_j)

    See the chapter "Support vector machines and kernels", section "The RBF kernel".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import rbf_feature_map, rbf_kernel
    >>> X = np.array([[0.1, 0.2], [0.3, -0.1]])
    >>> Phi = rbf_feature_map(X, max_degree=8, gamma=0.5)
    >>> np.allclose(Phi @ Phi.T, rbf_kernel(X, gamma=0.5), atol=1e-6)
    True
    """
    X = as_float_array(X, "X", ndim=2)
    gamma = _gamma_value(gamma, X.shape[1])
    k, top = X.shape[1], int(max_degree)
    _check_feature_dimension(X.shape[0], sum(math.comb(k + j - 1, j) for j in range(top + 1)),
                             "max_degree", top)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scale = np.exp(-gamma * np.sum(X * X, axis=1))[:, None]
        blocks = [np.ones((X.shape[0], 1))]
        for j in range(1, top + 1):
            try:
                coef = math.sqrt((2 * gamma) ** j / math.factorial(j))
            except OverflowError:
                # both parts overflow a float long before their ratio: in logs (and an
                # infinite coefficient, refused below, where the ratio overflows too)
                log_coef = 0.5 * (j * (math.log(2.0) + math.log(gamma)) - math.lgamma(j + 1))
                coef = math.exp(log_coef) if log_coef < _LOG_FLOAT_MAX else math.inf
            blocks.append(coef * polynomial_feature_map(X, j))
        values = scale * np.concatenate(blocks, axis=1)
    return _finite_values(values, "rbf_feature_map", "lower max_degree or gamma, or scale X down")


@validate_params({"K": ["array-like"]})
def min_eigenvalue(K):
    """The smallest eigenvalue of a symmetric matrix (``ValueError`` if not symmetric).

    Parameters
    ----------
    K : array_like of shape (n, n)

    Returns
    -------
    float

    See the chapter "Support vector machines and kernels", section "Mercer's condition".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import min_eigenvalue
    >>> round(min_eigenvalue(np.array([[2.0, 1.0], [1.0, 2.0]])), 6)
    1.0
    """
    K = check_square(K, "K")
    scale = max(1.0, float(np.abs(K).max()))
    if not np.allclose(K, K.T, rtol=0, atol=1e-10 * scale):
        raise ValueError("K must be symmetric")
    return float(np.linalg.eigvalsh(K)[0])


@validate_params({"K": ["array-like"], "tol": [Interval(Real, 0, None)]})
def is_psd(K, tol=1e-10):
    r"""Mercer's condition on a finite sample: is the Gram matrix PSD?

    Returns ``True`` when ``K`` is symmetric and its smallest eigenvalue is at least
    :math:`-\mathrm{tol}\cdot\max(1, \max_{ij}|K_{ij}|)` (the tolerance absorbs rounding).
    A non-symmetric matrix is not a Gram matrix of any kernel, so it gives ``False``.

    Parameters
    ----------
    K : array_like of shape (n, n)
    tol : float, default=1e-10
        Relative tolerance, non-negative.

    Returns
    -------
    bool

    See the chapter "Support vector machines and kernels", section "Mercer's condition".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.kernels import is_psd
    >>> is_psd(np.array([[2.0, 1.0], [1.0, 2.0]]))
    True
    >>> is_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))
    False
    """
    K = check_square(K, "K")
    scale = max(1.0, float(np.abs(K).max()))
    if not np.allclose(K, K.T, rtol=0, atol=1e-10 * scale):
        return False
    return bool(np.linalg.eigvalsh(K)[0] >= -tol * scale)
