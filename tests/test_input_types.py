"""Every estimator accepts integer, boolean, float32, list and pandas input with valid values.

Each input kind is converted once, explicitly, to float64; the fitted model must equal the
one fitted on the same values as a float64 array (every learned array attribute, to round-off).
Boolean input carries 0/1 values: the model must equal the one fitted on the 0/1 float64
array, or both must be refused with the same message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from lecturelib import em, subspace
from test_estimator_checks import PARAMS, estimator_classes

ESTIMATORS = estimator_classes()
RNG = np.random.default_rng(0)
X_INT = RNG.integers(0, 6, size=(40, 4))
Y = np.repeat([0, 1], 20)
X_INT[Y == 1] += 2          # two separable-ish classes
X_01 = (X_INT > 3).astype(int)


def make(key):
    estimator = ESTIMATORS[key](**PARAMS.get(key, {}))
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator


TWO_VIEWS = ("spectral.CCA", "spectral.KernelCCA")
Y_VIEW = RNG.integers(0, 6, size=(40, 2)) + X_INT[:, :2]   # CCA's second view


def fit(key, X, y):
    """Fit on ``X`` and ``y`` (for CCA, ``y`` is the second view)."""
    estimator = make(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    return estimator


def learned_arrays(estimator):
    out = {}
    for name, value in vars(estimator).items():
        if name.endswith("_") and not name.startswith("_"):
            arr = np.asarray(value) if not isinstance(value, (dict, str)) else None
            if arr is not None and arr.dtype.kind in "biuf":
                out[name] = arr.astype(float)
    return out


def assert_same_model(a, b):
    fa, fb = learned_arrays(a), learned_arrays(b)
    assert fa.keys() == fb.keys()
    assert fa, "no learned array to compare"
    for name in fa:
        np.testing.assert_allclose(fa[name], fb[name], rtol=1e-9, atol=1e-12, err_msg=name)


def outcome(key, X, y):
    """The fitted model, or the message of the ValueError it raised."""
    try:
        return fit(key, X, y)
    except ValueError as exc:
        return str(exc)


CONVERSIONS = {
    "int": lambda X: X.astype(np.int64),
    "int32": lambda X: X.astype(np.int32),
    "float32": lambda X: X.astype(np.float32),
    "list": lambda X: X.tolist(),
    "pandas": lambda X: pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]),
}


def base_data(key):
    if key == "em.BernoulliMixture":
        return X_01
    return X_INT


@pytest.mark.parametrize("kind", sorted(CONVERSIONS))
@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_input_kind_gives_the_float64_model(key, kind):
    X = base_data(key)
    if key in TWO_VIEWS:
        reference = fit(key, X.astype(np.float64), Y_VIEW.astype(np.float64))
        assert_same_model(fit(key, CONVERSIONS[kind](X), CONVERSIONS[kind](Y_VIEW)), reference)
        return
    reference = fit(key, X.astype(np.float64), Y)
    y = Y.tolist() if kind == "list" else (pd.Series(Y) if kind == "pandas" else Y)
    assert_same_model(fit(key, CONVERSIONS[kind](X), y), reference)


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_boolean_input_is_the_01_model(key):
    second = (Y_VIEW > 3) if key in TWO_VIEWS else Y
    as_bool = outcome(key, X_01.astype(bool), second)
    as_float = outcome(key, X_01.astype(np.float64), second * 1.0 if key in TWO_VIEWS else Y)
    if isinstance(as_float, str):
        assert as_bool == as_float
    else:
        assert not isinstance(as_bool, str), as_bool
        assert_same_model(as_bool, as_float)


def test_bernoulli_mixture_takes_an_integer_01_matrix():
    for dtype in (np.int8, np.uint8, np.int64):
        ints = em.BernoulliMixture(random_state=0, max_iter=50, tol=1e-4).fit(X_01.astype(dtype))
        floats = em.BernoulliMixture(random_state=0, max_iter=50, tol=1e-4).fit(X_01.astype(float))
        assert_same_model(ints, floats)


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_incomplete_cholesky_takes_any_psd_gram_dtype(dtype):
    K = (X_INT @ X_INT.T).astype(dtype)
    ref = subspace.IncompleteCholesky().fit(np.asarray(K, dtype=np.float64))
    assert_same_model(subspace.IncompleteCholesky().fit(K), ref)


# ----------------------------------------------------------------------- float32 tolerances

THIRDS32 = np.full(3, 1 / 3, dtype=np.float32)      # sums to 1 + 3e-8 in float32 rounding


def _float32_psd_gram():
    X = np.random.default_rng(0).normal(size=(30, 2))
    return (X @ X.T).astype(np.float32)               # rank 2: round-off makes it indefinite


@pytest.mark.parametrize("call", [
    lambda p: __import__("lecturelib.bayes").bayes.posterior(np.ones((2, 3)) / 2, p),
    lambda p: __import__("lecturelib.bayes").bayes.map_decision(np.ones((2, 3)) / 2, p),
    lambda p: __import__("lecturelib.maxent").maxent.kl_divergence(p, p),
    lambda p: __import__("lecturelib.datasets").datasets.coin_tosses(
        n_runs=5, weights=p, p=np.array([0.2, 0.5, 0.8])),
], ids=["bayes.posterior", "bayes.map_decision", "maxent.kl_divergence", "datasets.coin_tosses"])
def test_float32_probability_vectors_are_accepted_to_their_precision(call):
    """A float32 probability vector sums to one only to float32 round-off; the check
    follows the input's precision, and the same error in float64 is still refused."""
    assert abs(float(THIRDS32.astype(np.float64).sum()) - 1) > 1e-8   # the old tolerance
    call(THIRDS32)
    with pytest.raises(ValueError, match="sum to 1"):
        call(THIRDS32.astype(np.float64))


def test_float32_gram_matrix_is_accepted_like_kernel_pca():
    K = _float32_psd_gram()
    assert np.linalg.eigvalsh(K.astype(np.float64))[0] < -1e-8 * np.abs(K).max()
    out = subspace.svm2k_rademacher_estimate(K, K, 1.0, random_state=0)
    assert np.isfinite(out["estimate"])
    with pytest.raises(ValueError, match="positive semi-definite"):
        subspace.svm2k_rademacher_estimate(K - 1e-3 * np.eye(30, dtype=np.float32), K, 1.0)
