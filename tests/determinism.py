"""Fingerprints of fitted lecturelib estimators, for the determinism tests.

Run as a script (``python tests/determinism.py``) it prints a JSON object mapping each
estimator to a SHA-256 of everything it learned; the tests compare these fingerprints
within one process and across two fresh interpreters.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.utils import get_tags

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_estimator_checks import PARAMS, estimator_classes  # noqa: E402


def data():
    X, y = make_blobs(n_samples=60, centers=3, n_features=4, random_state=3)
    return X, y


# Estimators whose fit does not take (X, y) or (X,): "module.Class" -> (X, y) -> fit args.
FIT_ARGS = {
    "em.MultinomialMixture": lambda X, y: (np.abs(X),),  # counts must be non-negative
}


def fit_args(key, estimator, X, y):
    if key in FIT_ARGS:
        return FIT_ARGS[key](X, y)
    if get_tags(estimator).target_tags.required:  # supervised: classifiers, metric learners
        return (X, y)
    return (X,)


def fingerprint(estimator) -> str:
    h = hashlib.sha256()
    for name in sorted(vars(estimator)):
        if not name.endswith("_") or name.startswith("_"):
            continue
        value = getattr(estimator, name)
        h.update(name.encode())
        try:
            arr = np.asarray(value)
        except Exception:  # noqa: BLE001 - non-array attributes are hashed by their repr
            h.update(repr(value).encode())
            continue
        if arr.dtype == object:
            h.update(repr(value).encode())
        else:
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def randomised_estimators():
    """Every estimator class that takes a ``random_state``."""
    out = {}
    for key, cls in sorted(estimator_classes().items()):
        if "random_state" in inspect.signature(cls.__init__).parameters:
            out[key] = cls
    return out


def fingerprints(seed=0) -> dict[str, str]:
    X, y = data()
    out = {}
    for key, cls in randomised_estimators().items():
        est = cls(**{**PARAMS.get(key, {}), "random_state": seed})
        est.fit(*fit_args(key, est, X, y))
        out[key] = fingerprint(est)
    return out


if __name__ == "__main__":
    print(json.dumps(fingerprints()))
