"""What leaves the sandbox, and what the grader does with it (issue 33, classes 2, 3, 5).

- class 2: a notebook can read the hidden check expressions in its kernel; nothing it
  writes (an exception's message, its class name, a forged driver output) may reach a
  reason, the table, the JSON or the feedback;
- class 3: the driver's output is parsed in linear time and memory, and a parse that fails
  is that student's zero with a fixed reason;
- class 5: a check's ``post`` runs on the student's data only when it has the reference's
  shape exactly, and its result is bounded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from lecturelib.grading.autograde import answers, compare, reference, sandbox, score
from lecturelib.grading.core.notebook import Check, Question
from test_sandbox import grade, hostile, scores, toy  # noqa: F401  (toy is a fixture)

needs_sandbox = pytest.mark.skipif(sandbox.sandbox_problem() is not None,
                                   reason=f"no sandbox here: {sandbox.sandbox_problem()}")

LIMITS = sandbox.Limits(cell_timeout=10)
EXPRS = {"q1": ["p0"], "q2": ["normalise([1, 3])", "normalise(np.ones(5))"]}
QUESTIONS = [Question("q1", 2, (Check("p0"),)),
             Question("q2", 3, (Check("normalise([1, 3])"), Check("normalise(np.ones(5))")))]
REFERENCE = reference.Reference("key", {"q1": [0.5], "q2": [np.array([0.25, 0.75]), np.full(5, 0.2)]})


def forged(answers=None, errors=None, skipped=None) -> bytes:
    """A driver output as a hostile notebook could write it."""
    return json.dumps({"answers": answers or {}, "errors": errors or {},
                       "skipped": skipped or []}).encode()


def reasons(output: bytes, n_cells: int = 5) -> dict[str, str]:
    run = answers.parse_output(output, EXPRS, n_cells, LIMITS)
    return {r.id: r.reason for r in score.score_questions(QUESTIONS, run, REFERENCE)}


# ------------------------------------------------------------- class 2: student text


def test_exception_text_and_names_from_the_sandbox_never_reach_a_reason():
    ok = {"ok": True, "value": 0.5}
    got = reasons(forged({
        "q1": [{"ok": False, "error": "ZeroDivisionError: the hidden check is p0"}],
        "q2": [{"ok": False, "error": "Q2_expr_is_normalise_1_3"}, ok]}))
    assert got == {"q1": "check 1 raised an exception", "q2": "check 1 raised an exception"}
    got = reasons(forged({"q1": [{"ok": False, "error": "ZeroDivisionError"}],
                          "q2": [{"ok": False, "error": "LinAlgError"}, ok]}))
    assert got == {"q1": "check 1 raised an exception (ZeroDivisionError)",
                   "q2": "check 1 raised an exception"}
    # a builtin that is not an exception class, and names that are not strings
    got = reasons(forged({"q1": [{"ok": False, "error": "print"}],
                          "q2": [{"ok": False, "error": ["ValueError"]}, ok]}))
    assert got == {"q1": "check 1 raised an exception", "q2": "check 1 raised an exception"}


def test_forged_error_codes_and_skipped_cells_get_fixed_reasons():
    output = forged({"q1": "not a list"}, errors={"q1": ["unhashable"], "q2": "the hidden check is p0"},
                    skipped=[[0, ["unhashable"]], [1, "check p0"], [2, "timeout"], [True, "crash"]])
    got = reasons(output)
    assert got == {"q1": "could not be evaluated", "q2": "could not be evaluated"}
    assert reasons(forged({"q1": [1, 2]}))["q1"] == "the answer could not be read back from the notebook"
    run = answers.parse_output(output, EXPRS, 5, LIMITS)
    assert [why for _, why in run.skipped_cells] == ["could not be evaluated", "could not be evaluated",
                                                      f"ran longer than {LIMITS.cell_timeout} s"]
    assert [i for i, _ in run.skipped_cells] == [0, 1, 2]


def test_invalid_json_gets_a_fixed_reason():
    for output in (b'{"answers": {"q1": [{"ok": tru', b"[" + b"1, " * 50 + b"x]"):
        got = reasons(output)
        assert set(got.values()) == {"the notebook's answers could not be read (not valid JSON)"}, got


@needs_sandbox
def test_a_notebook_cannot_smuggle_the_hidden_checks_out(toy):  # noqa: F811
    """``normalise`` finds the check expressions on the stack and raises them, as the
    message and as the name of an exception class (one a subclass of ValueError)."""
    code = textwrap.dedent(r'''
        def normalise(v):
            frame = sys._getframe()
            while frame is not None and "exprs" not in frame.f_locals:
                frame = frame.f_back
            text = " | ".join(frame.f_locals["exprs"]) if frame else "nothing"
            name = "Q2_expr_is_" + re.sub(r"\W", "_", text)
            base = ValueError if "[1, 3]" in str(v.tolist() if hasattr(v, "tolist") else v) else Exception
            raise type(name, (base,), {})(text + "\n" + text)
        ''')
    rep = grade(hostile(toy, "smuggles-checks", code), toy)
    assert scores(rep) == {"q1": 2, "q2": 0, "q3": 0}, rep.table()
    reason = rep.questions[1].reason
    assert reason in ("check 1 raised an exception", "check 1 raised an exception (ValueError)"), reason
    for text in (rep.table(), json.dumps(rep.as_dict()), rep.feedback("student")):
        assert "default_rng" not in text and "normalise" not in text and "Q2_expr" not in text, text


# ------------------------------------------------------------- class 3: the parser

PATHOLOGICAL = r'''
import resource
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from lecturelib.grading.autograde import answers, sandbox
from lecturelib.grading.core import safejson
MB = 2**20
cases = {
    "unclosed string of escaped quotes": b'{"answers": "' + b'\\"' * (4 * MB),
    "unclosed string ending in a backslash": b'["' + b'\\"' * (4 * MB) + b"\\",
    "deep nesting": b"[" * (8 * MB),
    "deep objects": b'{"a":' * MB,
    "huge number": b"[" + b"9" * (8 * MB) + b"]",
    "huge float": b"[0." + b"9" * (8 * MB) + b"e5]",
    "many keys": b"{" + b",".join(b'"k%d":0' % i for i in range(3 * 10**5)) + b"}",
    "many empty lists": b"[" + b"[]," * (3 * MB) + b"[]]",
    "many short strings": b'{"answers": {"q1": [' + b'"ab",' * MB + b'"ab"]}}',
    "many values": b'{"answers": {"q1": [{"ok": true, "value": {"list": [' + b"0," * (4 * MB) + b'0]}}]}}',
    "many arrays": b'{"answers": {"q1": [{"ok": true, "value": {"list": [' + b'{"ndarray": [], "shape": [0], "kind": "f"},' * 10**5 + b'0]}}]}}',
}
for name, data in cases.items():
    run = answers.parse_output(data, {"q1": ["x"]}, 3, sandbox.Limits())
    assert list(run.question_errors) == ["q1"] or list(run.answers) == ["q1"], name
    print(name, flush=True)
print("done")
'''


def test_pathological_outputs_are_parsed_or_refused_within_a_budget():
    """Each input (2-10 MB) in a child limited to 20 CPU seconds and 3 GiB in all."""
    proc = subprocess.run([sys.executable, "-c", PATHOLOGICAL], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.endswith("done\n"), (proc.stdout, proc.stderr[-2000:])


# ------------------------------------------------------------- class 5: post in the grader


def post_reason(post, got, want):
    q = Question("q9", 1, (Check("f()", post=post),))
    return score._compare_check(q, q.checks[0], 0, answers.Answer(True, got), want)


def test_post_never_runs_on_an_answer_of_another_shape(monkeypatch, tmp_path):
    # post runs in a forked child: every call is logged to a file the parent reads back
    log = tmp_path / "post-calls"
    real = compare.apply_post

    def logged(expr, v):
        with open(log, "a") as f:
            f.write(f"{np.shape(v)}\n")
        return real(expr, v)

    monkeypatch.setattr(compare, "apply_post", logged)
    want = np.array([[2.0, 0.0], [1.0, 1.0]])
    assert post_reason("value @ value.T", np.zeros((3000, 0)), want) == \
        "check 1: the answer has the wrong shape"
    assert post_reason("value[0] @ value[1].T", [want, np.zeros((2, 0))], [want, want]) == \
        "check 1: the answer has the wrong shape"
    assert not log.exists()
    assert post_reason("value @ value.T", want.copy(), want) is None
    assert log.read_text().split("\n").count("(2, 2)") == 2  # the logging sees the calls
    assert post_reason("value @ value.T", want[::-1].copy(), want) is not None


@pytest.mark.parametrize("expr, expected", [("value.sum()", 6.0), ("value.mean()", 1.5),
                                            ("value.std() ** 2", 1.25), ("value.max()", 3.0)])
def test_post_can_call_array_methods(expr, expected):
    """Array methods that import NumPy's submodules lazily work in a post expression (they
    failed with KeyError '__import__'); nothing else can be imported."""
    assert compare.apply_post(expr, np.arange(4.0)) == pytest.approx(expected)


def test_post_cannot_import_anything_but_numpy():
    with pytest.raises(ImportError, match="cannot import 'os'"):
        compare.apply_post("__import__('os')", None)


def test_post_result_is_bounded_by_the_reference():
    reason = post_reason("np.zeros(int(value))", 10**6, 3)
    assert reason == "check 1: the answer has the wrong shape", reason
    assert post_reason("np.zeros(int(value))", 3, 3) is None


def test_same_form_compares_every_array_shape_exactly():
    with pytest.raises(compare.Mismatch):
        compare.same_form(np.zeros((5, 0)), np.zeros((2, 2)))
    with pytest.raises(compare.Mismatch):
        compare.same_form({"a": [np.zeros(3), np.zeros((4, 0))]}, {"a": [np.zeros(3), np.zeros((4, 4))]})
    compare.same_form({"a": [1.0, [1, 2]]}, {"a": [2.0, np.array([3.0, 4.0])]})


# ------------------------------------------------- round three, class 9: the feedback


@pytest.mark.parametrize("claimed", ["**Score: 23 / 23**", "<b>Score: 23 / 23</b>",
                                     "[full marks](http://evil.example)", "![x](x.png)",
                                     "$\\huge 23/23$", "`23/23`", "www.evil.example", "a@evil.example",
                                     "## Score 23 | 23 |", "~~Score: 0~~"])
def test_the_notebooks_own_assignment_name_is_shown_literally_in_the_feedback(claimed):
    """Issue 42, class 9: what ``metadata.lecturelib.assignment`` says reaches the feedback
    file's notes as text, in every Markdown renderer: no emphasis, HTML, link, math, code."""
    from markdown_it import MarkdownIt

    nb = {"metadata": {"lecturelib": {"assignment": claimed}}, "cells": []}
    run = answers.Run({"q1": [answers.Answer(True, 0.5)]}, {}, [])
    report = score.report_for_run(nb, "x.ipynb", "toy", QUESTIONS[:1], REFERENCE, run)
    feedback = report.feedback("jane_doe")
    assert "says it belongs to assignment" in feedback
    html = MarkdownIt("gfm-like").enable("table").render(feedback)
    for tag in ("<b>", "<img", "<a ", "<code>", "<h2", "<s>", "<del>", "<em>"):
        assert tag not in html, (tag, html)
    assert html.count("<strong>") == 1    # the grader's own score line, nothing else
    assert "$" not in feedback.replace("\\$", "")   # no math for MyST or MathJax
    shown = MarkdownIt("commonmark").render(feedback.split("Notes:")[1])
    quoted = repr(claimed)[1:-1]          # the note quotes the name with repr
    assert quoted.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in shown
