"""Running one notebook in the sandbox and scoring it against the solution.

Owns: the bubblewrap sandbox and its limits (:mod:`.sandbox`, the driver :mod:`.inside`),
what a worker is given (:mod:`.job`), reading its output (:mod:`.answers`, within a
budget, :mod:`.budget`), the solution's answers (:mod:`.reference`), comparing and scoring
(:mod:`.compare`, :mod:`.score`), and the student's own ``lecturelib check``
(:mod:`.selfcheck`).  :mod:`.grade` orchestrates one grading and is the only module that
calls the steps in turn.

May import: ``lecturelib.grading.core``, ``lecturelib.checks``.
"""
