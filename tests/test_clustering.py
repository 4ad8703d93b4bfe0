"""Tests of lecturelib.clustering against scikit-learn, SciPy, networkx and closed forms."""

import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.sparse.csgraph import laplacian as csgraph_laplacian
from sklearn.cluster import KMeans as SKKMeans
from sklearn.cluster import SpectralClustering as SKSpectral
from sklearn.datasets import make_blobs, make_circles, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import rbf_kernel

from lecturelib import clustering as cl
from lecturelib.datasets import block_affinity, two_groups_and_a_stray_point


def _blobs(n=300, k=4, d=3, seed=0, std=1.0):
    return make_blobs(n_samples=n, centers=k, n_features=d, cluster_std=std, random_state=seed)


def _random_affinity(m=12, seed=0):
    X = np.random.default_rng(seed).normal(size=(m, 2))
    return rbf_kernel(X, gamma=0.5), X


# ---------------------------------------------------------------- K-means


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tol", [0.0, 1e-4])
def test_kmeans_matches_sklearn_from_same_initial_centres(seed, tol):
    X, _ = _blobs(n=500, k=5, d=4, seed=seed, std=2.5)
    init = X[np.random.default_rng(seed).choice(len(X), 5, replace=False)]
    ours = cl.KMeans(5, init=init, n_init=1, max_iter=300, tol=tol).fit(X)
    ref = SKKMeans(5, init=init, n_init=1, max_iter=300, tol=tol).fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-6, atol=1e-6)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-6)
    assert np.array_equal(ours.labels_, ref.labels_)
    assert ours.n_iter_ == ref.n_iter_


def test_kmeans_assignment_in_blocks_matches_sklearn(monkeypatch):
    """The assignment step works through the points in blocks; with blocks of 37 points
    (the last one partial) the fit is the same as scikit-learn's, including the lowest
    index on ties (duplicated centres tie on every point)."""
    monkeypatch.setattr(cl, "_ASSIGN_CHUNK", 37)
    X, _ = _blobs(n=500, k=5, d=4, seed=1, std=2.5)
    init = X[np.random.default_rng(1).choice(len(X), 5, replace=False)]
    ours = cl.KMeans(5, init=init, n_init=1, tol=0.0).fit(X)
    ref = SKKMeans(5, init=init, n_init=1, tol=0.0).fit(X)
    assert np.array_equal(ours.labels_, ref.labels_)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    labels, dist = cl._assign(np.ascontiguousarray(X.T), np.einsum("ij,ij->i", X, X), init[[0, 0, 1]])
    assert set(labels.tolist()) <= {0, 2}
    np.testing.assert_allclose(dist, np.min(((X[:, None] - init[[0, 1]][None]) ** 2).sum(-1), axis=1),
                               rtol=1e-9, atol=1e-9)


def test_kmeans_hand_computed_toy():
    # Two clusters of two points each; the centres are the pair means (closed form).
    X = np.array([[0, 0], [0.5, 0], [0.5, 1], [1, 1]])
    km = cl.KMeans(2, init=np.array([[0.0, 0.0], [1.0, 1.0]]), n_init=1).fit(X)
    assert km.labels_.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(km.cluster_centers_, [[0.25, 0], [0.75, 1]])
    assert km.inertia_ == pytest.approx(4 * 0.25**2)


def test_kmeans_energy_never_increases_and_restarts_help():
    X, _ = _blobs(n=400, k=6, d=2, seed=3, std=1.5)
    km = cl.KMeans(6, init="random", n_init=1, random_state=0).fit(X)
    hist = np.array(km.inertia_history_)
    assert np.all(np.diff(hist) <= 1e-9 * hist[0])
    assert km.inertia_ == pytest.approx(cl.kmeans_objective(X, km.labels_))
    best = cl.KMeans(6, n_init=10, random_state=0).fit(X)
    ref = SKKMeans(6, n_init=10, random_state=0).fit(X)
    assert best.inertia_ <= ref.inertia_ * 1.01
    singles = [cl.KMeans(6, init="random", n_init=1, random_state=s).fit(X).inertia_ for s in range(10)]
    assert best.inertia_ <= min(singles) + 1e-9 or best.inertia_ <= np.median(singles)


def test_kmeans_predict_transform_score():
    X, _ = _blobs(n=200, seed=1)
    km = cl.KMeans(4, n_init=3, random_state=0).fit(X)
    assert np.array_equal(km.predict(X), km.labels_)
    dist = km.transform(X)
    direct = np.linalg.norm(X[:, None, :] - km.cluster_centers_[None], axis=2)
    np.testing.assert_allclose(dist, direct, atol=1e-7)
    assert km.score(X) == pytest.approx(-km.inertia_)


def test_kmeans_plusplus_picks_distinct_data_points():
    X, _ = _blobs(n=100, k=3, seed=2)
    centers, idx = cl.kmeans_plusplus(X, 5, random_state=0)
    assert len(set(idx.tolist())) == 5
    np.testing.assert_array_equal(centers, X[idx])
    # With k = m every point must be chosen.
    _, idx = cl.kmeans_plusplus(X[:7], 7, random_state=1)
    assert sorted(idx.tolist()) == list(range(7))


def test_kmeans_plusplus_draws_scikit_learns_centres():
    from sklearn.cluster import kmeans_plusplus as sk_kmeans_plusplus

    X, _ = _blobs(n=500, k=6, d=4, seed=3)
    for k, seed in [(3, 0), (8, 1), (20, 2)]:
        ours = cl.kmeans_plusplus(X, k, random_state=seed)[1]
        ref = sk_kmeans_plusplus(X, k, random_state=seed)[1]
        np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("k", [3, 8])
def test_kmeans_inertia_at_least_as_good_as_sklearn_on_wine(k):
    """Standardised wine, n_init = 10 (issue 52: k = 8 was 0.73% above scikit-learn)."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X = StandardScaler().fit_transform(load_wine().data)
    ours = cl.KMeans(k, n_init=10, random_state=0).fit(X).inertia_
    ref = SKKMeans(k, n_init=10, random_state=0).fit(X).inertia_
    assert ours <= ref * (1 + 1e-12)


def test_kmeans_empty_cluster_takes_farthest_point():
    X = np.array([[0.0], [1.0], [2.0], [10.0]])
    # The third centre is far from every point: its cluster is empty after the first
    # assignment, so it takes x = 10 (the point farthest from its own centre, 1.0).
    km = cl.KMeans(3, init=np.array([[0.0], [1.0], [100.0]]), n_init=1).fit(X)
    assert sorted(np.bincount(km.labels_).tolist()) == [1, 1, 2]
    assert km.labels_[3] == 2
    np.testing.assert_allclose(np.sort(km.cluster_centers_.ravel()), [0.0, 1.5, 10.0])


def test_kmeans_errors():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        cl.KMeans(4).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        cl.KMeans(2).fit([[0.0, np.nan], [1.0, 1.0]])
    with pytest.raises(ValueError, match="shape"):
        cl.KMeans(2, init=np.zeros((3, 2))).fit(np.random.default_rng(0).normal(size=(10, 2)))
    with pytest.raises(ValueError, match="init"):
        cl.KMeans(2, init="best").fit(np.random.default_rng(0).normal(size=(10, 2)))


def test_kmeans_warns_at_its_iteration_cap_and_not_when_converged():
    X, _ = _blobs(n=400, k=6, d=2, seed=1, std=2.0)
    with pytest.warns(ConvergenceWarning, match="KMeans stopped at max_iter=1"):
        cl.KMeans(6, n_init=1, max_iter=1, tol=0.0, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        km = cl.KMeans(6, n_init=2, random_state=0).fit(X)
    assert km.n_iter_ < km.max_iter


def test_kernel_kmeans_warns_at_its_iteration_cap_and_not_when_converged():
    X, _ = _blobs(n=300, k=5, d=2, seed=2, std=2.0)
    with pytest.warns(ConvergenceWarning, match="KernelKMeans stopped at max_iter=1"):
        cl.KernelKMeans(5, n_init=1, max_iter=1, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        kk = cl.KernelKMeans(5, n_init=2, random_state=0).fit(X)
    assert kk.n_iter_ < kk.max_iter


def test_spectral_clustering_converged_kmeans_step_does_not_warn():
    X, _ = make_moons(200, noise=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cl.SpectralClustering(2, affinity="knn", n_neighbors=10, random_state=0).fit(X)


# ---------------------------------------------------------------- matrix form (6.1.1)


@pytest.mark.parametrize("func", [cl.cut_value, cl.ncut_value, cl.nassoc_value, cl.trace_objective])
def test_string_labels_name_the_clusters(func):
    K, _ = _random_affinity(9, seed=3)
    ints = np.array([0, 2, 1, 1, 0, 2, 2, 0, 1])
    names = np.array(["a", "c", "b", "b", "a", "c", "c", "a", "b"])
    assert func(K, names) == func(K, ints)
    assert func(K, names.tolist()) == func(K, ints)


def test_string_labels_in_kmeans_objective_and_indicator_matrix():
    X = np.random.default_rng(0).normal(size=(6, 2))
    names = ["x", "y", "x", "z", "y", "z"]
    ints = [0, 1, 0, 2, 1, 2]
    assert cl.kmeans_objective(X, names) == cl.kmeans_objective(X, ints)
    np.testing.assert_array_equal(cl.indicator_matrix(names), cl.indicator_matrix(ints))
    with pytest.raises(ValueError, match="cannot be sorted"):
        cl.cut_value(np.ones((3, 3)), np.array(["a", 1, None], dtype=object))



def test_kmeans_objective_with_empty_clusters_allocates_nothing_of_their_number():
    # empty clusters contribute nothing (documented); an index of 10**12 among six points
    # made the previous code allocate (10**12 + 1) counts and raise MemoryError
    X = np.random.default_rng(4).normal(size=(6, 2))
    labels = np.array([0, 7, 0, 10**12, 7, 10**12])
    energy = sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum())
                 for c in np.unique(labels))
    assert cl.kmeans_objective(X, labels) == pytest.approx(energy, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_trace_form_equals_kmeans_energy(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(37, 3))
    labels = rng.integers(0, 3, size=37)
    total = float((X**2).sum())
    assert cl.trace_objective(X @ X.T, labels) == pytest.approx(total - cl.kmeans_objective(X, labels))


def test_indicator_matrix_satisfies_claim_4():
    labels = np.array([0, 2, 1, 1, 0, 2, 2, 0, 0])
    G = cl.indicator_matrix(labels)
    m = len(labels)
    assert np.all(G >= 0)
    np.testing.assert_allclose(G.T @ G, np.eye(3), atol=1e-15)
    F = G @ G.T
    np.testing.assert_allclose(F @ np.ones(m), np.ones(m), atol=1e-15)
    np.testing.assert_allclose(F.sum(axis=0), np.ones(m), atol=1e-15)
    assert F[0, 4] == pytest.approx(1 / 4) and F[0, 1] == 0
    B = cl.indicator_matrix(labels, scaled=False)
    np.testing.assert_allclose(B.T @ B, np.diag([4, 2, 3]))


def test_kernel_kmeans_linear_kernel_agrees_with_kmeans():
    X, y = _blobs(n=240, k=3, d=2, seed=5, std=0.8)
    kk = cl.KernelKMeans(3, kernel="linear", n_init=5, random_state=0).fit(X)
    # A converged kernel K-means partition is a fixed point of Lloyd's iterations
    # (scikit-learn's K-means started from its cluster means does not move).
    means = np.array([X[kk.labels_ == j].mean(axis=0) for j in range(3)])
    ref = SKKMeans(3, init=means, n_init=1).fit(X)
    assert np.array_equal(ref.labels_, kk.labels_)
    assert kk.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    Xs, _ = _blobs(n=240, k=3, d=2, seed=5, std=0.3)
    kks = cl.KernelKMeans(3, kernel="linear", n_init=5, random_state=0).fit(Xs)
    km = cl.KMeans(3, n_init=5, random_state=0).fit(Xs)
    assert adjusted_rand_score(kks.labels_, km.labels_) == 1.0
    assert kks.inertia_ == pytest.approx(km.inertia_, rel=1e-9)
    K = X @ X.T
    assert kk.inertia_ == pytest.approx(np.trace(K) - cl.trace_objective(K, kk.labels_), rel=1e-9)
    pre = cl.KernelKMeans(3, kernel="precomputed", n_init=5, random_state=0).fit(K)
    assert adjusted_rand_score(pre.labels_, kk.labels_) == 1.0
    assert np.array_equal(kk.predict(X), kk.labels_)


# ---------------------------------------------------------------- min-cut (6.2)


@pytest.mark.parametrize("seed", range(5))
def test_min_cut_matches_networkx_stoer_wagner(seed):
    rng = np.random.default_rng(seed)
    m = 14
    W = rng.random((m, m)) * (rng.random((m, m)) < 0.5)
    W = np.triu(W, 1)
    W = W + W.T + np.diag(np.full(m, 0.0))
    W[np.arange(m - 1), np.arange(1, m)] += 0.05  # keep the graph connected
    W[np.arange(1, m), np.arange(m - 1)] += 0.05
    value, labels = cl.min_cut(W)
    G = nx.Graph()
    for i in range(m):
        for j in range(i + 1, m):
            if W[i, j] > 0:
                G.add_edge(i, j, weight=W[i, j])
    ref_value, _ = nx.stoer_wagner(G)
    assert value == pytest.approx(ref_value, rel=1e-12)
    assert 0 < labels.sum() < m
    assert cl.cut_value(W, labels) == pytest.approx(value, rel=1e-12)


def test_min_cut_isolates_a_weakly_attached_point():
    # Two dense blobs plus one far-away point: the minimum cut splits off the lone point
    # rather than separating the blobs (the failure that motivates balanced cuts).
    X, groups = two_groups_and_a_stray_point()
    W = rbf_kernel(X, gamma=0.5)
    _, labels = cl.min_cut(W)
    side = labels if labels[20] == 1 else 1 - labels
    assert side.sum() == 1 and side[20] == 1
    # The normalised cut (sign of the second eigenvector) separates the two groups.
    _, V = cl.spectral_embedding(W, 2)
    assert adjusted_rand_score(groups[:20], V[:20, 1] > 0) == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_trace_with_01_indicators_is_total_minus_twice_cut(seed):
    K, _ = _random_affinity(20, seed)
    labels = np.random.default_rng(seed).integers(0, 2, 20)
    G = cl.indicator_matrix(labels, scaled=False)
    assert np.trace(G.T @ K @ G) == pytest.approx(K.sum() - 2 * cl.cut_value(K, labels))


# ---------------------------------------------------------------- ratio cut (6.3.1)


def test_ratio_cut_matrix_and_laplacian_share_eigenvectors():
    K, _ = _random_affinity(25, 1)
    Kp = cl.ratio_cut_matrix(K)
    np.testing.assert_allclose(Kp.sum(axis=1), np.ones(25), atol=1e-12)
    L = csgraph_laplacian(K)  # SciPy's D - K (the diagonal of K cancels)
    np.testing.assert_allclose(cl.laplacian(K), L, atol=1e-12)
    lam, V = eigh(L)
    np.testing.assert_allclose(Kp @ V, V * (1 - lam), atol=1e-12)
    # Claim 6: the L1 distance from K to K' is ||D - I||_1.
    d = K.sum(axis=1)
    assert np.abs(K - Kp).sum() == pytest.approx(np.abs(d - 1).sum())
    # Hall's energy: z'(D - K)z = 1/2 sum_ij (z_i - z_j)^2 K_ij.
    z = np.random.default_rng(2).normal(size=25)
    assert z @ L @ z == pytest.approx(0.5 * np.sum((z[:, None] - z[None, :]) ** 2 * K))


def test_fiedler_vector_matches_networkx():
    X, y = make_blobs(n_samples=40, centers=[[0, 0], [4, 0]], cluster_std=0.7, random_state=0)
    K = rbf_kernel(X, gamma=0.5)
    np.fill_diagonal(K, 0.0)
    vals, V = cl.spectral_embedding(K, 2, normalization="ratio")
    assert vals[0] == pytest.approx(1.0)
    G = nx.from_numpy_array(K)
    ref = nx.fiedler_vector(G, weight="weight", normalized=False, method="lobpcg", tol=1e-12, seed=0)
    f = V[:, 1]
    assert abs(f @ ref) / (np.linalg.norm(f) * np.linalg.norm(ref)) == pytest.approx(1.0, abs=1e-8)
    assert adjusted_rand_score(y, (f > 0).astype(int)) == 1.0


# ---------------------------------------------------------------- normalised cut (6.3.2)


def test_normalized_cut_matrix_top_eigenpair():
    K, _ = _random_affinity(30, 4)
    Kp = cl.normalized_cut_matrix(K)
    d = K.sum(axis=1)
    np.testing.assert_allclose(Kp, K / np.sqrt(np.outer(d, d)), rtol=1e-12)
    vals, V = cl.spectral_embedding(K, 3)
    assert vals[0] == pytest.approx(1.0, abs=1e-12)
    v = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    assert abs(V[:, 0] @ v) == pytest.approx(1.0, abs=1e-10)
    assert np.all(np.diff(vals) <= 0)
    sparse = cl.normalized_cut_matrix(sp.csr_matrix(K))
    np.testing.assert_allclose(sparse.toarray(), Kp, rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_ncut_is_two_minus_nassoc_and_matches_networkx(seed):
    K, _ = _random_affinity(18, seed)
    np.fill_diagonal(K, 0.0)
    labels = np.random.default_rng(seed + 10).integers(0, 2, 18)
    ncut = cl.ncut_value(K, labels)
    assert ncut == pytest.approx(2 - cl.nassoc_value(K, labels), rel=1e-12)
    G = nx.from_numpy_array(K)
    S = set(np.flatnonzero(labels == 0).tolist())
    assert ncut == pytest.approx(nx.normalized_cut_size(G, S, weight="weight"), rel=1e-12)
    # Matrix form: trace(Gbar' K Gbar) = Nassoc with Gbar' D Gbar = I.
    d = K.sum(axis=1)
    B = cl.indicator_matrix(labels, scaled=False)
    Gbar = B / np.sqrt(B.T @ d)
    np.testing.assert_allclose(Gbar.T @ np.diag(d) @ Gbar, np.eye(2), atol=1e-12)
    assert np.trace(Gbar.T @ K @ Gbar) == pytest.approx(cl.nassoc_value(K, labels))


def test_doubly_stochastic_matches_sinkhorn_knopp():
    K, _ = _random_affinity(15, 7)
    F, history = cl.doubly_stochastic(K, tol=1e-12, return_history=True)
    np.testing.assert_allclose(F.sum(axis=0), np.ones(15), atol=1e-11)
    np.testing.assert_allclose(F.sum(axis=1), np.ones(15), atol=1e-11)
    np.testing.assert_allclose(F, F.T, atol=1e-15)
    # F = Lambda K Lambda: the ratio F / K is a rank-one matrix lambda lambda'.
    R = F / K
    lam = np.sqrt(np.diag(R))
    np.testing.assert_allclose(R, np.outer(lam, lam), rtol=1e-10)
    # The classic (unsymmetric) Sinkhorn-Knopp iteration reaches the same matrix.
    A = K.copy()
    for _ in range(5000):
        A /= A.sum(axis=1, keepdims=True)
        A /= A.sum(axis=0, keepdims=True)
    np.testing.assert_allclose(F, A, atol=1e-9)
    assert history[-1] <= 1e-12 < history[0]


def test_doubly_stochastic_history_starts_at_the_input():
    K, _ = _random_affinity(12, 3)
    _, history = cl.doubly_stochastic(K, tol=1e-12, return_history=True)
    # history[t] is the row-sum error of K^(t): K itself, then each normalisation in turn.
    Kt, expected = K.copy(), []
    for _ in range(4):
        expected.append(np.abs(Kt.sum(axis=1) - 1).max())
        d = 1 / np.sqrt(Kt.sum(axis=1))
        Kt = d[:, None] * Kt * d[None, :]
    np.testing.assert_allclose(history[:4], expected, rtol=1e-10)


def test_doubly_stochastic_history_entry_t_is_the_error_after_t_normalisations():
    # Computed independently: entry t of the history is max_i |row sum_i - 1| of the
    # matrix after t symmetric normalisations (t = 0: the input), the last entry is the
    # error of the returned F, and at most max_iter normalisations run.
    K = rbf_kernel(np.random.default_rng(3).normal(size=(30, 2)), gamma=1.0)
    F, history = cl.doubly_stochastic(K, tol=1e-14, return_history=True)
    Kt = K.copy()
    for t in range(len(history)):
        assert history[t] == pytest.approx(np.abs(Kt.sum(axis=1) - 1).max(), rel=1e-8,
                                           abs=1e-15)
        if t < len(history) - 1:
            d = 1 / np.sqrt(Kt.sum(axis=1))
            Kt = d[:, None] * Kt * d[None, :]
    np.testing.assert_allclose(F, Kt, atol=1e-14)
    assert history[0] == pytest.approx(np.abs(K.sum(axis=1) - 1).max())
    assert history[0] > 10 > 1 > history[1]        # the raw affinity, then one step
    with pytest.warns(ConvergenceWarning):
        F3, short = cl.doubly_stochastic(K, tol=1e-14, max_iter=3, return_history=True)
    assert len(short) == 4                          # t = 0, 1, 2, 3
    np.testing.assert_allclose(short, history[:4])
    assert np.abs(F3.sum(axis=1) - 1).max() == pytest.approx(short[-1])


def test_doubly_stochastic_warns_at_its_iteration_cap():
    # [[0, 1], [1, 1]] admits no doubly-stochastic scaling: the error decays like 1/t
    with pytest.warns(ConvergenceWarning, match="max_iter=200"):
        F = cl.doubly_stochastic(np.array([[0.0, 1.0], [1.0, 1.0]]), max_iter=200)
    assert np.abs(F.sum(axis=1) - 1).max() > 1e-10
    K = rbf_kernel(np.random.default_rng(0).normal(size=(8, 2)))
    with pytest.warns(ConvergenceWarning):
        cl.doubly_stochastic(K, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cl.doubly_stochastic(K)


def test_doubly_stochastic_errors():
    with pytest.raises(ValueError, match="negative"):
        cl.doubly_stochastic(np.array([[1.0, -0.1], [-0.1, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        cl.doubly_stochastic(np.array([[1.0, 0.2], [0.3, 1.0]]))
    with pytest.raises(ValueError, match="zero total affinity"):
        cl.doubly_stochastic(np.array([[1.0, 0.0], [0.0, 0.0]]))


# ---------------------------------------------------------------- spectral clustering


def test_block_diagonal_affinity_collapses_clusters_to_points():
    K, blocks = block_affinity((4, 5))
    assert blocks.tolist() == [0] * 4 + [1] * 5
    sc = cl.SpectralClustering(2, affinity="precomputed", random_state=0).fit(K)
    np.testing.assert_allclose(sc.eigenvalues_, [1.0, 1.0], atol=1e-12)
    assert adjusted_rand_score(sc.labels_, [0] * 4 + [1] * 5) == 1.0
    vals, V = cl.spectral_embedding(K, 2)
    # Rows within a block are identical (the basis of the 1-eigenspace is arbitrary).
    assert np.ptp(V[:4], axis=0).max() < 1e-12 and np.ptp(V[4:], axis=0).max() < 1e-12
    norms = np.linalg.norm(V, axis=1)
    np.testing.assert_allclose(norms[:4], 0.5, atol=1e-12)
    np.testing.assert_allclose(norms[4:], 1 / np.sqrt(5), atol=1e-12)
    # Basis-free: the projector onto the eigenspace is that of the scaled indicators
    # (1/l_j within block j, 0 across), as chapter 6 prints it.
    H = cl.indicator_matrix(blocks)
    np.testing.assert_allclose(V @ V.T, H @ H.T, atol=1e-12)


@pytest.mark.parametrize("normalization", ["normalized", "ratio"])
def test_spectral_clustering_two_moons_and_circles(normalization):
    Xm, ym = make_moons(n_samples=400, noise=0.05, random_state=0)
    Xc, yc = make_circles(n_samples=400, noise=0.04, factor=0.4, random_state=0)
    for X, y in ((Xm, ym), (Xc, yc)):
        sc = cl.SpectralClustering(2, affinity="knn", n_neighbors=10, normalization=normalization,
                                   random_state=0).fit(X)
        assert adjusted_rand_score(y, sc.labels_) == 1.0
    # K-means cannot separate the rings.
    km = cl.KMeans(2, n_init=10, random_state=0).fit(Xc)
    assert adjusted_rand_score(yc, km.labels_) < 0.1
    sc = cl.SpectralClustering(2, affinity="rbf", gamma=20.0, random_state=0).fit(Xc)
    assert adjusted_rand_score(yc, sc.labels_) == 1.0


def test_spectral_clustering_agrees_with_sklearn_on_blobs():
    X, y = _blobs(n=600, k=4, d=2, seed=11, std=0.6)
    ours = cl.SpectralClustering(4, affinity="knn", n_neighbors=10, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SKSpectral(4, affinity="nearest_neighbors", n_neighbors=10, random_state=0).fit(X)
    assert adjusted_rand_score(ours.labels_, ref.labels_) == 1.0
    assert adjusted_rand_score(ours.labels_, y) == 1.0


def test_sparse_eigensolver_matches_dense():
    X, _ = make_moons(n_samples=600, noise=0.1, random_state=1)
    sc = cl.SpectralClustering(3, affinity="knn", n_neighbors=12, random_state=0).fit(X)
    W = sc.affinity_matrix_
    assert sp.issparse(W) and W.nnz <= 2 * 12 * 600
    from scipy.sparse.csgraph import connected_components
    assert connected_components(W)[0] == 1
    v_sparse, V_sparse = cl.spectral_embedding(W, 4, eigen_solver="arpack", random_state=0)
    v_dense, V_dense = cl.spectral_embedding(W.toarray(), 4, eigen_solver="dense")
    np.testing.assert_allclose(v_sparse, v_dense, atol=1e-9)
    np.testing.assert_allclose(np.abs(V_sparse.T @ V_dense), np.eye(4), atol=1e-6)
    # The eigenvalues are 1 - (smallest eigenvalues of I - D^-1/2 K D^-1/2).
    d = np.asarray(W.sum(axis=1)).ravel()
    lam = eigh(np.eye(600) - W.toarray() / np.sqrt(np.outer(d, d)), eigvals_only=True)[:4]
    np.testing.assert_allclose(1 - lam, v_dense, atol=1e-10)


@pytest.mark.parametrize("solver", ["amg", "lanczos", "auto"])
@pytest.mark.parametrize("normalization", ["normalized", "ratio"])
def test_sparse_eigensolvers_without_factorisation_match_dense(normalization, solver):
    """LOBPCG with the multigrid preconditioner, plain Lanczos on K', and the default
    (Lanczos, then LOBPCG if Lanczos is slow) against LAPACK on the dense matrix; the same
    result twice (no global random state)."""
    X, _ = make_moons(n_samples=600, noise=0.1, random_state=1)
    W = cl.SpectralClustering(3, affinity="knn", n_neighbors=12, random_state=0).fit(X).affinity_matrix_
    vals, V = cl.spectral_embedding(W, 4, normalization=normalization, eigen_solver=solver,
                                    random_state=0)
    v_dense, V_dense = cl.spectral_embedding(W.toarray(), 4, normalization=normalization,
                                             eigen_solver="dense")
    np.testing.assert_allclose(vals, v_dense, atol=1e-9)
    np.testing.assert_allclose(np.abs(V.T @ V_dense), np.eye(4), atol=1e-6)
    np.testing.assert_array_equal(cl.spectral_embedding(W, 4, normalization=normalization,
                                                        eigen_solver=solver, random_state=0)[1], V)


def test_auto_eigensolver_finds_every_component_of_a_disconnected_graph():
    """The chapter's moons and blob: three connected components, eigenvalue 1 three times.
    Single-vector Lanczos found one copy (eigenvalues 1, 0.9991, 0.9989, ARI 0.19); the
    default solves such a graph component by component."""
    X, y = make_moons(n_samples=500, noise=0.06, random_state=0)
    Xb, _ = make_blobs(n_samples=250, centers=[[0.5, -1.6]], cluster_std=0.15, random_state=0)
    sc = cl.SpectralClustering(3, affinity="knn", random_state=0).fit(np.vstack([X, Xb]))
    np.testing.assert_allclose(sc.eigenvalues_, 1.0, atol=1e-9)
    assert adjusted_rand_score(np.r_[y, np.full(250, 2)], sc.labels_) == 1.0


@pytest.mark.parametrize("normalization", ["normalized", "ratio"])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_auto_eigensolver_solves_a_disconnected_graph_component_by_component(k, normalization):
    """A graph of three components (two moons of 600 points, a blob of 300) is block
    diagonal: "auto" takes each block's known eigenvalue 1 and, for k above three, the next
    eigenpairs of the blocks themselves.  The eigenvalues and the spaces they span equal
    LAPACK's on the dense matrix; with k = 2 the first two blocks' indicators are taken
    (eigenvalue 1 three times: any two of its vectors are a valid answer)."""
    X, _ = make_moons(n_samples=1200, noise=0.06, random_state=0)
    Xb, _ = make_blobs(n_samples=300, centers=[[0.5, -1.6]], cluster_std=0.15, random_state=0)
    W = cl.SpectralClustering(3, affinity="knn", random_state=0).fit(np.vstack([X, Xb])).affinity_matrix_
    from scipy.sparse.csgraph import connected_components
    n_parts, part = connected_components(W, directed=False)
    assert n_parts == 3
    vals, V = cl.spectral_embedding(W, k, normalization=normalization, random_state=0)
    v_dense, V_dense = cl.spectral_embedding(W.toarray(), max(k, 3), normalization=normalization,
                                             eigen_solver="dense")
    np.testing.assert_allclose(vals, v_dense[:k], atol=1e-9)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-9)
    if k >= 3:   # the same invariant subspace
        np.testing.assert_allclose(V @ V.T, V_dense[:, :k] @ V_dense[:, :k].T, atol=1e-6)
    else:        # eigenvalue 1's vectors: constant on one block (times sqrt(d)), zero elsewhere
        for c in range(k):
            assert np.count_nonzero(V[:, c]) == np.count_nonzero(part == c)


def test_auto_eigensolver_switches_to_amg_when_lanczos_is_slow(monkeypatch):
    """Three weakly joined clusters crowd the top of the spectrum: with one Lanczos restart
    allowed, "auto" gives LOBPCG + AMG's answer."""
    X, _ = make_moons(n_samples=600, noise=0.1, random_state=1)
    W = cl.SpectralClustering(3, affinity="knn", n_neighbors=12, random_state=0).fit(X).affinity_matrix_
    monkeypatch.setattr(cl, "_LANCZOS_RESTARTS", 1)
    auto = cl.spectral_embedding(W, 4, random_state=0)
    assert cl._largest_eigenpairs_lanczos(
        cl.normalized_cut_matrix(W), 4, np.random.RandomState(0), 1) is None
    amg = cl.spectral_embedding(W, 4, eigen_solver="amg", random_state=0)
    np.testing.assert_array_equal(auto[1], amg[1])


def test_spectral_clustering_knn_amg_labels_equal_arpack():
    """The chapter's three clusters (moons and a blob): the same labels by either solver."""
    X, y = make_moons(n_samples=500, noise=0.06, random_state=0)
    X = np.vstack([X, np.random.default_rng(0).normal([0.5, -1.6], 0.15, size=(250, 2))])
    a = cl.SpectralClustering(3, affinity="knn", eigen_solver="amg", random_state=0).fit(X)
    b = cl.SpectralClustering(3, affinity="knn", eigen_solver="arpack", random_state=0).fit(X)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(a.eigenvalues_, b.eigenvalues_, atol=1e-9)


def test_spectral_clustering_errors():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="affinity"):
        cl.SpectralClustering(2, affinity="cosine").fit(X)
    with pytest.raises(ValueError, match="n_neighbors=30 is larger than n_samples"):
        cl.SpectralClustering(2, affinity="knn", n_neighbors=30).fit(X)
    with pytest.raises(ValueError, match="zero total affinity"):
        cl.SpectralClustering(2, affinity="precomputed").fit(np.diag([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="n_samples=20 should be >= n_clusters=21"):
        cl.SpectralClustering(21).fit(X)
    with pytest.raises(ValueError, match="normalization"):
        cl.spectral_embedding(np.ones((4, 4)), 2, normalization="sym")


# ---------------------------------------------------------------- scikit-learn conventions


@pytest.mark.parametrize("estimator", [cl.KMeans(n_init=2), cl.KernelKMeans(n_init=2),
                                       cl.SpectralClustering(n_init=2)],
                         ids=lambda e: type(e).__name__)
def test_sklearn_estimator_checks(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert not failed


def test_kernel_kmeans_predict_on_new_points():
    X, _ = _blobs(n=200, k=3, d=2, seed=7, std=0.5)
    kk = cl.KernelKMeans(3, kernel="rbf", gamma=0.5, n_init=3, random_state=0).fit(X[:150])
    pred = kk.predict(X[150:])
    # Direct feature-space distances to the cluster means.
    K_all = rbf_kernel(X, gamma=0.5)
    Ktr, Knew = K_all[:150, :150], K_all[150:, :150]
    dist = np.column_stack([
        np.diag(K_all)[150:] - 2 * Knew[:, kk.labels_ == j].mean(axis=1)
        + Ktr[np.ix_(kk.labels_ == j, kk.labels_ == j)].mean()
        for j in range(3)])
    assert np.array_equal(pred, dist.argmin(axis=1))
    pre = cl.KernelKMeans(3, kernel="precomputed", n_init=3, random_state=0).fit(Ktr)
    assert np.array_equal(pre.predict(Knew), pred)


def test_trace_objective_refuses_an_asymmetric_K():
    # found by the review of the fuzz's refusal oracle: tr(G^T K G) reads only the
    # symmetric part of K, so an asymmetric K was silently symmetrised
    K = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="^K must be symmetric"):
        cl.trace_objective(K, [0, 0, 1])
