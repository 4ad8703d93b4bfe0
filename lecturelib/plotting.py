"""Figures of the book: one style sized for the text column, and the plots chapters share.

The rendered book's text column is 688 pixels wide.  A figure drawn wider is scaled down
to fit, and its labels shrink with it (a 1400-pixel figure shows 10-point labels at about
5 pixels).  `use_book_style` sets matplotlib's defaults so that figures are drawn at the
column's width at 100 dpi with 10-point text, and `column_figure` makes a figure of one or
more panels at that width.  Two kinds of figure recur across chapters and are drawn here:

- `plot_decision_regions`: the regions a classifier assigns to each class in the plane,
  with the labelled points on top (chapters 1, 4 and 12);
- `plot_bound_vs_simulation`: a bound on a probability or a sample size as a curve and the
  simulated quantity it controls as points (chapters 7 to 10).

Results that are numbers rather than pictures are shown as tables: `result_table` gives a
pandas DataFrame a caption and a fixed number of decimals.  Given a ``name`` it displays as
a MyST ``{table}`` directive, which the book numbers ("Table 5.2"), captions and lets
``{numref}`` point to, as a real table in the HTML and in the PDF; without one, as an HTML
table.  A terminal shows the aligned text either way.
"""

from __future__ import annotations

import hashlib
import html
import re
from numbers import Integral, Real

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes

from ._validation import InstanceOf, Interval, Matches, as_float_array, validate_params

__all__ = [
    "COLUMN_WIDTH",
    "BOOK_STYLE",
    "use_book_style",
    "column_figure",
    "plot_decision_regions",
    "plot_bound_vs_simulation",
    "result_table",
    "mean_sd",
]

#: Width of a figure in inches: 660 pixels at 100 dpi, inside the 688-pixel text column.
COLUMN_WIDTH = 6.6

#: matplotlib settings of every figure in the book (`use_book_style` applies them).
BOOK_STYLE = {
    "figure.figsize": (COLUMN_WIDTH, 3.6),
    "figure.dpi": 100,
    "figure.constrained_layout.use": True,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
    "lines.markersize": 5,
    "savefig.dpi": 100,
}

# Light fills for the regions and strong colours for the points, class by class.
_REGION_COLOURS = ["#dbe9f6", "#fbe3d6", "#e2f0d9", "#ece2f0", "#fff2cc", "#e0e0e0"]
_POINT_COLOURS = ["tab:blue", "tab:red", "tab:green", "tab:purple", "tab:olive", "tab:gray"]
_POINT_MARKERS = ["o", "s", "^", "D", "v", "P"]


def _new_axes():
    from matplotlib.figure import Figure

    return Figure().add_subplot()


_AXES = InstanceOf(Axes, "a matplotlib Axes", factory=_new_axes)
_TEXT = InstanceOf(str, "a str", example="x")


def use_book_style():
    """Set matplotlib's defaults to the book's figure style (`BOOK_STYLE`).

    Figures are then 6.6 inches (660 pixels) wide at 100 dpi, with 10-point text and
    9-point tick labels, laid out by matplotlib's constrained layout, so that they are
    shown in the text column at their natural size.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> from lecturelib import plotting
    >>> plotting.use_book_style()
    >>> mpl.rcParams["figure.figsize"]
    [6.6, 3.6]
    """
    mpl.rcParams.update(BOOK_STYLE)


@validate_params({
    "nrows": [Interval(Integral, 1, 6)],
    "ncols": [Interval(Integral, 1, 6)],
    "height": [Interval(Real, 0.5, 12), None],
    "sharex": ["boolean"],
    "sharey": ["boolean"],
})
def column_figure(nrows=1, ncols=1, *, height=None, sharex=False, sharey=False):
    """A figure of ``nrows`` by ``ncols`` panels, as wide as the book's text column.

    Parameters
    ----------
    nrows, ncols : int in [1, 6], default=1
        The grid of panels.
    height : float in [0.5, 12], optional
        Height in inches; by default 3.6 for one row and 2.6 per row for more.
    sharex, sharey : bool, default=False
        Share the x (y) axis between the panels.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : matplotlib.axes.Axes or numpy.ndarray of them
        One Axes for a single panel, else an array shaped like the grid (squeezed as
        ``plt.subplots`` does).

    Examples
    --------
    >>> from lecturelib import plotting
    >>> fig, axes = plotting.column_figure(1, 3)
    >>> fig.get_size_inches().tolist(), axes.shape
    ([6.6, 3.6], (3,))
    """
    import matplotlib.pyplot as plt

    if height is None:
        height = 3.6 if nrows == 1 else 2.6 * nrows
    return plt.subplots(nrows, ncols, figsize=(COLUMN_WIDTH, height), sharex=sharex,
                        sharey=sharey, layout="constrained")


@validate_params({
    "ax": [_AXES],
    "predict": ["callable"],
    "X": ["array-like"],
    "y": ["array-like"],
    "resolution": [Interval(Integral, 10, 2000)],
    "padding": [Interval(Real, 0, None)],
    "class_names": [InstanceOf(dict, "a dict {label: name}", example={}), None],
    "xlabel": [_TEXT],
    "ylabel": [_TEXT],
    "legend": ["boolean"],
})
def plot_decision_regions(ax, predict, X, y, *, resolution=200, padding=0.5, class_names=None,
                          xlabel="$x_1$", ylabel="$x_2$", legend=True):
    """Fill the plane by the class ``predict`` gives each point, and draw the sample on top.

    The grid spans the sample's bounding box widened by ``padding`` on every side, with
    ``resolution`` points per axis; each grid point is coloured by its predicted class.
    The points of ``X`` are drawn in the strong colour of their class, so a point drawn on
    a region of another colour is misclassified.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    predict : callable
        Maps an array of shape (k, 2) to k class labels, e.g. a fitted classifier's
        ``predict``.
    X : array-like of shape (n, 2)
        The sample (two features).
    y : array-like of shape (n,)
        Its labels; at most six classes.
    resolution : int in [10, 2000], default=200
        Grid points per axis.
    padding : float >= 0, default=0.5
        Margin around the sample, in the units of the features.
    class_names : dict, optional
        Legend names of the labels; by default ``"class <label>"``.
    xlabel, ylabel : str
        Axis labels.
    legend : bool, default=True
        Draw a legend of the classes.

    Returns
    -------
    predicted : numpy.ndarray of shape (resolution, resolution)
        The class of each grid point (rows follow the second feature).

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib import plotting
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> y = np.array([0, 1, 1, 0])
    >>> fig, ax = plotting.column_figure()
    >>> def predict(Z):
    ...     return (Z[:, 1] > 0.5).astype(int)
    >>> grid = plotting.plot_decision_regions(ax, predict, X, y,
    ...                                       resolution=20)
    >>> grid.shape, sorted(np.unique(grid).tolist())
    ((20, 20), [0, 1])
    """
    X = as_float_array(X, "X", ndim=2)
    y = np.asarray(y)
    if X.shape[1] != 2:
        raise ValueError(f"X must have two features (columns) to draw the plane, got {X.shape[1]}")
    if y.ndim != 1 or len(y) != len(X):
        raise ValueError(f"y must be a vector with one label per row of X ({len(X)}), "
                         f"got shape {y.shape}")
    labels = np.unique(y)
    if len(labels) > len(_POINT_COLOURS):
        raise ValueError(f"at most {len(_POINT_COLOURS)} classes can be drawn, got {len(labels)}")
    axes_grid = [np.linspace(X[:, j].min() - padding, X[:, j].max() + padding, resolution)
                 for j in range(2)]
    G0, G1 = np.meshgrid(*axes_grid)
    predicted = np.asarray(predict(np.c_[G0.ravel(), G1.ravel()])).reshape(G0.shape)
    unknown = np.setdiff1d(np.unique(predicted), labels)
    if unknown.size:
        raise ValueError(f"predict returned labels {unknown.tolist()} that y does not contain")
    index = np.searchsorted(labels, predicted)
    ax.contourf(G0, G1, index, levels=np.arange(len(labels) + 1) - 0.5,
                colors=_REGION_COLOURS[:len(labels)])
    names = class_names or {}
    for k, label in enumerate(labels):
        mine = y == label
        ax.scatter(X[mine, 0], X[mine, 1], s=18, c=_POINT_COLOURS[k], marker=_POINT_MARKERS[k],
                   edgecolors="white", linewidths=0.4,
                   label=names.get(label.item() if hasattr(label, "item") else label,
                                   f"class {label}"))
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if legend:
        ax.legend(loc="best")
    return predicted


@validate_params({
    "ax": [_AXES],
    "x": ["array-like"],
    "bound": ["array-like"],
    "x_simulated": ["array-like"],
    "simulated": ["array-like"],
    "bound_label": [_TEXT],
    "simulation_label": [_TEXT],
    "xlabel": [_TEXT],
    "ylabel": [_TEXT],
    "cap": [Interval(Real, None, None), None],
})
def plot_bound_vs_simulation(ax, x, bound, x_simulated, simulated, *, bound_label="bound",
                             simulation_label="simulation", xlabel="sample size $m$",
                             ylabel="probability", cap=None):
    """Draw a bound as a line and the simulated quantity it controls as points.

    A bound is correct when every simulated point lies on or below its curve; how far
    below shows how loose it is.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, bound : array-like of shape (k,)
        Where the bound is evaluated and its values.
    x_simulated, simulated : array-like of shape (j,)
        Where the simulation was run and its estimates.
    bound_label, simulation_label, xlabel, ylabel : str
        Legend entries and axis labels.
    cap : float, optional
        Draw ``min(bound, cap)``, e.g. ``cap=1`` for a bound on a probability, which is
        vacuous above 1.

    Returns
    -------
    lines : list of matplotlib.lines.Line2D
        The bound's line and the simulation's markers.

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib import plotting
    >>> m = np.arange(1, 51)
    >>> fig, ax = plotting.column_figure()
    >>> lines = plotting.plot_bound_vs_simulation(
    ...     ax, m, 4 * 0.9 ** m, [10, 30], [0.2, 0.01], cap=1)
    >>> float(lines[0].get_ydata().max())
    1.0
    """
    x = as_float_array(x, "x", ndim=1)
    bound = as_float_array(bound, "bound", ndim=1)
    x_simulated = as_float_array(x_simulated, "x_simulated", ndim=1)
    simulated = as_float_array(simulated, "simulated", ndim=1)
    if len(x) != len(bound):
        raise ValueError(f"x and bound must have the same length, got {len(x)} and {len(bound)}")
    if len(x_simulated) != len(simulated):
        raise ValueError(f"x_simulated and simulated must have the same length, got "
                         f"{len(x_simulated)} and {len(simulated)}")
    shown = bound if cap is None else np.minimum(bound, cap)
    (line,) = ax.plot(x, shown, color="tab:blue", label=bound_label)
    (points,) = ax.plot(x_simulated, simulated, "o", color="tab:red", label=simulation_label)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.legend(loc="best")
    return [line, points]


def _pandas_frame_type():
    import pandas as pd

    return pd.DataFrame


class ResultTable:
    """A DataFrame with a caption, shown as a table (what `result_table` returns).

    With a ``name`` it displays as a MyST ``{table}`` directive around a Markdown table
    (MIME type ``text/markdown``), which the book numbers and captions and ``{numref}``
    refers to; without one, as an HTML table whose ``<caption>`` is the caption.  Where
    only text is shown (a terminal, nbval) it is the caption and the aligned text of the
    table.  ``frame`` is the DataFrame with its numbers unrounded.
    """

    def __init__(self, frame, caption, digits, index, name=None):
        self.frame, self.caption, self.digits, self.index = frame, caption, digits, index
        self.name = name

    def _places(self, column):
        return self.digits.get(column) if isinstance(self.digits, dict) else self.digits

    def _formatters(self):
        """Column -> function printing a value with the column's number of decimals."""
        import pandas as pd

        out = {}
        for column in self.frame.columns:
            places = self._places(column)
            if places is not None and pd.api.types.is_float_dtype(self.frame[column]):
                out[column] = f"{{:.{places}f}}".format
        return out

    def _styler(self):
        # A fixed id (from the caption) keeps the HTML the same from run to run (nbval).
        uid = hashlib.sha1(self.caption.encode()).hexdigest()[:10]
        styler = (self.frame.style.format(self._formatters(), na_rep="", escape="html")
                  .format_index(escape="html", axis=0).format_index(escape="html", axis=1)
                  .set_caption(html.escape(self.caption)).set_uuid(uid))
        return styler if self.index else styler.hide(axis="index")

    def _repr_html_(self):
        if self.name is not None:
            return None  # shown as the MyST table of _repr_mimebundle_ alone
        return self._styler().to_html()

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.name is None:
            return None  # IPython falls back to _repr_html_ and __repr__
        return {"text/markdown": self.to_myst(), "text/plain": repr(self)}

    def __repr__(self):
        text = self.frame.to_string(formatters=self._formatters(), index=self.index,
                                    na_rep="")
        return f"{self.caption}\n{text}"

    def _texts(self, values, places):
        """The cells of one column (or index level) as stripped strings."""
        import pandas as pd

        values = pd.Series(values)
        if places is not None and values.dtype.kind == "f":
            return [f"{v:.{places}f}" if v == v else "" for v in values]
        # (pandas writes a line break inside a value as the two characters \\n)
        text = values.to_string(index=False, header=False, na_rep="")
        return [cell.strip() for cell in text.split("\n")]

    def _columns(self):
        """(heading, cells) of each shown column: the index levels first, then the frame's."""
        frame, out = self.frame, []
        levels = frame.index.nlevels if self.index else 0
        for i in range(levels):
            # one number of digits applies to float index levels too; a dict to columns
            shown = self._texts(frame.index.get_level_values(i), self._places(None))
            if i < levels - 1:  # a repeated group label is shown once
                keys = [key[:i + 1] for key in frame.index]
                shown = ["" if r and keys[r] == keys[r - 1] else text
                         for r, text in enumerate(shown)]
            out.append((str(frame.index.names[i] or ""), shown))
        for key in frame.columns:
            heading = " ".join(map(str, key)) if isinstance(key, tuple) else str(key)
            out.append((heading, self._texts(frame[key], self._places(key))))
        return out

    def to_myst(self):
        """The table as a MyST ``{table}`` directive around a Markdown table.

        The directive's title is the caption and its ``:name:`` the table's name; a
        column of numbers (every cell empty or starting with a digit, a point or a minus
        sign) is aligned right, any other column left; a ``|`` in a cell is escaped.
        """
        if self.name is None:
            raise ValueError("a MyST table needs a name: pass name= to result_table")

        def row(cells):
            return "| " + " | ".join(c.strip().replace("|", r"\|") for c in cells) + " |"

        def numeric(cells):
            return all(not c or re.match(r"-?[0-9.]", c) for c in cells)

        columns = self._columns()
        if any("\n" in heading for heading, _ in columns):
            raise ValueError("a column heading holds a line break, which a Markdown table "
                             "cannot show")
        body = [row([heading for heading, _ in columns]),
                "|" + "|".join("---:" if numeric(cells) else "---"
                               for _, cells in columns) + "|"]
        body += [row(cells) for cells in zip(*(cells for _, cells in columns))]
        # the fence is longer than any run of backticks inside the table
        longest = max((len(run) for run in re.findall(r"`+", "\n".join(body))), default=0)
        fence = "`" * max(3, longest + 1)
        return "\n".join([f"{fence}{{table}} {self.caption}", f":name: {self.name}", "",
                          *body, fence])


def _new_frame():
    import pandas as pd

    return pd.DataFrame({"value": [1.0]})


_FRAME = InstanceOf(_pandas_frame_type(), "a pandas DataFrame", factory=_new_frame)
_LABEL = Matches(r"[A-Za-z0-9_-]+", "a label of letters, digits, '-' and '_' (e.g. "
                 "'ch05-tab-errors')", example="ch05-tab-errors")


@validate_params({
    "frame": [_FRAME],
    "caption": [_TEXT],
    "digits": [Interval(Integral, 0, 12), InstanceOf(dict, "a dict {column: decimals}",
                                                     example={}), None],
    "index": ["boolean"],
    "name": [_LABEL, None],
})
def result_table(frame, caption, *, digits=None, index=True, name=None):
    """Show ``frame`` as a table with a caption and a fixed number of decimals.

    Use it for every table of results a chapter shows, instead of printing padded
    columns, and give it a ``name``: the table then displays as a MyST ``{table}``
    directive (the ``text/markdown`` output of the cell, beside the aligned text as
    ``text/plain``), which the book parses as MyST (the notebook's metadata sets
    ``"mystnb": {"render_markdown_format": "myst"}``), so that the HTML book and the PDF
    both get a real table, numbered in the chapter ("Table 5.2") under its caption, that
    the role ``{numref}`` refers to by its name.  Without a name it displays as an HTML table with its
    caption, unnumbered.  A terminal shows the caption and the aligned text.  Print only
    the decimals the computation guarantees.

    Parameters
    ----------
    frame : pandas.DataFrame
        The values; its column names are the headings and, with ``index=True``, its index
        labels the rows.
    caption : str
        What the table shows (a sentence, shown above it); math as MyST math
        (``$\\eta$``). With a ``name`` it is one line.
    digits : int in [0, 12] or dict, optional
        Decimals of the float columns: one number for all, or ``{column: decimals}``
        (columns not named keep pandas' default). Integer and text columns are shown as
        they are. In a named table one number also sets the decimals of a float index.
    index : bool, default=True
        Show the index as the first column (the levels of a MultiIndex as as many
        columns, a repeated group label shown once).
    name : str, optional
        The table's label for ``{numref}``: letters, digits, '-' and '_', prefixed by the
        chapter (``"ch05-tab-errors"``). With it the table is a numbered MyST table.

    Returns
    -------
    table : ResultTable
        Displays itself as the table; ``table.frame`` is ``frame``, ``table.to_myst()``
        the MyST directive when it has a name.

    Notes
    -----
    Why a MyST table rather than a LaTeX output or a glued table: CONTRIBUTING.md,
    "Figures, tables and equations".

    Examples
    --------
    >>> import pandas as pd
    >>> from lecturelib import plotting
    >>> frame = pd.DataFrame({"m": [10, 100],
    ...                       "error": [0.12345, 0.01234]})
    >>> table = plotting.result_table(frame, "Error by sample size.",
    ...                               digits=3, index=False)
    >>> print(repr(table))
    Error by sample size.
       m error
      10 0.123
     100 0.012

    With a name, the book shows it as Table N.k:

    >>> named = plotting.result_table(frame, "Error by sample size $m$.",
    ...                               digits=3, index=False,
    ...                               name="ch07-tab-error")
    >>> print(named.to_myst())
    ```{table} Error by sample size $m$.
    :name: ch07-tab-error
    <BLANKLINE>
    | m | error |
    |---:|---:|
    | 10 | 0.123 |
    | 100 | 0.012 |
    ```
    >>> sorted(named._repr_mimebundle_())
    ['text/markdown', 'text/plain']
    """
    if not caption.strip():
        raise ValueError("caption must say what the table shows, got an empty string")
    if name is not None and "\n" in caption:
        raise ValueError("caption must be one line to title a numbered (named) table, "
                         "got a line break")
    if isinstance(digits, dict):
        unknown = [c for c in digits if c not in frame.columns]
        if unknown:
            raise ValueError(f"digits names columns that frame does not have: "
                             f"{[str(c)[:40] for c in unknown[:5]]}")
        bad = [c for c, v in digits.items() if not (isinstance(v, Integral) and 0 <= v <= 12)]
        if bad:
            raise ValueError(f"digits must give each column an int in [0, 12] decimals, "
                             f"got {[str(c)[:40] for c in bad[:5]]} with other values")
    return ResultTable(frame, caption, digits, index, name)


@validate_params({"values": ["array-like"], "digits": [Interval(Integral, 0, 12)]})
def mean_sd(values, digits):
    """A table cell "mean (sd)" of repeated results, both rounded to ``digits`` decimals.

    The standard deviation is that of the values themselves (``numpy.std``, dividing by
    their number): it says how much the results vary from split to split, not how well
    the mean is known.

    Parameters
    ----------
    values : array-like of shape (n,)
        The results, e.g. one score per random split; finite, at least one.
    digits : int in [0, 12]
        Decimals of both numbers.

    Returns
    -------
    cell : str

    Examples
    --------
    >>> from lecturelib import plotting
    >>> plotting.mean_sd([0.91, 0.88, 0.94], 3)
    '0.910 (0.024)'
    """
    values = as_float_array(values, "values", ndim=1)
    return f"{np.mean(values):.{digits}f} ({np.std(values):.{digits}f})"
