"""One warning rule for every iterative method of lecturelib (issue 37).

Exactly one way to stop is silent: the method's own convergence criterion.  Every other
way to stop is reported:

- the iteration cap, or a stall (the step or the progress vanishes, a line search or an
  inner optimiser gives up) gives a ``ConvergenceWarning`` naming the method, why it
  stopped with the number that shows it, and what to do;
- a numerical breakdown (NaN or infinity inside the loop) gives a ``ValueError``, never a
  NaN result or a stale iterate passed off as converged.

``EXITS`` is that rule as a table: one row per method and way of stopping, with an input
that forces it.  ``CONVERGING`` is one converging call per method, which must not warn.
Each forced exit checks the text of the reason, so a method that stops for one reason and
says another fails here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from lecturelib import clustering, em, hpca, maxent, metric, spectral, subspace, svm
from test_metric import _small_problem  # three labelled classes, the metric learners' data

# ----------------------------------------------------------------------------- small problems


def _itml_without_newton_polish(**params):
    """ITML fitted to the small problem with its Newton polish failing (returning None)."""
    from unittest import mock

    with mock.patch.object(metric, "_itml_dual_newton", lambda *args: None):
        return metric.ITML(**params).fit(*_small_problem())


def _blobs():
    return make_blobs(200, centers=4, cluster_std=1.0, random_state=0)[0]


def _two_blobs():
    return make_blobs(60, centers=2, random_state=0)


def _counts():
    rng = np.random.default_rng(0)
    return rng.poisson(2.0, size=(12, 8)).astype(float)


def _pairs_problem():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 10)
    return np.hstack([y[:, None], 0.3 * rng.normal(size=(30, 2))]), y


_FACES = np.arange(1, 7.0)[:, None]
_ROLLS = np.repeat(_FACES, [1, 1, 2, 3, 6, 7], axis=0)
_S = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]])

# ----------------------------------------------------------------------------- the rule

WARN, RAISE = "ConvergenceWarning", "ValueError"

# (method, exit, call, outcome, the reason the message must give)
EXITS = [
    ("doubly_stochastic", "cap",
     lambda: clustering.doubly_stochastic(np.array([[0.0, 1.0], [1.0, 1.0]]), max_iter=5),
     WARN, r"stopped at max_iter=5 iterations with max \|row sum - 1\| = [\d.e+-]+ > tol"),
    ("doubly_stochastic", "breakdown",
     lambda: clustering.doubly_stochastic(np.full((2, 2), 1e308)),
     RAISE, r"doubly_stochastic broke down after 1 normalisation"),
    ("KMeans", "cap",
     lambda: clustering.KMeans(4, n_init=1, max_iter=1, tol=0.0, random_state=0).fit(_blobs()),
     WARN, r"KMeans stopped at max_iter=1 .*last squared centre shift [\d.e+-]+ > [\d.e+-]+, "
           r"which is tol=0 times"),
    ("KernelKMeans", "cap",
     lambda: clustering.KernelKMeans(4, n_init=1, max_iter=1, random_state=0).fit(_blobs()),
     WARN, r"KernelKMeans stopped at max_iter=1 .*\(\d+ of 200 labels changed in the last"),
    ("GaussianMixture", "cap",
     lambda: em.GaussianMixture(2, max_iter=1, tol=0.0, random_state=0).fit(_blobs()),
     WARN, r"GaussianMixture: EM stopped at max_iter=1 iterations with the last change of "
           r"the mean log-likelihood [\d.e+-]+ >= tol=0"),
    ("BernoulliMixture", "cap",
     lambda: em.BernoulliMixture(2, max_iter=1, tol=0.0, random_state=0).fit(_counts() > 2),
     WARN, r"BernoulliMixture: EM stopped at max_iter=1 iterations with the last change"),
    ("MultinomialMixture", "cap",
     lambda: em.MultinomialMixture(2, max_iter=1, tol=0.0, random_state=0).fit(_counts()),
     WARN, r"MultinomialMixture: EM stopped at max_iter=1 iterations with the last change"),
    ("SVC", "cap",
     lambda: svm.SVC(C=10.0, max_iter=5).fit(*_two_blobs()),
     WARN, r"SVC stopped at max_iter=5 SMO steps .*\(it is [\d.e+-]+\)"),
    ("SVC", "stall",    # at tol=1e-300 the pair step rounds to zero long before the cap
     lambda: svm.SVC(C=10.0, tol=1e-300).fit(*_two_blobs()),
     WARN, r"SVC stopped after \d+ SMO steps because a step changed no multiplier"),
    ("SVC", "breakdown",
     lambda: svm.SVC(kernel="linear").fit(_two_blobs()[0] * 1e160, _two_blobs()[1]),
     RAISE, r"SVC: SMO broke down after \d+ steps"),
    ("power_iteration", "cap",
     lambda: spectral.power_iteration(_S, max_iter=2, random_state=0),
     WARN, r"power_iteration stopped at max_iter=2 .*last move [\d.e+-]+ > tol.*raise max_iter"),
    ("power_iteration", "breakdown",
     lambda: spectral.power_iteration(np.diag([1e308, 1e307]), random_state=0),
     RAISE, r"power_iteration broke down at iteration 1"),
    ("PositiveOperatorLearner", "cap",
     lambda: hpca.PositiveOperatorLearner(max_iter=2).fit(*_pairs_problem()),
     WARN, r"PositiveOperatorLearner stopped at max_iter=2 .*\(last [\d.e+-]+\); raise max_iter"),
    ("PositiveOperatorLearner", "breakdown",   # silently returned T = 0 after one step
     lambda: hpca.PositiveOperatorLearner().fit(_pairs_problem()[0] * 1e150, _pairs_problem()[1]),
     RAISE, r"PositiveOperatorLearner broke down at iteration 1"),
    ("GibbsModel", "cap",
     lambda: maxent.GibbsModel(support=_FACES, max_iter=1).fit(_ROLLS),
     WARN, r"GibbsModel did not converge in 1 iterations: the largest moment error is "
           r"[\d.e+-]+ > tol"),
    ("maxent_distribution", "cap",     # an error by design: usually the targets are unattainable
     lambda: maxent.maxent_distribution(_FACES, [4.5], max_iter=1),
     RAISE, r"miss by [\d.e+-]+ > tol=1e-10 after 1 Newton steps \(max_iter\)"),
    ("MMC", "cap",
     lambda: metric.MMC(max_iter=1).fit(*_small_problem()),
     WARN, r"MMC: L-BFGS stopped at its limit \(max_iter=1\) with a relative duality gap"),
    ("MMC", "stall",    # tol=0: scipy's own test stops it, which is not MMC's criterion
     lambda: metric.MMC(tol=0).fit(*_small_problem()),
     WARN, r"MMC: L-BFGS stopped at a (stall|failed line search) after \d+ iterations"),
    ("ITML", "cap",       # one sweep and the Newton polish reach the optimum: the polish
     lambda: _itml_without_newton_polish(max_iter=1, random_state=0, gamma=0.1),  # fails here
     WARN, r"ITML stopped at max_iter=1 sweeps .*\(their last relative change [\d.e+-]+"),
    ("LMNN", "cap",
     lambda: metric.LMNN(solver="subgradient", max_iter=1).fit(*_small_problem()),
     WARN, r"LMNN stopped at max_iter=1 iterations \(last relative decrease of the loss "),
    ("LMNN", "stall",
     lambda: metric.LMNN(solver="subgradient", tol=0, max_iter=100_000).fit(*_small_problem(30)),
     WARN, r"LMNN stopped after \d+ iterations because its step size collapsed \(last relative"),
    ("MetricEmbeddingNN-lowrank", "cap",
     lambda: metric.MetricEmbeddingNN(max_iter=1).fit(*_small_problem()),
     WARN, r"low-rank solver stopped \(after 1 of max_iter=1 iterations\) at its iteration cap"),
    ("MetricEmbeddingNN-lowrank", "stall",
     lambda: metric.MetricEmbeddingNN(tol=1e-15).fit(*_small_problem(9)),
     WARN, r"low-rank solver stopped \(after \d+ of max_iter=20000 iterations\) because L-BFGS-B "
           r"could not improve it further .*gap of [\d.e+-]+ > tol=1e-15"),
    ("MetricEmbeddingNN-subgradient", "cap",
     lambda: metric.MetricEmbeddingNN(solver="subgradient", max_iter=10).fit(*_small_problem()),
     WARN, r"subgradient solver stopped at max_iter=10 while still improving .*% > 0\.1%"),
    ("MetricEmbeddingNN-subgradient", "stall at its start",  # returned W = 0 silently
     lambda: metric.MetricEmbeddingNN(kernel="linear", solver="subgradient", max_iter=50).fit(
         _small_problem()[0] * 100, _small_problem()[1]),
     WARN, r"subgradient solver's best point in max_iter=50 steps is still its start W = 0, "
           r"which has a certified duality gap of [\d.e+-]+ > tol=0\.001"),
    ("MetricEmbeddingNN-subgradient", "converged by its own criterion, not certified",
     lambda: metric.MetricEmbeddingNN(solver="subgradient", max_iter=3000).fit(*_menn_small()),
     WARN, r"subgradient solver's best point in max_iter=3000 steps has a certified duality "
           r"gap of [\d.e+-]+ > tol=0\.001: it has no optimality test"),
    ("LMNN", "subgradient converged by its own criterion, not certified",
     lambda: metric.LMNN(solver="subgradient").fit(*_small_problem()),
     WARN, r"LMNN: the subgradient stage converged \(relative change of the loss below "
           r"tol=1e-07\), but its loss is certified only within [\d.e+-]+ \(relative\)"),
]

CONVERGING = [
    ("doubly_stochastic", lambda: clustering.doubly_stochastic(np.array([[2.0, 1.0], [1.0, 1.0]]))),
    ("KMeans", lambda: clustering.KMeans(4, n_init=2, random_state=0).fit(_blobs())),
    ("KernelKMeans", lambda: clustering.KernelKMeans(4, n_init=2, random_state=0).fit(_blobs())),
    ("GaussianMixture", lambda: em.GaussianMixture(2, random_state=0).fit(_blobs())),
    ("BernoulliMixture", lambda: em.BernoulliMixture(2, tol=1e-6, random_state=0).fit(_counts() > 2)),
    ("MultinomialMixture", lambda: em.MultinomialMixture(2, tol=1e-5, random_state=0).fit(_counts())),
    ("SVC", lambda: svm.SVC(C=10.0).fit(*_two_blobs())),
    ("power_iteration", lambda: spectral.power_iteration(_S, n_components=2, random_state=0)),
    ("PositiveOperatorLearner", lambda: hpca.PositiveOperatorLearner().fit(*_pairs_problem())),
    ("GibbsModel", lambda: maxent.GibbsModel(support=_FACES).fit(_ROLLS)),
    ("maxent_distribution", lambda: maxent.maxent_distribution(_FACES, [4.5])),
    ("MMC", lambda: metric.MMC().fit(*_small_problem())),
    ("ITML", lambda: metric.ITML(n_constraints=10, random_state=0).fit(*_small_problem())),
    ("LMNN", lambda: metric.LMNN().fit(*_small_problem())),
    ("MetricEmbeddingNN-lowrank", lambda: metric.MetricEmbeddingNN().fit(*_small_problem())),
]


@pytest.mark.parametrize("method, exit_, call, outcome, reason", EXITS,
                         ids=[f"{m}-{e}" for m, e, *_ in EXITS])
def test_every_exit_but_convergence_is_reported(method, exit_, call, outcome, reason):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # numpy's overflow notes
        if outcome == WARN:
            with pytest.warns(ConvergenceWarning, match=reason):
                call()
        else:
            with pytest.raises(ValueError, match=reason):
                call()


@pytest.mark.parametrize("method, call", CONVERGING, ids=[m for m, _ in CONVERGING])
def test_a_converging_call_is_silent(method, call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call()


def test_n_iter_counts_the_iterations_run():
    """``n_iter_`` is the number of iterations that ran, at the cap and at a stall."""
    X, y = _small_problem()
    with pytest.warns(ConvergenceWarning):
        assert svm.SVC(C=10.0, max_iter=5).fit(*_two_blobs()).n_iter_ == 5
    with pytest.warns(ConvergenceWarning, match="changed no multiplier") as record:
        stalled = svm.SVC(C=10.0, tol=1e-300).fit(*_two_blobs())
    assert f"after {stalled.n_iter_} SMO steps" in str(record[0].message)
    with pytest.warns(ConvergenceWarning, match="step size collapsed") as record:
        lmnn = metric.LMNN(solver="subgradient", tol=0, max_iter=100_000).fit(*_small_problem(30))
    assert f"after {lmnn.n_iter_} iterations" in str(record[0].message)
    assert lmnn.n_iter_ < 100_000
    with pytest.warns(ConvergenceWarning):
        assert clustering.KernelKMeans(4, n_init=1, max_iter=1, random_state=0).fit(_blobs()).n_iter_ == 1


@pytest.fixture
def clarabel_almost_solved(monkeypatch):
    """Every cvxpy solve ends as Clarabel's "almost solved" (status optimal_inaccurate),
    a stop short of its tolerances that the small problems here never reach by themselves."""
    import cvxpy as cp

    solve = cp.Problem.solve

    def almost_solved(self, *args, **kwargs):
        value = solve(self, *args, **kwargs)
        self._status = "optimal_inaccurate"
        return value

    monkeypatch.setattr(cp.Problem, "solve", almost_solved)


def test_a_conic_solve_short_of_its_tolerances_warns(clarabel_almost_solved):
    K = (X := np.random.default_rng(0).normal(size=(12, 3))) @ X.T
    with pytest.warns(ConvergenceWarning, match=r"SVM2K: the QP solver \(Clarabel\) stopped short "
                                                 r"of its tolerances after \d+ iterations"):
        subspace.SVM2K(views=2).fit(np.hstack([K[:, :2], K[:, 2:4]]), np.arange(12) % 2)


def _two_view_grams(n=20):
    X = np.random.default_rng(0).normal(size=(n, 3))
    return X @ X.T, X[:, :2] @ X[:, :2].T


def _svm2k_estimate():
    return subspace.svm2k_rademacher_estimate(*_two_view_grams(), C=1.0, disagreement=0.2,
                                              n_labelled=10, n_draws=2, random_state=0)


def test_svm2k_estimate_accepts_almost_solved_when_certified(clarabel_almost_solved):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _svm2k_estimate()


def test_svm2k_estimate_warns_when_almost_solved_is_not_certified(clarabel_loose,
                                                                  clarabel_almost_solved):
    """Each fixture wraps the solve it finds, so both apply: loose, and called almost solved."""
    with pytest.warns(ConvergenceWarning, match=r"svm2k_rademacher_estimate: .* stopped short of its "
                                                 r"tolerances after \d+ iterations \(status "
                                                 r"optimal_inaccurate\) with a certified relative gap "
                                                 r"of [\d.e+-]+ > 1e-06"):
        _svm2k_estimate()


@pytest.fixture
def clarabel_loose(monkeypatch):
    """Every cvxpy solve with Clarabel's tolerances at 0.1: it reports "solved" at a point
    that is not the optimum, which only a check of lecturelib's own can tell."""
    import cvxpy as cp

    solve = cp.Problem.solve

    def loose(self, *args, **kwargs):
        kwargs.update(tol_gap_abs=0.1, tol_gap_rel=0.1, tol_feas=0.1)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", loose)


def test_lmnn_active_set_warns_when_its_certificate_fails(clarabel_loose):
    with pytest.warns(ConvergenceWarning, match=r"LMNN: the active-set stage ended \d+ "
                                                 r"restricted solves with a certified relative "
                                                 r"duality gap of [\d.e+-]+ > 0\.0001"):
        est = metric.LMNN(solver="active-set").fit(*_small_problem())
    assert est.duality_gap_ > 1e-4


def test_lmnn_active_set_accepts_almost_solved_when_certified(clarabel_almost_solved):
    # Clarabel's "almost solved" on an accurate point: the certificate is the criterion
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = metric.LMNN(solver="active-set").fit(*_small_problem())
    assert est.duality_gap_ <= 1e-4


def _menn_small():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    return np.column_stack([y + 0.1 * rng.normal(size=16), rng.normal(size=16)]), y


def test_menn_cvxpy_warns_when_its_certificate_fails(clarabel_loose):
    with pytest.warns(ConvergenceWarning, match=r"MetricEmbeddingNN: the SDP solver's solution "
                                                 r"\(Clarabel, after \d+ iterations\) has a "
                                                 r"certified duality gap of [\d.e+-]+ > tol=0\.0001"):
        est = metric.MetricEmbeddingNN(gamma=0.5, solver="cvxpy", tol=1e-4).fit(*_menn_small())
    assert est.duality_gap_ > 1e-4     # about 2e-3 (4e-7 at Clarabel's own tolerances)


def test_menn_cvxpy_accepts_almost_solved_when_certified(clarabel_almost_solved):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = metric.MetricEmbeddingNN(gamma=0.5, solver="cvxpy", tol=1e-4).fit(*_menn_small())
    assert est.duality_gap_ <= 1e-4


def test_menn_subgradient_ending_at_its_start_is_silent_only_when_certified():
    # at X / 100 with a linear kernel the optimum is W = 0 (no metric pays for its trace):
    # the start is certified, so its silence is the convergence criterion, not a stall
    X, y = _small_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = metric.MetricEmbeddingNN(kernel="linear", solver="subgradient", max_iter=50).fit(
            X / 100, y)
    assert not np.any(est.W_) and est.duality_gap_ <= 1e-3
