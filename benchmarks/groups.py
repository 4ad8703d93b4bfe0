"""How well answer groups hold what a TA would grade alike: ``python benchmarks/groups.py``.

A class written for this benchmark: three written questions of three exercise sets (set 1's
q7w, the MAP estimate of a coin's bias under a Beta prior; set 5's q7w, PCA's mean
reconstruction error; set 8's q8, the growth function of intervals), each answered in four
kinds that a rubric grades differently:

- ``complete``: every step of the solution's derivation;
- ``gap``: right, with one step missing (the maximum not checked; P^2 = P not justified;
  the runs not shown to be realised);
- ``wrong-argument``: a wrong argument that reaches the right final expression (the
  likelihood maximised, the prior dropped; the trace of a product taken as the product of
  traces; Sauer's bound used as an equality);
- ``wrong``: a wrong final expression (the posterior mean; the kept eigenvalues; the empty
  dichotomy forgotten).

Each kind is written in eight wordings (whole sentences, not synonyms swapped), and each
student's copy of a wording gets its own notation (``\\dfrac`` or ``\\frac``, ``\\left(``,
spacing, ``\\ln`` or ``\\log``, ``\\le`` or ``\\leq``, an equal form of a result), its own
delimiters (``$`` or ``$$``) and, for some, the answer written under the prompt.  Within a
kind every wording writes the same steps; one wording of each kind adds a harmless extra
line (a realistic student habit that keeps it apart: precision comes first).

Per question it reports the purity (the share of answers whose group holds only their
kind), the adjusted Rand index (scikit-learn) of groups against kinds, groups per answer,
the time to group 300 answers, and the actions per answer of a TA grading by groups two
ways (see :func:`actions`).  Results go to ``benchmarks/groups.json`` and the "Answer groups"
section of ``benchmarks/GRADING.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROMPT = "*Write your answer here.*"
KINDS = ("complete", "gap", "wrong-argument", "wrong")
SHARES = (0.4, 0.25, 0.15, 0.2)  # of the class, per kind

# Each question: per kind, a list of steps; a step is (sentences, formula or None).  The
# k-th wording of a kind takes sentence (k + step) % len(sentences) of every step, so that
# no two wordings say every step alike.  "extra" is the line the last wording adds.
MAP = {
    "steps": {
        "posterior": (["By Bayes' rule the posterior is the likelihood times the prior:",
                       "The posterior density is proportional to likelihood and prior, so",
                       "Multiplying the binomial likelihood by the Beta density gives",
                       "Up to the evidence, which does not depend on q, we have"],
                      r"p(q\mid D)\propto q^{\lambda}(1-q)^{m-\lambda}q^{a-1}(1-q)^{b-1}=q^{\lambda+a-1}(1-q)^{m-\lambda+b-1}"),
        "derivative": (["Setting the derivative of the log posterior to zero,",
                        "The log posterior is stationary where",
                        "Differentiating the logarithm and equating to zero:",
                        "Taking logs and differentiating in q gives the condition"],
                       r"\frac{\lambda+a-1}{q}-\frac{m-\lambda+b-1}{1-q}=0"),
        "solve": (["so the MAP estimate is", "which we solve for q:",
                   "and solving gives", "hence the mode of the posterior is"],
                  r"\hat q=\frac{\lambda+a-1}{m+a+b-2}"),
        "maximum": (["It is a maximum because for a, b > 1 the second derivative is negative:",
                     "The log posterior is concave when a and b exceed one, since",
                     "To check this is a maximum, note that with a, b > 1",
                     "The second derivative is negative, as both exponents are positive:"],
                    r"-\frac{\lambda+a-1}{q^2}-\frac{m-\lambda+b-1}{(1-q)^2}<0"),
        "uniform": (["With a = b = 1 the prior is uniform and the estimate becomes",
                     "For the uniform prior (a = b = 1) it reduces to the ML estimate",
                     "When a = b = 1 the prior is flat, so we recover",
                     "In the case a = b = 1 the prior density is constant and"],
                    r"\hat q=\frac{\lambda}{m}"),
        "likelihood": (["The prior only scales the likelihood, so we maximise the likelihood:",
                        "Ignoring the prior, which is a constant factor, we differentiate the likelihood:",
                        "The MAP estimate maximises the likelihood, whose log derivative is",
                        "Since the prior does not depend on the data, set the likelihood's derivative to zero:"],
                       r"\frac{\lambda}{q}-\frac{m-\lambda}{1-q}=0"),
        "ml": (["which gives the estimate", "so that", "hence", "and the estimate is"],
               r"\hat q=\frac{\lambda}{m}"),
        "mean": (["The estimate is the mean of the posterior Beta distribution,",
                  "Taking the expectation of the posterior gives",
                  "The Bayes estimate is the posterior mean:",
                  "We estimate q by the posterior's expected value:"],
                 r"\hat q=\frac{\lambda+a}{m+a+b}"),
        "mean-uniform": (["With a = b = 1 this is", "For the uniform prior it is",
                          "When a = b = 1 we get", "In the case a = b = 1 the estimate is"],
                         r"\hat q=\frac{\lambda+1}{m+2}"),
    },
    "kinds": {"complete": ["posterior", "derivative", "solve", "maximum", "uniform"],
              "gap": ["posterior", "derivative", "solve", "uniform"],
              "wrong-argument": ["likelihood", "ml", "uniform"],
              "wrong": ["posterior", "mean", "mean-uniform"]},
    "extra": r"\log p(q\mid D)=(\lambda+a-1)\log q+(m-\lambda+b-1)\log(1-q)+C",
    "equal_forms": {r"\frac{\lambda+a-1}{m+a+b-2}": r"\frac{1-a-\lambda}{2-a-b-m}",
                    r"\frac{\lambda+a}{m+a+b}": r"\frac{a+\lambda}{b+a+m}"},
}
PCA = {
    "steps": {
        "projector": (["Let P be the projector onto the span of U. It is symmetric and idempotent because U has orthonormal columns:",
                       "Write P for the orthogonal projection onto the columns of U; since the columns are orthonormal,",
                       "The matrix P is symmetric, and it is idempotent as",
                       "Because U^T U is the identity, the projection matrix satisfies"],
                      r"P=UU^\top,\quad U^\top U=I,\quad P^2=P"),
        "trace": (["Writing the squared Frobenius norm as a trace and using the cyclic property,",
                   "With the Frobenius norm as the trace of B^T B and cycling the trace,",
                   "Expanding the norm as a trace and cycling the factors gives",
                   "The squared error is a trace, which we cycle:"],
                  r"\|X_c-X_cP\|_F^2=\operatorname{tr}(X_c^\top X_c)-\operatorname{tr}(X_c^\top X_c UU^\top)"),
        "divide": (["Dividing by m and cycling once more,", "After dividing by the number of samples,",
                    "Divide by m; the cyclic property again gives", "Per sample, the second term is"],
                   r"\operatorname{tr}(\Sigma UU^\top)=\operatorname{tr}(U^\top\Sigma U)"),
        "eigen": (["For the leading eigenvectors the middle matrix is diagonal,",
                   "If U holds the top k eigenvectors of the covariance, then",
                   "Choosing the columns of U as the leading eigenvectors makes",
                   "With eigenvectors for the k largest eigenvalues,"],
                  r"U^\top\Sigma U=\operatorname{diag}(\lambda_1,\dots,\lambda_k)"),
        "tail": (["and the trace of the covariance is the sum of all eigenvalues, so the mean residual is",
                  "while the total variance is the sum of all n eigenvalues; what remains is",
                  "and subtracting from the trace of the covariance leaves",
                  "so the mean reconstruction error is the sum of the discarded eigenvalues,"],
                 r"\lambda_{k+1}+\dots+\lambda_n"),
        "product": (["The error is the total variance minus the variance kept, and the trace of a product is the product of the traces:",
                     "The trace of the product splits into the product of traces, so",
                     "Splitting the trace of the product into two traces,",
                     "Using that the trace of a product is the product of the traces,"],
                    r"\operatorname{tr}(\Sigma UU^\top)=\operatorname{tr}(\Sigma)\operatorname{tr}(UU^\top)"),
        "head": (["and the variance kept is the sum of the leading eigenvalues, so the mean residual is",
                  "the error is the total variance minus the top eigenvalues, so",
                  "subtracting the kept eigenvalues from the trace gives",
                  "so the mean reconstruction error is"],
                 r"\lambda_1+\dots+\lambda_k"),
    },
    "kinds": {"complete": ["projector", "trace", "divide", "eigen", "tail"],
              "gap": ["trace", "divide", "eigen", "tail"],
              "wrong-argument": ["product", "eigen", "tail"],
              "wrong": ["projector", "trace", "divide", "head"]},
    "extra": r"(I-P)^2=I-P",
    "equal_forms": {},
}
INTERVALS = {
    "steps": {
        "runs": (["Sort the points. The points inside an interval are consecutive, because an interval is convex:",
                  "Order the points increasingly; an interval is convex, so the points it contains form a run",
                  "After sorting, any two points inside an interval have every point between them inside too:",
                  "With the points sorted, convexity of an interval means the labelled points are consecutive,"],
                 r"x_1<x_2<\dots<x_m"),
        "realised": (["Every run is realised, the run from the i-th to the j-th point by",
                      "Conversely each run is the trace of an interval, namely",
                      "Each such run is cut out by the closed interval",
                      "All runs occur: take the interval"],
                     r"[x_i,x_j]"),
        "empty": (["and the empty set by an interval beyond the last point, so the count is",
                   "together with the empty dichotomy, which gives",
                   "Adding the empty set, realised by an empty interval, we count",
                   "with the empty labelling as well, so the number of dichotomies is"],
                  r"1+m+\binom{m}{2}"),
        "phi": (["This is the sum of the first three binomial coefficients,",
                 "and this equals Sauer's function for VC dimension 2,",
                 "which is exactly", "so the growth function meets Sauer's bound with equality,"],
                r"\Phi_2(m)=\sum_{i=0}^{2}\binom{m}{i}"),
        "sauer": (["The VC dimension of intervals is 2, so Sauer's lemma gives the growth function:",
                   "Intervals have VC dimension two and therefore, by Sauer,",
                   "Since the VC dimension is 2, the bound of Sauer tells us",
                   "By Sauer's lemma with d = 2 the growth function is"],
                  r"\Pi_C(m)=\Phi_2(m)"),
        "forgot": (["counting the runs of one point and of several points gives",
                    "so the dichotomies are the m single points and the pairs of end points:",
                    "there are m runs of length one and one run for each pair, in all",
                    "which makes the number of dichotomies"],
                   r"m+\binom{m}{2}"),
    },
    "kinds": {"complete": ["runs", "realised", "empty", "phi"],
              "gap": ["runs", "empty", "phi"],
              "wrong-argument": ["sauer", "empty", "phi"],
              "wrong": ["runs", "realised", "forgot"]},
    "extra": r"\binom{m}{2}=\frac{m(m-1)}{2}",
    "equal_forms": {r"1+m+\binom{m}{2}": r"\binom{m}{2}+m+1"},
}
QUESTIONS = {"01-bayes q7w": MAP, "05-spectral q7w": PCA, "08-vc q8": INTERVALS}
WORDINGS = 8


def notate(formula: str, rng: np.random.Generator, equal_forms: dict) -> str:
    """One student's notation of ``formula``: the same mathematics, written their way."""
    for plain, other in equal_forms.items():
        if plain in formula and rng.random() < 0.3:
            formula = formula.replace(plain, other)
    if rng.random() < 0.5:
        formula = formula.replace(r"\frac", r"\dfrac")
    if rng.random() < 0.3:
        formula = formula.replace(r"\log", r"\ln")
    if rng.random() < 0.3:
        formula = formula.replace("(", r"\left(").replace(")", r"\right)")
    if rng.random() < 0.5:
        formula = formula.replace("=", " = ").replace("+", " + ").replace("-", " - ")
    if rng.random() < 0.2:
        formula = formula.replace(r"\propto", r"\,\propto\,")
    return formula


def answer(question: dict, kind: str, wording: int, rng: np.random.Generator) -> str:
    """One student's answer of ``kind`` in the ``wording``-th wording."""
    lines = []
    for s, step in enumerate(question["kinds"][kind]):
        sentences, formula = question["steps"][step]
        sentence = sentences[(wording + s) % len(sentences)]
        if wording % 2:
            sentence = sentence[0].lower() + sentence[1:] if s else sentence
        math = notate(formula, rng, question["equal_forms"])
        display = rng.random() < 0.5
        lines.append(f"{sentence}\n\n$$\n{math}\n$$\n" if display else f"{sentence} ${math}$.")
    if wording == WORDINGS - 1:
        lines.insert(1, f"Explicitly, ${notate(question['extra'], rng, question['equal_forms'])}$.")
    text = "\n".join(lines)
    if rng.random() < 0.2:
        text = f"{PROMPT}\n\n{text}"
    return text


def make_class(question: dict, n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` answers of one question and their kinds."""
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(KINDS, size=n, p=SHARES))
    texts = [answer(question, k, int(rng.integers(WORDINGS)), rng) for k in kinds]
    return texts, kinds


def purity(labels, kinds) -> float:
    """The share of answers whose group holds only their kind."""
    groups: dict = {}
    for label, kind in zip(labels, kinds):
        groups.setdefault(label, set()).add(kind)
    return float(np.mean([len(groups[label]) == 1 for label in labels]))


def actions(labels, kinds) -> dict[str, float]:
    """Actions per answer of a TA grading by groups, two ways.

    - every member shown: per group, one action to grade it, plus for each further kind in
      it one split (checking its members and one click) and one grade of the split-off group;
    - walk through: per group, one action to choose the rubric items, one key per member
      (confirm, or set apart), and one grade for each answer set apart (of a kind other
      than the group's most common).
    """
    groups: dict = {}
    for label, kind in zip(labels, kinds):
        groups.setdefault(label, []).append(kind)
    shown = walk = 0
    for members in groups.values():
        counts = {k: members.count(k) for k in set(members)}
        shown += 1 + 2 * (len(counts) - 1)
        walk += 1 + len(members) + (len(members) - max(counts.values()))
    return {"every member shown": shown / len(labels), "walk through": walk / len(labels)}


def grouping_of(commit: str):
    """``lecturelib.grading.gradebook.groups`` as it was at ``commit`` (``git show``), loaded
    as a module of its own next to today's package, to measure the grouping before."""
    import importlib.util
    import subprocess
    import tempfile

    source = subprocess.run(["git", "show", f"{commit}:lecturelib/grading/gradebook/groups.py"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp())
    path = folder / "groups_before.py"
    path.write_text(source.replace("from ..", "from lecturelib.grading.")
                    .replace("from . import", "from lecturelib.grading.gradebook import"))
    spec = importlib.util.spec_from_file_location("groups_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(name: str, question: dict, n: int, seed: int, grouping=None) -> dict:
    from sklearn.metrics import adjusted_rand_score

    from lecturelib.grading.gradebook import groups

    grouping = grouping or groups
    group_answers = grouping.group_answers
    texts, kinds = make_class(question, n, seed)
    getattr(grouping, "_READ", {}).clear()  # nothing read by an earlier question or run
    before = cpu_seconds()
    start = time.perf_counter()
    labels = [root for root, _ in group_answers(texts)]
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - before
    return {"question": name, "answers": n, "purity": purity(labels, kinds),
            "ari": float(adjusted_rand_score(kinds, labels)),
            "groups per answer": len(set(labels)) / n, "seconds": seconds, "cpu seconds": cpu,
            "actions per answer": actions(labels, kinds),
            "kinds": {k: kinds.count(k) for k in KINDS}}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the parsing child)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def warm_up() -> float:
    """Import scikit-learn and SymPy and build SymPy's LaTeX grammar, once per process (the
    app pays it on its first groups page); its seconds."""
    start = time.perf_counter()
    import sklearn.cluster  # noqa: F401
    import sklearn.feature_extraction.text  # noqa: F401
    import sklearn.metrics.pairwise  # noqa: F401
    from sympy.parsing.latex import parse_latex

    parse_latex("x", backend="lark")
    return time.perf_counter() - start


TARGETS = {"purity": 0.95, "ari": 0.8, "groups per answer": 0.6, "seconds": 10.0}


def meets(row: dict) -> bool:
    return (row["purity"] >= TARGETS["purity"] and row["ari"] >= TARGETS["ari"]
            and row["groups per answer"] <= TARGETS["groups per answer"]
            and row["seconds"] < TARGETS["seconds"])


def report(rows: list[dict], setup: dict | None = None, before: list[dict] | None = None) -> str:
    setup = setup or {}
    lines = ["## Answer groups", "",
             f"A class written for the benchmark (`python benchmarks/groups.py`): {rows[0]['answers']} "
             "answers of each of three written questions of three sets, in four kinds a rubric "
             "grades differently (complete; right with a gap; a wrong argument reaching the right "
             "final expression; wrong), each kind in eight wordings with each student's own "
             "notation, delimiters and, for some, the prompt left above the answer. Targets: "
             "purity at least 0.95, adjusted Rand index at least 0.8, at most 0.6 groups per "
             f"answer, 300 answers grouped in under 10 s ({platform.machine()}, "
             f"{os.cpu_count()} cores, one run; the time is after the one-off imports of "
             f"scikit-learn and SymPy and the build of SymPy's LaTeX grammar, "
             f"{setup.get('warm-up seconds', float('nan')):.1f} s, which the app pays on its "
             "first groups page; the CPU seconds count the parsing child too, and do not "
             "grow with other work on the machine; load average at the start and the end: "
             f"{setup.get('load', ['?', '?'])[0]}, {setup.get('load', ['?', '?'])[1]}).", "",
             "| question | purity | ARI | groups per answer | seconds | CPU seconds | actions per answer, every member shown | actions per answer, walk through | targets met |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        a = r["actions per answer"]
        lines.append(f"| {r['question']} | {r['purity']:.3f} | {r['ari']:.3f} | "
                     f"{r['groups per answer']:.3f} | {r['seconds']:.1f} | {r['cpu seconds']:.1f} | "
                     f"{a['every member shown']:.3f} | {a['walk through']:.3f} | "
                     f"{'yes' if meets(r) else 'NO'} |")
    lines += ["", "Actions are counted as `actions` in the script counts them: with every member shown, "
              "one per group plus a split and a grade for each further kind a group holds; "
              "walking through, one to choose the group's rubric items, one key per answer "
              "(confirm or set apart) and one grade per answer set apart. Within a kind every "
              "wording writes the same steps, save one wording that adds a harmless line: it "
              "forms groups of its own, since a group joins only answers whose steps agree.", ""]
    if before:
        lines += [f"The grouping of commit `{setup.get('before')}` (before issue 49) on the same "
                  "class, in the same run: " + "; ".join(
                      f"{r['question']}: purity {r['purity']:.3f}, ARI {r['ari']:.3f}, "
                      f"{r['groups per answer']:.3f} groups per answer, {r['seconds']:.1f} s"
                      for r in before) + " (its parse had one budget of 60 s for the "
                  "whole question: past it, every formula counted as unread).", ""]
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Replace (or add) the "## Answer groups" section of ``path``."""
    text = path.read_text() if path.exists() else ""
    start = text.find("## Answer groups")
    if start >= 0:
        end = text.find("\n## ", start + 3)
        text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(HERE / "groups.json"))
    parser.add_argument("--markdown", default=str(HERE / "GRADING.md"))
    parser.add_argument("--before", metavar="COMMIT",
                        help="also measure the grouping of this commit (e.g. 1d4f219)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    start_load = os.getloadavg()[0]
    setup = {"warm-up seconds": warm_up(), "before": args.before}
    rows = [measure(name, q, args.answers, args.seed + i) for i, (name, q) in enumerate(QUESTIONS.items())]
    before = []
    if args.before:
        old = grouping_of(args.before)
        before = [measure(name, q, args.answers, args.seed + i, old)
                  for i, (name, q) in enumerate(QUESTIONS.items())]
    setup["load"] = [round(start_load, 1), round(os.getloadavg()[0], 1)]
    Path(args.json).write_text(json.dumps({"targets": TARGETS, "setup": setup, "questions": rows,
                                           "before": before}, indent=2) + "\n")
    write_section(Path(args.markdown), report(rows, setup, before))
    for r in rows:
        print(f"{r['question']}: purity {r['purity']:.3f}, ARI {r['ari']:.3f}, "
              f"{r['groups per answer']:.3f} groups per answer, {r['seconds']:.1f} s, "
              f"actions {r['actions per answer']}")
    return 0 if all(meets(r) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
