"""Chapter 5 (lecturelib.spectral): PCA, kernel PCA, LDA, CCA and kernel CCA, cross-checked
against scikit-learn, SciPy and closed forms, with the worked examples of the sources."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg
from sklearn import decomposition
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from lecturelib import datasets
from lecturelib.bayes import GaussianBayesClassifier
from lecturelib.spectral import CCA, LDA, PCA, KernelCCA, KernelPCA, separates_classes


def correlated(n, d, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)


def same_up_to_sign(A, B, atol=1e-8):
    """Columns of A and B equal up to the sign of each column."""
    signs = np.sign(np.sum(A * B, axis=0))
    return np.allclose(A, B * signs, atol=atol)


# ----------------------------------------------------------------------------- PCA


@pytest.mark.parametrize("n, d, k", [(200, 6, 3), (40, 120, 5), (30, 30, 20)])
def test_pca_matches_sklearn(n, d, k):
    X = correlated(n, d) if d <= n else np.random.default_rng(1).normal(size=(n, d))
    ours, ref = PCA(k).fit(X), decomposition.PCA(k, svd_solver="full").fit(X)
    assert ours.solver_ == ("gram" if d > n else "covariance")
    assert same_up_to_sign(ours.components_.T, ref.components_.T, atol=1e-7)
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(ours.singular_values_, ref.singular_values_, rtol=1e-9)
    assert same_up_to_sign(ours.transform(X), ref.transform(X), atol=1e-7)


def test_pca_routes_give_the_same_subspace_and_orthonormal_axes():
    X = np.random.default_rng(2).normal(size=(25, 80))
    cov, gram = PCA(6, solver="covariance").fit(X), PCA(6, solver="gram").fit(X)
    P1 = cov.components_.T @ cov.components_
    P2 = gram.components_.T @ gram.components_
    np.testing.assert_allclose(P1, P2, atol=1e-10)
    np.testing.assert_allclose(gram.components_ @ gram.components_.T, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(cov.explained_variance_, gram.explained_variance_, rtol=1e-10)


def test_pca_eigenfaces_sized_problem_of_the_notes():
    """n = 2500 pixels, m = 100 images: 99 non-zero eigenvalues after centring (E5.1, C5.3)."""
    X = np.random.default_rng(3).normal(size=(100, 2500))
    full = PCA(100).fit(X)
    assert full.solver_ == "gram"
    nonzero = np.sum(full.singular_values_ > 1e-8 * full.singular_values_[0])
    assert nonzero == 99
    pca = PCA(10).fit(X)
    U = pca.components_.T
    Xc = X - X.mean(0)
    np.testing.assert_allclose(U.T @ U, np.eye(10), atol=1e-12)
    np.testing.assert_allclose(Xc.T @ (Xc @ U), U * pca.singular_values_**2, rtol=1e-9, atol=1e-8)


@pytest.mark.parametrize("solver", ["covariance", "gram"])
def test_reconstruction_error_is_sum_of_discarded_eigenvalues(solver):
    X = correlated(60, 8, seed=4)
    q = 3
    pca = PCA(q, solver=solver, ddof=0).fit(X)
    err = np.sum((X - pca.inverse_transform(pca.transform(X))) ** 2) / len(X)
    eig = np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1]
    assert err == pytest.approx(eig[q:].sum(), rel=1e-10)
    assert err == pytest.approx(pca.total_variance_ - pca.explained_variance_.sum(), rel=1e-9)
    # PCA beats random orthonormal q-subspaces (C5.2)
    rng = np.random.default_rng(0)
    Xc = X - X.mean(0)
    for _ in range(50):
        Q = np.linalg.qr(rng.normal(size=(8, q)))[0]
        assert np.sum((Xc - Xc @ Q @ Q.T) ** 2) / len(X) >= err - 1e-12


def test_pca_components_are_decorrelated_with_variances_lambda():
    X = correlated(500, 4, seed=5)
    pca = PCA().fit(X)
    C = np.cov(pca.transform(X).T)
    np.testing.assert_allclose(np.diag(C), pca.explained_variance_, rtol=1e-10)
    assert np.max(np.abs(C - np.diag(np.diag(C)))) < 1e-9 * C.max()


def test_pca_slides_exercise_closed_form():
    """The 8-point exercise: lambda = (39 +- sqrt(1277))/8, u1 from (Sigma - lambda1 I) u1 = 0."""
    X = datasets.pca_exercise_points()
    pca = PCA(ddof=0).fit(X)
    lam = np.array([(39 + np.sqrt(1277)) / 8, (39 - np.sqrt(1277)) / 8])
    np.testing.assert_allclose(pca.explained_variance_, lam, rtol=1e-12)
    u1 = np.array([4.25, lam[0] - 6.25])
    u1 /= np.linalg.norm(u1)
    np.testing.assert_allclose(pca.components_[0], u1, atol=1e-12)
    assert pca.explained_variance_ratio_[0] == pytest.approx(lam[0] / 9.75)
    assert pca.transform(X[:1])[0, 0] == pytest.approx(u1 @ (X[0] - [5, 5]))
    # with 1/(n-1) the axes and ratios stay, the variances scale by n/(n-1)
    pca1 = PCA(ddof=1).fit(X)
    np.testing.assert_allclose(pca1.explained_variance_, lam * 8 / 7, rtol=1e-12)


def test_pca_students_closed_form():
    X = datasets.student_grades()[1]
    lam = (639 + np.array([1, -1]) * np.sqrt(320521)) / 16
    np.testing.assert_allclose(PCA(ddof=0).fit(X).explained_variance_, lam, rtol=1e-12)


def test_pca_planets_raw_vs_standardised():
    _, X, _ = datasets.planets()
    raw = PCA(ddof=0).fit(X)
    assert raw.explained_variance_ratio_[0] > 0.9999
    assert np.argmax(np.abs(raw.components_[0])) == 1  # the diameter axis
    Z = (X - X.mean(0)) / X.std(0)
    std = PCA(ddof=0).fit(Z)
    np.testing.assert_allclose(std.explained_variance_, np.linalg.eigvalsh(np.corrcoef(X.T))[::-1],
                               rtol=1e-10)
    assert std.explained_variance_.sum() == pytest.approx(3.0)


# ----------------------------------------------------------------------------- kernel PCA


@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.3}), ("poly", {"degree": 2, "gamma": 0.5}),
                                            ("linear", {})])
def test_kernel_pca_matches_sklearn(kernel, params):
    X = correlated(80, 4, seed=6)
    Xnew = correlated(10, 4, seed=7)
    ours = KernelPCA(5, kernel=kernel, **params).fit(X)
    ref = decomposition.KernelPCA(5, kernel=kernel, eigen_solver="dense", **params).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    assert same_up_to_sign(ours.transform(Xnew), ref.transform(Xnew), atol=1e-7)
    assert same_up_to_sign(ours.fit_transform(X), ref.fit_transform(X), atol=1e-7)


def test_kernel_pca_with_linear_kernel_is_pca():
    X = correlated(50, 5, seed=8)
    k = KernelPCA(3, kernel="linear").fit(X)
    p = PCA(3, ddof=0).fit(X)
    assert same_up_to_sign(k.transform(X), p.transform(X), atol=1e-9)
    np.testing.assert_allclose(k.eigenvalues_ / len(X), p.explained_variance_, rtol=1e-10)
    # the kernel distance to the subspace is the PCA residual (C5.4)
    Xnew = correlated(7, 5, seed=9)
    resid = np.sum((Xnew - p.inverse_transform(p.transform(Xnew))) ** 2, axis=1)
    np.testing.assert_allclose(k.squared_distance_to_subspace(Xnew), resid, rtol=1e-8)


def poly2_features(X):
    """Explicit feature map of k(x, z) = (x'z + 1)^2 in two dimensions."""
    x1, x2 = X[:, 0], X[:, 1]
    r2 = np.sqrt(2)
    return np.c_[x1**2, x2**2, r2 * x1 * x2, r2 * x1, r2 * x2, np.ones(len(X))]


@pytest.mark.parametrize("center", [True, False])
def test_kernel_pca_distance_matches_explicit_feature_map(center):
    rng = np.random.default_rng(10)
    X, Xnew = rng.normal(size=(40, 2)), rng.normal(size=(6, 2))
    kp = KernelPCA(3, kernel="poly", degree=2, gamma=1.0, coef0=1.0, center=center).fit(X)
    F, Fnew = poly2_features(X), poly2_features(Xnew)
    mu = F.mean(0) if center else np.zeros(F.shape[1])
    w, V = np.linalg.eigh((F - mu).T @ (F - mu))
    U = V[:, ::-1][:, :3]
    R = (Fnew - mu) - (Fnew - mu) @ U @ U.T
    np.testing.assert_allclose(kp.squared_distance_to_subspace(Xnew), np.sum(R**2, axis=1), atol=1e-9)
    assert same_up_to_sign(kp.transform(Xnew), (Fnew - mu) @ U, atol=1e-8)


def test_kernel_pca_rbf_distances_positive_and_precomputed_agrees():
    rng = np.random.default_rng(11)
    X, Xnew = rng.normal(size=(50, 2)), rng.normal(size=(10, 2))
    kp = KernelPCA(5, kernel="rbf", gamma=0.5, center=False).fit(X)
    d = kp.squared_distance_to_subspace(Xnew)
    assert np.all(d > 0)
    from sklearn.metrics.pairwise import rbf_kernel
    pre = KernelPCA(5, kernel="precomputed", center=False).fit(rbf_kernel(X, gamma=0.5))
    np.testing.assert_allclose(pre.squared_distance_to_subspace(rbf_kernel(Xnew, X, gamma=0.5),
                                                                diag=np.ones(10)), d, atol=1e-10)


def three_classes(m, seed=0):
    """The 3-feature, three-class data of benchmarks/large_n.py."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, m)
    return rng.normal(size=(m, 3)) + np.c_[y, -y, np.zeros(m)] * 0.8


@pytest.mark.parametrize("center", [True, False])
def test_nystroem_kernel_pca_with_every_point_a_landmark_is_exact(center):
    """r >= m: K_XZ K_ZZ^+ K_ZX = K, so the low-rank route is the exact one (to rounding)."""
    X, Xnew = correlated(60, 3, seed=12), correlated(9, 3, seed=13)
    exact = KernelPCA(4, kernel="rbf", gamma=0.3, center=center).fit(X)
    low = KernelPCA(4, kernel="rbf", gamma=0.3, center=center, n_landmarks=80, random_state=0).fit(X)
    np.testing.assert_allclose(low.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    assert low.approximation_error_ < 1e-8
    assert same_up_to_sign(low.eigenvectors_, exact.eigenvectors_, atol=1e-7)
    assert same_up_to_sign(low.transform(Xnew), exact.transform(Xnew), atol=1e-7)
    np.testing.assert_allclose(low.transform(X), low.fit_transform(X), atol=1e-8)
    np.testing.assert_allclose(low.squared_distance_to_subspace(Xnew),
                               exact.squared_distance_to_subspace(Xnew), atol=1e-7)


def test_nystroem_kernel_pca_within_its_stated_error():
    """The docstring's measured case: m = 1,500, 200 landmarks, 5 components of an RBF
    kernel. Every eigenvalue is below the exact one by at most approximation_error_
    (Weyl, E = K - K_hat PSD), within 1e-3 * lambda_1; the subspaces' largest principal
    angle has sine below 2e-2."""
    X = three_classes(1500)
    exact = KernelPCA(5, kernel="rbf", gamma=0.5).fit(X)
    low = KernelPCA(5, kernel="rbf", gamma=0.5, n_landmarks=200, random_state=0).fit(X)
    gap = exact.eigenvalues_ - low.eigenvalues_
    assert np.all(gap >= -1e-9 * exact.eigenvalues_[0])
    assert np.all(gap <= low.approximation_error_)
    assert np.max(gap) <= 1e-3 * exact.eigenvalues_[0]
    sines = np.sqrt(np.clip(1 - linalg.svdvals(exact.eigenvectors_.T @ low.eigenvectors_) ** 2, 0, None))
    assert sines.max() < 2e-2
    # a new point's projection needs only its kernel values against the 200 landmarks
    Xnew = three_classes(50, seed=1)
    assert low.dual_coef_.shape == (200, 5) and low.X_fit_.shape == (200, 3)
    assert same_up_to_sign(low.transform(Xnew), exact.transform(Xnew), atol=0.05 * np.sqrt(exact.eigenvalues_[0]))


def test_nystroem_kernel_pca_refuses_a_precomputed_kernel():
    K = correlated(10, 3) @ correlated(10, 3).T
    with pytest.raises(ValueError, match="n_landmarks needs the kernel function"):
        KernelPCA(2, kernel="precomputed", n_landmarks=5).fit(K)


def test_kernel_pca_rings_uncentred_separates():
    """Radii (0, 1, 2), sigma = 1, uncentred: the first component orders the three sets."""
    X, y = datasets.concentric_rings(random_state=0)
    z = KernelPCA(1, kernel="rbf", gamma=0.5, center=False).fit_transform(X)[:, 0]
    lo = [z[y == c].min() for c in range(3)]
    hi = [z[y == c].max() for c in range(3)]
    order = np.argsort([np.median(z[y == c]) for c in range(3)])
    assert all(hi[order[i]] < lo[order[i + 1]] for i in range(2))



# A top eigenvalue repeated many times (the centred identity has eigenvalue 1 with
# multiplicity n - 1): LAPACK's subset eigensolvers returned no eigenpair at all here, and
# every one of these fits raised IndexError.  Any orthonormal basis of the top eigenspace,
# the orthogonal complement of the all-ones vector, is a valid answer.
def _in_centred_identity_top_space(V):
    n, k = V.shape
    return np.allclose(V.T @ V, np.eye(k), atol=1e-10) and np.allclose(V.sum(axis=0), 0, atol=1e-10)


def test_pca_of_the_identity_returns_a_basis_of_the_repeated_top_eigenspace():
    X = np.eye(60)
    pca = PCA(n_components=2).fit(X)
    ref = decomposition.PCA(2, svd_solver="full").fit(X)
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, rtol=1e-12)
    np.testing.assert_allclose(pca.explained_variance_, 1 / 59, rtol=1e-12)
    assert _in_centred_identity_top_space(pca.components_.T)


@pytest.mark.parametrize("kernel, X", [
    ("linear", np.eye(60)),
    ("precomputed", np.eye(60)),
    ("precomputed", np.eye(300)),          # the large-matrix driver (syevx)
    ("rbf", np.random.default_rng(0).normal(size=(60, 3))),  # gamma 1e6: numerically I
])
def test_kernel_pca_of_an_identity_kernel_returns_a_basis_of_the_top_eigenspace(kernel, X):
    kpca = KernelPCA(n_components=2, kernel=kernel, gamma=1e6).fit(X)
    np.testing.assert_allclose(kpca.eigenvalues_, 1.0, rtol=1e-12)
    assert _in_centred_identity_top_space(kpca.eigenvectors_)


def test_top_eigenpairs_fallback_rebuilds_a_matrix_lapack_overwrote():
    """With overwrite=True the lower triangle is destroyed by the first (failing) solve."""
    from lecturelib.spectral import _top_eigh

    n = 60
    S = np.asfortranarray(np.eye(n) - 1.0 / n)
    assert S.flags.f_contiguous        # so LAPACK works in place, not on a copy
    w, V = _top_eigh(S, 2, overwrite=True)
    assert w.shape == (2,) and V.shape == (n, 2)
    np.testing.assert_allclose(w, 1.0, rtol=1e-12)
    assert _in_centred_identity_top_space(V)


# ----------------------------------------------------------------------------- LDA


def two_gaussians(n0, n1, seed=0):
    rng = np.random.default_rng(seed)
    cov = np.array([[3.0, 1.2], [1.2, 0.8]])
    L = np.linalg.cholesky(cov)
    X = np.r_[rng.normal(size=(n0, 2)) @ L.T, rng.normal(size=(n1, 2)) @ L.T + [1.0, -1.0]]
    return X, np.r_[np.zeros(n0, int), np.ones(n1, int)]


def test_lda_two_class_direction_and_sklearn():
    X, y = two_gaussians(300, 500)
    lda = LDA().fit(X, y)
    m0, m1 = X[y == 0].mean(0), X[y == 1].mean(0)
    Sw = sum((X[y == c] - X[y == c].mean(0)).T @ (X[y == c] - X[y == c].mean(0)) for c in (0, 1)) / len(X)
    w = np.linalg.solve(Sw, m1 - m0)
    np.testing.assert_allclose(lda.coef_[0], w, rtol=1e-10)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(lda.coef_, ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(lda.intercept_, ref.intercept_, rtol=1e-9)
    np.testing.assert_allclose(lda.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    s = lda.scalings_[:, 0]
    assert abs(s @ w) / (np.linalg.norm(s) * np.linalg.norm(w)) == pytest.approx(1.0, abs=1e-12)


def test_lda_multiclass_directions_match_sklearn_eigen_solver():
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
    ours = LDA().fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    S = ref.scalings_[:, :2]
    # same directions up to scale and sign
    for j in range(2):
        a, b = ours.scalings_[:, j], S[:, j]
        assert abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)) == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_[:2], rtol=1e-8)
    assert np.mean(ours.predict(X) == ref.predict(X)) == 1.0


def test_lda_transform_whitens_within_class_scatter_and_maximises_j():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    lda = LDA().fit(X, y)
    Z = lda.transform(X)
    Sw_z = sum((Z[y == c] - Z[y == c].mean(0)).T @ (Z[y == c] - Z[y == c].mean(0)) for c in range(3)) / len(Z)
    np.testing.assert_allclose(Sw_z, np.eye(2), atol=1e-10)
    J = lambda w: (w @ lda.between_scatter_ @ w) / (w @ lda.covariance_ @ w)  # noqa: E731
    top = linalg.eigh(lda.between_scatter_, lda.covariance_, eigvals_only=True)[-1]
    assert J(lda.scalings_[:, 0]) == pytest.approx(top, rel=1e-10)
    rng = np.random.default_rng(0)
    assert all(J(rng.normal(size=4)) <= top + 1e-12 for _ in range(200))


def test_lda_boundary_is_the_bayes_boundary_of_chapter_1():
    X, y = two_gaussians(400, 400, seed=3)
    lda = LDA().fit(X, y)
    bayes = GaussianBayesClassifier(shared_covariance=True).fit(X, y)
    np.testing.assert_allclose(lda.coef_, bayes.coef_, rtol=1e-9)
    np.testing.assert_allclose(lda.intercept_, bayes.intercept_, rtol=1e-9, atol=1e-12)
    # (5.3): with equal priors the boundary passes through the midpoint of the means
    mid = 0.5 * (lda.means_[0] + lda.means_[1])
    assert lda.decision_function(mid[None])[0] == pytest.approx(0.0, abs=1e-10)


def test_lda_between_scatter_factor_of_the_notes():
    """BB' = ((l1^2 + l2^2)/l^2)(mu1 - mu2)(mu1 - mu2)' (the notes drop the factor)."""
    X, y = two_gaussians(300, 700, seed=4)
    m1, m2, mu = X[y == 0].mean(0), X[y == 1].mean(0), X.mean(0)
    B = np.c_[m1 - mu, m2 - mu]
    d = (m1 - m2)[:, None]
    np.testing.assert_allclose(B @ B.T, (0.3**2 + 0.7**2) * d @ d.T, rtol=1e-10)


def test_lda_singular_scatter_needs_shrinkage():
    X, y = two_gaussians(50, 50)
    Xs = np.c_[X, X[:, 0] + X[:, 1]]
    with pytest.raises(ValueError, match="singular.*shrinkage"):
        LDA().fit(Xs, y)
    lda = LDA(shrinkage=0.2).fit(Xs, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.2).fit(Xs, y)
    np.testing.assert_allclose(lda.coef_, ref.coef_, rtol=1e-8)


def test_lda_fisher_criterion_from_scatter_matrices_computed_here():
    """J(w) against the scatter matrices built with numpy from the data; its maximum is the
    largest generalised eigenvalue (scipy), reached at the first direction."""
    X, y = datasets.elongated_classes(n_per_class=150, random_state=3)
    X = np.c_[X, np.random.default_rng(1).normal(size=len(y))]
    y = np.where(np.arange(len(y)) % 3 == 0, 2, y)           # three classes
    m = len(y)
    mu = X.mean(axis=0)
    Sw = sum(np.cov(X[y == c].T, bias=True) * np.sum(y == c) for c in (0, 1, 2)) / m
    Sb = sum(np.sum(y == c) / m * np.outer(X[y == c].mean(0) - mu, X[y == c].mean(0) - mu)
             for c in (0, 1, 2))
    lda = LDA().fit(X, y)
    W = np.random.default_rng(2).normal(size=(3, 7))
    J = lda.fisher_criterion(W)
    by_hand = np.array([(w @ Sb @ w) / (w @ Sw @ w) for w in W.T])
    np.testing.assert_allclose(J, by_hand, rtol=1e-10)
    assert lda.fisher_criterion(W[:, 0]) == pytest.approx(by_hand[0], rel=1e-10)
    assert lda.fisher_criterion(-3.0 * W[:, 0]) == pytest.approx(by_hand[0], rel=1e-10)
    top = linalg.eigh(Sb, Sw, eigvals_only=True)[-1]
    assert lda.fisher_criterion(lda.scalings_[:, 0]) == pytest.approx(top, rel=1e-9)
    assert np.all(J <= top * (1 + 1e-12))
    with pytest.raises(ValueError, match="must have shape"):
        lda.fisher_criterion(np.ones(2))
    with pytest.raises(ValueError, match="non-zero"):
        lda.fisher_criterion(np.zeros(3))


# ----------------------------------------------------------------------------- CCA


def two_views(n=300, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    X = Z @ rng.normal(size=(3, 5)) + 0.5 * rng.normal(size=(n, 5))
    Y = Z[:, :2] @ rng.normal(size=(2, 4)) + 0.8 * rng.normal(size=(n, 4))
    return X, Y


@pytest.mark.parametrize("center", [True, False])
def test_cca_correlations_are_cosines_of_principal_angles(center):
    X, Y = two_views()
    Y = Y + 3.0
    cca = CCA(center=center).fit(X, Y)
    A, B = (X - X.mean(0), Y - Y.mean(0)) if center else (X, Y)
    cos = np.cos(linalg.subspace_angles(A, B))
    np.testing.assert_allclose(cca.correlations_, np.sort(cos)[::-1], atol=1e-10)
    G, H = cca.transform(X, Y)
    np.testing.assert_allclose(G.T @ G, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(H.T @ H, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(G.T @ H, np.diag(cca.correlations_), atol=1e-10)


def test_cca_first_pair_matches_sklearn_and_pearson():
    from sklearn.cross_decomposition import CCA as SkCCA
    X, Y = two_views(seed=1)
    ours = CCA(2).fit(X, Y)
    g, h = ours.transform(X, Y)
    for j in range(2):
        assert np.corrcoef(g[:, j], h[:, j])[0, 1] == pytest.approx(ours.correlations_[j], rel=1e-10)
    ref = SkCCA(n_components=1, max_iter=5000, tol=1e-12).fit(X, Y)
    a, b = ref.transform(X, Y)
    assert abs(np.corrcoef(a[:, 0], b[:, 0])[0, 1]) == pytest.approx(ours.correlations_[0], rel=1e-8)
    assert same_up_to_sign(g[:, :1] / np.linalg.norm(g[:, 0]), a / np.linalg.norm(a), atol=1e-6)


def test_cca_prediction_rule_is_least_squares_regression():
    """Chapter 5's rule: predict the b-variates as rho_j times the a-variates, map back
    through the loadings; with all pairs it is ordinary least squares of Y on X."""
    from sklearn.linear_model import LinearRegression
    rng = np.random.default_rng(3)
    z = rng.normal(size=(300, 2))
    X = z @ rng.normal(size=(2, 5)) + rng.normal(size=(300, 5))
    Y = z @ rng.normal(size=(2, 3)) + rng.normal(size=(300, 3))
    X_new = rng.normal(size=(40, 5))
    cca = CCA().fit(X, Y)
    G, H = cca.transform(X, Y)
    loadings = H.T @ (Y - cca.y_mean_)
    predicted = cca.y_mean_ + (cca.transform(X_new) * cca.correlations_) @ loadings
    ols = LinearRegression().fit(X, Y).predict(X_new)
    np.testing.assert_allclose(predicted, ols, atol=1e-10)
    # dropping the factors rho_j (matching the variates exactly) is a different rule
    unshrunk = cca.y_mean_ + cca.transform(X_new) @ loadings
    assert np.abs(unshrunk - ols).max() > 1e-2


def test_cca_rank_deficient_view_is_refused():
    X, Y = two_views()
    with pytest.raises(ValueError, match="full column rank"):
        CCA().fit(np.c_[X, X[:, 0]], Y)


# ----------------------------------------------------------------------------- kernel CCA


def test_kernel_cca_linear_unregularised_is_cca():
    X, Y = two_views(seed=2)
    k = KernelCCA(kernel="linear", reg=0.0).fit(X, Y)
    c = CCA().fit(X, Y)
    np.testing.assert_allclose(k.correlations_, c.correlations_, atol=1e-9)
    assert same_up_to_sign(k.transform(X), c.transform(X), atol=1e-7)


def test_kernel_cca_linear_regularised_matches_primal_closed_form():
    X, Y = two_views(n=80, seed=3)
    tau = 0.3
    A, B = X - X.mean(0), Y - Y.mean(0)
    Caa = (1 - tau) * A.T @ A + tau * np.eye(5)
    Cbb = (1 - tau) * B.T @ B + tau * np.eye(4)
    L = np.block([[np.zeros((5, 5)), A.T @ B], [B.T @ A, np.zeros((4, 4))]])
    R = linalg.block_diag(Caa, Cbb)
    rho = linalg.eigh(L, R, eigvals_only=True)[::-1][:4]
    k = KernelCCA(n_components=4, kernel="linear", reg=tau).fit(X, Y)
    np.testing.assert_allclose(k.correlations_, rho, rtol=1e-9)


def test_kernel_cca_matches_the_lectures_generalised_eigenproblem():
    """Uncentred RBF kernels are positive definite, so the 2m x 2m problem is solvable directly."""
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(40, 2)), rng.normal(size=(40, 3))
    from sklearn.metrics.pairwise import rbf_kernel
    Ka, Kb = rbf_kernel(X, gamma=0.5), rbf_kernel(Y, gamma=0.5)
    tau, m = 0.2, 40
    L = np.block([[np.zeros((m, m)), Ka @ Kb], [Kb @ Ka, np.zeros((m, m))]])
    R = linalg.block_diag((1 - tau) * Ka @ Ka + tau * Ka, (1 - tau) * Kb @ Kb + tau * Kb)
    rho = linalg.eigh(L, R, eigvals_only=True)[::-1][:3]
    k = KernelCCA(n_components=3, kernel="rbf", gamma=0.5, reg=tau, center=False).fit(X, Y)
    np.testing.assert_allclose(k.correlations_, rho, rtol=1e-6)
    a, b = k.x_dual_coef_[:, 0], k.y_dual_coef_[:, 0]
    assert a @ R[:m, :m] @ a == pytest.approx(1.0, rel=1e-6)
    assert (a @ Ka @ Kb @ b) == pytest.approx(k.correlations_[0], rel=1e-6)
    np.testing.assert_allclose(k.x_sq_norms_[0], a @ Ka @ a, rtol=1e-10)
    pre = KernelCCA(n_components=3, kernel="precomputed", reg=tau, center=False).fit(Ka, Kb)
    np.testing.assert_allclose(pre.correlations_, k.correlations_, rtol=1e-10)


def test_kernel_cca_without_regularisation_overfits():
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))  # independent views
    k = KernelCCA(n_components=3, kernel="rbf", gamma=1.0, reg=0.0).fit(X, Y)
    np.testing.assert_allclose(k.correlations_, 1.0, atol=1e-6)
    # with kernels scaled to eigenvalues <= 1, regularisation pulls every correlation below 1
    from sklearn.metrics.pairwise import rbf_kernel
    H = np.eye(30) - 1 / 30
    Ka, Kb = (H @ rbf_kernel(M, gamma=1.0) @ H for M in (X, Y))
    Ka, Kb = Ka / np.linalg.eigvalsh(Ka)[-1], Kb / np.linalg.eigvalsh(Kb)[-1]
    firsts = [KernelCCA(n_components=3, kernel="precomputed", reg=tau).fit(Ka, Kb).correlations_[0]
              for tau in (0.05, 0.2, 0.5)]
    assert firsts[0] < 1 - 1e-3 and firsts[0] > firsts[1] > firsts[2]


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("thunk, pattern", [
    (lambda: PCA(10).fit(np.ones((5, 3))), "larger than"),
    (lambda: PCA().fit(np.ones((1, 3))), "1 sample"),
    (lambda: PCA(solver="qr").fit(np.eye(3)), "solver"),
    (lambda: PCA().fit([[1.0, np.nan], [2.0, 3.0]]), "NaN"),
    (lambda: KernelPCA(kernel="precomputed").fit([[1.0, 2.0], [2.0, 1.0]]), "positive semi-definite"),
    (lambda: KernelPCA(kernel="gauss").fit(np.eye(3)), "kernel must be"),
    (lambda: KernelPCA(50).fit(np.eye(5)), "larger than"),
    (lambda: LDA().fit(np.eye(4), [0, 0, 0, 0]), "two classes"),
    (lambda: LDA(n_components=2).fit(np.random.default_rng(0).normal(size=(10, 3)), [0, 1] * 5), "larger than"),
    (lambda: LDA(shrinkage=2.0).fit(np.eye(4), [0, 1, 0, 1]), "shrinkage"),
    (lambda: CCA().fit(np.ones((5, 2)), np.ones((6, 2))), "inconsistent"),
    (lambda: CCA(3).fit(np.eye(6)[:, :2], np.eye(6)[:, 2:5]), "larger than"),
    (lambda: KernelCCA(reg=1.5).fit(np.eye(4), np.eye(4)), "reg"),
])
def test_bad_input(thunk, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        thunk()


def test_pca_is_accurate_for_data_far_from_the_origin():
    X = correlated(300, 5, seed=12)
    far = PCA(3).fit(X + 1e7)
    near = PCA(3).fit(X)
    np.testing.assert_allclose(far.explained_variance_, near.explained_variance_, rtol=1e-7)
    assert same_up_to_sign(far.components_.T, near.components_.T, atol=1e-7)


# ----------------------------------------------------------------------------- power method


def test_power_iteration_matches_eigh():
    from lecturelib.spectral import power_iteration

    rng = np.random.default_rng(0)
    A = rng.normal(size=(40, 10)) * np.linspace(3, 0.5, 10)
    S = A.T @ A
    lam, V, n_iter = power_iteration(S, 3, random_state=0)
    ref_lam, ref_V = np.linalg.eigh(S)
    np.testing.assert_allclose(lam, ref_lam[::-1][:3], rtol=1e-10)
    ref_V = ref_V[:, ::-1][:, :3]
    ref_V = ref_V * np.sign(ref_V[np.argmax(np.abs(ref_V), axis=0), np.arange(3)])
    np.testing.assert_allclose(V, ref_V, atol=1e-6)
    assert 1 < n_iter < 1000


def test_power_iteration_rate_and_warning():
    from sklearn.exceptions import ConvergenceWarning

    from lecturelib.spectral import power_iteration

    # diagonal matrix with lambda_2 / lambda_1 = 0.5: the Rayleigh quotient's error
    # falls by (lambda_2 / lambda_1)^2 = 1/4 per step once the iteration has settled
    S = np.diag([2.0, 1.0, 0.5, 0.1])
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        _, _, n_iter, hist = power_iteration(S, 1, max_iter=12, tol=0.0, random_state=3,
                                             return_history=True)
    assert n_iter == 12
    err = 2.0 - hist[:, 0]
    np.testing.assert_allclose(err[-4:] / err[-5:-1], 0.25, rtol=0.02)
    with pytest.raises(ValueError, match="n_components"):
        power_iteration(S, 5)
    with pytest.raises(ValueError, match="NaN"):
        power_iteration(np.diag([1.0, np.nan]))
    with pytest.raises(ValueError, match="square"):
        power_iteration(np.ones((2, 3)))


def test_precomputed_float32_gram_matrix_is_psd_at_its_precision():
    """A low-rank Gram matrix rounded to float32 is slightly indefinite; KernelPCA, KernelCCA
    (and KernelKMeans) accept it and find its rank, and refuse one indefinite beyond round-off."""
    from lecturelib.clustering import KernelKMeans

    A = np.random.default_rng(1).normal(size=(50, 3))
    K32 = (A @ A.T).astype(np.float32)
    K = K32.astype(np.float64)
    assert np.linalg.eigvalsh(K)[0] < -1e-8 * np.abs(K).max()   # what float32 rounding does
    kp = KernelPCA(kernel="precomputed").fit(K32)
    assert kp.n_components_ == 3
    np.testing.assert_allclose(kp.eigenvalues_, np.linalg.eigvalsh(K - K.mean(0) - K.mean(1)[:, None]
                                                                  + K.mean())[::-1][:3], rtol=1e-6)
    assert KernelCCA(kernel="precomputed").fit(K32, K32).n_components_ == 3
    KernelKMeans(2, kernel="precomputed", random_state=0).fit(K32)
    bad = K32 - np.float32(0.01 * np.abs(K).max()) * np.eye(50, dtype=np.float32)
    for est in (KernelPCA(kernel="precomputed"), KernelKMeans(2, kernel="precomputed")):
        with pytest.raises(ValueError, match="not positive semi-definite"):
            est.fit(bad)


# ----------------------------------------------------------------------------- separated classes


def runs_of_labels(z, y):
    """The number of runs of equal labels along z sorted (ties: every order tried)."""
    order = np.lexsort((y, z))
    labels = y[order]
    return 1 + int(np.sum(labels[1:] != labels[:-1]))


@pytest.mark.parametrize("seed", range(20))
def test_separates_classes_iff_each_class_is_one_run_along_the_sorted_scores(seed):
    rng = np.random.default_rng(seed)
    k = rng.integers(2, 5)
    y = rng.integers(0, k, size=30)
    y[:k] = np.arange(k)
    centres = rng.permutation(k) * rng.uniform(0.5, 3.0)
    z = centres[y] + rng.normal(scale=0.4, size=30)
    expected = bool(runs_of_labels(z, y) == k)
    assert separates_classes(z, y) is expected
    assert separates_classes(z, np.array(list("abcd"))[y]) is expected   # any labels


def test_separates_classes_counts_a_tie_between_classes_as_overlap():
    assert separates_classes([0.0, 1.0, 1.0, 2.0], [0, 0, 1, 1]) is False
    assert separates_classes([0.0, 0.9, 1.0, 2.0], [0, 0, 1, 1]) is True
    with pytest.raises(ValueError, match="at least two classes"):
        separates_classes([0.0, 1.0], [1, 1])
    with pytest.raises(ValueError, match="one label per entry"):
        separates_classes([0.0, 1.0], [1, 1, 0])


def test_two_views_has_the_covariances_its_docstring_states():
    """A large sample's covariances against the closed forms of the documented model, and
    its canonical correlations against those of the population covariances."""
    mix_a, mix_b = datasets.TWO_VIEWS_LOADINGS
    Saa, Sbb, Sab = mix_a.T @ mix_a + np.eye(4), mix_b.T @ mix_b + 0.64 * np.eye(2), mix_a.T @ mix_b
    X_a, X_b = datasets.two_views(200_000, random_state=11)
    C = np.cov(np.c_[X_a, X_b].T)
    np.testing.assert_allclose(C, np.block([[Saa, Sab], [Sab.T, Sbb]]), atol=0.05)
    ia, ib = linalg.inv(linalg.sqrtm(Saa)), linalg.inv(linalg.sqrtm(Sbb))
    rho = linalg.svdvals(ia @ Sab @ ib)
    np.testing.assert_allclose(CCA(2).fit(X_a, X_b).correlations_, rho, atol=0.01)
    gen = np.random.default_rng(7)
    first, second = datasets.two_views(5, random_state=gen), datasets.two_views(5, random_state=gen)
    assert not np.allclose(first[0], second[0])
    np.testing.assert_array_equal(datasets.two_views(5, random_state=7)[1], first[1])
