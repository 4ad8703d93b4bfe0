"""The ``lecturelib`` command line: every subcommand, on top of the rest of the package.

Owns: the argument parser and the commands (:mod:`.commands`), the course commands
(:mod:`.course`), the review of grading by people (:mod:`.review`).  Every error is one
line and a non-zero exit, never a traceback.

May import: every subpackage of ``lecturelib.grading``.
"""

from __future__ import annotations

import sys

# A module the command needs and the extra of ``pip install lecturelib[...]`` that brings it.
EXTRA_OF_MODULE = {"sphinx": "book", "myst_nb": "book", "jupyter_book": "book"}


def missing_extra_message(module: str | None) -> str:
    """The one line the command prints when ``module`` is not installed."""
    top = (module or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(top, "grading")
    return (f"lecturelib: error: the lecturelib command needs the '{extra}' extra "
            f"(the Python module {top or 'a dependency'} is missing): "
            f"pip install 'lecturelib[{extra}]'")


def main(argv: list[str] | None = None) -> int:
    """Run the ``lecturelib`` command, whose parser lives in ``cli/commands.py``; without the
    grading extra, say so in one line and exit with status 2."""
    try:
        from .commands import main as run
    except ModuleNotFoundError as exc:
        sys.stderr.write(missing_extra_message(exc.name) + "\n")
        return 2
    return run(argv)


__all__ = ["main"]
