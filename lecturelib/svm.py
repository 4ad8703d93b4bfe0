"""The soft-margin support vector machine, solved in the dual by SMO.

See the chapter "Support vector machines and kernels" (``chapters/04-svm.ipynb``) and,
for the Lagrangian duality behind it, the appendix "Variance, derivatives and
constrained optimisation" (``chapters/A-optimisation.ipynb``).

The dual of the soft-margin problem (the notes' weight :math:`\\nu` is written
:math:`C`, as in scikit-learn) is

.. math::

    \\begin{aligned}
    \\max_{\\mu}\\ & D(\\mu) = \\sum_i \\mu_i
        - \\tfrac12 \\sum_{i,j} \\mu_i\\mu_j y_i y_j k(x_i, x_j)\\\\
    \\text{s.t.}\\ & 0 \\le \\mu_i \\le C,\\ \\sum_i y_i\\mu_i = 0 .
    \\end{aligned}

:class:`SVC` solves it by sequential minimal optimisation (Platt 1998): at each step
only two multipliers move, along the line that keeps :math:`\\sum_i y_i\\mu_i = 0`,
and the pair is chosen by the second-order working-set rule of Fan, Chen and Lin
(2005), the rule of LIBSVM.  With a linear kernel it can instead start from a
primal-dual interior-point method (Mehrotra's predictor-corrector), whose Newton systems
are d x d through the Sherman-Morrison-Woodbury identity (Ferris and Munson 2003); SMO
then finishes from that point under the same stopping rule.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from numbers import Integral, Real

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import kernels as _k
from ._tolerance import iteration_cap, tightened
from ._validation import (
    Interval,
    Options,
    as_float_array,
    check_estimator_params,
    check_symmetric_psd,
    validate_params,
)

__all__ = ["SVC", "dual_objective", "kkt_violation", "smo_pair_update"]

_TAU = 1e-12  # libsvm's floor for a non-positive curvature along the pair direction
_C = Interval(Real, 0, None, closed="neither")
_MU = Interval(Real, 0, None)
_REAL = Interval(Real, None, None)
_SIGN = Options(-1, 1, -1.0, 1.0)


def _default_max_iter(n):
    """The SMO step cap for ``max_iter=-1``: far above what a well-posed problem needs
    (a few steps per point), low enough that a huge ``C`` or a tiny ``tol`` ends in
    seconds with a warning rather than running for hours."""
    return max(100_000, 50 * n)


@validate_params({"mu": ["array-like"], "y": ["array-like"], "K": ["array-like"]})
def dual_objective(mu, y, K):
    r"""The SVM dual objective :math:`D(\mu) = \mathbf 1^\top\mu - \frac12\mu^\top M\mu`.

    Here :math:`M_{ij} = y_i y_j K_{ij}`.

    Parameters
    ----------
    mu : array_like of shape (n,)
        The multipliers.
    y : array_like of shape (n,)
        Labels in :math:`\{-1, +1\}`.
    K : array_like of shape (n, n)
        Gram matrix (symmetric positive semi-definite).

    Returns
    -------
    float

    See the chapter "Support vector machines and kernels", section "The dual problem".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.svm import dual_objective
    >>> K = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> y = np.array([1.0, -1.0])
    >>> round(dual_objective(np.array([1.0, 1.0]), y, K), 4)
    1.0
    """
    mu = as_float_array(mu, "mu", ndim=1)
    y = _check_signs(y, mu.size)
    K = as_float_array(K, "K", ndim=2)
    if K.shape != (mu.size, mu.size):
        raise ValueError(f"K must have shape {(mu.size, mu.size)}, got {K.shape}")
    K = check_symmetric_psd(K, "K")
    v = mu * y
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(mu.sum() - 0.5 * v @ K @ v)
    if not math.isfinite(value):
        raise ValueError(f"the dual objective overflows float64: mu (largest {np.abs(mu).max():.3g}) "
                         f"and K (largest {np.abs(K).max():.3g}) are too large; rescale them")
    return value


def _check_signs(y, n):
    y = as_float_array(y, "y", ndim=1)
    if y.size != n:
        raise ValueError(f"y must have {n} entries, got {y.size}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain only -1 and +1")
    return y


@validate_params({
    "mu": ["array-like"],
    "y": ["array-like"],
    "K": ["array-like"],
    "C": [_C],
    "intercept": [_REAL],
})
def kkt_violation(mu, y, K, C, intercept):
    r"""The largest violation of the soft-margin KKT conditions.

    With decision values :math:`f(x_i) = \sum_j \mu_j y_j K_{ij} + \text{intercept}`
    the conditions are :math:`y_if(x_i) \ge 1` if :math:`\mu_i = 0`,
    :math:`y_if(x_i) = 1` if :math:`0 < \mu_i < C`, :math:`y_if(x_i) \le 1` if
    :math:`\mu_i = C`, plus :math:`0 \le \mu_i \le C` and :math:`\sum_i y_i\mu_i = 0`.

    Parameters
    ----------
    mu : array_like of shape (n,)
        The multipliers.
    y : array_like of shape (n,)
        Labels in :math:`\{-1, +1\}`.
    K : array_like of shape (n, n)
        Gram matrix (symmetric positive semi-definite).
    C : float
    intercept : float
        The intercept (the notes' :math:`-b`).

    Returns
    -------
    float
        The largest violation over all conditions (0 at an exact solution).

    See the chapter "Support vector machines and kernels", section "Reading the multipliers".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.svm import kkt_violation
    >>> K = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> y = np.array([1.0, -1.0])
    >>> mu = np.array([0.5, 0.5])
    >>> round(kkt_violation(mu, y, K, C=1.0, intercept=0.0), 6)
    0.0
    """
    mu = as_float_array(mu, "mu", ndim=1)
    y = _check_signs(y, mu.size)
    K = as_float_array(K, "K", ndim=2)
    if K.shape != (mu.size, mu.size):
        raise ValueError(f"K must be the square Gram matrix of the {mu.size} points of mu, "
                         f"got shape {K.shape}")
    K = check_symmetric_psd(K, "K")
    margins = y * (K @ (mu * y) + float(intercept))
    atol = 1e-9 * C
    viol = [0.0, abs(float(y @ mu)), float(np.max(-mu, initial=0)), float(np.max(mu - C, initial=0))]
    at_zero = mu <= atol
    at_c = mu >= C - atol
    free = ~at_zero & ~at_c
    viol.append(float(np.max(1 - margins[at_zero], initial=0)))
    viol.append(float(np.max(margins[at_c] - 1, initial=0)))
    viol.append(float(np.max(np.abs(margins[free] - 1), initial=0)))
    return max(viol)


@validate_params({
    "mu_i": [_MU],
    "mu_j": [_MU],
    "y_i": [_SIGN],
    "y_j": [_SIGN],
    "E_i": [_REAL],
    "E_j": [_REAL],
    "K_ii": [_MU],
    "K_jj": [_MU],
    "K_ij": [_REAL],
    "C": [_C],
})
def smo_pair_update(mu_i, mu_j, y_i, y_j, E_i, E_j, K_ii, K_jj, K_ij, C):
    r"""One SMO step: optimise the dual over the pair :math:`(\mu_i, \mu_j)` exactly.

    Moving along :math:`y_i\Delta\mu_i + y_j\Delta\mu_j = 0`, the dual is a concave
    parabola in :math:`\mu_j` with curvature
    :math:`\eta = K_{ii} + K_{jj} - 2K_{ij}`; its unconstrained maximum is

    .. math:: \mu_j^{\text{new}} = \mu_j + \frac{y_j (E_i - E_j)}{\eta},

    where :math:`E_t = f(x_t) - y_t` are the prediction errors.  The new value is then
    clipped to the segment :math:`[L, H]` of the box :math:`[0, C]^2` that the line
    crosses, and :math:`\mu_i` follows from the equality constraint.

    Parameters
    ----------
    mu_i, mu_j : float
        Current multipliers.
    y_i, y_j : {-1, +1}
    E_i, E_j : float
        Errors :math:`f(x_t) - y_t` at the current multipliers (any intercept: it cancels).
    K_ii, K_jj : float >= 0
        Kernel values :math:`k(x_i, x_i)` and :math:`k(x_j, x_j)`.
    K_ij : float
        :math:`k(x_i, x_j)`, with :math:`K_{ij}^2 \le K_{ii}K_{jj}` (the pair's 2 x 2
        Gram matrix is positive semi-definite).
    C : float

    Returns
    -------
    (float, float)
        The new :math:`(\mu_i, \mu_j)`.

    See the chapter "Support vector machines and kernels", section "Sequential minimal optimisation".

    Examples
    --------
    >>> from lecturelib.svm import smo_pair_update
    >>> mu_i, mu_j = smo_pair_update(0.0, 0.0, 1.0, -1.0, -1.0,
    ...                              1.0, 1.0, 1.0, -1.0, C=1.0)
    >>> print(round(mu_i, 4), round(mu_j, 4))
    0.5 0.5
    """
    if mu_i > C or mu_j > C:
        raise ValueError(f"the multipliers must lie in [0, C] = [0, {C}], got mu_i={mu_i}, mu_j={mu_j}")
    if abs(K_ij) > math.sqrt(K_ii) * math.sqrt(K_jj) + 1e-10 * max(K_ii, K_jj):
        raise ValueError(f"K_ij={K_ij} exceeds sqrt(K_ii * K_jj) (K_ii={K_ii}, K_jj={K_jj}): "
                         "the pair's 2 x 2 Gram matrix is not positive semi-definite, so "
                         "these are not kernel values")
    if y_i == y_j:
        low, high = max(0.0, mu_i + mu_j - C), min(C, mu_i + mu_j)
    else:
        low, high = max(0.0, mu_j - mu_i), min(C, C + mu_j - mu_i)
    eta = max(K_ii + K_jj - 2.0 * K_ij, _TAU)
    new_j = min(max(mu_j + y_j * (E_i - E_j) / eta, low), high)
    new_i = mu_i + y_i * y_j * (mu_j - new_j)
    return float(new_i), float(new_j)


class _KernelRows:
    """Rows of the training Gram matrix, computed when first needed and kept.

    With ``full`` (at most ``cache_limit`` points) every computed row is kept in an
    n x n buffer, so no kernel value is computed twice; otherwise a least-recently-used
    cache keeps ``cache_rows`` rows.  A precomputed matrix is used as it is.
    """

    def __init__(self, X, kernel, params, full, cache_rows, precomputed=None):
        self.X, self.kernel, self.params = X, kernel, params
        self.K = precomputed
        if precomputed is not None:
            self.diag = np.diag(precomputed).copy()
            return
        self.sq = np.einsum("ij,ij->i", X, X)
        self.diag = _k.kernel_diagonal(X, kernel, **params)
        self.full = full
        if full:
            self.buffer = np.empty((X.shape[0], X.shape[0]))  # pages are touched lazily
            self.done = np.zeros(X.shape[0], dtype=bool)
        else:
            self.cache = OrderedDict()
            self.cache_rows = max(2, cache_rows)

    def _compute(self, i, out=None):
        kernel, X = self.kernel, self.X
        if kernel in ("rbf", "linear", "poly"):
            r = np.dot(X, X[i], out=out)
            if kernel == "rbf":
                r *= -2.0
                r += self.sq
                r += self.sq[i]
                np.maximum(r, 0.0, out=r)
                r *= -self.params["gamma"]
                np.exp(r, out=r)
            elif kernel == "poly":
                r *= self.params["gamma"]
                r += self.params["coef0"]
                r **= self.params["degree"]
            return r
        r = _k.gram_matrix(X[i:i + 1], X, kernel, **self.params)[0]
        if out is not None:
            out[:] = r
            return out
        return r

    def row(self, i):
        if self.K is not None:
            return self.K[i]
        if self.full:
            if not self.done[i]:
                self._compute(i, out=self.buffer[i])
                self.done[i] = True
            return self.buffer[i]
        r = self.cache.get(i)
        if r is not None:
            self.cache.move_to_end(i)
            return r
        r = self._compute(i)
        self.cache[i] = r
        if len(self.cache) > self.cache_rows:
            self.cache.popitem(last=False)
        return r


def _smo(rows, y, C, tol, max_iter, record, start=None):
    """Solve the dual; returns (mu, F, n_iter, history, stop, violation) with
    F_t = y_t - sum_s mu_s y_s K_ts; ``stop`` is "converged", "cap" or "stalled" (a step
    that changed no multiplier: the same pair would be chosen again forever), and
    ``violation`` the largest KKT violation max F(I_up) - min F(I_low) at the stop.
    ``start`` is a feasible (mu, F) to begin from instead of mu = 0.

    F is -y * (gradient of the minimised objective 1/2 mu'Qmu - 1'mu).  The maximal
    violating pair is i = argmax F over I_up, and j minimises -(F_i - F_t)^2 / a_it over
    t in I_low with F_t < F_i (Fan, Chen and Lin 2005, WSS 3).
    """
    n = y.size
    mu, F = (np.zeros(n), y.copy()) if start is None else start
    up, low = _index_sets(mu, y, C)
    diag = rows.diag
    ninf, pinf = np.full(n, -np.inf), np.full(n, np.inf)
    history = []
    it = 0
    while True:
        Fu = np.where(up, F, ninf)
        i = int(np.argmax(Fu))
        Fi = Fu[i]
        Fl = np.where(low, F, pinf)
        violation = Fi - Fl.min()
        if violation < tol:
            return mu, F, it, history, "converged", violation
        if not math.isfinite(violation):
            raise ValueError(f"SVC: SMO broke down after {it} steps: the KKT violation is "
                             f"{violation} (the kernel values overflow float64); scale the data")
        if it == max_iter:
            return mu, F, it, history, "cap", violation
        Ki = rows.row(i)
        b = Fi - Fl  # > 0 exactly for the candidates t in I_low with F_t < F_i
        a = diag + diag[i] - 2.0 * Ki
        np.maximum(a, _TAU, out=a)
        score = np.where(b > 0, -(b * b) / a, pinf)
        j = int(np.argmin(score))
        Kj = rows.row(j)
        yi, yj = y[i], y[j]
        ai, aj = mu[i], mu[j]
        eta = max(diag[i] + diag[j] - 2.0 * Ki[j], _TAU)
        # Unconstrained step along y_i d_i = -y_j d_j, then clip (libsvm's update).
        if yi != yj:
            delta = (F[i] - F[j]) * yi / eta  # (-G_i - G_j) / eta
            diff = ai - aj
            ni, nj = ai + delta, aj + delta
            if diff > 0:
                if nj < 0:
                    nj, ni = 0.0, diff
            elif ni < 0:
                ni, nj = 0.0, -diff
            if diff > 0:
                if ni > C:
                    ni, nj = C, C - diff
            elif nj > C:
                nj, ni = C, C + diff
        else:
            delta = (F[j] - F[i]) * yi / eta  # (G_i - G_j) / eta
            total = ai + aj
            ni, nj = ai - delta, aj + delta
            if total > C:
                if ni > C:
                    ni, nj = C, total - C
                if nj > C:
                    nj, ni = C, total - C
            else:
                if nj < 0:
                    nj, ni = 0.0, total
                if ni < 0:
                    ni, nj = 0.0, total
        di, dj = ni - ai, nj - aj
        if di == 0 and dj == 0:
            return mu, F, it, history, "stalled", violation
        mu[i], mu[j] = ni, nj
        F -= (yi * di) * Ki
        F -= (yj * dj) * Kj
        for t, v in ((i, ni), (j, nj)):
            if y[t] > 0:
                up[t], low[t] = v < C, v > 0
            else:
                up[t], low[t] = v > 0, v < C
        it += 1
        if record:
            # theta = sum(mu) - 1/2 mu'Q mu, and Q mu = 1 - y * F
            history.append(float(mu.sum() - 0.5 * mu @ (1.0 - y * F)))


# solver="auto" takes the interior point for a linear kernel when its Newton systems are at
# most this size: benchmarks/SVM_SOLVERS.md measured it up to 200 features, from 500 times
# faster than SMO to 1.75 times slower
_AUTO_MAX_NEWTON_SIZE = 200
_IPM_MAX_ITER = 100  # benchmarks/SVM_SOLVERS.md: 64 iterations at most, mostly 10 to 30
_IPM_STEP = 0.99  # fraction of the distance to the boundary that a step may go
_NEAR_A_BOUND = 1e-12  # relative to C: a multiplier this close to 0 or C is put on it


def _cholesky(A):
    """LAPACK's Cholesky factor of the symmetric positive definite ``A`` (lower)."""
    factor, info = dpotrf(A, lower=1, clean=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"the Newton matrix is not positive definite (dpotrf info {info})")
    return factor


def _woodbury_inverse(Z, dinv):
    """``v -> (D + Z Z')^{-1} v`` for ``D = diag(1 / dinv)``, through the d x d matrix
    ``I + Z' D^{-1} Z`` (Sherman-Morrison-Woodbury) when Z has fewer columns than rows,
    else through the n x n matrix itself."""
    n, d = Z.shape
    if d < n:
        M = Z.T @ (Z * dinv[:, None])
        M.flat[::d + 1] += 1.0
        factor = _cholesky(M)

        def solve(v):
            dv = dinv * v
            return dv - dinv * (Z @ dpotrs(factor, Z.T @ dv, lower=1)[0])
    else:
        H = Z @ Z.T
        H.flat[::n + 1] += 1.0 / dinv
        factor = _cholesky(H)

        def solve(v):
            return dpotrs(factor, v, lower=1)[0]
    return solve


def _step_to_boundary(mu, slack, d_mu, z, d_z, u, d_u):
    """The largest step t <= 1 keeping mu + t d_mu, slack - t d_mu, z + t d_z and u + t d_u positive."""
    with np.errstate(divide="ignore"):
        primal = np.min(np.where(d_mu < 0, mu, slack) / np.abs(d_mu))
        low = np.min(z / np.maximum(-d_z, 0.0))
        high = np.min(u / np.maximum(-d_u, 0.0))
    return min(1.0, float(primal), float(low), float(high))


def _on_the_faces(mu, slack, z, u, y, C):
    """The interior point ``mu`` with each multiplier whose bound looks active moved onto it.

    A bound is taken as active when its multiplier exceeds the distance to it (z_t > mu_t
    for mu_t >= 0, u_t > slack_t = C - mu_t for mu_t <= C), the indicator of El-Bakry,
    Tapia and Zhang (1994), or when that distance is below ``1e-12 C`` (a multiplier on
    the bound whose own multiplier is zero too).  The equality ``y'mu = 0`` is then
    restored on the free multipliers (those it leaves within rounding of a bound go onto
    it); None if that would leave the box (the indicators are not yet sharp enough).
    """
    faces = mu.copy()
    near = _NEAR_A_BOUND * C
    faces[(z > mu) | (mu < near)] = 0.0
    faces[(u > slack) | (slack < near)] = C
    residual = float(y @ faces)
    if abs(residual) <= y.size * np.finfo(float).eps * C:  # the sum's own rounding
        return faces
    free = (faces > 0) & (faces < C)
    if free.any():
        moved = faces[free] - y[free] * (residual / np.count_nonzero(free))
        rounding = 4 * np.finfo(float).eps * C  # a multiplier this close to a bound is on it
        moved[np.abs(moved) < rounding] = 0.0
        moved[np.abs(moved - C) < rounding] = C
        if np.all((moved >= 0) & (moved <= C)):
            faces[free] = moved
            return faces
    return None


def _errors(Z, y, mu):
    """F_t = y_t - sum_s mu_s y_s k(x_s, x_t) for the linear kernel, with Z = y * X."""
    return y * (1.0 - Z @ (Z.T @ mu))


@np.errstate(all="ignore")  # a numerical breakdown ends the method, and SMO finishes
def _interior_point_linear(Z, y, C, tol, max_iter, record):
    r"""Mehrotra's predictor-corrector method for the dual with :math:`Q = ZZ^\top`.

    Minimises :math:`\tfrac12\|Z^\top\mu\|^2 - \mathbf 1^\top\mu` subject to
    :math:`y^\top\mu = 0` and :math:`0 \le \mu \le C`, with multipliers
    :math:`z, u \ge 0` for the two bounds and :math:`\nu` for the equality (at the
    optimum :math:`\nu` is the intercept).  Each Newton system
    :math:`(Q + D)\Delta\mu + y\Delta\nu = r`, :math:`D = z/\mu + u/(C - \mu)`, is solved
    through :func:`_woodbury_inverse`.  The iterates keep :math:`y^\top\mu = 0` and stay
    inside the box.  After each iteration the point moved onto the faces
    (:func:`_on_the_faces`) is tested with SMO's rule, and the method stops when its
    violation is below ``tol``.

    Returns (mu, F, n_iter, history) for :func:`_smo` to finish from.
    """
    n = y.size
    pos = y > 0
    n_pos = np.count_nonzero(pos)
    # A start inside the box, on y'mu = 0, at the scale 1 / mean K_tt of the multipliers.
    scale = float(np.einsum("ij,ij->", Z, Z)) / n
    if not math.isfinite(scale):  # the kernel values overflow: SMO says so, from mu = 0
        return np.zeros(n), y.copy(), 0, []
    level = min(0.5 * C, 1.0 / scale) if scale > 0 else 0.5 * C
    mu = np.where(pos, level * min(n_pos, n - n_pos) / n_pos, level * min(n_pos, n - n_pos) / (n - n_pos))
    slack = C - mu  # its own iterate: C - mu loses all its digits when mu nears C
    nu = 0.0
    grad = Z @ (Z.T @ mu) - 1.0
    z = np.maximum(grad, 0.0) + 1.0
    u = np.maximum(-grad, 0.0) + 1.0
    gap = (mu @ z + slack @ u) / (2 * n)
    history = []
    for it in range(1, max_iter + 1):
        dual_residual = grad + nu * y - z + u
        try:
            solve = _woodbury_inverse(Z, 1.0 / (z / mu + u / slack))
        except np.linalg.LinAlgError:  # the iterates broke down numerically: SMO finishes
            break
        h_y = solve(y)
        y_h_y = float(y @ h_y)
        if not (gap > 0 and y_h_y > 0 and math.isfinite(gap + y_h_y)):
            break  # the iterates broke down numerically: SMO finishes

        def direction(t_low, t_high):
            # Newton step for mu z = t_low, (C - mu) u = t_high and the dual residual.
            r = -dual_residual + (t_low / mu - z) - (t_high / slack - u)
            h_r = solve(r)
            d_nu = float(y @ h_r) / y_h_y
            d_mu = h_r - d_nu * h_y
            d_z = (t_low - mu * z - z * d_mu) / mu
            d_u = (t_high - slack * u + u * d_mu) / slack
            return d_mu, d_nu, d_z, d_u

        zeros = np.zeros(n)
        d_mu, _, d_z, d_u = direction(zeros, zeros)
        step = _step_to_boundary(mu, slack, d_mu, z, d_z, u, d_u)
        gap_affine = ((mu + step * d_mu) @ (z + step * d_z)
                      + (slack - step * d_mu) @ (u + step * d_u)) / (2 * n)
        centring = (gap_affine / gap) ** 3 * gap
        d_mu, d_nu, d_z, d_u = direction(centring - d_mu * d_z, centring + d_mu * d_u)
        step = _IPM_STEP * _step_to_boundary(mu, slack, d_mu, z, d_z, u, d_u)
        if not (math.isfinite(step) and np.all(np.isfinite(d_mu))):
            break
        mu = mu + step * d_mu
        slack = slack - step * d_mu
        nu += step * d_nu
        z += step * d_z
        u += step * d_u
        w = Z.T @ mu
        grad = Z @ w - 1.0
        if record:
            history.append(float(mu.sum() - 0.5 * w @ w))
        gap = (mu @ z + slack @ u) / (2 * n)
        if gap > tol * level:
            continue  # the gap is too wide for the faces to pass: z_t ~ gap / mu_t > tol
        faces = _on_the_faces(mu, slack, z, u, y, C)
        if faces is None:
            continue
        F = _errors(Z, y, faces)
        up, low = _index_sets(faces, y, C)
        if F[up].max(initial=-np.inf) - F[low].min(initial=np.inf) < tol:
            return faces, F, it, history
    # No point on the faces passed: SMO finishes from the last interior point (or from 0).
    if not np.all(np.isfinite(mu)):
        mu = np.zeros(n)
    return mu, _errors(Z, y, mu), it, history


def _index_sets(mu, y, C):
    """I_up (y_t mu_t may increase: y=+1 and mu<C, or y=-1 and mu>0) and I_low (it may decrease)."""
    pos = y > 0
    up = np.where(pos, mu < C, mu > 0)
    low = np.where(pos, mu > 0, mu < C)
    return up, low


def _intercept(mu, y, F, C):
    """libsvm's rule: mean of F over free multipliers, else the middle of the feasible range."""
    free = (mu > 0) & (mu < C)
    if np.any(free):
        return float(F[free].mean())
    # Feasible intercepts b satisfy max(F over I_up) <= b <= min(F over I_low).
    up, low = _index_sets(mu, y, C)
    lo = F[up].max() if np.any(up) else -np.inf
    hi = F[low].min() if np.any(low) else np.inf
    if not np.isfinite(lo):
        return float(hi)
    if not np.isfinite(hi):
        return float(lo)
    return float(0.5 * (lo + hi))


class SVC(ClassifierMixin, BaseEstimator):
    r"""Two-class soft-margin support vector machine, trained by SMO on the dual.

    Solves

    .. math::

        \max_\mu \sum_i\mu_i - \tfrac12\sum_{i,j}\mu_i\mu_j y_iy_j k(x_i,x_j)
        \quad\text{s.t.}\quad 0\le\mu_i\le C,\ \sum_i y_i\mu_i = 0,

    and classifies by the sign of
    :math:`f(x) = \sum_i \mu_i y_i k(x_i, x) + \text{intercept}`.  The notes write
    :math:`w^\top x - b`, so their :math:`b` is ``-intercept_``.  ``classes_[1]`` is the
    positive class (:math:`y = +1`), as in scikit-learn, and ``dual_coef_`` and
    ``intercept_`` follow scikit-learn's sign conventions, so the numbers can be
    compared with ``sklearn.svm.SVC`` directly.  The hard-margin SVM is the limit of
    large ``C`` on separable data.

    The solver computes a row of the Gram matrix only when SMO first needs it.  With
    at most ``cache_limit`` training points every computed row is kept (the Gram matrix
    fills up lazily, and no kernel value is computed twice); beyond that a
    least-recently-used cache of ``cache_size`` megabytes keeps the recent rows.  Pairs
    are chosen by the second-order rule of Fan, Chen and Lin (2005); iteration stops
    when the maximal KKT violation
    :math:`\max_{I_\text{up}} F - \min_{I_\text{low}} F` falls below ``tol``.

    Parameters
    ----------
    C : float, default=1.0
        Penalty on the slacks (the notes' :math:`\nu`), positive and finite.
    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        A callable receives two vectors and returns a number.  With "precomputed",
        ``X`` in ``fit`` is the (symmetric PSD) Gram matrix of the training points and
        in ``predict`` the kernel values between test points (rows) and training points.
    degree : int, default=3
        Degree of the "poly" kernel :math:`(\gamma x^\top y + \text{coef0})^d`.
    gamma : {"scale", "auto"} or float, default="scale"
        RBF and polynomial scale: "scale" is ``1 / (n_features * X.var())``, "auto" is
        ``1 / n_features``, as in scikit-learn.
    coef0 : float, default=0.0
        Offset of the "poly" kernel.
    tol : float, default=1e-3
        Stopping tolerance on the maximal violating pair.
    max_iter : int, default=-1
        Limit on SMO steps; -1 for the default cap ``max(100000, 50 * n_samples)``
        (a well-posed problem needs a few steps per point).  Reaching the cap gives a
        ``ConvergenceWarning``.
    cache_limit : int, default=5000
        Largest training set for which the full Gram matrix is precomputed.
    cache_size : float, default=200
        Row cache, in megabytes, for larger training sets.
    record_objective : bool, default=False
        Store the dual objective after every step in ``objective_history_``.
    solver : {"auto", "smo", "interior-point"}, default="auto"
        "smo" solves the dual by SMO from :math:`\mu = 0`.  "interior-point" (linear
        kernel only) first runs a primal-dual interior-point method whose Newton systems
        are :math:`m \times m` for the smaller :math:`m` of the numbers of features and
        of training points, stops as soon as its point, with
        the multipliers whose bounds are active moved onto them, meets the same rule
        (violation below ``tol``), and lets SMO finish if it does not: a few heavy
        steps instead of many light ones, the better trade on large, nearly separable
        problems.  "auto" takes "interior-point" for a linear kernel when its Newton
        systems are small (at most 200 features, or at most 200 training points), and
        "smo" otherwise (``benchmarks/SVM_SOLVERS.md``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    alpha_ : ndarray of shape (n_samples,)
        The multipliers :math:`\mu_i` of every training point.
    support_ : ndarray of int
        Indices of the support vectors (:math:`\mu_i > 0`).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Empty for a precomputed kernel.
    n_support_ : ndarray of shape (2,)
        Support vectors per class.
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`y_i\mu_i` for the support vectors.
    intercept_ : ndarray of shape (1,)
    margin_ : float
        Width :math:`2/\|w\|` of the margin band, with
        :math:`\|w\|^2 = \sum_{ij}\mu_i\mu_jy_iy_jk(x_i,x_j)` (in feature space).
    point_kind_ : ndarray of str, shape (n_samples,)
        ``"non-support"`` (:math:`\mu_i = 0`, on or outside the margin),
        ``"margin"`` (:math:`0 < \mu_i < C`, exactly on the margin) or
        ``"margin-error"`` (:math:`\mu_i = C`, slack :math:`\xi_i \ge 0`: inside the
        band, or misclassified when :math:`\xi_i > 1`).
    slack_ : ndarray of shape (n_samples,)
        :math:`\xi_i = \max(0, 1 - y_if(x_i))`.
    dual_objective_ : float
        The dual objective :math:`\theta(\mu)` at the solution.  By strong duality it
        equals the primal objective :math:`\tfrac12\|w\|^2 + C\sum_i\xi_i` up to the
        stopping tolerance (appendix "Variance, derivatives and constrained
        optimisation", section "Strong duality").
    n_iter_ : int
        Number of SMO steps; with the interior-point solver, its iterations plus the
        SMO steps that finished from its point.
    solver_ : str
        The solver used: "smo" or "interior-point".
    objective_history_ : list of float
        Only with ``record_objective=True``.
    coef_ : ndarray of shape (1, n_features)
        The primal :math:`w = \sum_i\mu_iy_ix_i`; linear kernel only.

    See the chapter "Support vector machines and kernels", sections "The dual problem"
    and "Sequential minimal optimisation".

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.svm import SVC
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0],
    ...               [2.0, 2.0], [3.0, 2.0], [2.0, 3.0]])
    >>> y = np.array([-1, -1, -1, 1, 1, 1])
    >>> clf = SVC(kernel="linear", C=10.0).fit(X, y)
    >>> print(clf.predict([[0.5, 0.5], [2.5, 2.5]]))
    [-1  1]
    >>> print(sorted(clf.support_.tolist()))
    [1, 2, 3]
    >>> round(float(clf.margin_), 4)  # 3 / sqrt(2)
    2.1213
    """

    _parameter_constraints = {
        "C": [_C],
        "kernel": [Options("linear", "poly", "rbf", "precomputed"), "callable"],
        "degree": [Interval(Integral, 1, None)],
        "gamma": [Options("scale", "auto"), Interval(Real, 0, None, closed="neither")],
        "coef0": [_REAL],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None), Options(-1)],
        "cache_limit": [Interval(Integral, 0, None)],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "record_objective": ["boolean"],
        "solver": [Options("auto", "smo", "interior-point")],
    }

    def __init__(self, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3,
                 max_iter=-1, cache_limit=5000, cache_size=200, record_objective=False,
                 solver="auto"):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.cache_limit = cache_limit
        self.cache_size = cache_size
        self.record_objective = record_objective
        self.solver = solver

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # ------------------------------------------------------------------ parameters

    def _resolve_gamma(self, X):
        """The numeric gamma of the "rbf" and "poly" kernels ("scale" and "auto" as in scikit-learn)."""
        gamma = self.gamma
        if self.kernel in ("poly", "rbf") and isinstance(gamma, str):
            if gamma == "scale":
                var = X.var()
                return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
            return 1.0 / X.shape[1]
        return None if isinstance(gamma, str) else float(gamma)

    def _resolve_solver(self, X):
        """The solver "auto" stands for, and a clear error for an interior point without a linear kernel."""
        if self.solver == "interior-point" and self.kernel != "linear":
            raise ValueError(f"solver='interior-point' needs kernel='linear', got kernel={self.kernel!r}: "
                             "its Newton systems use the features themselves")
        if self.solver != "auto":
            return self.solver
        small_newton_systems = min(X.shape) <= _AUTO_MAX_NEWTON_SIZE
        return "interior-point" if self.kernel == "linear" and small_newton_systems else "smo"

    def _kernel_params(self):
        if self.kernel == "rbf":
            return {"gamma": self._gamma}
        if self.kernel == "poly":
            return {"degree": self.degree, "coef0": self.coef0, "gamma": self._gamma}
        return {}

    def _kernel_to_support(self, X):
        if self.kernel == "precomputed":
            return X[:, self.support_]
        return _k.gram_matrix(X, self.support_vectors_, self.kernel, **self._kernel_params())

    # ------------------------------------------------------------------ fit

    def fit(self, X, y):
        """Fit the SVM to ``X`` (n_samples, n_features) and two-class labels ``y``.

        Returns
        -------
        self
        """
        check_estimator_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"SVC needs two classes, got {self.classes_.size} class")
        if self.classes_.size > 2:
            raise ValueError(
                "Only binary classification is supported: SVC is a two-class machine, "
                f"got {self.classes_.size} classes (wrap it in "
                "sklearn.multiclass.OneVsOneClassifier for more)"
            )
        C = float(self.C)
        self._gamma = self._resolve_gamma(X)
        solver = self._resolve_solver(X)
        n = X.shape[0]
        signs = np.where(y_idx == 1, 1.0, -1.0)
        if self.kernel == "precomputed":
            K = check_symmetric_psd(X, "the precomputed kernel matrix X")
            if K.shape[0] != y.shape[0]:
                raise ValueError("a precomputed kernel matrix must be square, n_samples x n_samples")
            rows = _KernelRows(None, None, None, True, 0, precomputed=K)
        else:
            cache_rows = int(float(self.cache_size) * 2**20 / (8 * n))
            rows = _KernelRows(X, self.kernel, self._kernel_params(), n <= self.cache_limit, cache_rows)
        max_iter = iteration_cap(self.max_iter if self.max_iter != -1 else _default_max_iter(n), self.tol)
        tol = tightened(self.tol)
        start, n_start, history = None, 0, []
        if solver == "interior-point":
            mu, F, n_start, history = _interior_point_linear(
                X * signs[:, None], signs, C, float(tol),
                iteration_cap(_IPM_MAX_ITER, self.tol), self.record_objective)
            start = (mu, F)
        mu, F, n_iter, smo_history, stop, violation = _smo(rows, signs, C, float(tol), max_iter,
                                                           self.record_objective, start)
        history += smo_history
        n_iter += n_start
        if stop == "cap":
            warnings.warn(
                f"SVC stopped at max_iter={max_iter} SMO steps before the largest KKT violation "
                f"fell below tol={tol} (it is {violation:.3g}); the solution may be inaccurate. "
                "Scale the data, lower C or raise tol (or max_iter).", ConvergenceWarning,
                stacklevel=2)
        elif stop == "stalled":
            warnings.warn(
                f"SVC stopped after {n_iter} SMO steps because a step changed no multiplier "
                f"(rounding), with the largest KKT violation {violation:.3g} >= tol={tol}; the "
                "solution may be inaccurate. Raise tol, or scale the data.",
                ConvergenceWarning, stacklevel=2)
        intercept = _intercept(mu, signs, F, C)

        self.alpha_ = mu
        self.support_ = np.flatnonzero(mu > 0)
        self.support_vectors_ = (X[self.support_] if self.kernel != "precomputed"
                                 else np.empty((0, 0)))
        self.n_support_ = np.array([np.sum(signs[self.support_] < 0), np.sum(signs[self.support_] > 0)],
                                   dtype=np.int32)
        self.dual_coef_ = (mu * signs)[self.support_][None, :]
        self.intercept_ = np.array([intercept])
        # Q mu = 1 - y F, so mu'Q mu = sum(mu) - mu'(y F)
        quad = float(mu.sum() - mu @ (signs * F))
        self.dual_objective_ = float(mu.sum() - 0.5 * quad)
        self.margin_ = 2.0 / math.sqrt(quad) if quad > 0 else np.inf
        # y_i f(x_i) = y_i (y_i - F_i + intercept)
        margins = 1.0 - signs * F + signs * intercept
        self.slack_ = np.maximum(0.0, 1.0 - margins)
        kind = np.full(n, "margin", dtype=object)
        kind[mu == 0] = "non-support"
        kind[mu == C] = "margin-error"
        self.point_kind_ = kind.astype(str)
        self.n_iter_ = int(n_iter)
        self.solver_ = solver
        if self.record_objective:
            self.objective_history_ = history
        return self

    # ------------------------------------------------------------------ predict

    @property
    def coef_(self):
        """The primal weight vector :math:`w = \\sum_i \\mu_i y_i x_i` (linear kernel only)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when kernel='linear'")
        check_is_fitted(self, "dual_coef_")
        return self.dual_coef_ @ self.support_vectors_

    def decision_function(self, X):
        r"""Decision values :math:`f(x) = \sum_i \mu_i y_i k(x_i, x) + \text{intercept}`.

        Positive values predict ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._kernel_to_support(X) @ self.dual_coef_[0] + self.intercept_[0]

    def predict(self, X):
        """The class of each row of ``X``: ``classes_[1]`` where the decision value is positive."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
