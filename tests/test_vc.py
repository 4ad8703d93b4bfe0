"""Tests of lecturelib.vc: shattering checked against an independent separator
(scikit-learn's hard-margin linear SVM), closed-form growth functions, Sauer's recursion,
scipy's hypergeometric and binomial laws, and the inventory's sample-size table."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, hypergeom
from sklearn.svm import SVC

from lecturelib import vc

# ---------------------------------------------------------------- the four-concept example (E8.1)

TOY = [[1, 1, 1], [0, 1, 1], [1, 0, 0], [0, 0, 0]]


def test_four_concept_example():
    C = vc.finite_class(TOY)
    assert vc.dichotomies([0], C).tolist() == [[0], [1]]
    assert vc.is_shattered([0, 2], C)
    assert vc.is_shattered([0, 1], C)
    assert vc.dichotomies([1, 2], C).tolist() == [[0, 0], [1, 1]]
    assert not vc.is_shattered([1, 2], C)
    assert len(vc.dichotomies([0, 1, 2], C)) == 4
    assert vc.vc_dimension(C, [0, 1, 2]) == 2 == math.log2(len(C))


@pytest.mark.parametrize("seed", range(5))
def test_finite_class_vc_dimension_at_most_log2_size(seed):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 2, size=(rng.integers(2, 9), 6))
    C = vc.finite_class(table)
    n_distinct = len({tuple(r) for r in table})
    assert vc.vc_dimension(C, list(range(6))) <= math.log2(n_distinct)


# ---------------------------------------------------------------- intervals and thresholds (E8.2)


@pytest.mark.parametrize("seed", range(10))
def test_intervals_shatter_two_points_never_three(seed):
    x = np.random.default_rng(seed).random(3)
    assert vc.is_shattered(x[:2], "intervals")
    assert not vc.is_shattered(x, "intervals")
    xs = np.sort(x)
    assert not vc.is_realizable(xs, [1, 0, 1], "intervals")


def test_thresholds_have_vc_dimension_one():
    assert vc.is_shattered([0.3], "thresholds")
    for seed in range(5):
        assert not vc.is_shattered(np.random.default_rng(seed).random(2), "thresholds")


def test_interval_and_threshold_growth_closed_forms():
    for m in range(1, 9):
        points = np.random.default_rng(m).random(m)
        assert vc.growth_function("intervals", m) == len(vc.dichotomies(points, "intervals")) \
            == vc.sauer_bound(m, 2)
        assert vc.growth_function("thresholds", m) == len(vc.dichotomies(points, "thresholds")) \
            == vc.sauer_bound(m, 1)
    assert [vc.growth_function("intervals", m) for m in range(1, 8)] == [2, 4, 7, 11, 16, 22, 29]


# ---------------------------------------------------------------- rectangles (E8.3)


def test_rectangles_shatter_the_cross():
    cross = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    assert vc.is_shattered(cross, "rectangles")
    assert vc.is_realizable(cross, [1, 0, 1, 0], "rectangles")
    # four collinear points are not shattered
    assert not vc.is_shattered(np.c_[np.arange(4.0), np.zeros(4)], "rectangles")


def _rectangle_labels_brute_force(X):
    """Independent enumeration: every box with corners at sample coordinates."""
    xs, ys = np.unique(X[:, 0]), np.unique(X[:, 1])
    labs = {tuple([0] * len(X))}
    for x0, x1 in itertools.combinations_with_replacement(xs, 2):
        for y0, y1 in itertools.combinations_with_replacement(ys, 2):
            inside = (X[:, 0] >= x0) & (X[:, 0] <= x1) & (X[:, 1] >= y0) & (X[:, 1] <= y1)
            labs.add(tuple(inside.astype(int)))
    return labs


@pytest.mark.parametrize("seed", range(20))
def test_rectangles_never_shatter_five_points(seed):
    X = np.random.default_rng(seed).random((5, 2))
    d = vc.dichotomies(X, "rectangles")
    assert set(map(tuple, d)) == _rectangle_labels_brute_force(X)
    assert len(d) <= 31
    # the "internal" point: label it 0 and the four extreme points 1
    extremes = {X[:, 0].argmin(), X[:, 0].argmax(), X[:, 1].argmin(), X[:, 1].argmax()}
    if len(extremes) == 4:
        lab = np.ones(5, dtype=int)
        lab[list(set(range(5)) - extremes)] = 0
        assert not vc.is_realizable(X, lab, "rectangles")


# ---------------------------------------------------------------- half-planes (E8.4)


def _svm_separable(X, y):
    """Independent check: a hard-margin linear SVM fits the labels without error."""
    if y.min() == y.max():
        return True
    clf = SVC(kernel="linear", C=1e8, tol=1e-6, max_iter=200_000).fit(X, y)
    return bool(np.all(clf.predict(X) == y))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(6))
def test_halfplane_lp_agrees_with_svm(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, 2))
    for lab in itertools.product((0, 1), repeat=5):
        y = np.array(lab)
        assert vc.is_realizable(X, y, "halfplanes") == _svm_separable(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_separating_halfplane_really_separates(seed):
    X = np.random.default_rng(seed).normal(size=(5, 2))
    for lab in itertools.product((0, 1), repeat=5):
        y = np.array(lab)
        sep = vc.separating_halfplane(X, y)
        assert (sep is not None) == vc.is_realizable(X, y, "halfplanes")
        if sep is not None:
            w, b = sep
            assert np.all(((X @ w + b) >= 0) == (y == 1))


@pytest.mark.parametrize("seed", range(10))
def test_halfplanes_shatter_three_points_never_four(seed):
    X = np.random.default_rng(seed).normal(size=(4, 2))
    assert vc.is_shattered(X[:3], "halfplanes")
    d = vc.dichotomies(X, "halfplanes")
    assert len(d) == 14          # points in general position: m^2 - m + 2
    assert not vc.is_shattered(X, "halfplanes")


def test_halfplane_notes_configurations():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert not vc.is_realizable(square, [1, 0, 1, 0], "halfplanes")   # XOR
    assert len(vc.dichotomies(square, "halfplanes")) == 14
    interior = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [1.0, 1.0]])
    assert not vc.is_realizable(interior, [1, 1, 1, 0], "halfplanes")
    assert len(vc.dichotomies(interior, "halfplanes")) == 14


@pytest.mark.parametrize("n", [1, 3])
def test_hyperplanes_in_rn_have_vc_dimension_n_plus_one(n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        X = rng.normal(size=(n + 2, n))
        assert vc.is_shattered(X[: n + 1], "halfplanes")
        assert not vc.is_shattered(X, "halfplanes")


def test_halfplane_growth_matches_cover_count():
    # Cover (1965): m points in general position in the plane, affine separators:
    # 2 * sum_{i<=2} C(m-1, i) = m^2 - m + 2
    for m in range(1, 8):
        assert vc.growth_function("halfplanes", m) == m * m - m + 2


# ---------------------------------------------------------------- growth function and Sauer


def _phi_recursive(d, m, memo={}):
    if d == 0 or m == 0:
        return 1
    if (d, m) not in memo:
        memo[d, m] = _phi_recursive(d, m - 1) + _phi_recursive(d - 1, m - 1)
    return memo[d, m]


def test_sauer_bound_equals_recursion_and_table():
    for d in range(0, 8):
        for m in range(0, 25):
            assert vc.sauer_bound(m, d) == _phi_recursive(d, m)
            if m <= d:
                assert vc.sauer_bound(m, d) == 2**m
            elif d >= 1:
                assert vc.sauer_bound(m, d) <= vc.sauer_exponential_bound(m, d)
    assert vc.sauer_bound(10, 3) == 176
    assert vc.sauer_bound(20, 4) == 6196
    assert vc.sauer_bound(100, 10) == 19_415_908_147_836
    assert vc.sauer_exponential_bound(20, 4) == pytest.approx(34123.8, abs=0.1)


@pytest.mark.parametrize("cls, d", [("intervals", 2), ("rectangles", 4), ("halfplanes", 3)])
def test_growth_never_exceeds_sauer(cls, d):
    for m in range(1, 8):
        g = vc.growth_function(cls, m, n_configurations=5)
        assert g <= vc.sauer_bound(m, d)
        if m <= d and cls != "rectangles":
            assert g == 2**m


def test_growth_of_finite_class_is_exact():
    C = vc.finite_class(TOY)
    assert vc.growth_function(C, 1, domain=[0, 1, 2]) == 2
    assert vc.growth_function(C, 2, domain=[0, 1, 2]) == 4
    assert vc.growth_function(C, 3, domain=[0, 1, 2]) == 4


# ---------------------------------------------------------------- the sine class (E8.6)


@pytest.mark.parametrize("m", [3, 5, 7])
def test_sine_class_shatters_powers_of_ten(m):
    x = vc.sine_points(m)
    for lab in itertools.product((0, 1), repeat=m):
        assert vc.sine_labels(vc.sine_frequency(np.array(lab)), x).tolist() == list(lab)


@pytest.mark.parametrize("omega, x, message", [
    (1.0, [0.5, np.nan], "^x contains NaN or infinity"),
    (1.0, [np.inf], "^x contains NaN or infinity"),
    (1e300, [1e10], "^omega \\* x overflows float64"),
])
def test_sine_labels_refuses_an_undefined_phase(omega, x, message):
    # found by the fuzz: sin(NaN) > 0 is False, so a NaN x was labelled 0
    with pytest.raises(ValueError, match=message):
        vc.sine_labels(omega, x)


# ---------------------------------------------------------------- double sampling (E9.2)


@pytest.mark.parametrize("m, l, value", [(10, 3, 0.105263), (20, 5, 0.023562), (50, 10, 5.934e-4)])
def test_balls_probability(m, l, value):
    p = vc.balls_probability(m, l)
    # all l red balls among the m drawn for S2: hypergeometric with population 2m
    assert p == pytest.approx(hypergeom.pmf(l, 2 * m, l, m))
    assert p == pytest.approx(value, rel=1e-3)
    assert p <= 2.0**-l


@pytest.mark.parametrize("n, p", [(200, 0.1), (500, 0.05)])
def test_chernoff_lower_tail(n, p):
    mu = n * p
    exact = binom.cdf(math.ceil(mu / 2) - 1, n, p)          # P(Z < mu/2)
    assert exact <= vc.chernoff_lower_tail_bound(mu, 0.5)
    assert vc.chernoff_lower_tail_bound(mu, 0.5) == pytest.approx(math.exp(-mu / 8))


@pytest.mark.parametrize(
    "d, eps, delta, m_exp, m_exact",
    [(2, 0.1, 0.1, 504, 461), (3, 0.1, 0.05, 729, 680), (4, 0.1, 0.05, 931, 877),
     (4, 0.1, 0.1, 908, 854), (10, 0.05, 0.01, 4852, 4716)],
)
def test_vc_sample_size_table(d, eps, delta, m_exp, m_exact):
    m = vc.vc_sample_size(eps, delta, d)
    assert m == m_exp
    assert vc.vc_sample_size(eps, delta, d, growth="exact") == m_exact
    # minimality by a direct linear check
    assert vc.double_sampling_bound(m, eps, d) <= delta
    assert vc.double_sampling_bound(m - 1, eps, d) > delta


def test_double_sampling_bound_controls_simulated_interval_failures():
    from lecturelib.pac import simulate_rectangle_errors

    eps, delta = 0.1, 0.1
    m = vc.vc_sample_size(eps, delta, 2)
    err = simulate_rectangle_errors(m, [0.3], [0.6], n_trials=2000, random_state=0)
    assert np.mean(err > eps) <= delta


def test_margin_vc_bound():
    assert vc.margin_vc_bound(1.0, 0.1, 1000) == 101
    assert vc.margin_vc_bound(1.0, 0.1, 10) == 11
    assert vc.margin_vc_bound(2.0, 0.7, 50) == math.ceil(4 / 0.49) + 1


@pytest.mark.parametrize(
    "call, exc, message",
    [(lambda: vc.dichotomies([0.1, 0.2], "circles"), ValueError, "concept_class"),
     (lambda: vc.dichotomies([0.1], [1, 2]), ValueError, "callables"),
     (lambda: vc.finite_class([[0, 2]]), ValueError, "0 and 1"),
     (lambda: vc.sauer_bound(-1, 2), ValueError, r"m=-1 is not valid; m must be an int in \[0, inf\)"),
     (lambda: vc.sauer_bound(3.0, 2), TypeError, "m=3.0 is not valid"),
     (lambda: vc.sauer_bound(10**9, 10**6), ValueError, "sauer_exponential_bound"),
     (lambda: vc.vc_sample_size(0.1, 0.1, 0), ValueError, "d=0 is not valid"),
     (lambda: vc.double_sampling_bound(100, 0.1, 2, growth="x"), ValueError, "growth"),
     (lambda: vc.double_sampling_bound(100, float("nan"), 2), ValueError, "eps=nan is not valid"),
     (lambda: vc.growth_function(vc.finite_class(TOY), 2), ValueError, "domain"),
     (lambda: vc.growth_function([lambda p: 0], 15, domain=list(range(30))), ValueError,
      "subsets of 15 points"),
     (lambda: vc.dichotomies(np.zeros((11, 3)), "halfplanes"), ValueError, "at most 10 points"),
     (lambda: vc.dichotomies(np.arange(1000.0), "intervals"), ValueError, "without listing"),
     (lambda: vc.is_realizable(np.zeros((3, 2)), [1, 0], "halfplanes"), ValueError, "one entry per point"),
     (lambda: vc.is_realizable([0.1, 0.2], [1, 2], "intervals"), ValueError, "0 and 1"),
     (lambda: vc.dichotomies([0.1, np.nan], "intervals"), ValueError, "NaN"),
     (lambda: vc.margin_vc_bound(1.0, 0.0, 5), ValueError, "margin=0.0 is not valid"),
     (lambda: vc.balls_probability(3, 7), ValueError, "exceeds")],
)
def test_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


@pytest.mark.parametrize("concept_class", ["rectangles", "halfplanes"])
def test_direct_enumeration_matches_one_lp_per_labelling(concept_class):
    """Rectangles and half-planes are enumerated without trying every labelling; on small
    sets (random, and on a coarse grid with ties and collinear points) the result equals
    the brute force that asks is_realizable about each of the 2^m labellings."""
    rng = np.random.default_rng(0)
    for trial in range(24):
        m = int(rng.integers(1, 8))
        X = rng.integers(0, 3, (m, 2)).astype(float) if trial % 2 else rng.random((m, 2))
        brute = {lab for lab in itertools.product((0, 1), repeat=m)
                 if vc.is_realizable(X, np.array(lab), concept_class)}
        assert set(map(tuple, vc.dichotomies(X, concept_class))) == brute


def test_twenty_points_in_the_plane_are_counted():
    X = np.random.default_rng(1).random((20, 2))
    assert len(vc.dichotomies(X, "halfplanes")) == 20 * 19 + 2   # general position
    assert vc.growth_function("halfplanes", 20) == 20 * 19 + 2
    assert len(vc.dichotomies(X, "rectangles")) <= vc.sauer_bound(20, 4)


# ---------------------------------------------------------------- Sauer's lemma as a property

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=40, deadline=None, derandomize=True)
@given(arrays(np.int8, st.tuples(st.integers(1, 10), st.integers(1, 6)), elements=st.integers(0, 1)))
def test_sauer_lemma_holds_for_random_finite_classes(table):
    C = vc.finite_class(table)
    n = table.shape[1]
    d = vc.vc_dimension(C, list(range(n)))
    assert 2**d <= len({tuple(r) for r in table})            # Theorem 7
    for m in range(1, n + 1):
        g = vc.growth_function(C, m, domain=list(range(n)))
        # independent count: distinct rows of the table restricted to m columns
        g_direct = max(len({tuple(r) for r in table[:, list(s)]})
                       for s in itertools.combinations(range(n), m))
        assert g == g_direct <= vc.sauer_bound(m, d)


# ----------------------------------------------------------------------------- lower bound


@pytest.mark.parametrize("d, m, eps", [(3, 2, 0.1), (4, 3, 0.05), (2, 4, 0.125)])
def test_lower_bound_expected_error_by_enumeration(d, m, eps):
    """Enumerate every sample sequence and every target labelling of x_1..x_{d-1}."""
    import itertools

    from lecturelib.vc import lower_bound_expected_error

    probs = np.array([1 - 8 * eps] + [8 * eps / (d - 1)] * (d - 1))
    total = 0.0
    for labels in itertools.product((0, 1), repeat=d - 1):
        target = np.array((0,) + labels)
        for seq in itertools.product(range(d), repeat=m):
            p_seq = float(np.prod(probs[list(seq)]))
            seen = set(seq)
            guess = np.array([target[i] if i in seen else 0 for i in range(d)])  # memorise, else 0
            err = float(np.sum(probs[1:] * (guess[1:] != target[1:])))
            total += p_seq * err / 2 ** (d - 1)
    assert total == pytest.approx(lower_bound_expected_error(m, d, eps), rel=1e-12)


def test_lower_bound_sample_size_is_the_crossing():
    from lecturelib.vc import lower_bound_expected_error, lower_bound_sample_size

    for d, eps in [(2, 0.1), (5, 0.05), (20, 0.01), (100, 0.1)]:
        m_star = lower_bound_sample_size(d, eps)
        assert lower_bound_expected_error(m_star, d, eps) >= 2 * eps
        assert lower_bound_expected_error(m_star + 1, d, eps) < 2 * eps
        assert m_star >= math.floor(math.log(2) * ((d - 1) / (8 * eps) - 1))
    from lecturelib._validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="eps"):
        lower_bound_sample_size(5, 0.2)
    with pytest.raises(InvalidParameterError, match="d"):
        lower_bound_sample_size(1, 0.1)
