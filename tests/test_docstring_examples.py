"""Docstring examples: every public name of lecturelib has an ``Examples`` section, and it runs.

The examples are the ones the book's reference appendix ("The lecturelib reference") shows;
this file runs them as doctests, module by module, with numpy's default print options, so
what a reader copies from the reference gives what the reference prints.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import numpy as np
import pytest

# The modules of the reference (DESIGN.md), ``grading`` apart: its entry points run a
# notebook in a sandbox, which the grader's own tests exercise.
MODULES = ["bayes", "maxent", "em", "kernels", "svm", "spectral", "clustering", "pac", "vc",
           "subspace", "hpca", "metric", "datasets", "checks", "plotting"]

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
NUMPY_DEFAULTS = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
                      nanstr="nan", infstr="inf", sign="-", floatmode="maxprec", legacy=False)


def public_names(module) -> list[str]:
    """``__all__``, or else the functions and classes defined in the module without a leading ``_``."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items()
                 if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                 and obj.__module__ == module.__name__]
    return [n for n in names if inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n))]


def examples_section(doc: str) -> str:
    """The text of the numpydoc ``Examples`` section of ``doc`` ("" if there is none)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
            return "\n".join(lines[i + 2:])
    return ""


PUBLIC = [(m, n) for m in MODULES for n in public_names(importlib.import_module(f"lecturelib.{m}"))]


@pytest.mark.parametrize("module, name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_public_name_has_an_examples_section(module, name):
    obj = getattr(importlib.import_module(f"lecturelib.{module}"), name)
    section = examples_section(obj.__doc__)
    assert ">>> " in section, f"lecturelib.{module}.{name}: the docstring needs an 'Examples' section with doctests"


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"lecturelib.{module}")
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(mod) if t.examples]
    assert tests, f"lecturelib.{module} has no doctests"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    with np.printoptions(**NUMPY_DEFAULTS):
        for test in tests:
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    names = {t.name.split(".")[2] for t in tests if t.name.count(".") >= 2}
    missing = [n for n in public_names(mod) if n not in names]
    assert not missing, f"lecturelib.{module}: no doctest ran for {missing}"


# What a code block of the reference shows without scrolling at 1280 px (tests/test_reading.py
# measures the built pages in Chromium; this finds a long example line before the book is built).
SHOWN_CHARACTERS = 73


def doctest_block_lines(section: str) -> list[str]:
    """The lines of the doctest blocks of an Examples section (prompts and their output),
    which the reference shows as code; the prose between them wraps."""
    out, inside = [], False
    for line in (raw.strip() for raw in section.splitlines()):
        inside = line.startswith(">>>") or (inside and line != "")
        if inside:
            out.append(line)
    return out


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_fit_the_reference_column(module):
    mod = importlib.import_module(f"lecturelib.{module}")
    long = [f"{t.name}: {line}" for t in doctest.DocTestFinder(exclude_empty=True).find(mod)
            for line in doctest_block_lines(examples_section(t.docstring))
            if len(line) > SHOWN_CHARACTERS]
    assert not long, f"example lines wider than {SHOWN_CHARACTERS} characters: {long}"
