"""What every part of grading shares: the exercise notebook's format and the grade report.

Owns: reading notebooks safely and their grading spec (:mod:`.notebook`), writing the
student's exercise from the solution (:mod:`.exercise`, ``lecturelib assign``), the grade
report and its files (:mod:`.report`), bounded JSON (:mod:`.safejson`), and finding and
reading submission files without following links (:mod:`.submissions`).

May import: nothing else of ``lecturelib``.
"""
