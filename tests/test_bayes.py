"""Tests of lecturelib.bayes against closed forms, exact fractions and scikit-learn."""

from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import multivariate_normal
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from lecturelib import bayes
from lecturelib.datasets import bmi_counts, cancer_test_kit

# ---------------------------------------------------------------- joint tables (E1.1)


def test_bmi_table_matches_exact_fractions():
    t = bayes.JointTable(bmi_counts())
    F = Fraction
    assert t.prior == pytest.approx([float(F(14, 22)), float(F(8, 22))])
    assert t.evidence == pytest.approx([float(F(c, 22)) for c in (2, 5, 7, 5, 3)])
    assert t.posterior[1, 2] == pytest.approx(3 / 7)
    assert t.likelihood[1, 2] == pytest.approx(3 / 8)
    assert t.posterior[0] == pytest.approx([1, 1, 4 / 7, 2 / 5, 1 / 3])
    assert t.likelihood[0] == pytest.approx([1 / 7, 5 / 14, 2 / 7, 1 / 7, 1 / 14])
    assert t.map_decisions().tolist() == [0, 0, 0, 1, 1]


@pytest.mark.parametrize("seed", range(5))
def test_joint_table_identities_on_random_counts(seed):
    counts = np.random.default_rng(seed).integers(1, 20, size=(3, 6))
    t = bayes.JointTable(counts)
    assert t.joint.sum() == pytest.approx(1)
    assert t.posterior.sum(axis=0) == pytest.approx(np.ones(6))
    assert t.likelihood.sum(axis=1) == pytest.approx(np.ones(3))
    # Bayes' rule links the two conditionals.
    assert t.posterior == pytest.approx(t.likelihood * t.prior[:, None] / t.evidence)
    for i in range(6):
        assert bayes.posterior(t.likelihood[:, i], t.prior) == pytest.approx(t.posterior[:, i])


def test_joint_table_unseen_value_has_no_posterior():
    t = bayes.JointTable([[1, 0, 2], [3, 0, 1]])
    assert np.all(np.isnan(t.posterior[:, 1]))
    assert t.map_decisions()[1] == -1


@pytest.mark.parametrize(
    "counts, message",
    [
        ([[1, -1], [2, 3]], "negative"),
        ([[0, 0], [0, 0]], "at least one hit"),
        ([[0, 0], [1, 2]], "no hits"),
        ([1, 2, 3], "dimension"),
        ([[1, np.nan], [1, 1]], "NaN"),
    ],
)
def test_joint_table_bad_counts(counts, message):
    with pytest.raises(ValueError, match=message):
        bayes.JointTable(counts)


# ---------------------------------------------------------------- Bayes' rule and decisions


def test_cancer_test_kit_correct_value_and_the_notes_slip():
    kit = cancer_test_kit()
    lik = [kit["p_pos_given_cancer"], kit["p_pos_given_healthy"]]
    prior = [kit["p_cancer"], 1 - kit["p_cancer"]]
    p = bayes.posterior(lik, prior)[0]
    assert p == pytest.approx(0.0098 / 0.0395, rel=1e-12)
    assert round(p, 4) == 0.2481
    # The printed 0.266 comes from P(H) = 0.9, which is not a prior with P(C) = 0.01.
    with pytest.raises(ValueError, match="sum to 1"):
        bayes.posterior(lik, [0.01, 0.9])


def test_dice_vs_roulette():
    p = bayes.posterior([1 / 36, 1 / 38], [0.5, 0.5])
    assert p[0] == pytest.approx(19 / 37)
    assert bayes.map_decision([1 / 36, 1 / 38], [0.5, 0.5]) == 0
    assert bayes.map_decision([1 / 36, 1 / 38], [0.4, 0.6]) == 1
    assert bayes.ml_decision([1 / 36, 1 / 38]) == 0


def test_posterior_rows_and_errors():
    lik = np.random.default_rng(0).random((4, 3))
    prior = np.array([0.2, 0.3, 0.5])
    post = bayes.posterior(lik, prior)
    assert post.sum(axis=1) == pytest.approx(np.ones(4))
    assert post[2] == pytest.approx(lik[2] * prior / (lik[2] @ prior))
    with pytest.raises(ValueError, match="sum to 1"):
        bayes.posterior([0.5, 0.5], [0.5, 0.6])
    with pytest.raises(ValueError, match="3 classes but prior has 2"):
        bayes.posterior([0.1, 0.2, 0.3], [0.5, 0.5])
    with pytest.raises(ValueError, match="evidence"):
        bayes.posterior([0.0, 0.3], [1.0, 0.0])


@pytest.mark.parametrize("seed", range(20))
def test_zero_one_loss_gives_map(seed):
    rng = np.random.default_rng(seed)
    post = rng.dirichlet(np.ones(4))
    loss = 1 - np.eye(4)
    assert bayes.bayes_risk_decision(post, loss) == int(np.argmax(post))
    assert bayes.expected_risk(post, loss) == pytest.approx(1 - post)


def test_asymmetric_loss_changes_the_decision():
    post = np.array([0.2481, 0.7519])  # cancer vs healthy after a positive test
    loss = np.array([[0.0, 1.0], [50.0, 0.0]])  # missing a cancer costs 50
    risk = bayes.expected_risk(post, loss)
    assert risk == pytest.approx([0.7519, 50 * 0.2481])
    assert bayes.bayes_risk_decision(post, loss) == 0
    with pytest.raises(ValueError, match="loss must have shape"):
        bayes.expected_risk(post, np.ones((3, 3)))


# ---------------------------------------------------------------- incremental Bayes (E1.5)


def test_fair_or_biased_coin():
    post = bayes.incremental_posterior([0.75, 0.25], [[0.5, 0.6]] * 5)
    assert post[0, 0] == pytest.approx(5 / 7)
    assert post[1, 0] == pytest.approx(25 / 37)
    assert post[1, 1] == pytest.approx(12 / 37)
    assert post[2:, 0] == pytest.approx([0.634518, 0.591296, 0.546615], abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_incremental_equals_batch_and_is_order_free(seed):
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(3))
    lik = rng.random((6, 3))
    seq = bayes.incremental_posterior(prior, lik)
    batch = bayes.posterior(lik.prod(axis=0), prior)
    assert seq[-1] == pytest.approx(batch)
    shuffled = bayes.incremental_posterior(prior, lik[rng.permutation(6)])
    assert shuffled[-1] == pytest.approx(batch)


def test_incremental_posterior_needs_rows():
    with pytest.raises(ValueError, match="one row per observation"):
        bayes.incremental_posterior([0.5, 0.5], [0.5, 0.6])


# ---------------------------------------------------------------- ML estimates


def test_bernoulli_mle_maximises_the_likelihood():
    tosses = np.array([0, 0, 1, 0, 1, 0, 0, 1, 0, 0])  # 0 is a head, as in the notes
    q = bayes.bernoulli_mle(tosses)
    lam, m = 7, 10
    best = minimize_scalar(
        lambda t: -(lam * np.log(t) + (m - lam) * np.log(1 - t)),
        bounds=(1e-6, 1 - 1e-6),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert q == pytest.approx(best.x, abs=1e-6)
    assert bayes.bernoulli_mle(tosses, head=1) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="only 0 and 1"):
        bayes.bernoulli_mle([0, 2, 1])


def test_gaussian_mle_full_matches_numpy_and_scipy():
    rng = np.random.default_rng(1)
    X = rng.multivariate_normal([1.0, -2.0, 0.5], [[2, 0.3, 0], [0.3, 1, 0.2], [0, 0.2, 0.5]], 200)
    mean, cov = bayes.gaussian_mle(X)
    assert mean == pytest.approx(X.mean(axis=0))
    assert cov == pytest.approx(np.cov(X.T, bias=True))
    ll = bayes.gaussian_log_likelihood(X, mean, cov)
    assert ll == pytest.approx(multivariate_normal(mean, cov).logpdf(X).sum())
    # The ML estimate beats nearby parameters.
    for scale in (0.9, 1.1):
        assert bayes.gaussian_log_likelihood(X, mean, scale * cov) < ll
    assert bayes.gaussian_log_likelihood(X, mean + 0.05, cov) < ll


def test_gaussian_mle_spherical_is_the_closed_form_and_the_maximiser():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4)) * 1.7 + 3
    mean, cov = bayes.gaussian_mle(X, covariance_type="spherical")
    sigma2 = np.sum((X - X.mean(axis=0)) ** 2) / (50 * 4)
    assert cov == pytest.approx(sigma2 * np.eye(4))

    def negll(s2):
        return -bayes.gaussian_log_likelihood(X, mean, s2 * np.eye(4))

    best = minimize_scalar(negll, bounds=(0.1, 10), method="bounded", options={"xatol": 1e-10})
    assert sigma2 == pytest.approx(best.x, rel=1e-6)
    _, diag = bayes.gaussian_mle(X, covariance_type="diagonal")
    assert np.diag(diag) == pytest.approx(X.var(axis=0))
    with pytest.raises(ValueError, match="covariance_type"):
        bayes.gaussian_mle(X, covariance_type="tied")


def test_gaussian_log_likelihood_errors():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="shapes"):
        bayes.gaussian_log_likelihood(X, [0, 0, 0], np.eye(2))
    with pytest.raises(ValueError, match="not positive definite"):
        bayes.gaussian_log_likelihood(X, [0, 0], [[1, 2], [2, 1]])


# ---------------------------------------------------------------- parameter counts (C1.3, C1.5)


def test_free_parameters():
    assert bayes.free_parameters((4, 3)) == 11
    assert bayes.free_parameters((4, 3), "independent") == 5
    assert bayes.free_parameters((2, 3, 4), "independent") == 6
    # k x r x s with X, Y independent given H: s(k + r - 2) for the slices, s - 1 for P(H).
    assert bayes.free_parameters((4, 3, 2), "conditionally_independent") == 2 * 5 + 1
    with pytest.raises(ValueError, match="structure"):
        bayes.free_parameters((2, 2), "tree")
    with pytest.raises(ValueError, match="positive integers"):
        bayes.free_parameters((2, 0))


def test_independent_joint_is_rank_one():
    rng = np.random.default_rng(3)
    px, py = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(3))
    joint = np.outer(px, py)
    assert np.linalg.matrix_rank(joint) == 1
    t = bayes.JointTable(joint * 1000)
    # P(x | y) = P(x) for every y: the columns of the likelihood are all P(X).
    assert t.likelihood == pytest.approx(np.tile(py, (4, 1)))


# ---------------------------------------------------------------- the Gaussian Bayes classifier


def two_gaussians(n=400, seed=0):
    rng = np.random.default_rng(seed)
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    X0 = rng.multivariate_normal([0.0, 0.0], cov, n)
    X1 = rng.multivariate_normal([2.0, 1.0], cov, n)
    return np.vstack([X0, X1]), np.repeat([0, 1], n)


def test_shared_covariance_matches_sklearn_lda():
    X, y = two_gaussians()
    ours = bayes.GaussianBayesClassifier().fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    assert ours.coef_ == pytest.approx(ref.coef_, rel=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-8)
    assert ours.predict_proba(X) == pytest.approx(ref.predict_proba(X), abs=1e-10)
    assert np.array_equal(ours.predict(X), ref.predict(X))


def test_shared_covariance_boundary_is_claim_one():
    X, y = two_gaussians(seed=4)
    clf = bayes.GaussianBayesClassifier(priors=[0.5, 0.5]).fit(X, y)
    mu0, mu1 = clf.means_
    w = np.linalg.solve(clf.covariance_, mu1 - mu0)
    assert clf.coef_[0] == pytest.approx(w)
    # The midpoint of the means lies on the boundary; so does any point w-orthogonal to it.
    mid = (mu0 + mu1) / 2
    assert clf.decision_function(mid[None])[0] == pytest.approx(0, abs=1e-12)
    along = mid + np.array([w[1], -w[0]])
    assert clf.decision_function(along[None])[0] == pytest.approx(0, abs=1e-10)
    # The log-likelihood ratio of the two fitted Gaussians is zero there too.
    l0 = multivariate_normal(mu0, clf.covariance_).logpdf(along)
    l1 = multivariate_normal(mu1, clf.covariance_).logpdf(along)
    assert l1 - l0 == pytest.approx(0, abs=1e-10)


def test_unequal_priors_shift_the_offset_by_log_ratio():
    X, y = two_gaussians(seed=5)
    a = bayes.GaussianBayesClassifier(priors=[0.5, 0.5]).fit(X, y)
    b = bayes.GaussianBayesClassifier(priors=[0.2, 0.8]).fit(X, y)
    assert b.intercept_[0] - a.intercept_[0] == pytest.approx(np.log(0.8 / 0.2))


def test_quadratic_model_matches_scipy_densities():
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(2, 0.5, (40, 2)), rng.normal(-2, 2, (50, 2))])
    y = np.repeat(["a", "b", "c"], [60, 40, 50])
    clf = bayes.GaussianBayesClassifier(shared_covariance=False).fit(X, y)
    Xt = rng.normal(size=(10, 2)) * 2
    jl = np.column_stack(
        [
            np.log(p) + multivariate_normal(X[y == c].mean(0), np.cov(X[y == c].T, bias=True)).logpdf(Xt)
            for c, p in zip("abc", [60 / 150, 40 / 150, 50 / 150])
        ]
    )
    post = np.exp(jl - jl.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    assert clf.predict_proba(Xt) == pytest.approx(post, abs=1e-10)
    assert list(clf.predict(Xt)) == list(np.array(list("abc"))[post.argmax(1)])
    assert not hasattr(clf, "coef_")


def test_classifier_errors():
    X, y = two_gaussians(n=10)
    with pytest.raises(ValueError, match="at least two classes"):
        bayes.GaussianBayesClassifier().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="priors must have 2 entries"):
        bayes.GaussianBayesClassifier(priors=[0.2, 0.3, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="not positive definite"):
        bayes.GaussianBayesClassifier(shared_covariance=False).fit(
            np.vstack([X, [[0, 0], [1, 1]]]), np.r_[y, 2, 2]
        )
    with pytest.raises(ValueError, match="NaN"):
        bayes.GaussianBayesClassifier().fit(np.where(X > 1, np.nan, X), y)


def test_reg_is_a_ridge_of_any_nonnegative_size():
    """``reg`` is added to the covariance diagonal: 2.0 is as valid as 0.01 (not a shrinkage
    weight in [0, 1]); a negative value is refused by the parameter table."""
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.repeat([0, 1], 20)
    plain = bayes.GaussianBayesClassifier().fit(X, y)
    ridged = bayes.GaussianBayesClassifier(reg=2.0).fit(X, y)
    np.testing.assert_allclose(ridged.covariance_, plain.covariance_ + 2.0 * np.eye(3))
    with pytest.raises(ValueError, match="reg=-1 is not valid"):
        bayes.GaussianBayesClassifier(reg=-1).fit(X, y)


def test_gaussian_log_likelihood_refuses_data_whose_squares_overflow():
    # found by tests/test_fuzz.py: X * 1e300 gave -inf, not an error
    X = np.array([[1e300, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="^X has entries so large"):
        bayes.gaussian_log_likelihood(X, [0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="^mean has entries so large"):
        bayes.gaussian_log_likelihood(np.zeros((2, 2)), [1e300, 0.0], np.eye(2))


def test_incremental_posterior_names_likelihoods_in_its_errors():
    # found by the refusal oracle of tests/test_fuzz.py: a negative likelihood was refused
    # as "likelihood has negative entries", a name the function does not have
    with pytest.raises(ValueError, match="^likelihoods has negative entries"):
        bayes.incremental_posterior([0.5, 0.5], [[0.5, 0.9], [-0.5, 0.9]])
    with pytest.raises(ValueError, match="^likelihoods has 3 classes but prior has 2"):
        bayes.incremental_posterior([0.5, 0.5], [[0.5, 0.9, 0.1]])
