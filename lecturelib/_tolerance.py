"""One switch that tightens the stopping tolerance of every iterative solver of lecturelib.

A test switch, not a modelling option: the tolerance-variation test of ``make test-all``
(``tests/test_tolerance.py``) re-runs every notebook with

    LECTURELIB_TOLERANCE_FACTOR=0.1

and requires the stored outputs unchanged.  A printed digit that moves when every solver
stops ten times closer to its optimum was never guaranteed by the computation: it depends
on where an iterative method happened to stop, so another machine's rounding may move it
too.

Every iterative solver of lecturelib reads the switch where it starts:

- :func:`tightened` multiplies a stopping tolerance by the factor;
- :func:`iteration_cap` divides an iteration cap by it (rounded up), so that the tighter
  stop is reached before the cap (a ``ConvergenceWarning`` would itself change the output);
  a run with tolerance 0 is a fixed number of steps and keeps its cap;
- :func:`cvxpy_settings` gives the keyword arguments of ``cvxpy.Problem.solve`` that tighten
  the conic solver's own tolerances by the factor.

The factor is a float in (0, 1]; unset, it is 1, and then every function returns exactly
the values the solvers used before the switch existed (``cvxpy_settings`` returns no
keywords at all).  Any other value raises a ``ValueError`` naming the variable and the
value the first time a solver reads it.  Thresholds that define the result rather than
how exactly it is computed (rank cut-offs of eigenvalues, the rank of an incomplete
Cholesky factor, validation tolerances) do not read the switch.
"""

from __future__ import annotations

import math
import os

ENV_VAR = "LECTURELIB_TOLERANCE_FACTOR"

# The stopping tolerances cvxpy's solvers use when no keyword is given (cvxpy 1.x: the
# solver's own defaults for Clarabel; cvxpy's defaults eps_abs = eps_rel = 1e-5 for SCS
# and OSQP) with the iteration caps they use.  Keys are the settings' names as
# ``Problem.solve(**kwargs)`` passes them on to the solver.
_CVXPY_DEFAULTS = {
    "CLARABEL": {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8, "tol_ktratio": 1e-6,
                 "max_iter": 200},
    "SCS": {"eps_abs": 1e-5, "eps_rel": 1e-5, "max_iters": 100_000},
    "OSQP": {"eps_abs": 1e-5, "eps_rel": 1e-5, "max_iter": 10_000},
}
_CAPS = {"max_iter", "max_iters"}


def factor() -> float:
    """The factor of ``LECTURELIB_TOLERANCE_FACTOR``: 1.0 when unset, else a float in (0, 1]."""
    raw = os.environ.get(ENV_VAR)
    if raw is None:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 < value <= 1.0:  # also refuses nan
        raise ValueError(f"{ENV_VAR}={raw!r} is not a float in (0, 1]: it is the factor by "
                         "which every solver tolerance of lecturelib is tightened (default 1)")
    return value


def tightened(tol):
    """``tol`` times the factor (``tol`` itself at factor 1)."""
    f = factor()
    return tol if f == 1.0 else tol * f


def iteration_cap(max_iter, tol):
    """``max_iter`` divided by the factor, rounded up (``max_iter`` itself at factor 1).

    ``tol`` is the run's stopping tolerance as given: with ``tol == 0`` the run has no
    stopping rule to tighten, its cap is the number of steps asked for (a chapter showing
    the first few iterations, say), and it is returned unchanged.
    """
    f = factor()
    return max_iter if f == 1.0 or tol == 0 else math.ceil(max_iter / f)


def cvxpy_settings(solver) -> dict:
    """Keyword arguments for ``cvxpy.Problem.solve(solver=solver, ...)``: the solver's
    stopping tolerances times the factor and its iteration cap divided by it.

    Empty at factor 1 (the solver's defaults).  ``solver`` is a cvxpy solver name such as
    ``cp.CLARABEL``; a solver without tolerances here (an exact LP or QP method) raises a
    ``ValueError`` rather than ignoring the switch.
    """
    f = factor()
    name = str(solver).upper()
    if name not in _CVXPY_DEFAULTS:
        raise ValueError(f"no tolerance settings for the cvxpy solver {solver!r}; "
                         f"known: {', '.join(sorted(_CVXPY_DEFAULTS))}")
    if f == 1.0:
        return {}
    return {key: (math.ceil(value / f) if key in _CAPS else value * f)
            for key, value in _CVXPY_DEFAULTS[name].items()}


def default_cvxpy_settings(solver) -> dict:
    """The solver's default stopping tolerances and iteration cap, spelled out, for a solve
    that the switch must not tighten (the wrapper of the notebooks' cvxpy calls adds
    tightened settings only where a call names none).  A solve whose problem is so
    degenerate that the solver cannot get below its defaults uses this, and says why."""
    name = str(solver).upper()
    if name not in _CVXPY_DEFAULTS:
        raise ValueError(f"no tolerance settings for the cvxpy solver {solver!r}; "
                         f"known: {', '.join(sorted(_CVXPY_DEFAULTS))}")
    return dict(_CVXPY_DEFAULTS[name])


def solve_with_clarabel(problem, owner, advice, settings=None, solver="SDP solver"):
    """``problem.solve`` with Clarabel; its failures, a Rust panic included, become ``ValueError``.

    Clarabel's panics reach Python as pyo3's ``PanicException``, a ``BaseException``
    (not an ``Exception``); only that one is caught besides the ordinary exceptions.
    ``settings`` are Clarabel's keyword arguments, by default those of the tolerance switch.
    The messages read "``owner``: the ``solver`` (Clarabel, through cvxpy) failed ...;
    ``advice``".  The status ("optimal_inaccurate" included) is left to the caller.
    """
    import warnings

    import cvxpy as cp

    if settings is None:
        settings = cvxpy_settings(cp.CLARABEL)

    try:
        with warnings.catch_warnings():  # "optimal_inaccurate" is handled by the caller
            warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
            problem.solve(solver=cp.CLARABEL, **settings)
    except Exception as exc:  # cvxpy and Clarabel fail with assorted exception types
        raise ValueError(f"{owner}: the {solver} (Clarabel, through cvxpy) failed with "
                         f"{type(exc).__name__}; {advice}") from exc
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise ValueError(f"{owner}: the {solver} (Clarabel, through cvxpy) failed (a panic "
                         f"inside Clarabel); {advice}") from None
