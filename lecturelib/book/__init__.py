"""The book's Sphinx extensions (not part of the library, nor of grading).

Owns: the rendering of the book and its PDF, the library reference, per-chapter numbers
and search snippets (:mod:`.rendering`), and the student/instructor edition filter
(:mod:`.edition`).

May import: ``lecturelib.grading.core`` (the solution markers of the exercise format).
"""
