"""The gradebook: the SQLite store of a course's grades, grading by people, a class at once.

Owns: the store and its CSV (:mod:`.store`), rubric grades, overrides and the audit trail
of written answers (:mod:`.manual`), grading many submissions into the store
(:mod:`.batch`) on local threads or a Dask cluster (:mod:`.workers`).

May import: ``lecturelib.grading.core``, ``lecturelib.grading.autograde``.
"""

from .store import Gradebook

__all__ = ["Gradebook"]
