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
