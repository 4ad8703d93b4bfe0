"""Exercise generator and grader behind the ``lecturelib`` command (chapter pages: "Exercises").

One subpackage per concern; imports run one way, from the command line down to ``core``
(each subpackage's docstring says what it owns and what it may import; CONTRIBUTING has
the map):

- :mod:`.core`: the exercise notebook's format (reading notebooks safely, questions,
  checks, rubrics, ``lecturelib assign``), the grade report, submission files;
- :mod:`.autograde`: running one notebook in the sandbox and scoring it;
- :mod:`.gradebook`: the SQLite gradebook, grading by people, a class at once;
- :mod:`.course`: running a course (LMS downloads, roster, late policy, exports,
  summary, similarity screening);
- :mod:`.webapp`: the instructors' grading app;
- :mod:`.cli`: the ``lecturelib`` command line.

The names below are the public API of the package; the command line and its JSON are
the other public interface.
"""

import importlib

# Each public name and the submodule that defines it.  They are imported on first use, so
# that the ``lecturelib`` command can say which extra is missing (``pip install
# 'lecturelib[grading]'``) before anything needs it.
_PUBLIC = {
    "grade": ".autograde.grade",
    "Limits": ".autograde.sandbox",
    "SandboxUnavailable": ".autograde.sandbox",
    "main": ".cli",
    "assign": ".core.exercise",
    "make_exercise": ".core.exercise",
    "ANSWER_PROMPT": ".core.notebook",
    "Check": ".core.notebook",
    "GradingError": ".core.notebook",
    "PublicCheck": ".core.notebook",
    "Question": ".core.notebook",
    "RubricItem": ".core.notebook",
    "load_questions": ".core.notebook",
    "read_notebook": ".core.notebook",
    "GradeReport": ".core.report",
    "QuestionResult": ".core.report",
}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_PUBLIC])


__all__ = [
    "ANSWER_PROMPT",
    "Check",
    "GradingError",
    "GradeReport",
    "Limits",
    "PublicCheck",
    "Question",
    "QuestionResult",
    "RubricItem",
    "SandboxUnavailable",
    "assign",
    "grade",
    "load_questions",
    "main",
    "make_exercise",
    "read_notebook",
]
