"""Tests of lecturelib.em against scikit-learn, scipy optimisation and closed forms."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import multivariate_normal
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from lecturelib import em
from lecturelib.datasets import (
    coin_population_triplets,
    coin_tosses,
    three_gaussians,
    topic_corpus,
)


def non_decreasing(history, rtol=1e-12):
    return np.all(np.diff(history) >= -rtol * np.abs(history[:-1]).max())


# ---------------------------------------------------------------- Gaussian mixtures


def _start(X, k, cov_type, seed):
    rng = np.random.default_rng(seed)
    d = X.shape[1]
    weights = rng.dirichlet(np.full(k, 5.0))
    means = X[rng.choice(len(X), k, replace=False)]
    covs = {"full": np.stack([np.eye(d) * rng.uniform(0.5, 2) for _ in range(k)]),
            "diag": rng.uniform(0.5, 2, size=(k, d)),
            "spherical": rng.uniform(0.5, 2, size=k)}[cov_type]
    precisions = np.linalg.inv(covs) if cov_type == "full" else 1 / covs
    return weights, means, covs, precisions


@pytest.mark.parametrize("cov_type", ["full", "diag", "spherical"])
@pytest.mark.parametrize("max_iter, tol", [(3, 0.0), (500, 1e-10)])
def test_gaussian_mixture_matches_sklearn_from_the_same_start(cov_type, max_iter, tol):
    X, _, _ = three_gaussians(600, random_state=1)
    w, m, c, prec = _start(X, 3, cov_type, seed=2)
    ours = em.GaussianMixture(3, covariance_type=cov_type, weights_init=w, means_init=m,
                              covariances_init=c, max_iter=max_iter, tol=tol, random_state=0)
    ref = SkGaussianMixture(3, covariance_type=cov_type, weights_init=w, means_init=m,
                            precisions_init=prec, max_iter=max_iter, tol=tol, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours.fit(X)
        ref.fit(X)
    assert ours.n_iter_ == ref.n_iter_
    assert ours.weights_ == pytest.approx(ref.weights_, abs=1e-6)
    assert ours.means_ == pytest.approx(ref.means_, abs=1e-6)
    assert ours.covariances_ == pytest.approx(ref.covariances_, abs=1e-6)
    assert ours.score(X) == pytest.approx(ref.score(X), abs=1e-6)
    assert ours.predict_proba(X) == pytest.approx(ref.predict_proba(X), abs=1e-6)
    assert non_decreasing(ours.loglik_history_)


@pytest.mark.parametrize("init_params", ["kmeans", "random", "random_from_data"])
def test_gaussian_mixture_same_random_state_as_sklearn(init_params):
    X, _, _ = three_gaussians(400, random_state=5)
    ours = em.GaussianMixture(3, init_params=init_params, n_init=3, random_state=7).fit(X)
    ref = SkGaussianMixture(3, init_params=init_params, n_init=3, random_state=7).fit(X)
    assert ours.score(X) == pytest.approx(ref.score(X), abs=1e-6)
    assert ours.means_ == pytest.approx(ref.means_, abs=1e-6)


def test_gaussian_mixture_at_scale_1e_150_refuses_or_gives_the_same_clusters():
    """Scaled by 1e-150 the variances are near 1e-300: the fixed reg_covar = 1e-6 would
    swamp them (scikit-learn then puts every point in one cluster without a word).  The
    default is refused with a clear message; reg_covar in the data's units gives the fit
    at scale 1, scaled."""
    X, _, _ = three_gaussians(300, random_state=2)
    c = 1e-150
    ref = em.GaussianMixture(3, random_state=0).fit(X)
    with pytest.raises(ValueError, match="reg_covar=1e-06 is larger than the largest feature variance"):
        em.GaussianMixture(3, random_state=0).fit(c * X)
    tiny = em.GaussianMixture(3, reg_covar=1e-6 * c * c, random_state=0).fit(c * X)
    np.testing.assert_array_equal(tiny.predict(c * X), ref.predict(X))
    np.testing.assert_allclose(tiny.means_ / c, ref.means_, rtol=1e-8)
    np.testing.assert_allclose(tiny.covariances_ / (c * c), ref.covariances_, rtol=1e-8)


def test_score_samples_is_the_mixture_density():
    X, _, _ = three_gaussians(300, random_state=2)
    gm = em.GaussianMixture(3, covariance_type="full", random_state=0).fit(X)
    density = sum(w * multivariate_normal(m, c).pdf(X)
                  for w, m, c in zip(gm.weights_, gm.means_, gm.covariances_))
    assert gm.score_samples(X) == pytest.approx(np.log(density))
    assert gm.loglik_history_[-1] == pytest.approx(np.log(density).sum())


def test_spherical_mixture_recovers_the_generating_parameters():
    X, _, truth = three_gaussians(1500, random_state=0)
    gm = em.GaussianMixture(3, covariance_type="spherical", reg_covar=0.0, tol=1e-8,
                            max_iter=500, random_state=0).fit(X)
    order = [int(np.argmin(np.linalg.norm(gm.means_ - m, axis=1))) for m in truth["means"]]
    assert sorted(order) == [0, 1, 2]
    assert gm.means_[order] == pytest.approx(truth["means"], abs=0.1)
    assert np.sqrt(gm.covariances_[order]) == pytest.approx(truth["sigmas"], abs=0.05)
    assert gm.weights_[order] == pytest.approx(truth["weights"], abs=0.03)
    assert non_decreasing(gm.loglik_history_)


@pytest.mark.parametrize("seed", range(4))
def test_gaussian_history_never_decreases_without_regularisation(seed):
    X = np.random.default_rng(seed).normal(size=(200, 3))
    for cov_type in ("full", "diag", "spherical"):
        gm = em.GaussianMixture(4, covariance_type=cov_type, reg_covar=0.0, tol=1e-6,
                                max_iter=50, init_params="random", random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(X)
        assert non_decreasing(gm.loglik_history_)


def test_more_starts_never_hurt():
    X, _, _ = three_gaussians(300, random_state=3)
    one = em.GaussianMixture(3, init_params="random", n_init=1, random_state=0).fit(X)
    five = em.GaussianMixture(3, init_params="random", n_init=5, random_state=0).fit(X)
    assert five.score(X) >= one.score(X) - 1e-12


# ---------------------------------------------------------------- coins


def coin_loglik(X, lam, p, q):
    n, T = X.sum(axis=1), X.shape[1]
    return np.sum(np.log(lam * p**n * (1 - p) ** (T - n) + (1 - lam) * q**n * (1 - q) ** (T - n)))


@pytest.mark.parametrize("start, expected", [((0.5, 0.6, 0.4), (0.4, 0.8, 0.3)),
                                             ((0.5, 0.9, 0.1), (0.4, 0.8, 0.3)),
                                             ((0.3, 0.2, 0.7), (0.6, 0.3, 0.8))])
def test_coins_population_em_recovers_the_model(start, expected):
    X = coin_population_triplets()
    lam, p, q = start
    bm = em.BernoulliMixture(2, weights_init=[lam, 1 - lam], p_init=[p, q], tol=1e-15,
                             max_iter=20000).fit(X)
    assert bm.weights_[0] == pytest.approx(expected[0], abs=1e-3)
    assert bm.p_ == pytest.approx(expected[1:], abs=1e-3)
    # At the optimum the model equals the empirical distribution: LL/m = -H(P_hat).
    _, counts = np.unique(X, axis=0, return_counts=True)
    freq = counts / counts.sum()
    assert bm.lower_bound_ == pytest.approx(np.sum(freq * np.log(freq)), abs=1e-8)
    assert bm.lower_bound_ == pytest.approx(-2.001366, abs=1e-6)
    assert non_decreasing(bm.loglik_history_)


def test_coins_symmetric_start_is_a_fixed_point():
    X = coin_population_triplets()
    bm = em.BernoulliMixture(2, weights_init=[0.5, 0.5], p_init=[0.5, 0.5]).fit(X)
    assert bm.p_ == pytest.approx([X.mean(), X.mean()])
    assert bm.n_iter_ <= 2


def test_coins_em_step_matches_the_corrected_formulas():
    X, _ = coin_tosses(500, random_state=4)
    lam0, p0, q0 = 0.5, 0.7, 0.2
    n = X.sum(axis=1)
    a = lam0 * p0**n * (1 - p0) ** (3 - n)
    b = (1 - lam0) * q0**n * (1 - q0) ** (3 - n)
    mu = a / (a + b)
    lam = mu.sum() / len(X)  # 1/m, the number of triplets (the notes print 1/k)
    p = (mu * n).sum() / (3 * mu.sum())
    q = ((1 - mu) * n).sum() / (3 * (1 - mu).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        bm = em.BernoulliMixture(2, weights_init=[lam0, 1 - lam0], p_init=[p0, q0],
                                 max_iter=1).fit(X)
    assert bm.weights_[0] == pytest.approx(lam)
    assert bm.p_ == pytest.approx([p, q])
    assert bm.loglik_history_ == pytest.approx([coin_loglik(X, lam0, p0, q0),
                                                coin_loglik(X, lam, p, q)])


def test_coins_em_reaches_the_numerical_maximum_likelihood():
    X, _ = coin_tosses(2000, random_state=0)
    bm = em.BernoulliMixture(2, n_init=5, tol=1e-14, max_iter=20000, random_state=0).fit(X)
    best = min((minimize(lambda t: -coin_loglik(X, *t), x0, method="L-BFGS-B",
                         bounds=[(1e-6, 1 - 1e-6)] * 3, options={"ftol": 1e-15, "gtol": 1e-10})
                for x0 in [(0.5, 0.7, 0.2), (0.3, 0.9, 0.4), (0.6, 0.2, 0.8)]),
               key=lambda r: r.fun)
    assert bm.loglik_history_[-1] == pytest.approx(-best.fun, abs=1e-4)
    j = int(np.argmax(bm.p_))
    assert bm.weights_[j] == pytest.approx(0.4, abs=0.05)
    assert bm.p_[j] == pytest.approx(0.8, abs=0.05)
    assert bm.p_[1 - j] == pytest.approx(0.3, abs=0.05)


def test_k_coins_n_tosses():
    X, coin = coin_tosses(3000, n_tosses=10, weights=(0.2, 0.5, 0.3), p=(0.1, 0.5, 0.9),
                          random_state=1)
    bm = em.BernoulliMixture(3, n_init=3, tol=1e-10, random_state=0).fit(X)
    order = np.argsort(bm.p_)
    assert bm.p_[order] == pytest.approx([0.1, 0.5, 0.9], abs=0.02)
    assert bm.weights_[order] == pytest.approx([0.2, 0.5, 0.3], abs=0.03)
    assert non_decreasing(bm.loglik_history_)
    labels = np.argsort(order)[bm.predict(X)]
    bayes = em.BernoulliMixture(3, weights_init=[0.2, 0.5, 0.3], p_init=[0.1, 0.5, 0.9])
    bayes.weights_, bayes.p_, bayes.n_features_in_ = np.array([0.2, 0.5, 0.3]), np.array([0.1, 0.5, 0.9]), 10
    # as accurate as the Bayes rule with the true parameters (which errs about 9% here)
    assert np.mean(labels == coin) >= np.mean(bayes.predict(X) == coin) - 0.01


def test_bernoulli_mixture_refuses_non_binary_data():
    with pytest.raises(ValueError, match="only 0 and 1"):
        em.BernoulliMixture().fit([[0, 1], [2, 1], [1, 1]])


def test_bernoulli_mixture_refuses_the_posterior_of_a_row_of_probability_zero():
    """Fit on all-zero runs, every coin has p = 0: a run with a head has probability 0, so its
    posterior over the coins is 0/0.  It was NaN, with only RuntimeWarnings."""
    mix = em.BernoulliMixture(2, random_state=0).fit(np.zeros((10, 3)))
    X = np.array([[0, 0, 0], [1, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.isneginf(mix.score_samples(X)), [False, True])
        for method in (mix.predict_proba, mix.predict):
            with pytest.raises(ValueError, match=r"row\(s\) \[1\] of X have probability 0"):
                method(X)
        np.testing.assert_allclose(mix.predict_proba(X[:1]).sum(axis=1), 1.0)


# ---------------------------------------------------------------- bag of words


def plsa_loglik(G, lam, u, v):
    P = np.einsum("j,jw,jd->dw", lam, u, v)
    nz = G > 0
    return float(np.sum(G[nz] * np.log(P[nz])))


def test_multinomial_mixture_is_monotone_and_recovers_the_topics():
    corpus = topic_corpus(n_documents=60, n_tokens=20000, random_state=0)
    G = corpus["counts"]
    mm = em.MultinomialMixture(3, n_init=3, tol=1e-10, max_iter=2000, random_state=0).fit(G)
    assert non_decreasing(mm.loglik_history_)
    assert mm.loglik_history_[-1] == pytest.approx(plsa_loglik(G, mm.weights_, mm.topic_word_,
                                                               mm.topic_document_))
    truth = corpus["topic_word"]
    best = min(itertools.permutations(range(3)),
               key=lambda s: np.abs(mm.topic_word_[list(s)] - truth).sum())
    assert np.abs(mm.topic_word_[list(best)] - truth).max() < 0.03
    assert mm.weights_[list(best)] == pytest.approx(corpus["weights"], abs=0.03)
    # each document's dominant topic is its generating topic
    dominant = np.argmax(mm.document_topic_[:, list(best)], axis=1)
    assert np.all(dominant == np.arange(60) % 3)
    assert mm.document_topic_.sum(axis=1) == pytest.approx(np.ones(60))


def test_multinomial_mixture_is_a_fixed_point_of_kl_nmf():
    """PLSA and KL-NMF share their objective; sklearn's multiplicative updates started
    at our solution must not improve it."""
    G = topic_corpus(n_documents=30, n_tokens=3000, random_state=1)["counts"].astype(float)
    mm = em.MultinomialMixture(3, tol=1e-12, max_iter=5000, random_state=0).fit(G)
    total = G.sum()
    W = (mm.topic_document_ * mm.weights_[:, None]).T * total  # (docs, k)
    H = mm.topic_word_.copy()
    nmf = NMF(3, init="custom", solver="mu", beta_loss="kullback-leibler", max_iter=200,
              tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W2 = nmf.fit_transform(G, W=W.copy(), H=H.copy())

    def gen_kl(A, B):
        nz = A > 0
        return np.sum(A[nz] * np.log(A[nz] / B[nz])) - A.sum() + B.sum()

    ours = gen_kl(G, W @ H)
    theirs = gen_kl(G, W2 @ nmf.components_)
    assert theirs >= ours - 1e-6 * abs(ours)
    assert np.abs(W2 @ nmf.components_ - W @ H).max() < 1e-3 * G.max()


def test_the_notes_word_update_is_not_monotone():
    """The notes weight the word update by N(r); that update can lower the likelihood."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(600, 0.3)).reshape(20, 30)  # 20 documents, 30 words
    G = rng.multinomial(5000, P.ravel()).reshape(20, 30).astype(float)
    k, (n_docs, n_words) = 3, G.shape
    lam = np.full(k, 1 / k)
    u = rng.dirichlet(np.ones(n_words), size=k)
    v = rng.dirichlet(np.ones(n_docs), size=k)
    N = G.sum(axis=0)  # word frequencies
    history = []
    for _ in range(200):
        history.append(plsa_loglik(G, lam, u, v))
        R = np.einsum("j,jw,jd->dwj", lam, u, v)
        R /= R.sum(axis=2, keepdims=True)
        present = (G > 0)[:, :, None]
        wr = G[:, :, None] * R
        u = (N[:, None] * (present * R).sum(axis=0)).T  # the notes' N(r)-weighted update
        u /= u.sum(axis=1, keepdims=True)
        v = wr.sum(axis=1).T / wr.sum(axis=(0, 1))[:, None]
        lam = wr.sum(axis=(0, 1)) / G.sum()
    notes_final = history[-1]
    assert np.min(np.diff(history)) < 0  # the likelihood went down at some step
    mm = em.MultinomialMixture(3, n_init=3, tol=1e-10, max_iter=3000, random_state=0).fit(G)
    assert mm.loglik_history_[-1] > notes_final


# ---------------------------------------------------------------- options and bad input


def test_binarize_option_thresholds_like_bernoulli_nb():
    X = np.random.default_rng(0).normal(size=(200, 5))
    a = em.BernoulliMixture(2, binarize=0.0, random_state=1).fit(X)
    b = em.BernoulliMixture(2, random_state=1).fit((X > 0).astype(int))
    assert a.p_ == pytest.approx(b.p_) and a.weights_ == pytest.approx(b.weights_)


@pytest.mark.parametrize("thunk, pattern", [
    (lambda: em.GaussianMixture(5).fit(np.zeros((3, 2))), "larger than the number of samples"),
    (lambda: em.GaussianMixture(2, covariance_type="tied").fit(np.eye(4)), "covariance_type"),
    (lambda: em.GaussianMixture(2, means_init=np.zeros((3, 2))).fit(np.eye(4)[:, :2]), "means_init"),
    (lambda: em.GaussianMixture(2, weights_init=[0.7, 0.7]).fit(np.eye(4)), "sum to 1"),
    (lambda: em.GaussianMixture(2, covariances_init=np.stack([-np.eye(2)] * 2)).fit(np.eye(4)[:, :2]),
     "not positive definite"),
    (lambda: em.GaussianMixture(2).fit([[0.0, np.nan], [1, 1], [2, 2]]), "NaN"),
    (lambda: em.BernoulliMixture(2, p_init=[0.5, 1.5]).fit(np.eye(3)), "p_init"),
    (lambda: em.MultinomialMixture(2).fit([[1, -1], [2, 3]]), "Negative values"),
    (lambda: em.MultinomialMixture(2).fit(np.zeros((3, 2))), "no counts"),
    (lambda: em.MultinomialMixture(0).fit(np.ones((3, 2))), r"n_components=0 is not valid; n_components must be an int in \[1, inf\)"),
])
def test_bad_input_is_refused(thunk, pattern):
    with pytest.raises(ValueError, match=pattern):
        thunk()
