"""Tests of lecturelib.maxent against closed forms, scipy root finding and cvxpy."""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import entropy as scipy_entropy

from lecturelib import maxent
from lecturelib.datasets import die_rolls

FACES = np.arange(1, 7, dtype=float)


def die_by_root_finding(beta):
    """Independent route for the die: solve E_mu[i] = beta for the scalar mu."""
    def mean_gap(mu):
        w = np.exp(mu * FACES - mu * 6)
        return w @ FACES / w.sum() - beta

    mu = brentq(mean_gap, -20, 20, xtol=1e-14)
    w = np.exp(mu * FACES)
    return mu, w / w.sum()


# ---------------------------------------------------------------- entropy and RE


@pytest.mark.parametrize("seed", range(5))
def test_entropy_and_kl_match_scipy(seed):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    p[2] = 0
    p /= p.sum()
    assert maxent.entropy(p) == pytest.approx(scipy_entropy(p))
    assert maxent.entropy(p, base=2) == pytest.approx(scipy_entropy(p, base=2))
    assert maxent.kl_divergence(p, q) == pytest.approx(scipy_entropy(p, q))
    assert maxent.relative_entropy(p, q) == pytest.approx(scipy_entropy(p, q))


def test_relative_entropy_conventions():
    assert maxent.relative_entropy([0, 1], [0, 1]) == 0.0  # 0 ln 0/0 = 0
    assert maxent.relative_entropy([0, 1], [3, 1]) == pytest.approx(3.0)  # 0 ln 0/y = 0, + sum y
    assert maxent.relative_entropy([1, 1], [0, 2]) == math.inf  # x ln x/0 = inf
    assert maxent.kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf


@pytest.mark.parametrize("seed", range(10))
def test_relative_entropy_is_nonnegative_and_log_sum_inequality(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 3, size=8), rng.uniform(0, 3, size=8)
    d = maxent.relative_entropy(x, y)
    by_hand = np.sum(x * np.log(x / y) - x + y)
    assert d == pytest.approx(by_hand)
    sx, sy = x.sum(), y.sum()
    assert np.sum(x * np.log(x / y)) >= sx * math.log(sx / sy) - 1e-12  # log-sum inequality
    assert d >= sx * math.log(sx / sy) - sx + sy - 1e-12 >= -1e-12
    assert maxent.relative_entropy(x, x) == pytest.approx(0, abs=1e-12)
    assert d != pytest.approx(maxent.relative_entropy(y, x))  # not symmetric


def test_relative_entropy_to_uniform_is_log_n_minus_entropy():
    p = np.random.default_rng(3).dirichlet(np.ones(5))
    assert maxent.kl_divergence(p, np.full(5, 0.2)) == pytest.approx(math.log(5) - maxent.entropy(p))


def test_uniform_relative_entropy_identity_corrected():
    """D((1/n)1 || x) = -ln n - (1/n) sum ln x_i for x in the simplex (the notes drop 1/n)."""
    x = np.random.default_rng(4).dirichlet(np.ones(6))
    u = np.full(6, 1 / 6)
    assert maxent.kl_divergence(u, x) == pytest.approx(-math.log(6) - np.mean(np.log(x)))


# ---------------------------------------------------------------- ML = empirical distribution


def test_empirical_distribution_is_the_ml_estimate():
    f = np.array([3, 1, 0, 6])
    p_hat = maxent.empirical_distribution(f)
    assert p_hat == pytest.approx([0.3, 0.1, 0, 0.6])
    # Independent: cvxpy maximises sum f_i ln p_i over the simplex (terms with f_i = 0 vanish).
    p = cp.Variable(4, nonneg=True)
    seen = f > 0
    cp.Problem(cp.Maximize(f[seen] @ cp.log(p[seen])), [cp.sum(p) == 1]).solve(solver="CLARABEL")
    assert p.value == pytest.approx(p_hat, abs=2e-4)  # interior-point accuracy on exp cones
    rng = np.random.default_rng(0)
    others = rng.dirichlet(np.ones(4), size=20000)
    with np.errstate(divide="ignore"):
        best = np.max(np.where(f > 0, f * np.log(others), 0).sum(axis=1))
    assert best < f[f > 0] @ np.log(p_hat[f > 0])


def test_projections_onto_the_simplex():
    f = np.array([3.0, 0.2])
    re = maxent.project_relative_entropy(f)
    ls = maxent.project_least_squares(f)
    assert re == pytest.approx([0.9375, 0.0625])
    assert ls == pytest.approx([1.9, -0.9])
    assert ls.sum() == pytest.approx(1) and ls.min() < 0
    # The RE projection minimises D(f||p) over the hyperplane (cvxpy, positivity not imposed).
    p = cp.Variable(2)
    cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(f, p)) - f.sum() + cp.sum(p)),
               [cp.sum(p) == 1]).solve(solver="CLARABEL")
    assert p.value == pytest.approx(re, abs=2e-4)


# ---------------------------------------------------------------- MaxEnt


@pytest.mark.parametrize("beta", [2.0, 3.5, 4.2, 4.5])
def test_die_maxent_matches_root_finding(beta):
    p, mu = maxent.maxent_distribution(FACES, [beta], return_multipliers=True)
    mu_ref, p_ref = die_by_root_finding(beta)
    assert mu[0] == pytest.approx(mu_ref, abs=1e-9)
    assert p == pytest.approx(p_ref, abs=1e-10)
    assert p @ FACES == pytest.approx(beta)


def test_die_numbers_of_the_inventory():
    p, mu = maxent.maxent_distribution(FACES, [4.2], return_multipliers=True)
    assert mu[0] == pytest.approx(0.249045, abs=1e-6)
    assert p == pytest.approx([0.081827, 0.104967, 0.134652, 0.172731, 0.221580, 0.284243], abs=1e-6)
    assert maxent.entropy(p) == pytest.approx(1.706208, abs=1e-6)
    assert maxent.entropy(p, base=2) == pytest.approx(2.461538, abs=1e-6)
    assert maxent.kl_divergence(p, np.full(6, 1 / 6)) == pytest.approx(0.085552, abs=1e-6)
    assert maxent.maxent_distribution(FACES, [3.5]) == pytest.approx(np.full(6, 1 / 6))


@pytest.mark.parametrize("seed", range(3))
def test_maxent_with_prior_and_several_constraints_matches_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n, k = 8, 3
    F = rng.normal(size=(n, k))
    prior = rng.dirichlet(np.ones(n))
    targets = F.T @ rng.dirichlet(np.ones(n))  # attainable by construction
    p = maxent.maxent_distribution(F, targets, prior=prior)
    q = cp.Variable(n, nonneg=True)
    cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(q, prior))),
               [cp.sum(q) == 1, F.T @ q == targets]).solve(solver="CLARABEL")
    assert p == pytest.approx(q.value, abs=2e-4)
    # ours is at least as good as the solver's point (which may violate constraints slightly)
    assert maxent.kl_divergence(p, prior) <= maxent.relative_entropy(np.maximum(q.value, 0), prior) + 1e-6
    assert F.T @ p == pytest.approx(targets, abs=1e-9)
    # and it is a Gibbs distribution with base prior
    _, mu = maxent.maxent_distribution(F, targets, prior=prior, return_multipliers=True)
    assert maxent.gibbs_distribution(F, mu, prior) == pytest.approx(p)


def test_unattainable_targets_are_refused():
    with pytest.raises(ValueError, match="not attainable"):
        maxent.maxent_distribution(FACES, [7.0])
    with pytest.raises(ValueError, match="one entry per constraint"):
        maxent.maxent_distribution(FACES, [4.2, 1.0])


# ---------------------------------------------------------------- GIS and duality


def test_gibbs_model_on_die_rolls_gives_the_maxent_distribution():
    faces, counts = die_rolls()
    X = np.repeat(faces, counts)[:, None].astype(float)
    assert X.mean() == pytest.approx(4.2)
    model = maxent.GibbsModel().fit(X)
    p_maxent = maxent.maxent_distribution(FACES, [4.2])
    assert model.converged_
    assert model.probabilities_ == pytest.approx(p_maxent, abs=1e-8)
    assert model.multipliers_[0] == pytest.approx(0.249045, abs=1e-6)
    assert np.all(np.diff(model.loglik_history_) >= -1e-12)
    # the duality theorem: the ML point lies in P (moments matched) and in Q (Gibbs)
    assert model.probabilities_ @ FACES == pytest.approx(model.empirical_ @ FACES)
    assert model.score_samples(FACES[:, None]) == pytest.approx(np.log(model.probabilities_))


@pytest.mark.parametrize("seed", range(3))
def test_gibbs_model_with_support_and_prior_matches_maxent(seed):
    rng = np.random.default_rng(seed)
    support = rng.integers(0, 4, size=(10, 2)).astype(float)
    support = np.unique(support, axis=0)
    prior = rng.dirichlet(np.ones(len(support)))
    sample = support[rng.choice(len(support), size=200)]
    model = maxent.GibbsModel(support=support, prior=prior, tol=1e-11, max_iter=100000).fit(sample)
    targets = sample.mean(axis=0)
    p = maxent.maxent_distribution(support, targets, prior=prior)
    assert model.probabilities_ == pytest.approx(p, abs=1e-7)
    # ML over the Gibbs family: no other multipliers give a higher likelihood
    base = model.empirical_ @ np.log(model.probabilities_)
    for _ in range(50):
        mu = model.multipliers_ + rng.normal(scale=0.1, size=2)
        q = maxent.gibbs_distribution(support, mu, prior)
        assert model.empirical_ @ np.log(q) <= base + 1e-12
    assert np.all(np.diff(model.loglik_history_) >= -1e-12)


def test_gibbs_model_refuses_rows_outside_support():
    with pytest.raises(ValueError, match="not outcomes"):
        maxent.GibbsModel(support=[[0.0], [1.0]]).fit([[0.0], [2.0]])


@pytest.mark.parametrize("thunk, pattern", [
    (lambda: maxent.entropy([0.5, 0.6]), "sum to 1"),
    (lambda: maxent.entropy([0.5, 0.5], base=1), "base"),
    (lambda: maxent.relative_entropy([1, 2], [1, 2, 3]), "same length"),
    (lambda: maxent.relative_entropy([1, -2], [1, 2]), "negative"),
    (lambda: maxent.kl_divergence([1, 0], [0.5, np.nan]), "NaN"),
    (lambda: maxent.empirical_distribution([0, 0, 0]), "all zero"),
    (lambda: maxent.maxent_distribution(FACES, [4.2], prior=[0.5, 0.5]), "one entry per outcome"),
    (lambda: maxent.gibbs_distribution(FACES, [1.0, 2.0]), "multipliers"),
    (lambda: maxent.GibbsModel().fit([[1.0]]), "at least 2 samples"),
    (lambda: maxent.GibbsModel(prior=[0.5, 0.5]).fit([[1.0], [2.0]]), "explicit support"),
])
def test_bad_input_is_refused(thunk, pattern):
    with pytest.raises(ValueError, match=pattern):
        thunk()


def test_project_relative_entropy_names_f_in_its_errors():
    # found by the refusal oracle of tests/test_fuzz.py: f was refused as "counts"
    with pytest.raises(ValueError, match="^f has negative entries"):
        maxent.project_relative_entropy([1.0, -1.0])
    with pytest.raises(ValueError, match="^f is all zero"):
        maxent.project_relative_entropy([0.0, 0.0])
