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


# ------------------------------------------------------------------ numbered (named) tables

def _grouped_frame():
    import pandas as pd

    index = pd.MultiIndex.from_tuples([("iris", 1), ("iris", 2), ("wine", 1)],
                                      names=["data", "$k$"])
    return pd.DataFrame({r"$\eta$": [0.5, np.nan, 0.25], "rule": ["a|b", "c", None],
                         "n": [3, 12, 7]}, index=index)


NAMED_MYST = "\n".join([
    r"```{table} Errors by $\eta$ and $k$, with $\lvert C\rvert$.",
    ":name: ch05-tab-grouped",
    "",
    r"| data | $k$ | $\eta$ | rule | n |",
    "|---|---:|---:|---|---:|",
    r"| iris | 1 | 0.50 | a\|b | 3 |",
    "|  | 2 |  | c | 12 |",
    "| wine | 1 | 0.25 |  | 7 |",
    "```",
])


def test_named_result_table_is_a_myst_table_and_plain_text_only():
    from IPython.core.formatters import DisplayFormatter

    table = plotting.result_table(
        _grouped_frame(), r"Errors by $\eta$ and $k$, with $\lvert C\rvert$.",
        digits={r"$\eta$": 2}, name="ch05-tab-grouped")
    # the caption's math kept as MyST math; a MultiIndex as two columns, its repeated
    # group label shown once; NaN and None as empty cells; a '|' in a cell escaped;
    # numbers aligned right, text left
    assert table.to_myst() == NAMED_MYST
    bundle, _ = DisplayFormatter().format(table)
    assert set(bundle) == {"text/markdown", "text/plain"}  # no HTML: one table, numbered
    assert bundle["text/markdown"] == NAMED_MYST
    assert bundle["text/plain"] == repr(table)
    assert repr(table).splitlines()[0] == r"Errors by $\eta$ and $k$, with $\lvert C\rvert$."


def test_named_result_table_parses_as_one_named_table_node():
    """MyST (as the book parses the output) reads the directive as a docutils table with
    the name, the caption's math, and the cell with the escaped bar as 'a|b'."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    doctree = publish_doctree(NAMED_MYST, parser=Parser(), settings_overrides={
        "myst_enable_extensions": ["dollarmath"], "report_level": 2, "halt_level": 2})
    (table,) = list(doctree.findall(nodes.table))
    assert table["names"] == ["ch05-tab-grouped"]
    assert [m.astext() for m in table[0].findall(nodes.math)] == [r"\eta", "k", r"\lvert C\rvert"]
    rows = [[entry.astext() for entry in row] for row in table.findall(nodes.row)]
    assert rows == [["data", "k", r"\eta", "rule", "n"], ["iris", "1", "0.50", "a|b", "3"],
                    ["", "2", "", "c", "12"], ["wine", "1", "0.25", "", "7"]]


def test_unnamed_result_table_is_still_an_html_table():
    from IPython.core.formatters import DisplayFormatter

    table = plotting.result_table(_grouped_frame(), "Errors.", digits=2)
    bundle, _ = DisplayFormatter().format(table)
    assert set(bundle) == {"text/html", "text/plain"} and "<caption>Errors.</caption>" in \
        bundle["text/html"]
    with pytest.raises(ValueError, match="needs a name"):
        table.to_myst()


def test_named_result_table_index_false_and_backticks_in_a_cell():
    import pandas as pd

    frame = pd.DataFrame({"code": ["```x```", "y"], "value": [1.25, -2.0]})
    text = plotting.result_table(frame, "Code.", index=False, digits=1, name="t_1").to_myst()
    lines = text.splitlines()
    # a fence longer than the cell's run of backticks, so that the cell cannot close it
    assert lines[0] == "````{table} Code." and lines[-1] == "````"
    assert lines[3:6] == ["| code | value |", "|---|---:|", "| ```x``` | 1.2 |"]


@pytest.mark.parametrize("name", ["", "two words", "ch05:tab", "tab\n", "é-tab", 7])
def test_result_table_refuses_a_name_that_is_not_a_label(name):
    import pandas as pd

    with pytest.raises(ValueError, match="name=.* is not valid; name must be a label of "
                                         "letters, digits, '-' and '_'"):
        plotting.result_table(pd.DataFrame({"a": [1.0]}), "c", name=name)


@pytest.mark.parametrize("frame, caption, message", [
    ("plain", "two\nlines", "caption must be one line"),
    ("newline heading", "c", "heading holds a line break"),
])
def test_named_result_table_refuses_what_markdown_cannot_show(frame, caption, message):
    import pandas as pd

    frames = {"plain": pd.DataFrame({"a": [1.0]}),
              "newline heading": pd.DataFrame({"a\nb": [1]})}
    with pytest.raises(ValueError, match=message):
        plotting.result_table(frames[frame], caption, name="ch05-tab-x").to_myst()


def test_named_result_table_gives_a_float_index_the_tables_decimals():
    import pandas as pd

    frame = pd.DataFrame({"rho": [0.91234, 0.5]}, index=pd.Index([0.0, 0.01], name="tau"))
    lines = plotting.result_table(frame, "c", digits=2, name="x").to_myst().splitlines()
    assert lines[5:7] == ["| 0.00 | 0.91 |", "| 0.01 | 0.50 |"]


def test_mean_sd_is_the_mean_and_the_population_deviation():
    import statistics

    values = [0.912, 0.875, 0.941, 0.903]
    mean, sd = statistics.fmean(values), statistics.pstdev(values)
    assert plotting.mean_sd(values, 3) == f"{mean:.3f} ({sd:.3f})" == "0.908 (0.024)"
    assert plotting.mean_sd(np.array([91.4, 96.8]), 1) == "94.1 (2.7)"
    for bad, message in (([], "empty"), ([1.0, np.nan], "NaN"), ([[1.0]], "dimension")):
        with pytest.raises(ValueError, match=message):
            plotting.mean_sd(bad, 2)
