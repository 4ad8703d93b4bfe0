"""lecturelib.plotting: figures fit the book's column and the shared plots draw what they say."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from lecturelib import plotting

matplotlib.use("Agg")

COLUMN_PIXELS = 688  # the rendered book's text column (tests/test_reading.py measures it)


def saved_width(fig) -> int:
    """Width in pixels of the PNG the notebook's inline backend stores (bbox 'tight')."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return Image.open(buffer).size[0]


@pytest.mark.parametrize("ncols", [1, 2, 3])
def test_column_figure_fits_the_column_with_its_labels(ncols):
    with matplotlib.rc_context(plotting.BOOK_STYLE):
        fig, axes = plotting.column_figure(1, ncols)
        for ax in np.atleast_1d(axes):
            ax.plot([0, 1e6], [0, 1e6])
            ax.set(xlabel="a long axis label $x_1$", ylabel="probability", title="panel")
        width = saved_width(fig)
    assert 500 < width <= COLUMN_PIXELS


def test_book_style_text_is_readable():
    assert plotting.BOOK_STYLE["font.size"] >= 9 and plotting.BOOK_STYLE["xtick.labelsize"] >= 9
    assert plotting.COLUMN_WIDTH * plotting.BOOK_STYLE["figure.dpi"] <= COLUMN_PIXELS


def test_decision_regions_colour_each_grid_point_by_its_prediction():
    X = np.array([[0.0, 0.0], [2.0, 2.0], [0.0, 2.0], [2.0, 0.0]])
    y = np.array([0, 1, 2, 0])

    def predict(Z):
        return np.where(Z[:, 0] + Z[:, 1] > 2, 1, np.where(Z[:, 1] > Z[:, 0], 2, 0))

    ax = Figure().add_subplot()
    grid = plotting.plot_decision_regions(ax, predict, X, y, resolution=30, padding=1.0)
    xs = np.linspace(-1, 3, 30)
    G0, G1 = np.meshgrid(xs, xs)
    np.testing.assert_array_equal(grid, predict(np.c_[G0.ravel(), G1.ravel()]).reshape(30, 30))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["class 0", "class 1", "class 2"]
    assert ax.get_xlabel() == "$x_1$" and ax.get_ylabel() == "$x_2$"


def test_decision_regions_name_classes_and_keep_string_labels():
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    y = np.array(["ham", "spam"])
    ax = Figure().add_subplot()
    plotting.plot_decision_regions(ax, lambda Z: np.where(Z[:, 0] > 0.5, "spam", "ham"), X, y,
                                   class_names={"ham": "good mail"}, resolution=10)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["good mail", "class spam"]


@pytest.mark.parametrize("X, y, predict, message", [
    (np.zeros((3, 3)), [0, 1, 0], lambda Z: np.zeros(len(Z), int), "two features"),
    (np.zeros((3, 2)), [0, 1], lambda Z: np.zeros(len(Z), int), "one label per row"),
    (np.zeros((2, 2)), [0, 1], lambda Z: np.full(len(Z), 7), r"labels \[7\] that y does not"),
    (np.arange(14.0).reshape(7, 2), np.arange(7), lambda Z: np.zeros(len(Z), int), "at most 6"),
])
def test_decision_regions_refuse_bad_input(X, y, predict, message):
    with pytest.raises(ValueError, match=message):
        plotting.plot_decision_regions(Figure().add_subplot(), predict, X, y, resolution=10)


def test_bound_vs_simulation_caps_the_bound_and_keeps_the_points():
    ax = Figure().add_subplot()
    m = np.arange(1, 11)
    line, points = plotting.plot_bound_vs_simulation(ax, m, 4 * 0.5 ** m, [2, 5], [0.3, 0.02], cap=1)
    np.testing.assert_allclose(line.get_ydata(), np.minimum(4 * 0.5 ** m, 1))
    np.testing.assert_allclose(points.get_ydata(), [0.3, 0.02])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bound", "simulation"]


def test_bound_vs_simulation_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="x and bound must have the same length"):
        plotting.plot_bound_vs_simulation(Figure().add_subplot(), [1, 2], [1.0], [1], [0.5])


def test_result_table_shows_caption_headers_and_fixed_decimals():
    import pandas as pd

    frame = pd.DataFrame({"m": [10, 200], "error": [0.123456, 0.5], "rule": ["a", "b"]},
                         index=["first", "second"])
    table = plotting.result_table(frame, "Errors by size.", digits={"error": 3})
    html = table._repr_html_()
    assert "<caption>Errors by size.</caption>" in html
    assert all(f">{cell}<" in html for cell in ["0.123", "0.500", "200", "second", "rule"])
    assert "0.1234" not in html
    text = repr(table).splitlines()
    assert text[0] == "Errors by size." and text[1].split() == ["m", "error", "rule"]
    assert text[3].split() == ["second", "200", "0.500", "b"]
    assert table.frame is frame
    assert table._repr_html_() == html  # the same HTML every run (nbval compares it)
    assert "second" not in plotting.result_table(frame, "x", index=False)._repr_html_()


def test_result_table_escapes_html():
    import pandas as pd

    frame = pd.DataFrame({"<b>col</b>": ["<script>x</script>"]}, index=["<i>r</i>"])
    html = plotting.result_table(frame, "a <caption> & more")._repr_html_()
    assert "<script>" not in html and "<b>" not in html and "<i>" not in html
    assert "a &lt;caption&gt; &amp; more" in html


@pytest.mark.parametrize("kwargs, message", [
    (dict(caption="  "), "caption must say"),
    (dict(caption="c", digits={"nope": 2}), "columns that frame does not have"),
    (dict(caption="c", digits={"a": -1}), r"int in \[0, 12\]"),
])
def test_result_table_refuses_bad_input(kwargs, message):
    import pandas as pd

    with pytest.raises(ValueError, match=message):
        plotting.result_table(pd.DataFrame({"a": [1.0]}), **kwargs)
