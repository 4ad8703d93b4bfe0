"""Every lecturelib estimator under scikit-learn's own estimator test suite.

Estimators are discovered from the package, so a new estimator is checked the moment it
lands.  ``PARAMS`` gives constructor arguments where the defaults are not a sensible
general-purpose model; ``EXPECTED_FAILED`` lists, with a one-line reason each, the checks
an estimator cannot pass by design.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import lecturelib

NOT_ESTIMATOR_MODULES = {"grading", "datasets"}


def estimator_classes():
    found = {}
    for info in pkgutil.iter_modules(lecturelib.__path__):
        if info.name.startswith("_") or info.name in NOT_ESTIMATOR_MODULES:
            continue
        module = importlib.import_module(f"lecturelib.{info.name}")
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if (issubclass(obj, BaseEstimator) and obj.__module__ == module.__name__
                    and not name.startswith("_")):
                found[f"{info.name}.{name}"] = obj
    return found


# Constructor arguments used for the checks (keys: "module.Class").
PARAMS: dict[str, dict] = {
    # The checks feed real-valued data; binarize at 0 as scikit-learn's BernoulliNB does.
    "em.BernoulliMixture": {"binarize": 0.0},
    # A random start, so that the seed matters on the well-separated blobs of the tests.
    "em.GaussianMixture": {"n_components": 3, "init_params": "random"},
    # The checks feed feature matrices, not Gram matrices (tests/test_subspace.py covers
    # the precomputed form).
    "subspace.IncompleteCholesky": {"kernel": "rbf"},
    # The checks fit dozens of small problems; the SDP route (cvxpy) is tested in
    # tests/test_metric.py, the checks use the fast first-order solver.
    "metric.MetricEmbeddingNN": {"solver": "subgradient", "max_iter": 200},
}

# Second configurations checked as well (keys: "module.Class"): routes that the defaults
# do not take.
EXTRA_PARAMS: list[tuple[str, dict]] = [
    # the Nystroem (low-rank) route
    ("spectral.KernelPCA", {"kernel": "rbf", "n_landmarks": 10, "random_state": 0}),
]

# "module.Class" -> {check name: reason}.  Keep this short; every entry needs a reason.
EXPECTED_FAILED: dict[str, dict[str, str]] = {}


def instances():
    out = []
    for key, cls in sorted(estimator_classes().items()):
        out.append(cls(**PARAMS.get(key, {})))
    classes = estimator_classes()
    out += [classes[key](**params) for key, params in EXTRA_PARAMS]
    return out


def expected_failed(estimator):
    key = f"{type(estimator).__module__.split('.')[-1]}.{type(estimator).__name__}"
    return EXPECTED_FAILED.get(key, {})


def test_estimators_are_discovered():
    names = set(estimator_classes())
    assert "bayes.GaussianBayesClassifier" in names
    assert set(PARAMS) <= names and set(EXPECTED_FAILED) <= names, "stale entries"
    assert {key for key, _ in EXTRA_PARAMS} <= names, "stale entries"


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
