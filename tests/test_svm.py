"""The SMO-trained SVC (chapter 4), cross-checked against cvxpy and scikit-learn (libsvm).

- the dual optimum equals an independent QP solve (cvxpy) to 1e-6 relative;
- decision values, support sets, dual coefficients and intercepts agree with
  ``sklearn.svm.SVC`` at the same C and kernel;
- the KKT conditions hold at the solution and primal = dual for the linear kernel;
- the hard margin is the large-C limit (checked against the cvxpy primal);
- the interior-point solver (linear kernel) reaches the same optimum, hands over to SMO
  when it stops short, and solves its Newton systems exactly;
- bad input is refused with a clear message.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.svm import SVC as SkSVC

from lecturelib import kernels
from lecturelib.svm import SVC, dual_objective, kkt_violation, smo_pair_update


def noisy_blobs(n=80, seed=0):
    X, y = make_blobs(n_samples=n, centers=[[-1, -1], [1, 1]], cluster_std=1.0, random_state=seed)
    return X, y


def moons(n=120, seed=0):
    return make_moons(n_samples=n, noise=0.2, random_state=seed)


def signs(y):
    return np.where(y == np.unique(y)[1], 1.0, -1.0)


def cvxpy_dual(K, y, C, L=None):
    """max 1'mu - 1/2 |L'(y*mu)|^2, 0 <= mu <= C, y'mu = 0, with K = L L' (L from K's
    eigenvectors unless given: the data matrix itself for a linear kernel)."""
    if L is None:
        w, V = np.linalg.eigh(K)
        L = V * np.sqrt(np.clip(w, 0, None))
    mu = cp.Variable(len(y))
    prob = cp.Problem(cp.Maximize(cp.sum(mu) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, mu))),
                      [mu >= 0, mu <= C, y @ mu == 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value, mu.value


CASES = [
    ("linear", {}, noisy_blobs, 1.0),
    ("linear", {}, noisy_blobs, 0.05),
    ("rbf", {"gamma": 0.5}, moons, 1.0),
    ("rbf", {"gamma": 2.0}, moons, 10.0),
    ("poly", {"degree": 2, "coef0": 1.0, "gamma": 1.0}, moons, 0.5),
]
IDS = [f"{k}-C{C}" for k, _, _, C in CASES]


def kernel_matrix(kernel, params, X):
    return kernels.gram_matrix(X, kernel=kernel, **params)


@pytest.mark.parametrize("kernel, params, data, C", CASES, ids=IDS)
def test_dual_objective_matches_cvxpy(kernel, params, data, C):
    X, y = data()
    model = SVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    K = kernel_matrix(kernel, params, X)
    ref, _ = cvxpy_dual(K, signs(y), C)
    assert model.dual_objective_ == pytest.approx(ref, rel=1e-6)
    assert dual_objective(model.alpha_, signs(y), K) == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("kernel, params, data, C", CASES, ids=IDS)
def test_agrees_with_libsvm(kernel, params, data, C):
    X, y = data()
    ours = SVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    ref = SkSVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    Xt = np.random.default_rng(1).normal(size=(50, 2)) * 1.5
    scale = max(1.0, np.abs(ref.decision_function(Xt)).max())
    np.testing.assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-5 * scale)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    # the support sets agree except possibly for multipliers at round-off level
    big = ours.support_[ours.alpha_[ours.support_] > 1e-6 * C]
    assert set(big) <= set(ref.support_)
    full = np.zeros(len(y))
    full[ref.support_] = ref.dual_coef_[0]
    np.testing.assert_allclose(ours.alpha_ * signs(y), full, atol=1e-5 * C)
    assert ours.intercept_[0] == pytest.approx(ref.intercept_[0], abs=1e-4 * scale)


def test_sklearn_toy_example():
    # scikit-learn's own test (test_libsvm_parameters): a closed-form answer
    X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
    y = np.array([1, 1, 1, 2, 2, 2])
    model = SVC(kernel="linear", tol=1e-10).fit(X, y)
    np.testing.assert_allclose(model.dual_coef_, [[-0.25, 0.25]], atol=1e-9)
    np.testing.assert_array_equal(model.support_, [1, 3])
    np.testing.assert_allclose(model.intercept_, [0.0], atol=1e-9)
    np.testing.assert_array_equal(model.predict(X), y)
    # w = (0.5, 0.5): margin width 2/|w| = 2 sqrt(2), the distance between (-1,-1) and (1,1)
    np.testing.assert_allclose(model.coef_, [[0.5, 0.5]], atol=1e-9)
    assert model.margin_ == pytest.approx(2 * np.sqrt(2), rel=1e-9)


@pytest.mark.parametrize("kernel, params, data, C", CASES, ids=IDS)
def test_kkt_conditions_hold(kernel, params, data, C):
    X, y = data()
    model = SVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    K = kernel_matrix(kernel, params, X)
    ys = signs(y)
    assert kkt_violation(model.alpha_, ys, K, C, model.intercept_[0]) < 1e-6
    # the same conditions, read off the three kinds of point
    f = model.decision_function(X)
    m = ys * f
    kind = model.point_kind_
    assert np.all(m[kind == "non-support"] >= 1 - 1e-6)
    np.testing.assert_allclose(m[kind == "margin"], 1.0, atol=1e-6)
    assert np.all(m[kind == "margin-error"] <= 1 + 1e-6)
    np.testing.assert_allclose(model.slack_, np.maximum(0, 1 - m), atol=1e-9)
    assert np.all(model.slack_[kind != "margin-error"] < 1e-6)
    assert abs(ys @ model.alpha_) < 1e-9 * C * len(y)
    assert np.all((model.alpha_ >= 0) & (model.alpha_ <= C))


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_linear_primal_equals_dual(C):
    X, y = noisy_blobs(seed=3)
    model = SVC(C=C, kernel="linear", tol=1e-9).fit(X, y)
    w = model.coef_[0]
    primal = 0.5 * w @ w + C * model.slack_.sum()
    assert primal == pytest.approx(model.dual_objective_, rel=1e-6)
    # w = sum_i mu_i y_i x_i (eq. 4.4) and sum_i mu_i y_i = 0 (eq. 4.5)
    np.testing.assert_allclose(w, (model.alpha_ * signs(y)) @ X, rtol=1e-12)
    # the cvxpy primal gives the same hyperplane
    wv, bv, xi = cp.Variable(2), cp.Variable(), cp.Variable(len(y))
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wv) + C * cp.sum(xi)),
               [cp.multiply(signs(y), X @ wv - bv) >= 1 - xi, xi >= 0]).solve(solver=cp.CLARABEL)
    np.testing.assert_allclose(w, wv.value, atol=1e-4)
    assert -model.intercept_[0] == pytest.approx(bv.value, abs=1e-3)


def test_hard_margin_is_the_large_C_limit():
    X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], cluster_std=0.8, random_state=2)
    wv, bv = cp.Variable(2), cp.Variable()
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(wv)),
               [cp.multiply(signs(y), X @ wv - bv) >= 1]).solve(solver=cp.CLARABEL)
    model = SVC(C=1e6, kernel="linear", tol=1e-9).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], wv.value, rtol=1e-5, atol=1e-6)
    assert model.margin_ == pytest.approx(2 / np.linalg.norm(wv.value), rel=1e-5)
    assert model.slack_.max() < 1e-6
    assert set(model.point_kind_) <= {"non-support", "margin"}
    # geometric margin: the closest points are at distance margin_/2 from the hyperplane
    dist = signs(y) * model.decision_function(X) / np.linalg.norm(model.coef_)
    assert dist.min() == pytest.approx(model.margin_ / 2, rel=1e-5)


def test_precomputed_callable_and_row_cache_agree():
    X, y = moons(90, seed=5)
    ref = SVC(C=2.0, kernel="rbf", gamma=1.5, tol=1e-8).fit(X, y)
    Xt = np.random.default_rng(2).normal(size=(20, 2))
    pre = SVC(C=2.0, kernel="precomputed", tol=1e-8).fit(kernels.rbf_kernel(X, gamma=1.5), y)
    np.testing.assert_allclose(pre.decision_function(kernels.rbf_kernel(Xt, X, gamma=1.5)),
                               ref.decision_function(Xt), atol=1e-9)
    cal = SVC(C=2.0, kernel=lambda a, b: np.exp(-1.5 * np.sum((a - b) ** 2)), tol=1e-8).fit(X, y)
    np.testing.assert_allclose(cal.decision_function(Xt), ref.decision_function(Xt), atol=1e-9)
    lru = SVC(C=2.0, kernel="rbf", gamma=1.5, tol=1e-8, cache_limit=0, cache_size=0.01).fit(X, y)
    np.testing.assert_allclose(lru.decision_function(Xt), ref.decision_function(Xt), atol=1e-12)


def test_gamma_scale_matches_sklearn_and_labels_are_kept():
    X, y = make_classification(n_samples=150, n_features=5, random_state=0)
    labels = np.array(["no", "yes"])[y]
    ours = SVC().fit(X, labels)
    ref = SkSVC().fit(X, labels)
    assert list(ours.classes_) == ["no", "yes"]
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.99
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=5e-3)
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)


def test_objective_increases_at_every_step():
    X, y = moons(60)
    model = SVC(C=1.0, kernel="rbf", gamma=1.0, record_objective=True).fit(X, y)
    h = np.array(model.objective_history_)
    assert len(h) == model.n_iter_ and np.all(np.diff(h) >= -1e-12)
    assert h[-1] == pytest.approx(model.dual_objective_, rel=1e-12)


def test_smo_pair_update_is_the_exact_line_maximum():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(10, 2))
    y = np.where(rng.random(10) < 0.5, -1.0, 1.0)
    K = kernels.rbf_kernel(X, gamma=0.7)
    C = 1.0
    for trial in range(20):
        mu = rng.uniform(0, C, 10)
        mu -= y * (y @ mu) / 10  # move to the hyperplane y'mu = 0 ...
        if np.any(mu < 0) or np.any(mu > C):
            continue  # ... and keep only feasible starts
        i, j = rng.choice(10, 2, replace=False)
        f = K @ (mu * y)
        E = f - y
        ni, nj = smo_pair_update(mu[i], mu[j], y[i], y[j], E[i], E[j], K[i, i], K[j, j], K[i, j], C)
        assert y[i] * ni + y[j] * nj == pytest.approx(y[i] * mu[i] + y[j] * mu[j], abs=1e-12)
        assert -1e-12 <= ni <= C + 1e-12 and -1e-12 <= nj <= C + 1e-12

        def along(t):
            m = mu.copy()
            m[j] = t
            m[i] = mu[i] + y[i] * y[j] * (mu[j] - t)
            return -dual_objective(m, y, K)

        if y[i] == y[j]:
            lo, hi = max(0, mu[i] + mu[j] - C), min(C, mu[i] + mu[j])
        else:
            lo, hi = max(0, mu[j] - mu[i]), min(C, C + mu[j] - mu[i])
        best = minimize_scalar(along, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        assert -along(nj) >= -best.fun - 1e-9


# ----------------------------------------------------------------------------- bad input

X_OK, Y_OK = noisy_blobs(30)


@pytest.mark.parametrize("thunk, exc, pattern", [
    (lambda: SVC().fit(X_OK, np.zeros(30)), ValueError, "two classes"),
    (lambda: SVC().fit(X_OK, np.arange(30) % 3), ValueError, "two-class machine, got 3 classes"),
    (lambda: SVC().fit(np.where(X_OK > 1.5, np.nan, X_OK), Y_OK), ValueError, "NaN"),
    (lambda: SVC(kernel="precomputed").fit(kernels.sigmoid_kernel(X_OK), Y_OK), ValueError,
     "not positive semi-definite"),
    (lambda: SVC(kernel="precomputed").fit(np.ones((30, 2)), Y_OK), ValueError, "square"),
    (lambda: SVC(C=-1.0).fit(X_OK, Y_OK), ValueError, "C must be"),
    (lambda: SVC(C=np.inf).fit(X_OK, Y_OK), ValueError, "C must be"),
    (lambda: SVC(gamma="wide").fit(X_OK, Y_OK), ValueError, "gamma"),
    (lambda: SVC(kernel="cosine").fit(X_OK, Y_OK), ValueError, "kernel must be"),
    (lambda: SVC(tol=0).fit(X_OK, Y_OK), ValueError, "tol"),
    (lambda: SVC().fit(X_OK, Y_OK).predict(X_OK[:, :1]), ValueError, "features"),
    (lambda: SVC(kernel="rbf").fit(X_OK, Y_OK).coef_, AttributeError, "linear"),
    (lambda: SVC(kernel="rbf", solver="interior-point").fit(X_OK, Y_OK), ValueError,
     "solver='interior-point' needs kernel='linear', got kernel='rbf'"),
    (lambda: SVC(solver="newton").fit(X_OK, Y_OK), ValueError, "solver must be"),
])
def test_bad_input(thunk, exc, pattern):
    with pytest.raises(exc, match=pattern):
        thunk()


def test_smo_warns_when_it_stops_at_its_cap():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from lecturelib import svm

    X, y = make_classification(120, 5, flip_y=0.1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="stopped at max_iter=5 SMO steps"):
        capped = svm.SVC(C=100.0, max_iter=5).fit(X, y)
    assert capped.n_iter_ == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        full = svm.SVC(C=100.0).fit(X, y)
    assert full.n_iter_ < svm._default_max_iter(120)
    # the default cap is finite: a huge C ends (with the warning if it hits the cap)
    assert svm._default_max_iter(10) == 100_000 and svm._default_max_iter(10**4) == 500_000


def test_dual_objective_refuses_an_overflowing_objective():
    # found by tests/test_fuzz.py: mu * 1e300 gave -inf, not an error
    K, y = np.eye(2), np.array([1.0, -1.0])
    with pytest.raises(ValueError, match="overflows float64.*mu"):
        dual_objective(np.array([1e300, 1e300]), y, K)


@pytest.mark.parametrize("func", [dual_objective, kkt_violation])
def test_dual_functions_refuse_a_kernel_that_is_not_a_gram_matrix(func):
    # found by tests/test_fuzz.py: an asymmetric K, or one with a negative diagonal entry,
    # was silently used (the quadratic form reads only its symmetric part)
    mu, y = np.array([0.5, 0.5]), np.array([1.0, -1.0])
    args = (1.0, 0.0) if func is kkt_violation else ()
    with pytest.raises(ValueError, match="^K must be symmetric"):
        func(mu, y, np.array([[1.0, 0.5], [0.0, 1.0]]), *args)
    with pytest.raises(ValueError, match="^K is not positive semi-definite"):
        func(mu, y, np.array([[-1.0, 0.0], [0.0, 1.0]]), *args)


# ----------------------------------------------------------------------------- interior point


def separable_20d(n=1000):
    """The case of benchmarks/run.py (SVC-linear-C1e4): its 750 training points."""
    X, y = make_classification(n_samples=n, n_features=20, n_informative=8, flip_y=0.0,
                               class_sep=2.0, random_state=0)
    return X[: 3 * n // 4], y[: 3 * n // 4]


def imbalanced(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(530, 4))
    y = np.r_[np.zeros(500), np.ones(30)]
    X[y == 1] += 1.5
    return X, y


def wide(seed=0):
    """More features than points: the Newton systems go through the n x n matrix."""
    X, y = make_classification(n_samples=40, n_features=80, n_informative=5, random_state=seed)
    return X, y


IPM_CASES = [(noisy_blobs, 1.0), (noisy_blobs, 0.05), (separable_20d, 1e4), (imbalanced, 10.0),
             (wide, 1.0)]
IPM_IDS = ["blobs-C1", "blobs-C0.05", "separable-20d-C1e4", "imbalanced-C10", "wide-C1"]


@pytest.mark.parametrize("data, C", IPM_CASES, ids=IPM_IDS)
def test_interior_point_reaches_the_cvxpy_optimum(data, C):
    X, y = data()
    ours = SVC(C=C, kernel="linear", tol=1e-8, solver="interior-point").fit(X, y)
    assert ours.solver_ == "interior-point"
    ref, _ = cvxpy_dual(None, signs(y), C, L=X)
    assert ours.dual_objective_ == pytest.approx(ref, rel=1e-6)
    assert kkt_violation(ours.alpha_, signs(y), X @ X.T, C, ours.intercept_[0]) < 1e-6
    assert abs(signs(y) @ ours.alpha_) < 1e-9 * C * len(y)
    smo = SVC(C=C, kernel="linear", tol=1e-8, solver="smo", max_iter=10**6).fit(X, y)
    scale = max(1.0, np.abs(smo.decision_function(X)).max())
    np.testing.assert_allclose(ours.decision_function(X), smo.decision_function(X), atol=1e-5 * scale)


def test_interior_point_agrees_with_libsvm_on_the_benchmark_case():
    X, y = make_classification(n_samples=1000, n_features=20, n_informative=8, flip_y=0.0,
                               class_sep=2.0, random_state=0)
    ours = SVC(C=1e4, kernel="linear").fit(X[:750], y[:750])
    ref = SkSVC(C=1e4, kernel="linear").fit(X[:750], y[:750])
    assert ours.solver_ == "interior-point"  # "auto": a linear kernel, 20 features
    np.testing.assert_array_equal(ours.support_, np.sort(ref.support_))  # libsvm groups by class
    np.testing.assert_array_equal(ours.predict(X[750:]), ref.predict(X[750:]))
    # both stop at tol = 1e-3 on the KKT violation, from different sides: the interior
    # point ends nearer libsvm's decision values than SMO does (1.2e-2 against 2.7e-2)
    smo = SVC(C=1e4, kernel="linear", solver="smo").fit(X[:750], y[:750])
    ref_values = ref.decision_function(X)
    gap = np.abs(ours.decision_function(X) - ref_values).max()
    assert gap <= np.abs(smo.decision_function(X) - ref_values).max()
    assert gap <= 2e-3 * np.abs(ref_values).max()


def test_interior_point_hands_over_to_smo(monkeypatch):
    from lecturelib import svm

    X, y = noisy_blobs()
    monkeypatch.setattr(svm, "_IPM_MAX_ITER", 3)  # far from the faces: SMO does the rest
    ours = SVC(C=1.0, kernel="linear", tol=1e-8, solver="interior-point",
               record_objective=True).fit(X, y)
    ref, _ = cvxpy_dual(None, signs(y), 1.0, L=X)
    assert ours.n_iter_ > 3
    assert ours.dual_objective_ == pytest.approx(ref, rel=1e-6)
    assert len(ours.objective_history_) == ours.n_iter_
    assert ours.objective_history_[-1] == pytest.approx(ours.dual_objective_, rel=1e-9)


def test_interior_point_keeps_a_degenerate_intercept():
    # balanced classes at a tiny C: every multiplier ends at C, none is free, so the
    # intercept is the middle of its feasible range (libsvm's rule), not the F of a
    # multiplier left one rounding step below C
    X, y = make_classification(n_samples=600, n_features=3, n_informative=3, n_redundant=0,
                               flip_y=0.2, class_sep=0.3, random_state=1)
    ours = SVC(C=1e-3, kernel="linear", solver="interior-point").fit(X, y)
    smo = SVC(C=1e-3, kernel="linear", solver="smo").fit(X, y)
    assert np.all(ours.alpha_ == 1e-3)
    assert ours.intercept_[0] == pytest.approx(smo.intercept_[0], abs=1e-9)
    assert ours.intercept_[0] == pytest.approx(SkSVC(C=1e-3, kernel="linear").fit(X, y).intercept_[0],
                                               abs=1e-6)


@pytest.mark.parametrize("n, d", [(200, 5), (30, 60)], ids=["woodbury", "direct"])
def test_the_newton_systems_are_solved_exactly(n, d):
    from lecturelib.svm import _woodbury_inverse

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(n, d))
    dinv = 10.0 ** rng.uniform(-6, 6, size=n)  # the spread of an interior point near the end
    v = rng.normal(size=n)
    H = Z @ Z.T + np.diag(1.0 / dinv)
    x = _woodbury_inverse(Z, dinv)(v)
    assert np.linalg.norm(H @ x - v) <= 1e-8 * np.linalg.norm(H, 2) * np.linalg.norm(x)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 50 steps
@pytest.mark.parametrize("kernel, n, d, expected", [
    ("linear", 600, 5, "interior-point"),
    ("linear", 600, 200, "interior-point"),
    ("linear", 600, 201, "smo"),
    ("linear", 200, 400, "interior-point"),  # the n x n Newton system
    ("rbf", 600, 5, "smo"),
    ("precomputed", 60, 60, "smo"),
])
def test_auto_takes_the_interior_point_where_its_newton_systems_are_small(kernel, n, d, expected):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=3, random_state=0)
    if kernel == "precomputed":
        X = X @ X.T
    assert SVC(kernel=kernel, C=0.1, max_iter=50).fit(X, y).solver_ == expected
