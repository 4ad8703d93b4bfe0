"""One grading, from the solution to the report: the module that orchestrates the others.

The grader's process never runs a notebook's code.  Read top to bottom, a grading is:

1. the solution notebook of the assignment and its questions (:class:`Grader`);
2. the solution's answers to every check, computed once per content hash
   (:meth:`Grader.reference`, :mod:`.reference`);
3. the submission's job, its code cells, the check expressions and each cell's time limit
   (from the solution's own time for it), run in the sandbox on this machine or a worker
   (:func:`.job.run_job`, :mod:`.sandbox`, :mod:`.inside`);
4. the run's output read back as plain data (:func:`.answers.run_from_outcome`);
5. the answers compared with the solution's and scored (:func:`.score.report_for_run`).

Each step is a call from here; none of the modules it calls calls back.
"""

from __future__ import annotations

import dataclasses

from ..core.notebook import code_cell_ids, code_sources, load_questions, read_notebook
from ..core.report import GradeReport
from .answers import run_from_outcome
from .job import hidden_exprs, run_job, time_limit, total_limit
from .reference import Reference, reference_run, solution_for
from .sandbox import Limits, Outcome
from .score import report_for_run


class Grader:
    """Grades notebooks of ``assignment`` against its solution notebook.

    The assignment is named by the instructor, never read from the student's file; the
    grading spec, the points and the reference answers come only from the solution
    notebook.  Both notebooks run in the sandbox unless ``sandbox=False`` (no isolation:
    only for a student checking their own work).
    """

    def __init__(self, assignment: str, *, solutions_dir=None, limits: Limits | None = None,
                 sandbox: bool = True):
        self.solution_path = solution_for(assignment, solutions_dir)
        self.assignment = assignment
        self.questions = load_questions(read_notebook(self.solution_path))
        self.exprs = hidden_exprs(self.questions)
        self.limits = limits or Limits()
        self.sandbox = sandbox
        self._reference: Reference | None = None

    def reference(self, *, use_cache: bool = True, store=None) -> Reference:
        """The solution's answers (``store``, a gradebook, keeps them across runs)."""
        if self._reference is None:
            self._reference = reference_run(self.solution_path, self.questions, self.limits,
                                            sandbox=self.sandbox, use_cache=use_cache, store=store)
        return self._reference

    def time_limits(self, nb) -> tuple[list[int], dict[str, int]]:
        """Each code cell's time limit and each question's checks', from the solution's own
        times for them (:func:`.job.time_limit`; a cell the solution lacks gets the cap)."""
        reference, cap = self.reference(), self.limits.cell_timeout
        cells = [time_limit(reference.cell_seconds.get(i) if i else None, cap)
                 for i in code_cell_ids(nb)]
        return cells, {q: time_limit(reference.check_seconds.get(q), cap) for q in self.exprs}

    def run_limits(self) -> Limits:
        """The limits of a submission's run: the whole run's time limit is also bounded by
        the solution's own time for all its cells and checks (:func:`.job.total_limit`),
        when the solution's run recorded them."""
        reference = self.reference()
        if not reference.cell_seconds:  # a solution run that recorded no times: no bound known
            return self.limits
        seconds = sum(reference.cell_seconds.values()) + sum(reference.check_seconds.values())
        return dataclasses.replace(self.limits,
                                   total_timeout=total_limit(seconds, self.limits.total_timeout))

    def job(self, nb) -> tuple:
        """The arguments of :func:`.job.run_job` for notebook ``nb``: what a worker is given."""
        return (code_sources(nb), self.exprs, self.run_limits(), *self.time_limits(nb))

    def report(self, nb, label: str, outcome: Outcome) -> GradeReport:
        """The grade report of notebook ``nb`` whose job ended with ``outcome``."""
        run = run_from_outcome(outcome, self.exprs, len(code_sources(nb)), self.run_limits(),
                               *self.time_limits(nb))
        return report_for_run(nb, label, self.assignment, self.questions, self.reference(), run,
                              sandbox=self.sandbox)

    def grade(self, nb, label: str) -> GradeReport:
        """Grade an already read notebook ``nb``, here and now."""
        outcome = run_job(*self.job(nb), sandbox=self.sandbox)
        return self.report(nb, label, outcome)


def grade(notebook, *, assignment: str, solutions_dir=None, cell_timeout=60, total_timeout=600,
          memory_mb=4096, sandbox=True, limits: Limits | None = None) -> GradeReport:
    """Grade the student notebook at path ``notebook`` against the solution of ``assignment``."""
    limits = limits or Limits(cell_timeout=cell_timeout, total_timeout=total_timeout,
                              memory_mb=memory_mb)
    grader = Grader(assignment, solutions_dir=solutions_dir, limits=limits, sandbox=sandbox)
    nb = read_notebook(notebook)
    grader.reference()
    return grader.grade(nb, str(notebook))
