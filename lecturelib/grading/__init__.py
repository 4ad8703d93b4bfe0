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

from .autograde.grade import grade
from .autograde.sandbox import Limits, SandboxUnavailable
from .cli import main
from .core.exercise import assign, make_exercise
from .core.notebook import (ANSWER_PROMPT, Check, GradingError, PublicCheck, Question, RubricItem,
                            load_questions, read_notebook)
from .core.report import GradeReport, QuestionResult

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
