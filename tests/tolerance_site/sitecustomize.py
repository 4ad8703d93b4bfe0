"""Test-only start-up hook of the tolerance-variation test (``tests/test_tolerance.py``).

The test puts this folder first on ``PYTHONPATH`` and sets ``LECTURELIB_TOLERANCE_FACTOR``
(say to 0.1) for the notebook kernels.  lecturelib's own solvers read that variable
(``lecturelib/_tolerance.py``); the notebooks also call cvxpy directly
(``prob.solve(solver=cp.CLARABEL)``), and those calls must be tightened too without a line
of plumbing in the notebooks.  So, when the variable is set to something other than 1,
Python imports this module at start-up (``site`` imports the first ``sitecustomize`` on
``sys.path``) and it wraps ``cvxpy.Problem.solve`` so that every solve gets the keyword
arguments of ``lecturelib._tolerance.cvxpy_settings(solver)``, with ``setdefault``: an
explicit setting of the caller (lecturelib passes the same ones) wins.

The wrapping waits for cvxpy's own import (an import hook on ``cvxpy.problems.problem``),
so a process that never uses cvxpy does not pay for importing it.  A solve that does not
name its solver is refused under the switch: which solver cvxpy picks depends on what is
installed, and a tolerance cannot be tightened without knowing whose it is.

A ``sitecustomize`` that this one shadows (a distribution's, further down ``sys.path``) is
run first, so that putting this folder on the path changes nothing else.
"""

import functools
import importlib.abc
import importlib.util
import os
import sys

_VAR = "LECTURELIB_TOLERANCE_FACTOR"
_TARGET = "cvxpy.problems.problem"


def _run_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


def _active():
    raw = os.environ.get(_VAR)
    if raw is None:
        return False
    try:
        return float(raw) != 1.0
    except ValueError:
        return True  # a bad value: the first solve raises lecturelib's ValueError naming it


def _solver_name(args, kwargs):
    solver = kwargs.get("solver", args[0] if args else None)
    return None if solver is None else str(solver)


def wrap(problem_class):
    """Make ``problem_class.solve`` add the tightened settings of the solver it names."""
    original = problem_class.solve
    if getattr(original, "_tolerance_wrapped", False):
        return

    @functools.wraps(original)
    def solve(self, *args, **kwargs):
        from lecturelib._tolerance import cvxpy_settings

        if "method" in kwargs:  # a registered custom solve method: not a solver's tolerances
            return original(self, *args, **kwargs)
        solver = _solver_name(args, kwargs)
        if solver is None:
            raise RuntimeError(f"{_VAR} is set: name the solver of Problem.solve "
                               "(e.g. solver=cp.CLARABEL) so that its tolerances can be tightened")
        for key, value in cvxpy_settings(solver).items():
            kwargs.setdefault(key, value)
        return original(self, *args, **kwargs)

    solve._tolerance_wrapped = True
    problem_class.solve = solve


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Wraps ``Problem.solve`` right after cvxpy has defined it."""

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_wrap(module):
            exec_module(module)
            wrap(module.Problem)

        spec.loader.exec_module = exec_and_wrap
        return spec


_run_shadowed_sitecustomize()
if _active():
    if _TARGET in sys.modules:
        wrap(sys.modules[_TARGET].Problem)
    else:
        sys.meta_path.insert(0, _WrapOnImport())
