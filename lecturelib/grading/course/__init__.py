"""Running a course: LMS downloads in, deadlines and late policy, LMS grade files out.

Owns: ``lecturelib collect`` (:mod:`.collect`), the roster (:mod:`.roster`), the course
file and its late policy (:mod:`.policy`), grade exports (:mod:`.export`), feedback pages
for the LMS's bulk upload (:mod:`.lmsfeedback`), the summary page (:mod:`.summary`) and
similarity screening (:mod:`.similarity`).

May import: ``lecturelib.grading.core``, ``lecturelib.grading.gradebook``.
"""
