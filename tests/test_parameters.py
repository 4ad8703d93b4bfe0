"""Generated invalid-parameter tests: every declared parameter of every estimator and function.

Estimators declare the valid values of their constructor parameters in
``_parameter_constraints``; public functions declare theirs with ``@validate_params``
(``lecturelib/_validation.py``).  From those declarations this file generates, for every
parameter, values outside the declared range and asserts the clear error (a ``ValueError``
naming the parameter and its valid values).  A new parameter is covered the moment it is
declared, and an undeclared one fails ``test_every_*_parameter_is_declared``.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import is_dataclass

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from lecturelib import _validation
from lecturelib._validation import InvalidParameterError
from _public_api import public_objects
from test_estimator_checks import PARAMS, estimator_classes

# Modules whose public functions take parameters from users (the grader's internals are
# covered by its own tests; its user-facing entry points are in tests/test_grading.py).
FUNCTION_MODULES = ["bayes", "maxent", "em", "kernels", "svm", "spectral", "clustering", "pac",
                    "vc", "subspace", "hpca", "metric", "datasets", "checks", "plotting"]


def public_functions():
    """Public functions (``__all__``), and public classes that are not estimators (their constructors)."""
    return {key: obj for key, obj in public_objects(FUNCTION_MODULES).items()
            if not (inspect.isclass(obj) and (issubclass(obj, BaseEstimator) or is_dataclass(obj)
                                              or issubclass(obj, Exception)))}


def constraints_of(func):
    target = func.__init__ if inspect.isclass(func) else func
    return getattr(target, "__parameter_constraints__", None)


ESTIMATORS = estimator_classes()
FUNCTIONS = public_functions()


def init_parameters(cls):
    return function_parameters(cls.__init__)


def function_parameters(func):
    return [p.name for p in inspect.signature(func).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]


def test_discovery_finds_the_design():
    assert "spectral.KernelPCA" in ESTIMATORS and "pac.rectangle_sample_size" in FUNCTIONS
    assert len(ESTIMATORS) >= 22 and len(FUNCTIONS) >= 120


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_every_estimator_parameter_is_declared(key):
    cls = ESTIMATORS[key]
    table = cls.__dict__.get("_parameter_constraints") or getattr(cls, "_parameter_constraints", None)
    assert isinstance(table, dict), f"{key} declares no _parameter_constraints"
    assert set(table) == set(init_parameters(cls)), f"{key}: declared {sorted(table)}"


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_every_function_parameter_is_declared(key):
    func = FUNCTIONS[key]
    params = function_parameters(func)
    if not params:
        return
    table = constraints_of(func)
    assert isinstance(table, dict), f"{key} is not decorated with @validate_params"
    assert set(table) == set(params)


def value_id(value):
    text = repr(value)
    return f"<{type(value).__name__}>" if " at 0x" in text else text


def invalid_cases(owner, table):
    """One case per (parameter, invalid value); ids are stable across processes (xdist)."""
    cases = {}
    for name, constraints in sorted(table.items()):
        for value in _validation.invalid_examples(constraints):
            case_id = f"{owner}-{name}={value_id(value)}"[:90]
            cases.setdefault(case_id, pytest.param(owner, name, value, id=case_id))
    return list(cases.values())


ESTIMATOR_CASES = [case for key, cls in sorted(ESTIMATORS.items())
                   for case in invalid_cases(key, getattr(cls, "_parameter_constraints", {}))]
FUNCTION_CASES = [case for key, func in sorted(FUNCTIONS.items())
                  for case in invalid_cases(key, constraints_of(func) or {})]

X_ANY = np.random.default_rng(0).normal(size=(12, 3))
Y_ANY = np.repeat([0, 1], 6)


def message_pattern(name):
    return rf"{re.escape(name)}=.* is not valid; {re.escape(name)} must be "


@pytest.mark.parametrize("key, name, value", ESTIMATOR_CASES)
def test_estimator_refuses_invalid_parameter(key, name, value):
    estimator = ESTIMATORS[key](**PARAMS.get(key, {}))
    estimator.set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=message_pattern(name)):
        estimator.fit(X_ANY, Y_ANY)


def valid_arguments(table):
    """One accepted value per parameter (the first constraint that can give one)."""
    args = {}
    for name, constraints in table.items():
        for constraint in constraints:
            try:
                args[name] = _validation.valid_example(constraint)
                break
            except NotImplementedError:
                continue
        else:
            raise AssertionError(f"no example value for {name}")
    return args


@pytest.mark.parametrize("key, name, value", FUNCTION_CASES)
def test_function_refuses_invalid_parameter(key, name, value):
    func = FUNCTIONS[key]
    args = valid_arguments(constraints_of(func))
    args[name] = value
    with pytest.raises(InvalidParameterError, match=message_pattern(name)):
        func(**args)


def test_examples_are_valid_and_invalid_examples_are_not():
    from numbers import Integral, Real
    from lecturelib._validation import Interval, Options, constraint_satisfied
    for constraint in [Interval(Integral, 1, None), Interval(Real, 0, 1, closed="neither"),
                       Interval(Real, None, 0, closed="right"), Options("a", "b"),
                       "array-like", "boolean", "random_state"]:
        assert constraint_satisfied(constraint, _validation.valid_example(constraint))
        bad = _validation.invalid_examples([constraint])
        assert bad and not any(constraint_satisfied(constraint, v) for v in bad)
    assert not constraint_satisfied(Interval(Integral, 0, None), True)
    assert not constraint_satisfied(Interval(Real, None, None), float("nan"))
    assert constraint_satisfied(Interval(Real, 0, None), np.float32(2))
    assert constraint_satisfied(Interval(Integral, 0, None), np.int64(2))


def test_the_decorator_refuses_an_incomplete_table():
    with pytest.raises(ValueError, match="constraints missing for"):
        @_validation.validate_params({"a": [None]})
        def f(a, b):
            return a
