"""Properties that must hold for every input, checked with hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lecturelib import bayes

# derandomize: the same examples on every run, so a CI failure can be reproduced.
# A capped number of EM iterations is the point of the monotonicity tests.
pytestmark = pytest.mark.filterwarnings("ignore:.*did not converge")

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def prob_vectors(min_size=2, max_size=6):
    """Random probability vectors (strictly positive entries, normalised)."""
    return st.integers(min_size, max_size).flatmap(
        lambda n: arrays(np.float64, n, elements=st.floats(0.01, 1.0))
    ).map(lambda v: v / v.sum())


# ---------------------------------------------------------------- bayes


@SETTINGS
@given(prior=prob_vectors(), data=st.data())
def test_posteriors_sum_to_one(prior, data):
    lik = data.draw(arrays(np.float64, (4, prior.size), elements=st.floats(1e-6, 1.0)))
    post = bayes.posterior(lik, prior)
    assert np.allclose(post.sum(axis=1), 1.0)
    assert np.all(post >= 0)
    seq = bayes.incremental_posterior(prior, lik)
    assert np.allclose(seq.sum(axis=1), 1.0)
    assert np.allclose(seq[-1], bayes.posterior(lik.prod(axis=0), prior))


@SETTINGS
@given(counts=arrays(np.int64, st.tuples(st.integers(2, 4), st.integers(2, 6)), elements=st.integers(1, 50)))
def test_joint_table_conditionals_are_distributions(counts):
    t = bayes.JointTable(counts)
    assert np.allclose(t.posterior.sum(axis=0), 1.0)
    assert np.allclose(t.likelihood.sum(axis=1), 1.0)
    assert np.isclose(t.prior.sum(), 1.0) and np.isclose(t.evidence.sum(), 1.0)


@SETTINGS
@given(post=prob_vectors())
def test_zero_one_risk_decision_is_map(post):
    decision = bayes.bayes_risk_decision(post, 1 - np.eye(post.size))
    assert post[decision] >= post.max() - 1e-12  # a MAP class (ties may go either way)


# ---------------------------------------------------------------- maxent

from lecturelib import clustering, em, maxent, spectral, svm, vc  # noqa: E402


@SETTINGS
@given(p=prob_vectors(), data=st.data())
def test_relative_entropy_nonnegative_and_zero_only_at_equality(p, data):
    q = data.draw(arrays(np.float64, p.size, elements=st.floats(0.01, 1.0)))
    q = q / q.sum()
    d = maxent.relative_entropy(p, q)
    assert d >= -1e-12
    assert maxent.relative_entropy(p, p) == 0.0
    if np.abs(p - q).max() > 1e-6:
        assert d > 0


# ---------------------------------------------------------------- em


# tol=0: every run stops at max_iter on purpose, with its ConvergenceWarning
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@SETTINGS
@given(seed=st.integers(0, 2**16), k=st.integers(1, 3), kind=st.sampled_from(["full", "diag", "spherical"]))
def test_em_loglik_never_decreases(seed, k, kind):
    X = np.random.default_rng(seed).normal(size=(40, 2))
    model = em.GaussianMixture(n_components=k, covariance_type=kind, max_iter=30, tol=0.0,
                               init_params="random", random_state=seed).fit(X)
    hist = np.asarray(model.loglik_history_)
    assert np.all(np.diff(hist) >= -1e-8 * np.abs(hist[:-1]).max())


# tol=0: every run stops at max_iter on purpose, with its ConvergenceWarning
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@SETTINGS
@given(seed=st.integers(0, 2**16))
def test_bernoulli_and_multinomial_em_never_decrease(seed):
    rng = np.random.default_rng(seed)
    B = (rng.random((30, 6)) < rng.random(6)).astype(float)
    h = np.asarray(em.BernoulliMixture(n_components=2, max_iter=30, tol=0.0, random_state=seed).fit(B).loglik_history_)
    assert np.all(np.diff(h) >= -1e-8 * np.abs(h).max())
    counts = rng.integers(0, 5, size=(20, 8)).astype(float)
    counts[:, 0] += 1  # no empty document
    h = np.asarray(em.MultinomialMixture(n_components=2, max_iter=30, tol=0.0, random_state=seed)
                   .fit(counts).loglik_history_)
    assert np.all(np.diff(h) >= -1e-8 * np.abs(h).max())


# ---------------------------------------------------------------- PCA


@SETTINGS
@given(seed=st.integers(0, 2**16), shape=st.tuples(st.integers(3, 30), st.integers(2, 12)), data=st.data())
def test_pca_reconstruction_error_is_the_discarded_variance(seed, shape, data):
    X = np.random.default_rng(seed).normal(size=shape) @ np.diag(np.linspace(1, 3, shape[1]))
    full_rank = min(shape[0] - 1, shape[1])
    q = data.draw(st.integers(1, full_rank))
    model = spectral.PCA(n_components=q, ddof=0).fit(X)
    err = np.sum((X - model.inverse_transform(model.transform(X))) ** 2) / shape[0]
    eig = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    assert np.isclose(err, eig[q:].sum(), rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- clustering


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(3, 15))
def test_doubly_stochastic_rows_and_columns_sum_to_one(seed, n):
    A = np.random.default_rng(seed).random((n, n)) + 0.05
    K = clustering.doubly_stochastic(A + A.T)
    assert np.allclose(K.sum(axis=0), 1.0, atol=1e-8)
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-8)
    assert np.allclose(K, K.T) and np.all(K >= 0)


@SETTINGS
@given(seed=st.integers(0, 2**16), k=st.integers(1, 5))
def test_kmeans_objective_never_increases(seed, k):
    X = np.random.default_rng(seed).normal(size=(40, 3))
    model = clustering.KMeans(n_clusters=k, n_init=1, init="random", random_state=seed).fit(X)
    hist = np.asarray(model.inertia_history_)
    assert np.all(np.diff(hist) <= 1e-9 * hist[0])
    assert np.isclose(hist[-1], model.inertia_)


# ---------------------------------------------------------------- SVM


@SETTINGS
@given(seed=st.integers(0, 2**16), C=st.sampled_from([0.1, 1.0, 10.0]), kernel=st.sampled_from(["linear", "rbf"]))
def test_svm_solution_satisfies_kkt(seed, C, kernel):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1, -1)
    if len(set(y)) < 2:
        y[0] = -y[0]
    model = svm.SVC(C=C, kernel=kernel, gamma=0.5, tol=1e-6).fit(X, y)
    K = X @ X.T if kernel == "linear" else np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    signs = np.where(y == model.classes_[1], 1.0, -1.0)
    assert svm.kkt_violation(model.alpha_, signs, K, C, float(model.intercept_[0])) < 1e-3


# ---------------------------------------------------------------- VC


@SETTINGS
@given(table=arrays(np.int8, st.tuples(st.integers(1, 12), st.integers(2, 6)), elements=st.integers(0, 1)),
       data=st.data())
def test_growth_function_never_above_sauer(table, data):
    concepts = vc.finite_class(table)
    domain = list(range(table.shape[1]))
    d = vc.vc_dimension(concepts, domain)
    m = data.draw(st.integers(1, table.shape[1]))
    assert vc.growth_function(concepts, m, domain=domain) <= vc.sauer_bound(m, d)
