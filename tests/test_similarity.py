"""Similarity screening: a planted near-copy (renamed variables, reordered functions) in a
class of 30 is the top pair, two honest solutions written differently are not above it,
the released exercise's code is not evidence, and the command changes no grade."""

from __future__ import annotations

import hashlib
import random
import sqlite3
import statistics

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import question, toy_solution
from lecturelib.grading.cli import main
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.course.similarity import fingerprint, rarity_weights, screen, screen_texts

GIVEN = ("import numpy as np\nrng = np.random.default_rng(0)\nX = rng.normal(size=(50, 3))\n"
         "y = (X[:, 0] > 0).astype(int)\n")
USE = ("M = class_means(X, y)\nS = pooled_cov(X, y, M)\nw, b = boundary(M, S)\n"
       "acc = (predict(X, w, b) == y).mean()\nprint(acc)\n")
# Each function of the exercise, line by line, with the ways students write each line.
FUNCTIONS = [
    ("def class_means(X, y):", [
        ["    X0 = X[y == 0]", "    X0 = X[np.flatnonzero(y == 0)]", "    X0 = X[y < 1]"],
        ["    X1 = X[y == 1]", "    X1 = X[np.flatnonzero(y)]", "    X1 = X[y > 0]"],
        ["    m0 = X0.mean(axis=0)", "    m0 = np.mean(X0, axis=0)", "    m0 = X0.sum(0) / len(X0)"],
        ["    m1 = X1.mean(axis=0)", "    m1 = np.mean(X1, axis=0)", "    m1 = X1.sum(0) / X1.shape[0]"],
        ["    return np.vstack([m0, m1])", "    return np.array([m0, m1])", "    return np.stack((m0, m1))"]]),
    ("def pooled_cov(X, y, M):", [
        ["    R = X - M[y]", "    R = X - np.take(M, y, axis=0)", "    R = np.asarray(X) - M[y, :]"],
        ["    n, d = X.shape", "    n = len(X)", "    n = X.shape[0]"],
        ["    S = R.T @ R", "    S = np.dot(R.T, R)", "    S = np.einsum('ni,nj->ij', R, R)"],
        ["    return S / (n - 2)", "    return S / float(n - 2)", "    return np.divide(S, n - 2)"]]),
    ("def boundary(M, S):", [
        ["    diff = M[1] - M[0]", "    diff = np.subtract(M[1], M[0])", "    diff = -(M[0] - M[1])"],
        ["    w = np.linalg.solve(S, diff)", "    w = np.linalg.inv(S) @ diff",
         "    w = np.linalg.lstsq(S, diff, rcond=None)[0]"],
        ["    mid = (M[0] + M[1]) / 2", "    mid = 0.5 * (M[0] + M[1])", "    mid = M.mean(axis=0)"],
        ["    b = -mid @ w", "    b = -np.dot(mid, w)", "    b = -float(w @ mid)"],
        ["    return w, b", "    return (w, b)", "    return w, float(b)"]]),
    ("def predict(X, w, b):", [
        ["    scores = X @ w + b", "    scores = np.dot(X, w) + b", "    scores = X.dot(w) + b"],
        ["    labels = scores > 0", "    labels = np.greater(scores, 0)", "    labels = 0 < scores"],
        ["    return labels.astype(int)", "    return np.where(labels, 1, 0)", "    return labels * 1"]]),
]
EXTRA = ["    assert X.ndim == 2", "    X = np.asarray(X, dtype=float)", "    print(X.shape)",
         "    y = np.asarray(y)"]
EXERCISE = GIVEN + "".join(f"{head}\n    # YOUR CODE HERE\n    raise NotImplementedError\n"
                           for head, _ in FUNCTIONS) + USE
# Two honest full solutions written differently: loops against linear algebra.
HONEST_LOOPS = GIVEN + '''def class_means(X, y):
    out = np.zeros((2, X.shape[1]))
    for c in range(2):
        count = 0
        for i in range(len(X)):
            if y[i] == c:
                out[c] += X[i]
                count += 1
        out[c] /= count
    return out
def pooled_cov(X, y, M):
    S = np.zeros((X.shape[1], X.shape[1]))
    for i in range(len(X)):
        d = X[i] - M[y[i]]
        S += np.outer(d, d)
    return S / (len(X) - 2)
def boundary(M, S):
    Sinv = np.linalg.inv(S)
    w = Sinv @ (M[1] - M[0])
    b = 0.5 * (M[0] @ Sinv @ M[0] - M[1] @ Sinv @ M[1])
    return w, b
def predict(X, w, b):
    out = []
    for x in X:
        out.append(1 if x @ w + b > 0 else 0)
    return np.array(out)
''' + USE
HONEST_ALGEBRA = GIVEN + '''def class_means(X, y):
    onehot = np.eye(2)[y]
    return (onehot.T @ X) / onehot.sum(axis=0)[:, None]
def pooled_cov(X, y, M):
    centred = X - M[y]
    return np.cov(centred.T, bias=True) * len(X) / (len(X) - 2)
def boundary(M, S):
    L = np.linalg.cholesky(S)
    w = np.linalg.solve(L.T, np.linalg.solve(L, M[1] - M[0]))
    return w, -w @ (M[0] + M[1]) / 2
def predict(X, w, b):
    return np.heaviside(X @ w + b, 0).astype(int)
''' + USE


def synthetic_student(rnd: random.Random) -> str:
    parts = [GIVEN]
    for head, lines in FUNCTIONS:
        body = [rnd.choice(ways) for ways in lines]
        if rnd.random() < 0.5:
            body.insert(0, rnd.choice(EXTRA))
        parts.append(head + "\n" + "\n".join(body) + "\n")
    return "\n".join(parts) + USE


def near_copy(code: str) -> str:
    """What a student who copied does: other names, functions in another order."""
    for old, new in [("diff", "delta"), ("mid", "centre"), ("scores", "margin"), ("X0", "first"),
                     ("X1", "second"), ("R ", "resid ")]:
        code = code.replace(old, new)
    blocks = code.split("\ndef ")
    blocks = [blocks[0]] + ["def " + b for b in blocks[1:]]
    blocks[1], blocks[3] = blocks[3], blocks[1]
    return "\n".join(blocks)


@pytest.fixture(scope="module")
def klass():
    """30 submissions: 26 synthetic students, the near-copy of one, two honest solutions."""
    rnd = random.Random(3)
    codes = {f"s{i:02d}": synthetic_student(rnd) for i in range(27)}
    codes["copier"] = near_copy(codes["s05"])
    codes["honest-loops"], codes["honest-algebra"] = HONEST_LOOPS, HONEST_ALGEBRA
    assert len(codes) == 30
    return codes


@pytest.fixture(scope="module")
def screened(klass):
    return screen(klass, set(fingerprint(EXERCISE).hashes))


def test_planted_copy_on_top(screened, klass):
    top = screened.pairs[0]
    assert {top.a, top.b} == {"copier", "s05"} and top.flagged
    assert klass["copier"] != klass["s05"]
    assert [p for p in screened.pairs if p.flagged] == [top]
    honest = next(p for p in screened.pairs if {p.a, p.b} == {"honest-algebra", "honest-loops"})
    assert honest.score < top.score and not honest.flagged
    assert len(screened.pairs) == 30 * 29 // 2 and not screened.skipped


def test_exercise_code_is_not_evidence(klass, screened):
    """What every submission has weighs nothing; a submission that is only the exercise has
    nothing of its own to compare."""
    sets = {s: set(fp.hashes) for s, fp in screen(klass).fingerprints.items()}
    weights = rarity_weights(sets)
    everyone = set.intersection(*sets.values())
    assert everyone and all(weights[h] == 0 for h in everyone)
    assert all(w > 0 for h, w in weights.items() if h not in everyone)
    only = screen({"a": EXERCISE, "b": EXERCISE + "\n", **klass}, set(fingerprint(EXERCISE).hashes))
    assert {"a: too little code of its own to compare",
            "b: too little code of its own to compare"} <= set(only.skipped)


SOLUTION = GIVEN + "".join(f"{head}\n" + "\n".join(ways[0] for ways in lines) + "\n"
                           for head, lines in FUNCTIONS) + USE
# An unusual mistake: the class means computed with a hand-rolled, off-by-one loop.
ODD = """def class_means(X, y):
    total0 = np.zeros(X.shape[1]); total1 = np.zeros(X.shape[1]); k0 = 1; k1 = 1
    for row, label in zip(X, y):
        if label == 0:
            total0 = total0 + row; k0 = k0 + 1
        else:
            total1 = total1 + row; k1 = k1 + 1
    return np.vstack([total0 / k0, total1 / k1])
"""


def test_short_correct_answers_coincide_a_shared_unusual_mistake_does_not():
    """A class of 28 where most write the solution's own lines (correct short answers
    coincide) and two share an odd mistake under other names: that pair is the top one and
    the only one flagged, the solution's code counting as given."""
    rnd = random.Random(11)
    codes = {}
    for i in range(26):
        lines = [[ways[0] if rnd.random() < 0.8 else rnd.choice(ways) for ways in body]
                 for _, body in FUNCTIONS]
        codes[f"s{i:02d}"] = GIVEN + "".join(f"{head}\n" + "\n".join(ls) + "\n"
                                             for (head, _), ls in zip(FUNCTIONS, lines)) + USE
    mistaken = SOLUTION.replace(SOLUTION[SOLUTION.index("def class_means"):SOLUTION.index("def pooled_cov")], ODD)
    codes["odd-a"] = mistaken
    codes["odd-b"] = (mistaken.replace("total0", "acc_zero").replace("total1", "acc_one")
                      .replace("k0", "n_zero").replace("k1", "n_one").replace("row", "x_i"))
    given = set(fingerprint(EXERCISE).hashes) | set(fingerprint(SOLUTION).hashes)
    result = screen(codes, given)
    top = result.pairs[0]
    assert {top.a, top.b} == {"odd-a", "odd-b"} and top.flagged, result.pairs[:3]
    assert [p for p in result.pairs if p.flagged] == [top]


def test_written_answers_are_screened_as_text():
    model = "The log posterior is concave, so its stationary point is the maximum."
    base = ("Setting the derivative of the log posterior to zero gives the stationary point "
            "and the second derivative is negative there so it is the maximum of the posterior")
    rnd = random.Random(5)
    words = base.split()
    texts = {}
    for i in range(20):
        mine = words[:]
        for _ in range(6):
            j = rnd.randrange(len(mine))
            mine[j] = rnd.choice(["hence", "thus", "we", "find", "clearly", "note", "then"])
        texts[f"s{i:02d}"] = " ".join(mine)
    odd = ("Because the Beta prior is conjugate I simply match the two hyperparameters to the "
           "counts by eye and declare that the mode sits at the sample mean shifted by one half")
    texts["x"], texts["y"] = odd, odd.replace("I simply", "we simply").upper()
    result = screen_texts(texts, model)
    assert {result.pairs[0].a, result.pairs[0].b} == {"x", "y"} and result.pairs[0].flagged
    assert [p for p in result.pairs if p.flagged] == [result.pairs[0]]
    assert "s00: too little text of its own to compare" not in result.skipped
    assert screen_texts({"a": model, "b": model}, model).skipped == [
        "a: too little text of its own to compare", "b: too little text of its own to compare"]


def test_command_report_and_no_grade_changed(tmp_path, capsys):
    """The command reads the graded files back, writes an escaped offline report, and
    leaves the gradebook as it was."""
    solution = toy_solution()
    solution.cells.append(question("q9", "# BEGIN SOLUTION\nextra = 1\n# END SOLUTION", 1, ["extra"]))
    (tmp_path / "solutions").mkdir()
    nbformat.write(solution, tmp_path / "solutions" / "toy.ipynb")
    subs = tmp_path / "subs"
    subs.mkdir()
    rnd = random.Random(5)
    codes = {f"s{i}": synthetic_student(rnd) for i in range(6)}
    codes["s1"] += "\nprint('</pre><script>alert(1)</script>')\n"
    codes["copier"] = near_copy(codes["s1"])
    with Gradebook(tmp_path / "g.sqlite") as book:
        for student, code in codes.items():
            nb = toy_solution()
            nb.cells.append(new_code_cell(code))
            path = subs / f"{student}.ipynb"
            nbformat.write(nb, path)
            report = GradeReport(str(path), "toy", [QuestionResult("q1", 1, 2, "ok")], [])
            book.record(student, hashlib.sha256(path.read_bytes()).hexdigest(), report)
    (subs / "s3.ipynb").write_text((subs / "s3.ipynb").read_text() + " ")  # changed since graded
    before = sqlite3.connect(tmp_path / "g.sqlite").execute("SELECT * FROM results").fetchall()
    status = main(["gradebook", "similarity", "--assignment", "toy", "--gradebook",
                   str(tmp_path / "g.sqlite"), "--solutions", str(tmp_path / "solutions")])
    out = capsys.readouterr().out
    assert status == 0 and out.splitlines()[0].endswith("copier  s1  flagged")
    page = (tmp_path / "reports" / "toy-similarity.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "s3: the file changed since it was graded" in page and "<mark>" in page
    after = sqlite3.connect(tmp_path / "g.sqlite").execute("SELECT * FROM results").fetchall()
    assert after == before


def test_a_copy_padded_with_no_ops_is_still_flagged(klass):
    """Issue 49, item 5: a ``pass`` (or ``...``) after every line broke every run of K
    tokens, so the padded copy shared nothing with its source."""
    padded = "\n".join(line + "\n" + " " * (len(line) - len(line.lstrip())) + "pass"
                       if line.strip() and not line.rstrip().endswith(":") else line
                       for line in near_copy(klass["s05"]).splitlines())
    codes = {**{s: c for s, c in klass.items() if s != "copier"}, "padder": padded}
    result = screen(codes, set(fingerprint(EXERCISE).hashes))
    assert {result.pairs[0].a, result.pairs[0].b} == {"padder", "s05"} and result.pairs[0].flagged


def test_written_copies_in_disguise_are_flagged():
    """Issue 49, item 5: invisible joiners inside words, and Cyrillic or Greek letters that
    look like Latin ones, hid a written copy."""
    rnd = random.Random(7)
    words = ("Setting the derivative of the log posterior to zero gives the stationary point "
             "and the second derivative is negative there so it is the maximum").split()
    texts = {}
    for i in range(20):
        mine = words[:]
        for _ in range(6):
            mine[rnd.randrange(len(mine))] = rnd.choice(["hence", "thus", "we", "find", "clearly", "then"])
        texts[f"s{i:02d}"] = " ".join(mine)
    odd = ("Because the Beta prior is conjugate I simply match the two hyperparameters to the "
           "counts by eye and declare that the mode sits at the sample mean shifted by one half")
    joined = " ".join(w[:2] + "\u200d" + w[2:] if len(w) > 3 else w for w in odd.split())
    lookalike = odd.translate(str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u03bf", "p": "\u0440"}))
    for name, disguised in (("joiners", joined), ("lookalike", lookalike), ("fullwidth", "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in odd))):
        result = screen_texts({**texts, "x": odd, "y": disguised})
        assert {result.pairs[0].a, result.pairs[0].b} == {"x", "y"} and result.pairs[0].flagged, name
