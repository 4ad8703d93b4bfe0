"""Exercise generator and grader behind the ``lecturelib`` command (chapter pages: "Exercises").

A small package, one concern per module:

- :mod:`.notebook`: reading notebooks safely, the grading spec, ``lecturelib assign``;
- :mod:`.sandbox`: the bubblewrap sandbox and its resource limits;
- :mod:`.inside`: the driver that runs a notebook inside the sandbox;
- :mod:`.safejson` and :mod:`.compare`: reading the answers as plain data and comparing them;
- :mod:`.runner`: grading one submission; :mod:`.report`: tables, JSON and feedback;
- :mod:`.gradebook` and :mod:`.batch`: a class at once, into a SQLite gradebook;
- :mod:`.manual`: grading by people (rubric grades of written answers, overrides, the
  audit trail) and :mod:`.webapp`, the instructors' grading app on top of it;
- :mod:`.collect`, :mod:`.roster`, :mod:`.course`, :mod:`.export`, :mod:`.similarity` and
  :mod:`.summary`: running a course (LMS downloads in, deadlines and late policy, LMS grade
  files out, similarity screening, the summary page; commands in :mod:`.coursecmd`);
- :mod:`.cli`: the command line.
"""

from .cli import main
from .notebook import (ANSWER_PROMPT, Check, GradingError, PublicCheck, Question, RubricItem,
                       assign, load_questions, make_exercise, read_notebook)
from .report import GradeReport, QuestionResult
from .runner import grade
from .sandbox import Limits, SandboxUnavailable

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
