"""Kernels, feature maps and Mercer's condition (chapter 4).

Kernel values are cross-checked against ``sklearn.metrics.pairwise``; feature maps
against the kernels they are meant to reproduce and against the closed-form dimension
counts; PSD decisions against a Cholesky factorisation and against constructed matrices.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import cholesky
from sklearn.metrics import pairwise
from sklearn.preprocessing import PolynomialFeatures

from lecturelib import kernels

RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 3))
Y = RNG.normal(size=(7, 3))


# ----------------------------------------------------------------------------- kernel values


def test_linear_kernel_matches_sklearn():
    np.testing.assert_allclose(kernels.linear_kernel(X, Y), pairwise.linear_kernel(X, Y), rtol=1e-12)


@pytest.mark.parametrize("degree, coef0, gamma", [(2, 0.0, 1.0), (3, 1.0, 0.5), (4, 2.5, 0.2)])
def test_polynomial_kernel_matches_sklearn(degree, coef0, gamma):
    ours = kernels.polynomial_kernel(X, Y, degree=degree, coef0=coef0, gamma=gamma)
    ref = pairwise.polynomial_kernel(X, Y, degree=degree, coef0=coef0, gamma=gamma)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


@pytest.mark.parametrize("gamma", [None, 0.05, 1.0, 3.0])
def test_rbf_kernel_matches_sklearn(gamma):
    np.testing.assert_allclose(kernels.rbf_kernel(X, Y, gamma=gamma),
                               pairwise.rbf_kernel(X, Y, gamma=gamma), rtol=1e-10, atol=1e-14)


def test_rbf_kernel_is_the_notes_sigma_form():
    sigma = 1.7
    direct = np.exp(-np.sum((X[:, None] - Y[None]) ** 2, axis=2) / (2 * sigma**2))
    np.testing.assert_allclose(kernels.rbf_kernel(X, Y, gamma=1 / (2 * sigma**2)), direct, rtol=1e-12)


def test_sigmoid_and_distance_kernels_match_their_formulas():
    np.testing.assert_allclose(kernels.sigmoid_kernel(X, Y), np.tanh(X @ Y.T - 1), rtol=1e-12)
    dist = np.linalg.norm(X[:, None] - Y[None], axis=2)
    np.testing.assert_allclose(kernels.negative_distance_kernel(X, Y), -dist, rtol=1e-10, atol=1e-12)


def test_gram_matrix_dispatch_and_callable():
    np.testing.assert_allclose(kernels.gram_matrix(X, kernel="rbf", gamma=0.3),
                               pairwise.rbf_kernel(X, gamma=0.3), rtol=1e-10)
    K = kernels.gram_matrix(X, Y, kernel=lambda a, b: (a @ b + 1.0) ** 2)
    np.testing.assert_allclose(K, (X @ Y.T + 1) ** 2, rtol=1e-12)
    for name, params in [("linear", {}), ("poly", {"degree": 3, "coef0": 1.0}), ("rbf", {"gamma": 0.4})]:
        np.testing.assert_allclose(kernels.kernel_diagonal(X, name, **params),
                                   np.diag(kernels.gram_matrix(X, kernel=name, **params)), rtol=1e-12)


# ----------------------------------------------------------------------------- feature maps


def test_degree_two_homogeneous_map_is_the_notes_example():
    x = np.array([[1.5, -2.0]])
    phi = kernels.polynomial_feature_map(x, 2)
    x1, x2 = x[0]
    # the notes' (x1^2, x2^2, sqrt2 x1 x2), in our order x1^2, sqrt2 x1x2, x2^2
    np.testing.assert_allclose(phi[0], [x1**2, math.sqrt(2) * x1 * x2, x2**2], rtol=1e-14)


def test_degree_two_map_with_offset_is_the_corrected_one():
    theta = 1.3
    x, y = np.array([0.7, -0.4]), np.array([1.1, 0.9])

    def corrected(v):
        return np.array([v[0] ** 2, math.sqrt(2) * v[0] * v[1], v[1] ** 2,
                         math.sqrt(2 * theta) * v[0], math.sqrt(2 * theta) * v[1], theta])

    phi = kernels.polynomial_feature_map(np.stack([x, y]), 2, theta=theta)
    np.testing.assert_allclose(phi, np.stack([corrected(x), corrected(y)]), rtol=1e-14)
    exact = (x @ y + theta) ** 2
    assert phi[0] @ phi[1] == pytest.approx(exact, rel=1e-13)
    # the notes' printed map has sqrt(theta) as its last coordinate: it misses the kernel
    notes = lambda v: np.r_[corrected(v)[:5], math.sqrt(theta)]  # noqa: E731
    assert abs(notes(x) @ notes(y) - exact) > 1e-3


@pytest.mark.parametrize("k, d, theta", [(2, 2, 0.0), (3, 2, 1.0), (3, 3, 0.0), (5, 3, 2.0), (4, 4, 0.5), (1, 5, 1.0)])
def test_feature_map_reproduces_the_kernel(k, d, theta):
    Z = np.random.default_rng(k * 10 + d).normal(size=(9, k))
    phi = kernels.polynomial_feature_map(Z, d, theta=theta)
    np.testing.assert_allclose(phi @ phi.T, kernels.polynomial_kernel(Z, degree=d, coef0=theta),
                               rtol=1e-11, atol=1e-11)
    assert phi.shape[1] == kernels.feature_space_dimension(k, d, homogeneous=theta == 0)


@pytest.mark.parametrize("k, d, hom, nonhom", [(2, 2, 3, 6), (3, 2, 6, 10), (3, 3, 10, 20), (5, 3, 35, 56), (4, 4, 35, 70)])
def test_feature_space_dimensions(k, d, hom, nonhom):
    # the counts are those of scikit-learn's PolynomialFeatures (independent enumeration)
    pf_hom = PolynomialFeatures(degree=(d, d), include_bias=False).fit(np.zeros((1, k)))
    pf_all = PolynomialFeatures(degree=d, include_bias=True).fit(np.zeros((1, k)))
    assert kernels.feature_space_dimension(k, d) == hom == pf_hom.n_output_features_
    assert kernels.feature_space_dimension(k, d, homogeneous=False) == nonhom == pf_all.n_output_features_
    assert len(kernels.polynomial_exponents(k, d)) == hom
    assert len(kernels.polynomial_exponents(k, d, homogeneous=False)) == nonhom


def test_exponents_are_the_monomials_of_sklearn():
    pf = PolynomialFeatures(degree=3, include_bias=True).fit(np.zeros((1, 3)))
    ours = {tuple(e) for e in kernels.polynomial_exponents(3, 3, homogeneous=False)}
    assert ours == {tuple(p) for p in pf.powers_}


@pytest.mark.parametrize("gamma", [0.5, 0.2])
def test_rbf_series_converges_to_the_kernel(gamma):
    Z = np.random.default_rng(3).normal(size=(6, 2)) * 0.5
    K = kernels.rbf_kernel(Z, gamma=gamma)
    errors = []
    for J in (1, 3, 6, 12, 25):
        phi = kernels.rbf_feature_map(Z, J, gamma=gamma)
        errors.append(np.abs(phi @ phi.T - K).max())
    assert all(b <= a + 1e-15 for a, b in zip(errors, errors[1:]))
    assert errors[0] > 1e-3 and errors[-1] < 1e-10


def test_rbf_series_truncation_matches_the_scalar_series():
    # e^{-|x-y|^2/2} truncated: e^{-|x|^2/2} e^{-|y|^2/2} sum_{j<=J} (x.y)^j / j!
    x, y = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    for J in (2, 5, 10):
        series = math.exp(-(x @ x + y @ y) / 2) * sum((x @ y) ** j / math.factorial(j) for j in range(J + 1))
        phi = kernels.rbf_feature_map(np.stack([x, y]), J, gamma=0.5)
        assert phi[0] @ phi[1] == pytest.approx(series, rel=1e-13)


# ----------------------------------------------------------------------------- Mercer


def _cholesky_ok(K):
    try:
        cholesky(K + 1e-9 * np.eye(len(K)) * max(1.0, np.abs(K).max()), lower=True)
        return True
    except np.linalg.LinAlgError:
        return False


def test_mercer_kernels_pass_and_counter_examples_fail():
    Z = np.random.default_rng(4).normal(size=(40, 3))
    good = [kernels.linear_kernel(Z), kernels.polynomial_kernel(Z, degree=2, coef0=1.0), kernels.rbf_kernel(Z, gamma=0.5)]
    for K in good:
        assert kernels.is_psd(K) and _cholesky_ok(K)
        assert kernels.min_eigenvalue(K) > -1e-10 * np.abs(K).max()
    bad = [kernels.sigmoid_kernel(Z, gamma=1.0, coef0=-1.0), kernels.negative_distance_kernel(Z)]
    for K in bad:
        assert not kernels.is_psd(K) and not _cholesky_ok(K)
        assert kernels.min_eigenvalue(K) < -1.0


def test_is_psd_rejects_non_symmetric_matrices():
    assert not kernels.is_psd([[1.0, 0.5], [0.0, 1.0]])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 8), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_is_psd_on_constructed_matrices(n, r, seed):
    A = np.random.default_rng(seed).normal(size=(n, r))
    assert kernels.is_psd(A @ A.T)
    assert not kernels.is_psd(-(A @ A.T))


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("thunk, exc, pattern", [
    (lambda: kernels.rbf_kernel(X, Y[:, :2]), ValueError, "same number of features"),
    (lambda: kernels.linear_kernel(np.where(X > 1, np.nan, X)), ValueError, "NaN"),
    (lambda: kernels.rbf_kernel(X, gamma=-1.0), ValueError, "gamma"),
    (lambda: kernels.polynomial_kernel(X, degree=0), ValueError, "degree"),
    (lambda: kernels.polynomial_kernel(X, degree=2.5), TypeError, "degree"),
    (lambda: kernels.polynomial_feature_map(X, 2, theta=-1.0), ValueError, "theta"),
    (lambda: kernels.gram_matrix(X, kernel="cosine"), ValueError, "kernel must be one of"),
    (lambda: kernels.is_psd(np.ones((2, 3))), ValueError, "square"),
    (lambda: kernels.min_eigenvalue([[1.0, 2.0], [0.0, 1.0]]), ValueError, "symmetric"),
    (lambda: kernels.rbf_feature_map(X, -1), ValueError, "max_degree"),
    (lambda: kernels.linear_kernel(X[0]), ValueError, "dimension"),
])
def test_bad_input(thunk, exc, pattern):
    with pytest.raises(exc, match=pattern):
        thunk()


# ------------------------------------------------------------------ normalised kernel

def test_normalised_gram_matrix_is_the_cosine_in_feature_space():
    from sklearn.metrics.pairwise import polynomial_kernel as sk_poly

    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    params = dict(degree=3, gamma=1 / 3, coef0=1.0)
    K_AB = kernels.normalised_gram_matrix(A, B, kernel="poly", **params)
    # an independent computation: scikit-learn's kernel, divided by its own diagonals
    expected = sk_poly(A, B, **params) / np.sqrt(np.outer(
        sk_poly(A, **params).diagonal(), sk_poly(B, **params).diagonal()))
    np.testing.assert_allclose(K_AB, expected, rtol=1e-13)
    K_AA = kernels.normalised_gram_matrix(A, kernel="poly", **params)
    assert np.all(np.diag(K_AA) == 1.0) and np.allclose(K_AA, K_AA.T)
    # the explicit feature map: the cosine of phi(a) and phi(b)
    phi_a, phi_b = (kernels.polynomial_feature_map(Z, 2, theta=1.0) for Z in (A[:1], B[:1]))
    cosine = (phi_a @ phi_b.T) / np.linalg.norm(phi_a) / np.linalg.norm(phi_b)
    np.testing.assert_allclose(
        kernels.normalised_gram_matrix(A[:1], B[:1], kernel="poly", degree=2, coef0=1.0),
        cosine, rtol=1e-12)


def test_normalised_gram_matrix_of_a_normalised_kernel_is_unchanged():
    X = np.random.default_rng(5).normal(size=(6, 2))
    np.testing.assert_allclose(kernels.normalised_gram_matrix(X, kernel="rbf", gamma=0.3),
                               kernels.rbf_kernel(X, gamma=0.3), rtol=1e-14)


def test_normalised_gram_matrix_survives_a_diagonal_whose_product_overflows():
    X = np.array([[1e77, 0.0], [0.0, 1e77]]) * np.array([[1.0], [2.0]])
    K = kernels.normalised_gram_matrix(X, np.array([[1e77, 1e77]]), kernel="linear")
    np.testing.assert_allclose(K, [[2 ** -0.5], [2 ** -0.5]], rtol=1e-12)


def test_normalised_gram_matrix_refuses_a_kernel_without_a_positive_diagonal():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match=r"k\(x, x\) must be positive, got 0 for a row of X"):
        kernels.normalised_gram_matrix(X, kernel="linear")
    with pytest.raises(ValueError, match="for a row of Y"):
        kernels.normalised_gram_matrix(X[1:], X[:1], kernel="linear")
