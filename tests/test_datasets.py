"""Tests of lecturelib.datasets' input checks (the data sets themselves are tested where the
chapters use them: test_metric, test_hpca, test_vc ...)."""

import numpy as np
import pytest

from lecturelib import datasets


@pytest.mark.parametrize("chars, message", [
    (np.array([1.0, np.nan]), "^chars must hold strings of one character each, got float64"),
    (["A", "BC"], "^chars must hold strings of one character each, got 'BC'"),
    ("A ", "^chars holds ' ', which renders blank"),
    ("", "^chars is empty"),
])
def test_rendered_characters_refuses_what_is_not_a_drawable_character(chars, message):
    # found by the fuzz: a float array with a NaN rendered the text "nan", and a blank
    # glyph normalised 0 / 0 into rows of NaN
    with pytest.raises(ValueError, match=message):
        datasets.rendered_characters(chars, 2)


def test_rendered_characters_takes_a_sequence_of_characters():
    X, y = datasets.rendered_characters(np.array(["A", "B"]), 2, out_size=8)
    assert X.shape == (4, 64) and y.tolist() == ["A", "A", "B", "B"]
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)


def test_breast_cancer_split_is_a_standardised_partition_of_the_569_points():
    from sklearn.datasets import load_breast_cancer

    X_train, X_test, y_train, y_test = datasets.breast_cancer_split()
    assert X_train.shape == (400, 30) and X_test.shape == (169, 30)
    X_all = np.vstack([X_train, X_test])
    # scaled over all 569 points, as chapter 10 does
    np.testing.assert_allclose(X_all.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(X_all.std(axis=0), 1, rtol=1e-12)
    # every point once, with its own label: undo the scaling and find the raw rows
    raw, target = load_breast_cancer(return_X_y=True)
    back = X_all * raw.std(axis=0) + raw.mean(axis=0)
    rows = [int(np.argmin(np.abs(raw - x).sum(axis=1))) for x in back]
    assert sorted(rows) == list(range(569))
    np.testing.assert_allclose(back, raw[rows], atol=1e-9)
    assert np.array_equal(np.r_[y_train, y_test], target[rows])
    other = datasets.breast_cancer_split(n_train=100, random_state=1)
    assert other[0].shape == (100, 30) and not np.allclose(other[0][:5], X_train[:5])
