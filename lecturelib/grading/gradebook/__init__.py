"""The gradebook: the SQLite store of a course's grades, grading by people, a class at once.

Owns: the store and its CSV (:mod:`.store`), rubric grades, overrides and the audit trail
of written answers (:mod:`.manual`), grading many submissions into the store
(:mod:`.batch`) on local threads or a Dask cluster (:mod:`.workers`), and what helps people
grade: answer groups (:mod:`.groups`), a fair order, shares and double marks
(:mod:`.allocation`), item and grader analysis (:mod:`.analysis`), regrade requests
(:mod:`.regrades`), and the grading staff with their sign-in links and roles (:mod:`.staff`).

May import: ``lecturelib.grading.core``, ``lecturelib.grading.autograde``.
"""

from .store import Gradebook

__all__ = ["Gradebook"]
