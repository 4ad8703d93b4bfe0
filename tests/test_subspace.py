"""lecturelib.subspace: cross-checks against numpy/scipy/scikit-learn and closed forms."""

import math

import numpy as np
import pytest
import scipy.linalg
from scipy.special import comb, gammaln
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from lecturelib.subspace import (
    SVM2K,
    IncompleteCholesky,
    eigenvalue_bounds,
    gram_schmidt_bound,
    kcca_bound,
    kernel_pca_eigenvalues,
    kernel_pca_residual_bound,
    projection_residuals,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(60, 5))


# ----------------------------------------------------------------------------- kernel PCA


def test_projection_residuals_linear_kernel_equals_primal_pca(data):
    # uncentred PCA in input space: residual = ||x||^2 - ||U_k' x||^2 with U from the SVD
    X, Xnew = data[:40], data[40:]
    k = 3
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    expected = np.sum(Xnew**2, axis=1) - np.sum((Xnew @ Vt[:k].T) ** 2, axis=1)
    got = projection_residuals(X @ X.T, Xnew @ X.T, np.sum(Xnew**2, axis=1), k)
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_training_residuals_sum_to_eigenvalue_tail(data):
    K = rbf_kernel(data, gamma=0.2)
    k = 5
    res = projection_residuals(K, K, np.diag(K), k)
    lam = scipy.linalg.eigvalsh(K)[::-1]
    assert res.sum() == pytest.approx(lam[k:].sum(), rel=1e-9)
    np.testing.assert_allclose(kernel_pca_eigenvalues(K), np.maximum(lam, 0), atol=1e-12)


def test_residual_bound_closed_form_normalised_kernel(data):
    K = rbf_kernel(data, gamma=0.3)
    m, k, delta = K.shape[0], 4, 0.05
    lam = scipy.linalg.eigvalsh(K)[::-1]
    expected = (lam[k:].sum() / m + 4 * math.sqrt(2) * math.sqrt((k + 1) / m)
                + math.sqrt(18 * math.log(2 / delta) / m))
    bound, terms = kernel_pca_residual_bound(K, k, delta, return_terms=True)
    assert bound == pytest.approx(expected, rel=1e-10)
    assert terms["complexity"] == pytest.approx(4 * math.sqrt(2 * (k + 1) / m))


@pytest.mark.parametrize("k, m, expected", [(1, 500, 0.72), (10, 500, 1.20), (10, 5000, 0.38),
                                            (10, 20000, 0.19)])
def test_excess_term_magnitudes_of_the_inventory(k, m, expected):
    # normalised kernel, delta = 0.05: the excess term is independent of the data
    K = np.eye(m) if m <= 500 else None
    if K is None:
        excess = 4 * math.sqrt(2) * math.sqrt((k + 1) / m) + math.sqrt(18 * math.log(40) / m)
        assert excess == pytest.approx(expected, abs=0.006)
        return
    out = eigenvalue_bounds(K, [k])
    assert out["excess"][0] == pytest.approx(expected, abs=0.006)


def test_eigenvalue_bounds_consistency(data):
    K = polynomial_kernel(data, degree=2, coef0=1)
    ks = np.array([1, 3, 7])
    out = eigenvalue_bounds(K, ks)
    lam = np.linalg.eigvalsh(K)[::-1] / K.shape[0]
    np.testing.assert_allclose(out["empirical_head"], [lam[:k].sum() for k in ks], rtol=1e-10)
    np.testing.assert_allclose(out["empirical_head"] + out["empirical_tail"], np.trace(K) / K.shape[0])
    for j, k in enumerate(ks):
        assert out["tail_upper"][j] == pytest.approx(kernel_pca_residual_bound(K, int(k)), rel=1e-12)


def test_process_tail_below_bound_on_a_large_sample():
    # the process tail is approximated by the empirical tail of a much larger sample
    rng = np.random.default_rng(1)
    big = rng.normal(size=(1500, 3))
    lam_big = kernel_pca_eigenvalues(rbf_kernel(big, gamma=0.5)) / 1500
    small = rng.normal(size=(200, 3))
    out = eigenvalue_bounds(rbf_kernel(small, gamma=0.5), [2, 5])
    for j, k in enumerate([2, 5]):
        assert lam_big[k:].sum() <= out["tail_upper"][j]


def test_gram_schmidt_and_kcca_bounds_closed_form():
    # union term ln C(m, k) (exact binomial from scipy) and R^2, as the proof needs
    for emp, k, m, delta, R in [(0.0, 10, 500, 0.05, 1.0), (0.375, 20, 400, 0.05, 1.0),
                                (0.1, 3, 50, 0.1, 2.0)]:
        union = math.log(comb(m, k, exact=True)) + math.log(2 / delta)
        expected = emp + R**2 * math.sqrt(union / (2 * (m - k)))
        got = gram_schmidt_bound(emp, k, m, delta=delta, R=R)
        assert got == pytest.approx(expected, rel=1e-12)
    # large m: no overflow, agrees with scipy's log-gamma
    union = gammaln(20001) - gammaln(11) - gammaln(19991) + math.log(40)
    assert gram_schmidt_bound(0.0, 10, 20000) == pytest.approx(
        math.sqrt(union / (2 * 19990)), rel=1e-12)
    # chapter 10's correction: the lecture's k ln(m/k) with R gives 0.665 at k=20, m=400
    assert gram_schmidt_bound(0.375, 20, 400) == pytest.approx(0.701, abs=5e-4)
    rho = np.array([0.9, 0.5])
    diag = np.ones(50)
    expected = (2 * 0.1 + 2 * 0.5 + 3 * 2 * math.sqrt(math.log(40) / 100)
                + 4 * 2 * 2 / 50 * math.sqrt(50 * 4))
    assert kcca_bound(rho, 1.0, 1.0, diag, diag) == pytest.approx(expected)


def test_bound_input_validation(data):
    K = rbf_kernel(data)
    with pytest.raises(ValueError, match="delta"):
        kernel_pca_residual_bound(K, 2, delta=1.5)
    with pytest.raises(ValueError, match="k=100"):
        kernel_pca_residual_bound(K, 100)
    with pytest.raises(ValueError, match="positive semi-definite"):
        kernel_pca_residual_bound(-K, 2)
    with pytest.raises(ValueError, match="smaller than"):
        kernel_pca_residual_bound(K, 2, R2=0.5)
    with pytest.raises(ValueError, match="k=10 must be smaller"):
        gram_schmidt_bound(0.1, 10, 10)


# ----------------------------------------------------------------------------- incomplete Cholesky


def slides_pseudo_code(K, T):
    """The slide's loop, transcribed literally (1-based indices become 0-based)."""
    m = K.shape[0]
    norm = np.array([K[i, i] for i in range(m)])
    psi = np.zeros((m, T))
    piv = []
    for j in range(T):
        ij = int(np.argmax(norm))
        s = math.sqrt(norm[ij])
        for i in range(m):
            psi[i, j] = (K[i, ij] - sum(psi[i, t] * psi[ij, t] for t in range(j))) / s
            norm[i] = norm[i] - psi[i, j] * psi[i, j]
        piv.append(ij)
    return psi, piv


def test_incomplete_cholesky_equals_slides_pseudo_code(data):
    K = rbf_kernel(data[:30], gamma=0.3)
    ic = IncompleteCholesky(tol=0.0, max_rank=8).fit(K)
    psi, piv = slides_pseudo_code(K, 8)
    np.testing.assert_allclose(ic.factor_, psi, atol=1e-12)
    assert ic.pivots_.tolist() == piv


def test_incomplete_cholesky_exact_on_low_rank_matrix(data):
    K = polynomial_kernel(data[:, :2], degree=3, coef0=1)  # rank 10 = C(2+3, 3)
    ic = IncompleteCholesky(tol=1e-9).fit(K)
    assert ic.rank_ == 10
    assert np.linalg.norm(K - ic.factor_ @ ic.factor_.T) < 1e-8


@pytest.mark.parametrize("n, r", [(50, 3), (100, 5), (200, 2)])
def test_incomplete_cholesky_takes_a_low_rank_float32_or_integer_gram_matrix(n, r):
    """float32 round-off makes a rank-r Gram matrix slightly indefinite (residual diagonal
    entries of about -1e-6 after r pivots): still a PSD kernel at that precision."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, r))
    K32 = (A @ A.T).astype(np.float32)
    ic = IncompleteCholesky().fit(K32)
    assert ic.rank_ == r
    K = K32.astype(np.float64)
    assert np.abs(K - ic.factor_ @ ic.factor_.T).max() <= 1e-5 * np.abs(K).max()
    Ai = rng.integers(-1000, 1000, size=(n, r))
    assert IncompleteCholesky(tol=0.0).fit(Ai @ Ai.T).rank_ == r
    # a matrix that is not PSD at float32 precision is still refused
    with pytest.raises(ValueError, match="not positive semi-definite"):
        IncompleteCholesky().fit(K32 - np.float32(0.01 * np.abs(K).max()) * np.eye(n, dtype=np.float32))


@pytest.mark.parametrize("tol", [1e-1, 1e-3, 1e-6])
def test_incomplete_cholesky_error_below_tolerance(data, tol):
    K = rbf_kernel(data, gamma=0.1)
    ic = IncompleteCholesky(tol=tol).fit(K)
    R = K - ic.factor_ @ ic.factor_.T
    assert np.abs(R).max() <= tol * (1 + 1e-9)
    np.testing.assert_allclose(np.diag(R), ic.residual_norms_, atol=1e-10)
    assert np.linalg.eigvalsh(R)[0] > -1e-9  # the residual is PSD
    # full pivoted Cholesky agrees with scipy's LDL-free Cholesky up to the permutation
    full = IncompleteCholesky(tol=0.0).fit(K + 1e-3 * np.eye(60))
    P = full.pivots_
    L = scipy.linalg.cholesky((K + 1e-3 * np.eye(60))[np.ix_(P, P)], lower=True)
    np.testing.assert_allclose(full.factor_[P], L, atol=1e-8)


def test_incomplete_cholesky_from_data_and_transform(data):
    X, Xnew = data[:40], data[40:]
    a = IncompleteCholesky(tol=1e-4, kernel="rbf", gamma=0.2).fit(X)
    b = IncompleteCholesky(tol=1e-4).fit(rbf_kernel(X, gamma=0.2))
    np.testing.assert_allclose(a.factor_, b.factor_, atol=1e-12)
    # training rows reproduced by transform; new rows give <psi(x), psi(z)> ~ k(x, z)
    np.testing.assert_allclose(a.transform(X), a.factor_, atol=1e-10)
    np.testing.assert_allclose(b.transform(rbf_kernel(X, X, gamma=0.2)), b.factor_, atol=1e-10)
    full = IncompleteCholesky(tol=0.0, kernel="rbf", gamma=0.2).fit(X)
    Z = full.transform(Xnew)
    np.testing.assert_allclose(Z @ full.factor_.T, rbf_kernel(Xnew, X, gamma=0.2), atol=1e-6)


def test_incomplete_cholesky_memory_follows_the_rank_not_the_number_of_points():
    """200,000 points of a rank-3 linear kernel: the factor is 200,000 x 3.  With
    max_rank=None an m x m factor (320 GB here) was allocated before the first pivot,
    a MemoryError; it now grows with the rank.  The factor is checked against the data:
    K = X X^T, so factor_ factor_^T reproduces it on a sample of entries."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 3))
    ic = IncompleteCholesky(kernel="linear", tol=1e-8).fit(X)
    assert ic.rank_ == 3 and ic.factor_.shape == (200_000, 3)
    rows = rng.choice(200_000, 50, replace=False)
    np.testing.assert_allclose(ic.factor_[rows] @ ic.factor_[rows].T, X[rows] @ X[rows].T,
                               atol=1e-8)


@pytest.mark.parametrize("tol", [0.0, 1e-8, 1e-3])
@pytest.mark.parametrize("kernel", ["linear", "precomputed"])
def test_incomplete_cholesky_is_scale_free(data, tol, kernel):
    """Data scaled by 1e-150 (a linear kernel scaled by 1e-300): the same pivots, the factor
    scaled by 1e-150 (issue 52: rank 0 even with tol=0, then transform failed)."""
    c = 1e-150
    X = data[:30, :4]
    fit = (lambda Z: IncompleteCholesky(tol=tol, kernel="linear").fit(Z)) if kernel == "linear" \
        else (lambda Z: IncompleteCholesky(tol=tol).fit(Z @ Z.T))
    ref, small = fit(X), fit(c * X)
    assert small.rank_ == ref.rank_ == 4
    np.testing.assert_array_equal(small.pivots_, ref.pivots_)
    np.testing.assert_allclose(small.factor_ / c, ref.factor_, rtol=1e-9, atol=1e-12)
    new = X[:5] if kernel == "linear" else X[:5] @ X.T
    new_small = c * X[:5] if kernel == "linear" else (c * X[:5]) @ (c * X).T
    np.testing.assert_allclose(small.transform(new_small) / c, ref.transform(new), rtol=1e-9, atol=1e-12)


def test_incomplete_cholesky_of_a_zero_kernel_has_rank_zero_and_no_feature():
    ic = IncompleteCholesky(tol=0.0).fit(np.zeros((4, 4)))
    assert ic.rank_ == 0 and ic.transform(np.zeros((2, 4))).shape == (2, 0)


def test_incomplete_cholesky_factor_grows_past_its_first_allocation(data):
    """More pivots than the first allocation's columns: the same factor as the exact
    pivoted Cholesky of the full-rank Gram matrix (the growth copies, nothing is lost)."""
    K = rbf_kernel(data[:60], gamma=2.0) + 1e-3 * np.eye(60)
    ic = IncompleteCholesky(tol=0.0).fit(K)
    assert ic.rank_ == 60
    np.testing.assert_allclose(ic.factor_ @ ic.factor_.T, K, atol=1e-10)


def test_incomplete_cholesky_validation():
    with pytest.raises(ValueError, match="square"):
        IncompleteCholesky().fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="symmetric"):
        IncompleteCholesky().fit(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="tol"):
        IncompleteCholesky(tol=-1).fit(np.eye(3))
    with pytest.raises(ValueError, match="max_rank"):
        IncompleteCholesky(max_rank=0).fit(np.eye(3))
    with pytest.raises(ValueError, match="NaN|infinity"):
        IncompleteCholesky().fit(np.full((2, 2), np.nan))


# ----------------------------------------------------------------------------- SVM-2K


@pytest.fixture
def two_views():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 30)
    z = (2 * y - 1)[:, None] * 0.8 + rng.normal(size=(60, 1))
    XA = np.hstack([z + 0.5 * rng.normal(size=(60, 1)), rng.normal(size=(60, 2))])
    XB = np.hstack([z + 0.7 * rng.normal(size=(60, 1)), rng.normal(size=(60, 1))])
    return np.hstack([XA, XB]), y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm2k_with_D_zero_is_two_separate_svms(two_views, kernel):
    X, y = two_views
    m2k = SVM2K(C_A=0.7, C_B=2.0, D=0.0, views=3, kernel=kernel, gamma=0.5).fit(X, y)
    fa, fb = m2k.decision_function_views(X)
    sa = SVC(C=0.7, kernel=kernel, gamma=0.5, tol=1e-8).fit(X[:, :3], y)
    sb = SVC(C=2.0, kernel=kernel, gamma=0.5, tol=1e-8).fit(X[:, 3:], y)
    np.testing.assert_allclose(fa, sa.decision_function(X[:, :3]), atol=2e-3)
    np.testing.assert_allclose(fb, sb.decision_function(X[:, 3:]), atol=2e-3)


def test_svm2k_large_D_makes_views_agree(two_views):
    X, y = two_views
    gap = lambda mdl: np.abs(np.subtract(*mdl.decision_function_views(X))).mean()  # noqa: E731
    gaps = [gap(SVM2K(D=D, views=3).fit(X, y)) for D in (0.0, 0.1, 1.0)]
    assert gaps[0] > gaps[1] > gaps[2] > 0.05
    # with two linear views on 60 points only constant functions agree everywhere
    rigid = SVM2K(D=100.0, views=3).fit(X, y)
    assert gap(rigid) < 1e-6
    assert len(set(rigid.predict(X))) == 1


def test_svm2k_objective_matches_its_solution(two_views):
    X, y = two_views
    m = SVM2K(C_A=1.0, C_B=1.0, D=0.5, epsilon=0.1, views=3).fit(X, y)
    fa, fb = m.decision_function_views(X)
    ys = 2 * y - 1
    wa2 = m.dual_coef_A_ @ (X[:, :3] @ X[:, :3].T) @ m.dual_coef_A_
    wb2 = m.dual_coef_B_ @ (X[:, 3:] @ X[:, 3:].T) @ m.dual_coef_B_
    obj = (0.5 * wa2 + 0.5 * wb2 + np.maximum(0, 1 - ys * fa).sum() + np.maximum(0, 1 - ys * fb).sum()
           + 0.5 * np.maximum(0, np.abs(fa - fb) - 0.1).sum())
    assert obj == pytest.approx(m.objective_, rel=1e-4)


def test_svm2k_validation(two_views):
    X, y = two_views
    with pytest.raises(ValueError, match="binary"):
        SVM2K().fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match="views"):
        SVM2K(views=7).fit(X, y)
    with pytest.raises(ValueError, match="D"):
        SVM2K(D=-1).fit(X, y)


def test_kernel_pca_features_linear_kernel_equals_svd(data):
    from lecturelib.subspace import kernel_pca_features

    X, Xnew = data[:40], data[40:]
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    Z = kernel_pca_features(X @ X.T, Xnew @ X.T, 3)
    expected = Xnew @ Vt[:3].T
    signs = np.sign(np.sum(Z * expected, axis=0))
    np.testing.assert_allclose(Z, expected * signs, atol=1e-10)
    # training coordinates have squared column norms equal to the eigenvalues
    Ztr = kernel_pca_features(X @ X.T, X @ X.T, 3)
    np.testing.assert_allclose(np.sum(Ztr**2, axis=0), np.linalg.svd(X, compute_uv=False)[:3] ** 2)


def test_projection_residuals_several_k_at_once(data):
    K = rbf_kernel(data[:40], gamma=0.2)
    Kn = rbf_kernel(data[40:], data[:40], gamma=0.2)
    many = projection_residuals(K, Kn, np.ones(20), [1, 4, 9])
    for j, k in enumerate([1, 4, 9]):
        np.testing.assert_allclose(many[:, j], projection_residuals(K, Kn, np.ones(20), k))


def test_scikit_learn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (IncompleteCholesky(kernel="rbf"), SVM2K(kernel="linear")):
        failed = [r for r in check_estimator(est, on_fail=None) if r["status"] == "failed"]
        assert not failed, [(r["check_name"], str(r["exception"])[:200]) for r in failed]


def test_digit_halves_dataset():
    from sklearn.datasets import load_digits

    from lecturelib.datasets import digit_halves

    left, right, y = digit_halves()
    images = load_digits().images
    assert left.shape == right.shape == (1797, 32)
    np.testing.assert_array_equal(left[5].reshape(8, 4), images[5][:, :4])
    np.testing.assert_array_equal(right[5].reshape(8, 4), images[5][:, 4:])
    top, bottom, _ = digit_halves("top-bottom")
    np.testing.assert_array_equal(bottom[7].reshape(4, 8), images[7][4:])
    with pytest.raises(ValueError, match="kind"):
        digit_halves("diagonal")


def test_svm2k_semi_supervised(two_views):
    X, y = two_views
    lab = np.r_[0:5, 30:35]
    unl = np.setdiff1d(np.arange(60), lab)
    sup = SVM2K(D=1.0, views=3).fit(X[lab], y[lab])
    semi = SVM2K(D=1.0, views=3).fit(X[lab], y[lab], X_unlabelled=X[unl])
    assert semi.dual_coef_A_.shape == (60,) and semi.slack_consistency_.shape == (60,)
    gap = lambda mdl: np.abs(np.subtract(*mdl.decision_function_views(X[unl]))).mean()  # noqa: E731
    assert gap(semi) < gap(sup)  # agreement is enforced where it was not before
    # with D = 0 the unlabelled points change nothing: the same weights as supervised
    # (the bias can be non-unique on ten points, so compare the functions without it)
    plain = SVM2K(D=0.0, views=3).fit(X[lab], y[lab])
    with_u = SVM2K(D=0.0, views=3).fit(X[lab], y[lab], X_unlabelled=X[unl])
    for mdl_a, mdl_b in [(plain, with_u)]:
        fa1, fb1 = mdl_a.decision_function_views(X)
        fa2, fb2 = mdl_b.decision_function_views(X)
        np.testing.assert_allclose(fa1 - mdl_a.intercept_A_, fa2 - mdl_b.intercept_A_, atol=1e-4)
        np.testing.assert_allclose(fb1 - mdl_a.intercept_B_, fb2 - mdl_b.intercept_B_, atol=1e-4)
    with pytest.raises(ValueError, match="X_unlabelled"):
        SVM2K().fit(X[lab], y[lab], X_unlabelled=X[unl, :2])


# ----------------------------------------------------------------------------- SVM-2K analysis


def _rademacher_by_alpha(K_A, K_B, C, D, signs, m):
    """The same programme, written independently in the dual coefficients alpha (cvxpy)."""
    import cvxpy as cp

    n = K_A.shape[0]
    aa, ab = cp.Variable(n), cp.Variable(n)
    fa, fb = K_A @ aa, K_B @ ab
    cons = [cp.quad_form(aa, cp.psd_wrap(K_A)) <= C**2, cp.quad_form(ab, cp.psd_wrap(K_B)) <= C**2,
            cp.sum(cp.abs(fa - fb)) / n <= D]
    prob = cp.Problem(cp.Maximize(signs @ (fa[:m] + fb[:m]) / m), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.fixture
def two_grams():
    rng = np.random.default_rng(5)
    z = rng.normal(size=(25, 1))
    XA = np.hstack([z, rng.normal(size=(25, 2))])
    XB = np.hstack([z + 0.3 * rng.normal(size=(25, 1)), rng.normal(size=(25, 1))])
    return rbf_kernel(XA, gamma=0.5), rbf_kernel(XB, gamma=0.5)


@pytest.mark.parametrize("D", [0.0, 0.05, 0.3])
def test_svm2k_rademacher_estimate_equals_alpha_form(two_grams, D):
    from lecturelib.subspace import svm2k_rademacher_estimate

    K_A, K_B = two_grams
    out = svm2k_rademacher_estimate(K_A, K_B, 2.0, disagreement=D, n_labelled=15, n_draws=2,
                                    random_state=0)
    signs = np.random.RandomState(0).choice([-1.0, 1.0], size=(2, 15))
    expected = [_rademacher_by_alpha(K_A, K_B, 2.0, D, s, 15) for s in signs]
    np.testing.assert_allclose(out["values"], expected, rtol=1e-4, atol=1e-6)
    assert out["estimate"] == pytest.approx(np.mean(expected), rel=1e-4)
    # the constraint can only lower the supremum below the closed-form unconstrained value
    assert np.all(out["values"] <= out["unconstrained"] + 1e-7)


def test_svm2k_duality_bounds_enclose_the_optimum(two_grams):
    """The certificate of an "almost solved" estimate: at any point and any multiplier the
    lower value is feasible and the upper one a weak-duality bound of the independent
    alpha-form optimum; at the optimum's multiplier they meet."""
    import cvxpy as cp

    from lecturelib.subspace import SVM2K, _svm2k_duality_bounds

    K_A, K_B = two_grams                             # RBF: unit diagonal, the unit scale
    m, D = 15, 0.05
    s = np.random.RandomState(0).choice([-1.0, 1.0], size=m)
    optimum = _rademacher_by_alpha(K_A, K_B, 1.0, D, s, m)
    (Fa, _), (Fb, _) = SVM2K._feature_map(K_A, "A"), SVM2K._feature_map(K_B, "B")
    rng = np.random.default_rng(1)
    for lam in (0.0, 0.3, 3.0):
        wa, wb = rng.normal(size=Fa.shape[1]), rng.normal(size=Fb.shape[1])
        lower, upper = _svm2k_duality_bounds(Fa, Fb, s, D, wa, wb, lam)
        assert lower <= optimum + 1e-9 <= upper + 2e-9
    va, vb = cp.Variable(Fa.shape[1]), cp.Variable(Fb.shape[1])
    agreement = cp.sum(cp.abs(Fa @ va - Fb @ vb)) / len(K_A) <= D
    cp.Problem(cp.Maximize(s @ (Fa @ va + Fb @ vb)[:m] / m),
               [cp.norm(va) <= 1, cp.norm(vb) <= 1, agreement]).solve(solver=cp.CLARABEL)
    lower, upper = _svm2k_duality_bounds(Fa, Fb, s, D, va.value, vb.value, agreement.dual_value)
    assert lower == pytest.approx(optimum, rel=1e-6) and (upper - lower) / upper < 1e-6


def test_svm2k_rademacher_estimate_closed_forms(two_grams):
    from lecturelib.subspace import svm2k_rademacher_estimate

    K_A, K_B = two_grams
    free = svm2k_rademacher_estimate(K_A, K_B, 1.5, n_draws=3, random_state=1)
    signs = np.random.RandomState(1).choice([-1.0, 1.0], size=(3, 25))
    expected = [1.5 / 25 * (np.sqrt(s @ K_A @ s) + np.sqrt(s @ K_B @ s)) for s in signs]
    np.testing.assert_allclose(free["values"], expected, rtol=1e-12)
    # a loose constraint is inactive: the programme returns the closed form
    loose = svm2k_rademacher_estimate(K_A, K_B, 1.5, disagreement=10.0, n_draws=3, random_state=1)
    np.testing.assert_allclose(loose["values"], expected, rtol=1e-5)
    # identical views and exact agreement: w_A = w_B, value (2C/m) sqrt(s'Ks)
    same = svm2k_rademacher_estimate(K_A, K_A, 1.5, disagreement=0.0, n_draws=3, random_state=1)
    np.testing.assert_allclose(same["values"], [3.0 / 25 * np.sqrt(s @ K_A @ s) for s in signs],
                               rtol=1e-5)
    # the value grows with the allowed disagreement
    vals = [svm2k_rademacher_estimate(K_A, K_B, 1.5, disagreement=D, random_state=2)["estimate"]
            for D in (0.0, 0.1, 0.4)]
    assert vals[0] < vals[1] < vals[2]


def test_svm2k_rademacher_estimate_validation(two_grams):
    from lecturelib._validation import InvalidParameterError
    from lecturelib.subspace import svm2k_rademacher_estimate

    K_A, K_B = two_grams
    with pytest.raises(ValueError, match="same points"):
        svm2k_rademacher_estimate(K_A, K_B[:10, :10], 1.0)
    with pytest.raises(ValueError, match="n_labelled"):
        svm2k_rademacher_estimate(K_A, K_B, 1.0, n_labelled=30)
    with pytest.raises(InvalidParameterError, match="disagreement"):
        svm2k_rademacher_estimate(K_A, K_B, 1.0, disagreement=-0.1)
    with pytest.raises(ValueError, match="positive semi-definite"):
        svm2k_rademacher_estimate(K_A - 2 * np.eye(25), K_B, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        svm2k_rademacher_estimate(np.where(K_A > 0.9, np.nan, K_A), K_B, 1.0)
    from lecturelib.subspace import svm2k_mcdiarmid_term

    with pytest.raises(InvalidParameterError, match="delta"):
        svm2k_mcdiarmid_term(10, 1.0, delta=1.0)


def test_svm2k_disagreement_bound_closed_form_and_coverage():
    from lecturelib.subspace import svm2k_disagreement_bound, svm2k_mcdiarmid_term

    out = svm2k_disagreement_bound(0.2, 100, 2.0, 150.0, R=1.0, delta=0.05)
    comp = 4 * math.sqrt(2) * 2.0 / 100 * math.sqrt(150.0)
    conf = 2 * 2.0 * math.sqrt(18 * math.log(40) / 100)
    assert out["D"] == pytest.approx(0.2 + comp + conf)
    assert out["D_hat"] == pytest.approx(0.2 + 2 * (comp + conf))
    slides = svm2k_disagreement_bound(0.2, 100, 2.0, 150.0, constants="slides")
    assert slides["D"] == pytest.approx(0.2 + 2 * 2.0 / 100 * math.sqrt(150) + 3 * math.sqrt(math.log(40) / 100))
    assert svm2k_mcdiarmid_term(50, 2.0, 1.0, 0.05) == pytest.approx(4 * math.sqrt(2 * math.log(20) / 50))
    assert svm2k_mcdiarmid_term(50, 2.0, 1.0, 0.05, n_draws=4, constants="slides") == pytest.approx(
        2 * math.sqrt(2 * math.log(20) / 200))
    # coverage: for fixed unit-norm directions in two linear views (|x| <= 1) the true mean
    # disagreement (computed on a very large sample) lies below D in every one of 30 samples
    rng = np.random.default_rng(0)

    def draw(n):
        Z = rng.uniform(-1, 1, size=(n, 4)) / 2
        return Z[:, :2], Z[:, 2:]

    wa, wb = np.array([0.8, 0.6]), np.array([0.6, -0.8])
    big_a, big_b = draw(200000)
    true = np.abs(big_a @ wa - big_b @ wb).mean()
    for _ in range(30):
        A, B = draw(60)
        emp = np.abs(A @ wa - B @ wb).mean()
        bound = svm2k_disagreement_bound(emp, 60, 1.0, float(np.sum(A**2) + np.sum(B**2)),
                                         R=math.sqrt(0.5))
        assert true <= bound["D"] and emp <= true + (bound["D"] - emp)
    with pytest.raises(ValueError, match="constants"):
        svm2k_disagreement_bound(0.2, 100, 2.0, 150.0, constants="paper")


def test_kcca_bound_is_finite_for_huge_but_finite_kernel_diagonals():
    # found by tests/test_fuzz.py: diag * 1e300 overflowed in the sum of squares (inf);
    # the bound is linear in the diagonal, so it is computed without squaring it
    diag = np.ones(1000)
    small = kcca_bound([0.9], A2=1.0, B2=1.0, diag_a=diag, diag_b=diag)
    big = kcca_bound([0.9], A2=1.0, B2=1.0, diag_a=diag * 1e300, diag_b=diag * 1e300)
    assert math.isfinite(big)
    first = 2 * (1 - 0.9) + 3 * 2 * math.sqrt(math.log(2 / 0.05) / 2000)
    assert (big - first) == pytest.approx((small - first) * 1e300, rel=1e-12)
    with pytest.raises(ValueError, match="overflows float64.*diag_a"):
        kcca_bound([0.9], A2=1.0, B2=1.0, diag_a=diag * 1e308, diag_b=diag * 1e308)


def test_projection_residuals_refuse_an_overflowing_projection():
    # found by tests/test_fuzz.py: K_new * 1e300 gave -inf residuals, not an error
    X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    K = X @ X.T
    with pytest.raises(ValueError, match="overflow float64.*K_new"):
        projection_residuals(K, K * 1e300, np.diag(K), 2)


@pytest.mark.parametrize("s, C", [(1e150, 1.0), (1e-150, 1.0), (1.0, 1e300), (1.0, 1e-300)],
                         ids=["K*1e150", "K*1e-150", "C=1e300", "C=1e-300"])
def test_svm2k_rademacher_estimate_is_homogeneous_at_extreme_scales(two_grams, s, C):
    # F(sigma; sK, C, D) = C sqrt(s) F(sigma; K, 1, D / (C sqrt(s))): the scaled problem has
    # the value of the unit one, times C sqrt(s).  At these scales Clarabel reported the
    # bounded programme "unbounded" (C = 1e300), failed (K * 1e150), refused the Gram matrix
    # as numerically zero (K * 1e-150) or returned its tolerance, 3e-12, for 5e-301 (C = 1e-300)
    from lecturelib.subspace import svm2k_rademacher_estimate

    K_A, K_B = two_grams
    kw = dict(n_labelled=15, n_draws=2, random_state=0)
    unit = svm2k_rademacher_estimate(K_A, K_B, 1.0, disagreement=0.05, **kw)
    out = svm2k_rademacher_estimate(K_A * s, K_B * s, C, disagreement=0.05 * C * math.sqrt(s), **kw)
    np.testing.assert_allclose(out["values"] / (C * math.sqrt(s)), unit["values"], rtol=1e-6)
    np.testing.assert_allclose(out["unconstrained"] / (C * math.sqrt(s)), unit["unconstrained"],
                               rtol=1e-12)


def test_svm2k_rademacher_estimate_solver_failures_are_value_errors(two_grams, monkeypatch):
    import cvxpy as cp

    from lecturelib.subspace import svm2k_rademacher_estimate

    K_A, K_B = two_grams
    with pytest.raises(ValueError, match=r"C \* sqrt\(max diag K\) = 1e\+300 \* sqrt\(1e\+300\) "
                                         r"overflows float64; scale C or K_A and K_B down"):
        svm2k_rademacher_estimate(K_A * 1e300, K_B * 1e300, 1e300, disagreement=0.1)

    def fails(self, *args, **kwargs):
        raise cp.error.SolverError("Solver 'CLARABEL' failed.")

    monkeypatch.setattr(cp.Problem, "solve", fails)
    with pytest.raises(ValueError, match=r"svm2k_rademacher_estimate: the cone programme's "
                                         r"solver \(Clarabel, through cvxpy\) failed with SolverError"):
        svm2k_rademacher_estimate(K_A, K_B, 1.0, disagreement=0.05, random_state=0)

    def infeasible(self, *args, **kwargs):
        self._status = "infeasible"

    monkeypatch.setattr(cp.Problem, "solve", infeasible)
    with pytest.raises(ValueError, match=r"returned status 'infeasible', not a solution"):
        svm2k_rademacher_estimate(K_A, K_B, 1.0, disagreement=0.05, random_state=0)
