"""Tests of lecturelib.pac against closed forms, scipy's exact binomial law and simulation."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from lecturelib import pac

# ---------------------------------------------------------------- the tightest-fit learner


@pytest.mark.parametrize("seed", range(4))
def test_rectangle_learner_is_bounding_box_of_positives(seed):
    rng = np.random.default_rng(seed)
    X = rng.random((60, 2))
    y = ((X[:, 0] > 0.2) & (X[:, 0] < 0.7) & (X[:, 1] > 0.1) & (X[:, 1] < 0.6)).astype(int)
    clf = pac.RectangleLearner().fit(X, y)
    # independent computation: sort the positive coordinates
    px = np.sort(X[y == 1, 0])
    py = np.sort(X[y == 1, 1])
    assert clf.lower_.tolist() == [px[0], py[0]]
    assert clf.upper_.tolist() == [px[-1], py[-1]]
    # consistent on the training set and R' inside R
    assert np.all(clf.predict(X) == y)
    assert clf.lower_[0] > 0.2 and clf.upper_[1] < 0.6
    # unseen points: inside R' implies inside R
    Z = rng.random((2000, 2))
    inside_target = (Z[:, 0] > 0.2) & (Z[:, 0] < 0.7) & (Z[:, 1] > 0.1) & (Z[:, 1] < 0.6)
    assert np.all(inside_target[clf.predict(Z) == 1])


def test_rectangle_learner_string_labels_and_empty_box():
    X = np.array([[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]])
    clf = pac.RectangleLearner().fit(X, np.array(["no", "yes", "no"]))
    assert clf.predict(X).tolist() == ["no", "yes", "no"]
    clf = pac.RectangleLearner().fit(X, np.array([0, 0, 0]))
    assert clf.predict(X).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="Only binary"):
        pac.RectangleLearner().fit(X, [0, 1, 2])


def test_box_error_uniform_matches_monte_carlo():
    rng = np.random.default_rng(0)
    Z = rng.random((400_000, 2))
    tl, tu = np.array([0.2, 0.1]), np.array([0.7, 0.6])
    lo, up = np.array([0.3, 0.0]), np.array([0.9, 0.4])
    in_t = np.all((Z >= tl) & (Z <= tu), axis=1)
    in_h = np.all((Z >= lo) & (Z <= up), axis=1)
    assert pac.box_error_uniform(lo, up, tl, tu) == pytest.approx(np.mean(in_t != in_h), abs=3e-3)
    assert pac.box_error_uniform([np.nan, np.nan], [np.nan, np.nan], tl, tu) == pytest.approx(0.25)


def test_box_error_uniform_counts_the_part_of_a_box_inside_the_cube():
    # infinite or outlying corners are documented: the uniform law has no mass outside
    # [0, 1]^2, so [-inf, 0.5] x [0.2, inf] is [0, 0.5] x [0.2, 1]: with the target
    # [0.2, 0.7] x [0.1, 0.6] the error is 0.25 + 0.4 - 2 * 0.3 * 0.4 = 0.41
    tl, tu = [0.2, 0.1], [0.7, 0.6]
    assert pac.box_error_uniform([-np.inf, 0.2], [0.5, np.inf], tl, tu) == pytest.approx(0.41)
    assert pac.box_error_uniform([-3.0, 0.2], [0.5, 7.0], tl, tu) == pytest.approx(0.41)


def test_box_error_uniform_refuses_a_lower_corner_above_the_upper():
    # found by the fuzz (an infinite lower corner): a box with lower > upper, e.g. swapped
    # arguments, was silently taken for an empty box
    with pytest.raises(ValueError, match="^lower must not exceed upper"):
        pac.box_error_uniform([0.6, 0.2], [0.3, 0.5], [0.2, 0.1], [0.7, 0.6])
    with pytest.raises(ValueError, match="^lower must not exceed upper"):
        pac.box_error_uniform([[0.3, 0.2], [np.inf, 0.2]], [[0.6, 0.5], [0.9, 0.5]],
                              [0.2, 0.1], [0.7, 0.6])


# ---------------------------------------------------------------- rectangle bound (E7.1, C7.1)


@pytest.mark.parametrize(
    "eps, delta, m0, ceil",
    [(0.1, 0.1, 147.555, 148), (0.05, 0.05, 350.562, 351), (0.1, 0.01, 239.659, 240),
     (0.01, 0.01, 2396.586, 2397)],
)
def test_rectangle_sample_size_table(eps, delta, m0, ceil):
    m = pac.rectangle_sample_size(eps, delta)
    assert m == pytest.approx(m0, abs=1e-3)
    assert math.ceil(m) == ceil
    assert 4 * math.exp(-eps * ceil / 4) <= delta < 4 * math.exp(-eps * (ceil - 1) / 4)


def test_rectangle_failure_bound_numbers():
    assert pac.rectangle_failure_bound(148, 0.1) == pytest.approx(4 * 0.975**148)
    assert pac.rectangle_failure_bound(148, 0.1) == pytest.approx(0.0944, abs=1e-4)
    assert pac.rectangle_failure_bound(148, 0.1, exponential=True) == pytest.approx(0.0989, abs=1e-4)
    ms = np.arange(1, 300)
    assert np.all(pac.rectangle_failure_bound(ms, 0.1) <= pac.rectangle_failure_bound(ms, 0.1, True))


def test_simulated_rectangle_failure_stays_below_delta_at_bound():
    eps = delta = 0.1
    m = math.ceil(pac.rectangle_sample_size(eps, delta))
    err = pac.simulate_rectangle_errors(m, n_trials=4000, random_state=0)
    assert np.mean(err > eps) <= delta
    # the notes' simulation numbers (C7.1), within Monte-Carlo error
    for m, p in [(10, 0.953), (20, 0.777), (50, 0.191)]:
        err = pac.simulate_rectangle_errors(m, n_trials=4000, random_state=m)
        assert np.mean(err > eps) == pytest.approx(p, abs=0.025)
        assert np.mean(err > eps) <= pac.rectangle_failure_bound(m, eps) or p > 0.9


def test_simulated_rectangle_errors_match_direct_learner():
    # the vectorised simulation agrees with fitting RectangleLearner sample by sample
    rng = np.random.RandomState(3)
    errs = pac.simulate_rectangle_errors(30, n_trials=5, random_state=rng)
    rng = np.random.RandomState(3)
    X = rng.random_sample((5, 30, 2))
    tl, tu = np.array([0.2, 0.1]), np.array([0.7, 0.6])
    for k in range(5):
        y = np.all((X[k] >= tl) & (X[k] <= tu), axis=1).astype(int)
        Z = np.random.default_rng(k).random((200_000, 2))
        in_t = np.all((Z >= tl) & (Z <= tu), axis=1)
        if 0 < y.sum() < len(y):
            pred = pac.RectangleLearner().fit(X[k], y).predict(Z) == 1
        else:  # no positive example: the empty box
            pred = np.zeros(len(Z), dtype=bool)
        assert errs[k] == pytest.approx(np.mean(pred != in_t), abs=4e-3)


# ---------------------------------------------------------------- finite classes (E7.2)


@pytest.mark.parametrize(
    "size, eps, delta, realizable, thm6, half",
    [(3**10, 0.1, 0.05, 139.82, 2935.00, 733.75),
     (1000, 0.1, 0.1, 92.10, 1980.70, 495.17),
     (2**20, 0.05, 0.01, 369.36, 15329.01, 3832.25)],
)
def test_finite_class_sample_sizes(size, eps, delta, realizable, thm6, half):
    assert pac.finite_class_sample_size(eps, delta, size) == pytest.approx(realizable, abs=0.01)
    assert pac.finite_class_sample_size(eps, delta, size, realizable=False) == pytest.approx(
        thm6, abs=0.01)
    m2 = pac.finite_class_sample_size(eps, delta, size, realizable=False, excess="2eps")
    assert m2 == pytest.approx(half, abs=0.01)
    # the 1/4 ratio is the eps -> eps/2 step
    assert pac.finite_class_sample_size(eps, delta, size, False) == pytest.approx(4 * m2)
    # m0 is where the union bound reaches delta: ceil(m0) meets it, one example fewer does not
    m0 = math.ceil(pac.finite_class_sample_size(eps, delta, size))
    assert pac.finite_class_failure_bound(m0, eps, size) <= delta
    assert pac.finite_class_failure_bound(m0 - 1, eps, size) > delta
    m0 = math.ceil(m2)
    assert pac.uniform_convergence_bound(m0, eps, size) <= delta
    assert pac.uniform_convergence_bound(m0 - 1, eps, size) > delta


def test_threshold_simulation_worst_consistent_error():
    # closed form: with size-1 = 20 grid steps and k* = 10, the worst consistent error
    # exceeds eps=0.1 iff no sample point falls in [theta - 0.15, theta) or in
    # [theta, theta + 0.15) (the hypotheses 3 steps away survive), so
    # P = 2 (0.85)^m - (0.7)^m.
    m = 20
    err = pac.simulate_threshold_errors(m, 21, n_trials=20000, random_state=1)
    exact = 2 * 0.85**m - 0.7**m
    assert np.mean(err > 0.1) == pytest.approx(exact, abs=0.01)
    assert np.mean(err > 0.1) <= pac.finite_class_failure_bound(m, 0.1, 21)


# ---------------------------------------------------------------- Hoeffding (C7.2)


@pytest.mark.parametrize("m, eps", [(100, 0.1), (500, 0.05), (1000, 0.03)])
def test_hoeffding_bounds_exact_binomial_tail(m, eps):
    p = 0.3
    k = np.arange(m + 1)
    exact = binom.pmf(k, m, p)[np.abs(k / m - p) >= eps - 1e-12].sum()
    bound = pac.hoeffding_bound(m, eps)
    assert exact <= bound
    assert bound == pytest.approx(2 * math.exp(-2 * eps**2 * m))
    sim = pac.simulate_hoeffding_deviation(m, eps, p, n_trials=40000, random_state=0)
    assert sim == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 40000) + 1e-3)


def test_hoeffding_general_range_and_one_side():
    assert pac.hoeffding_bound(50, 0.2, a=-1, b=1) == pytest.approx(2 * math.exp(-2 * 0.04 * 50 / 4))
    assert pac.hoeffding_bound(50, 0.2, two_sided=False) == pytest.approx(math.exp(-4))


@pytest.mark.parametrize(
    "call, message",
    [(lambda: pac.rectangle_sample_size(0, 0.1), "eps"),
     (lambda: pac.rectangle_sample_size(0.1, 1.5), "delta"),
     (lambda: pac.finite_class_sample_size(0.1, 0.1, 0), "size"),
     (lambda: pac.finite_class_sample_size(0.1, 0.1, 5, False, "3eps"), "excess"),
     (lambda: pac.hoeffding_bound(-1, 0.1), r"m=-1 is not valid; m must be an int in \[0, inf\)"),
     (lambda: pac.hoeffding_bound(10.5, 0.1), "m=10.5 is not valid"),
     (lambda: pac.rectangle_failure_bound(np.array([10, 20.5]), 0.1), r"m=array\(\[10. , 20.5\]\) is not valid"),
     (lambda: pac.finite_class_failure_bound(100.0, 0.1, 10), "m=100.0 is not valid"),
     (lambda: pac.hoeffding_bound(10, 0.1, a=1, b=0), "a < b"),
     (lambda: pac.simulate_rectangle_errors(10, (0.5, 0.5), (0.2, 0.9)), "target box")],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
