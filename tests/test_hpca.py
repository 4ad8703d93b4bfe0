"""lecturelib.hpca: cross-checks against explicit sums, scikit-learn PCA and closed forms."""

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
from sklearn.base import clone
from sklearn.decomposition import PCA

from lecturelib.hpca import (
    HyperbolicPCA,
    balanced_pair_risk,
    balanced_pairs,
    best_threshold,
    empirical_margin_risk,
    hpca_bound,
    hpca_weights,
    margin_loss,
    one_shot_nn_error,
    operator_bound,
    pair_sq_distances,
    transformed_sq_distances,
)


def up_to_sign(A, B, atol=1e-8):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A, B * signs, atol=atol)


@pytest.fixture
def labelled():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 8)
    X = rng.normal(size=(32, 6)) + 2.0 * rng.normal(size=(4, 6))[y]
    return X, y


def explicit_operator(X, y, eta_neg, eta_pos, balanced):
    """T = sum over ordered pairs i != j of a_ij (x_i - x_j)(x_i - x_j)', one pair at a time."""
    m, n = X.shape
    n_pos = sum(1 for i in range(m) for j in range(m) if i != j and y[i] == y[j])
    n_neg = sum(1 for i in range(m) for j in range(m) if y[i] != y[j])
    T = np.zeros((n, n))
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            if balanced:
                a = eta_pos / (2 * n_pos) if y[i] == y[j] else eta_neg / (2 * n_neg)
            else:
                a = (eta_pos if y[i] == y[j] else eta_neg) / m**2
            v = X[i] - X[j]
            T += a * np.outer(v, v)
    return T


@pytest.mark.parametrize("balanced", [True, False])
def test_all_pairs_form_equals_pair_by_pair_operator(labelled, balanced):
    X, y = labelled
    h = HyperbolicPCA(n_components=3, eta_neg=0.3, eta_pos=-1.0, balanced=balanced).fit(X, y)
    T = explicit_operator(X, y, 0.3, -1.0, balanced)
    np.testing.assert_allclose(h.operator_, T, atol=1e-12)
    lam, V = scipy.linalg.eigh(T)
    np.testing.assert_allclose(h.eigenvalues_, lam[::-1][:3], atol=1e-12)
    up_to_sign(h.components_.T, V[:, ::-1][:, :3])
    assert np.any(h.all_eigenvalues_ < 0) and np.any(h.all_eigenvalues_ > 0)  # indefinite


def pair_matrix_form(X, y, eta_neg, eta_pos, balanced):
    """X' A X with the m x m matrix A = 2 (diag(a 1) - a) of the all-pairs weights."""
    m = len(y)
    same = y[:, None] == y[None, :]
    off = ~np.eye(m, dtype=bool)
    if balanced:
        n_pos, n_neg = (same & off).sum(), (~same).sum()
        a = np.where(same, eta_pos / (2 * n_pos), eta_neg / (2 * n_neg))
    else:
        a = np.where(same, eta_pos, eta_neg) / m**2
    a[~off] = 0.0
    return X.T @ (2.0 * (np.diag(a.sum(axis=1)) - a)) @ X


@pytest.mark.parametrize("balanced", [True, False])
def test_class_sum_form_equals_the_pair_matrix_form_without_an_m_by_m_matrix(balanced):
    # uneven classes, one of a single point, labels that are strings, an offset far from 0
    rng = np.random.default_rng(5)
    y = np.array(["b"] * 40 + ["a"] * 25 + ["c"] * 1 + ["d"] * 14)
    X = rng.normal(size=(80, 4)) + 100.0
    h = HyperbolicPCA(n_components=2, eta_neg=0.7, eta_pos=-0.4, balanced=balanced).fit(X, y)
    T = pair_matrix_form(X, y, 0.7, -0.4, balanced)
    np.testing.assert_allclose(h.operator_, T, rtol=1e-9, atol=1e-9 * np.abs(T).max())
    assert not hasattr(h, "pair_matrix_")   # no m x m matrix in the primal fit


def test_fit_without_a_kernel_holds_no_m_by_m_array():
    # at m = 3000 an m x m float64 matrix is 72 MB; the fit's peak stays far below it
    import tracemalloc

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 3000)
    X = rng.normal(size=(3000, 5))
    tracemalloc.start()
    HyperbolicPCA(n_components=2).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3000 * 3000 * 8 / 20


def test_fit_pairs_with_all_pairs_equals_fit(labelled):
    X, y = labelled
    idx = [(i, j) for i in range(len(y)) for j in range(len(y)) if i != j]
    pairs = np.stack([np.stack([X[i], X[j]]) for i, j in idx])
    same = np.array([y[i] == y[j] for i, j in idx])
    a = HyperbolicPCA(n_components=2, eta_neg=0.5).fit(X, y)
    b = HyperbolicPCA(n_components=2, eta_neg=0.5).fit_pairs(pairs, same)
    np.testing.assert_allclose(a.eigenvalues_, b.eigenvalues_, atol=1e-12)
    up_to_sign(a.components_.T, b.components_.T)


@pytest.mark.parametrize("method", ["fit", "fit_pairs"])
def test_linear_kernel_equals_primal(labelled, method):
    X, y = labelled
    rng = np.random.default_rng(2)
    Xnew = rng.normal(size=(5, 6))
    if method == "fit":
        args = (X, y)
    else:
        i, j = rng.integers(0, 32, size=(2, 40))
        args = (np.stack([X[i], X[j]], axis=1), y[i] == y[j])
    p = getattr(HyperbolicPCA(n_components=3, eta_neg=0.2), method)(*args)
    k = getattr(HyperbolicPCA(n_components=3, eta_neg=0.2, kernel="linear"), method)(*args)
    np.testing.assert_allclose(k.eigenvalues_, p.eigenvalues_, atol=1e-10)
    np.testing.assert_allclose(k.transform(Xnew), p.transform(Xnew), atol=1e-8)
    np.testing.assert_allclose(k.transform(X), p.transform(X), atol=1e-8)


@pytest.mark.filterwarnings("ignore:The number of unique classes")
def test_only_negative_pairs_is_pca(labelled):
    # every pair labelled different: A = (2 eta / m) (I - 11'/m), i.e. PCA on centred data
    X, _ = labelled
    y = np.arange(len(X))
    h = HyperbolicPCA(n_components=3, balanced=False, eta_neg=1.0).fit(X, y)
    pca = PCA(n_components=3).fit(X)
    up_to_sign(h.components_.T, pca.components_.T)
    m = len(X)
    np.testing.assert_allclose(h.eigenvalues_, 2 * pca.explained_variance_ * (m - 1) / m, rtol=1e-10)


def test_kernel_version_solves_the_generalised_eigenproblem(labelled):
    X, y = labelled
    h = HyperbolicPCA(n_components=2, kernel="rbf", gamma=0.05).fit(X, y)
    from sklearn.metrics.pairwise import rbf_kernel

    G = rbf_kernel(X, gamma=0.05)
    A = h.pair_matrix_
    for k in range(2):
        g = h.dual_coef_[:, k]
        np.testing.assert_allclose(G @ A @ G @ g, h.eigenvalues_[k] * G @ g, atol=1e-8)
        assert g @ G @ g == pytest.approx(1.0)
    # the largest eigenvalue agrees with scipy's generalised solver on a regularised pencil
    lam = scipy.linalg.eigh(G @ A @ G, G + 1e-10 * np.eye(len(G)), eigvals_only=True)
    assert h.eigenvalues_[0] == pytest.approx(lam[-1], rel=1e-5)


def test_weights_and_margin():
    assert hpca_weights(0.5, 0.01) == pytest.approx((1 / 0.75, -4.0))
    assert hpca_weights(0.5, 2.0) == pytest.approx((0.5, -0.5))
    np.testing.assert_allclose(margin_loss([-1, 0, 0.05, 0.1, 1], 0.1), [1, 1, 0.5, 0, 0])
    # the surrogate 1 + eta_r (c^2 - q) dominates f_gamma(r (c^2 - q)) for q in [0, 1]
    c, g = 0.6, 0.2
    en, ep = hpca_weights(c, g)
    q = np.linspace(0, 1, 2001)
    assert np.all(1 + en * (c**2 - q) >= margin_loss(-(c**2 - q), g) - 1e-12)
    assert np.all(1 + ep * (c**2 - q) >= margin_loss(c**2 - q, g) - 1e-12)


def test_risks_by_hand():
    d = np.array([0.04, 0.25, 0.5, 0.01])
    same = np.array([True, True, False, False])
    # c = 0.4: c^2 = 0.16; positive errors: 0.25; negative errors: 0.01
    assert balanced_pair_risk(d, same, 0.4) == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    expected = np.mean([margin_loss(0.16 - 0.04, 0.1), margin_loss(0.16 - 0.25, 0.1),
                        margin_loss(0.5 - 0.16, 0.1), margin_loss(0.01 - 0.16, 0.1)])
    assert empirical_margin_risk(d, same, 0.4, 0.1) == pytest.approx(expected)
    c, r = best_threshold(d, same)
    grid = np.linspace(0.001, 1.5, 3001)
    assert r == pytest.approx(min(balanced_pair_risk(d, same, t) for t in grid))
    assert balanced_pair_risk(d, same, c) == pytest.approx(r)


def test_bound_magnitudes_of_the_inventory():
    # Theorem 1, gamma = 0.01, delta = 0.05, m = |S| of the paper's Table 1
    for m, d, value in [(4160, 24, 18.3), (310, 20, 62.2), (2000, 18, 23.5), (1320, 24, 32.5),
                        (4000, 18, 16.6)]:
        assert hpca_bound(m, d, 0.01) == pytest.approx(value, abs=0.06)
    assert hpca_bound(4160, 24, 0.5) == pytest.approx(0.38, abs=0.006)
    assert hpca_bound(100, 4, 0.1, empirical_risk=0.2) == pytest.approx(
        0.2 + (2 * 3 / 0.1 + math.sqrt(math.log(20) / 2)) / 10)
    assert operator_bound(100, 2.0, 1.0, 0.1) == pytest.approx(hpca_bound(100, 4, 0.1))
    np.testing.assert_allclose(hpca_bound(100, 4, 0.1, empirical_risk=[0.0, 0.1]),
                               [hpca_bound(100, 4, 0.1), hpca_bound(100, 4, 0.1) + 0.1])


def brute_force_one_shot(Z, y):
    classes = np.unique(y)
    errs = []
    for q in range(len(y)):
        choices = [[j for j in np.flatnonzero(y == c) if j != q] for c in classes]
        wrong = 0
        total = 0
        for protos in itertools.product(*choices):
            d = np.array([np.sum((Z[q] - Z[j]) ** 2) for j in protos])
            own = list(classes).index(y[q])
            others = np.delete(d, own)
            wrong += not np.all(d[own] < others)
            total += 1
        errs.append(wrong / total)
    return np.mean(errs)


def test_one_shot_nn_error_equals_enumeration():
    rng = np.random.default_rng(5)
    y = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 2])
    Z = rng.normal(size=(10, 2)) + y[:, None]
    assert one_shot_nn_error(Z, y) == pytest.approx(brute_force_one_shot(Z, y), abs=1e-12)
    Zi = np.round(Z)  # ties count as errors in both
    assert one_shot_nn_error(Zi, y) == pytest.approx(brute_force_one_shot(Zi, y), abs=1e-12)


def test_validation(labelled):
    X, y = labelled
    with pytest.raises(ValueError, match="two classes"):
        HyperbolicPCA().fit(X, np.zeros(32))
    with pytest.raises(ValueError, match="eta_pos"):
        HyperbolicPCA(eta_pos=1.0).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        HyperbolicPCA(n_components=50).fit(X, y)
    with pytest.raises(ValueError, match="pairs"):
        HyperbolicPCA().fit_pairs(X, y)
    with pytest.raises(ValueError, match="delta"):
        hpca_bound(100, 2, 0.1, delta=0)
    with pytest.raises(ValueError, match="c must"):
        hpca_weights(1.2, 0.1)
    with pytest.raises(ValueError, match="two points"):
        one_shot_nn_error(X[:5], np.arange(5))


def test_scikit_learn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (HyperbolicPCA(n_components=1), HyperbolicPCA(n_components=1, kernel="rbf")):
        failed = [r for r in check_estimator(est, on_fail=None) if r["status"] == "failed"]
        assert not failed, [(r["check_name"], str(r["exception"])[:200]) for r in failed]


def test_rendered_characters_dataset():
    from lecturelib.datasets import rendered_characters

    X, y = rendered_characters("ab1", 4, rotate=True, scale=True, random_state=3)
    assert X.shape == (12, 256) and list(y) == ["a"] * 4 + ["b"] * 4 + ["1"] * 4
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.all(X >= 0)
    X2, _ = rendered_characters("ab1", 4, rotate=True, scale=True, random_state=3)
    np.testing.assert_array_equal(X, X2)  # deterministic
    plain, _ = rendered_characters("o", 2, rotate=False, scale=False)
    np.testing.assert_allclose(plain[0], plain[1])  # no transformation: identical images
    with pytest.raises(ValueError, match="out_size"):
        rendered_characters("a", 1, out_size=7)


# ----------------------------------------------------------------------------- convex alternative


@pytest.fixture
def small_pairs():
    rng = np.random.default_rng(0)
    p, N = 4, 80
    X1 = rng.normal(size=(N, p)) / 4
    same = rng.random(N) < 0.5
    X2 = X1 + np.where(same[:, None], rng.normal(size=(N, p)) / 8, rng.normal(size=(N, p)) / 3)
    return np.stack([X1, X2], axis=1), same


def _hinge_optimum_cvxpy(D, same, c, gamma, B, balanced):
    import cvxpy as cp

    p = D.shape[1]
    n_pos, n_neg = same.sum(), (~same).sum()
    a = np.where(same, 1 / (2 * n_pos), 1 / (2 * n_neg)) if balanced else np.full(len(same), 1 / len(same))
    r = np.where(same, 1.0, -1.0)
    T = cp.Variable((p, p), PSD=True)
    q = cp.sum(cp.multiply(D @ T, D), axis=1)
    prob = cp.Problem(cp.Minimize(a @ cp.pos(1 - cp.multiply(r, c**2 - q) / gamma)),
                      [cp.norm(T, "fro") <= B])
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("B, c, gamma, balanced", [(1.0, 0.3, 0.1, True), (0.5, 0.2, 0.05, False),
                                                   (2.0, 0.4, 0.2, True)])
def test_positive_operator_learner_matches_cvxpy(small_pairs, B, c, gamma, balanced):
    from lecturelib.hpca import PositiveOperatorLearner

    pairs, same = small_pairs
    model = PositiveOperatorLearner(c=c, gamma=gamma, hs_bound=B, balanced=balanced, max_iter=6000,
                                    tol=1e-8).fit_pairs(pairs, same)
    best = _hinge_optimum_cvxpy(pairs[:, 0] - pairs[:, 1], same, c, gamma, B, balanced)
    # feasible, never better than the optimum, and within the smoothing error of it
    assert np.linalg.eigvalsh(model.operator_).min() >= -1e-10
    assert model.hs_norm_ <= B * (1 + 1e-9)
    assert model.objective_ >= best - 1e-6
    assert model.objective_ <= best + model.smoothing / 2
    # transform realises the operator: squared distances are <T, Q_{x - x'}>
    D = pairs[:, 0] - pairs[:, 1]
    Z = model.transform(pairs[:, 0]) - model.transform(pairs[:, 1])
    np.testing.assert_allclose(np.sum(Z**2, axis=1), np.einsum("ij,jk,ik->i", D, model.operator_, D),
                               atol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_positive_operator_learner_one_dimension_brute_force():
    from lecturelib.hpca import PositiveOperatorLearner

    # in one dimension T = t in [0, B] and the objective is piecewise linear in t
    rng = np.random.default_rng(1)
    d = np.abs(rng.normal(size=50)) * 0.6
    same = rng.random(50) < 0.4
    d = np.where(same, d * 0.5, d)
    pairs = np.stack([d[:, None], np.zeros((50, 1))], axis=1)
    c, gamma, B = 0.3, 0.05, 1.5
    model = PositiveOperatorLearner(c=c, gamma=gamma, hs_bound=B, max_iter=3000, tol=1e-7).fit_pairs(pairs, same)
    a = np.where(same, 1 / (2 * same.sum()), 1 / (2 * (~same).sum()))
    r = np.where(same, 1.0, -1.0)
    grid = np.linspace(0, B, 300001)
    obj = [(a * np.maximum(0, 1 - r * (c**2 - t * d**2) / gamma)).sum() for t in grid[::100]]
    assert model.objective_ == pytest.approx(min(obj), abs=model.smoothing / 2 + 1e-4)


def test_psd_ball_projection_equals_cvxpy():
    import cvxpy as cp

    from lecturelib.hpca import _project_psd_ball

    rng = np.random.default_rng(2)
    S = rng.normal(size=(5, 5))
    S = S + S.T
    for B in (0.5, 3.0, 100.0):
        T = cp.Variable((5, 5), PSD=True)
        cp.Problem(cp.Minimize(cp.norm(T - S, "fro")), [cp.norm(T, "fro") <= B]).solve(solver=cp.CLARABEL)
        np.testing.assert_allclose(_project_psd_ball(S, B), T.value, atol=1e-5)


def test_positive_operator_learner_labelled_fit_and_validation(labelled):
    from sklearn.exceptions import ConvergenceWarning

    from lecturelib._validation import InvalidParameterError
    from lecturelib.hpca import PositiveOperatorLearner

    X, y = labelled
    Xs = X / (2 * np.abs(X).max() * np.sqrt(X.shape[1]))
    model = PositiveOperatorLearner(c=0.3, gamma=0.05, max_iter=3000).fit(Xs, y)
    i, j = np.triu_indices(len(y), 1)
    pairs = np.stack([Xs[i], Xs[j]], axis=1)
    same_model = PositiveOperatorLearner(c=0.3, gamma=0.05, max_iter=3000).fit_pairs(pairs, y[i] == y[j])
    np.testing.assert_allclose(model.operator_, same_model.operator_, atol=1e-10)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        PositiveOperatorLearner(max_iter=1).fit(Xs, y)
    with pytest.raises(InvalidParameterError, match="hs_bound"):
        PositiveOperatorLearner(hs_bound=0.0).fit(Xs, y)
    with pytest.raises(InvalidParameterError, match="c="):
        PositiveOperatorLearner(c=1.5).fit(Xs, y)
    with pytest.raises(ValueError, match="two classes"):
        PositiveOperatorLearner().fit(Xs, np.zeros(len(y)))
    with pytest.raises(ValueError, match="NaN"):
        PositiveOperatorLearner().fit(np.where(Xs > 0.05, np.nan, Xs), y)
    with pytest.raises(ValueError, match="pairs must have shape"):
        PositiveOperatorLearner().fit_pairs(np.zeros((5, 3, 2)), np.ones(5, bool))
    with pytest.raises(ValueError, match="both positive and negative"):
        PositiveOperatorLearner().fit_pairs(np.zeros((5, 2, 2)), np.ones(5, bool))


def test_one_shot_nn_error_names_y_when_a_class_is_too_small():
    # found by the refusal oracle of tests/test_fuzz.py: the message did not name y
    Z = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="^y must have at least two classes with at least two"):
        one_shot_nn_error(Z, [0, 0, 0, 1])


# ----------------------------------------------------------------------------- pairs


def test_pair_sq_distances_equals_scipy_pdist_and_label_comparison():
    from scipy.spatial.distance import pdist

    rng = np.random.default_rng(3)
    Z = rng.normal(size=(9, 4))
    y = np.array(list("aabbbcaac"))
    sq, same = pair_sq_distances(Z, y)
    # pdist lists the pairs i < j in the same (row-major) order as triu_indices
    np.testing.assert_allclose(sq, pdist(Z, "sqeuclidean"), rtol=1e-12, atol=1e-12)
    assert same.tolist() == [y[i] == y[j] for i, j in itertools.combinations(range(9), 2)]
    with pytest.raises(ValueError, match="one label per row"):
        pair_sq_distances(Z, y[:-1])
    with pytest.raises(ValueError, match="at least two points"):
        pair_sq_distances(Z[:1], y[:1])
    with pytest.raises(ValueError, match="finite labels"):
        pair_sq_distances(Z[:2], [0.0, np.nan])
    with pytest.raises(ValueError, match="overflow"):
        pair_sq_distances(Z * 1e300, y)


def test_balanced_pairs_draws_valid_balanced_independent_constraints():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(5), [3, 4, 5, 2, 6])
    X = rng.normal(size=(y.size, 3)) + y[:, None]   # each row identifies its point
    pairs, same = balanced_pairs(X, y, 4000, random_state=1)
    assert pairs.shape == (4000, 2, 3) and same.dtype == bool
    # find each drawn point's row, by value
    rows = np.array([[int(np.argmin(np.abs(X - p).sum(axis=1))) for p in pair] for pair in pairs])
    np.testing.assert_array_equal(pairs, X[rows])
    assert np.all(rows[:, 0] != rows[:, 1]), "a point paired with itself"
    assert np.array_equal(same, y[rows[:, 0]] == y[rows[:, 1]])
    # half the pairs positive, first points uniform over the sample (binomial sd 0.008)
    assert abs(same.mean() - 0.5) < 0.03
    first = np.bincount(rows[:, 0], minlength=y.size) / 4000
    assert np.abs(first - 1 / y.size).max() < 0.02
    # the second point of a positive pair: uniform over the other members of the class
    big = (y[rows[:, 0]] == 4) & same
    counts = np.bincount(rows[big, 1], minlength=y.size)[y == 4]
    assert counts.min() > 0.5 * counts.mean()
    # one Generator gives fresh pairs on each call, an int seed repeats them
    gen = np.random.default_rng(7)
    a, b = balanced_pairs(X, y, 50, random_state=gen)[0], balanced_pairs(X, y, 50, random_state=gen)[0]
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(balanced_pairs(X, y, 50, random_state=7)[0], a)


@pytest.mark.parametrize("y, message", [
    (np.zeros(6, int), "at least two classes"),
    (np.array([0, 0, 0, 0, 0, 1]), "at least two points each"),
])
def test_balanced_pairs_refuses_a_sample_without_both_kinds_of_pair(y, message):
    with pytest.raises(ValueError, match=message):
        balanced_pairs(np.zeros((6, 2)), y, 10)


def test_transformed_sq_distances_equals_the_distances_of_the_projections(labelled):
    X, y = labelled
    h = HyperbolicPCA(n_components=2, eta_neg=0.5).fit(X, y)
    pairs, _ = balanced_pairs(X, y, 30, random_state=0)
    W = h.components_.T                    # the projection, applied by hand
    by_hand = np.sum(((pairs[:, 0] - pairs[:, 1]) @ W) ** 2, axis=1)
    np.testing.assert_allclose(transformed_sq_distances(h, pairs), by_hand, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"shape \(m, 2, n_features\)"):
        transformed_sq_distances(h, np.zeros((4, 3, X.shape[1])))


@pytest.mark.full
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_positive_operator_learner_blocks_its_pair_differences(monkeypatch):
    # fit(X, y) walks the n(n-1)/2 pairs a block at a time: with small blocks its peak
    # memory is far below the 36 MB of all the differences, and the fit is the same as
    # with every pair in one block
    import tracemalloc

    from lecturelib import hpca

    rng = np.random.default_rng(3)
    n, d = 1500, 4
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) + y[:, None]
    model = hpca.PositiveOperatorLearner(c=0.5, gamma=0.5, max_iter=3)
    monkeypatch.setattr(hpca, "_PAIR_BLOCK_ENTRIES", 1 << 12)
    tracemalloc.start()
    blocked = clone(model).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n * (n - 1) // 2 * d * 8 / 20
    monkeypatch.setattr(hpca, "_PAIR_BLOCK_ENTRIES", 1 << 30)
    whole = clone(model).fit(X, y)
    np.testing.assert_allclose(blocked.operator_, whole.operator_, rtol=1e-10, atol=1e-14)
    assert blocked.objective_ == pytest.approx(whole.objective_, rel=1e-10)
