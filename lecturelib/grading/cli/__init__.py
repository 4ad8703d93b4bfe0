"""The ``lecturelib`` command line: every subcommand, on top of the rest of the package.

Owns: the argument parser and the commands (:mod:`.main`), the course commands
(:mod:`.course`), the review of grading by people (:mod:`.review`).  Every error is one
line and a non-zero exit, never a traceback.

May import: every subpackage of ``lecturelib.grading``.
"""

from .main import main

__all__ = ["main"]
