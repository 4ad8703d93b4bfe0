# The two commands of the course: `make book` and `make test`.
# The student's targets (venv, book, lab) are in course.mk; the rest are the instructor's.

include course.mk

# One BLAS thread: the stored notebook outputs are reproduced digit for digit.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONHASHSEED=0
NBVAL   := --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg
RELEASE ?= _build/release
BOOK_HTML ?=
# The printable editions (LaTeX via XeLaTeX; the TeX packages are in the README's set-up).
PDF_DIR ?= _build/pdf
PDF_INSTRUCTOR_DIR ?= _build/pdf-instructor
PDFBUILD = $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going

.PHONY: book-instructor pdf pdf-instructor test test-all notebooks nbval assign bench release

help::
	@echo "make book-instructor  render the instructor book (solutions shown) to _build/instructor/_build/html"
	@echo "make pdf              render the student book to $(PDF_DIR)/book.pdf and the library reference to reference.pdf (needs TeX, see README)"
	@echo "make pdf-instructor   the instructor book (solutions shown) as a PDF, $(PDF_INSTRUCTOR_DIR)/book.pdf"
	@echo "make test             the everyday tests (library, grader, notebooks, the student book): under 5 minutes"
	@echo "make test-all         every test, the slow cross-checks too (what CI runs): under 15 minutes"
	@echo "make release          write the student edition (no solutions) to $(RELEASE)/, folder and zip"
	@echo "make bench            run the benchmarks (RESULTS.md against scikit-learn, SVM_SOLVERS.md, GRADING.md (answer groups, a grading team), APP.md, METRIC.md against metric-learn, TABLE1.md)"
	@echo "make notebooks NB=... execute notebooks in place, storing outputs"
	@echo "make assign           regenerate exercises/ from solutions/"

book-instructor: $(STAMP)
	$(BIN)/python tools/bookconfig.py instructor _build/instructor-config
	rm -rf _build/instructor
	$(BIN)/jupyter-book build . -W -n --keep-going \
	    --config _build/instructor-config/_config.yml --toc _build/instructor-config/_toc.yml \
	    --path-output _build/instructor
	@echo "Open _build/instructor/_build/html/index.html"

# Sphinx's LaTeX builder, then latexmk with XeLaTeX; the PDF is copied next to the build.
pdf: $(STAMP)
	rm -rf $(PDF_DIR)
	$(PDFBUILD) --path-output $(PDF_DIR)
	cp $(PDF_DIR)/_build/latex/book.pdf $(PDF_DIR)/_build/latex/reference.pdf $(PDF_DIR)/
	@echo "Open $(PDF_DIR)/book.pdf (the library reference: $(PDF_DIR)/reference.pdf)"

pdf-instructor: $(STAMP)
	$(BIN)/python tools/bookconfig.py instructor _build/instructor-config
	rm -rf $(PDF_INSTRUCTOR_DIR)
	$(PDFBUILD) --config _build/instructor-config/_config.yml --toc _build/instructor-config/_toc.yml \
	    --path-output $(PDF_INSTRUCTOR_DIR)
	cp $(PDF_INSTRUCTOR_DIR)/_build/latex/book.pdf $(PDF_INSTRUCTOR_DIR)/_build/latex/reference.pdf $(PDF_INSTRUCTOR_DIR)/
	@echo "Open $(PDF_INSTRUCTOR_DIR)/book.pdf"

# Two tiers.  make test, the everyday one: the library, grading and the sandbox, nbval of
# every chapter and solution, one (student) book build.  make test-all, what CI runs, adds
# the slow cross-checks marked `full`: every chapter re-run as on another machine (other
# BLAS kernels and threads, tightened solver tolerances), which stands in for the plain
# nbval run (a notebook that reproduces its stored outputs there reproduces them here),
# whole-class gradings, both editions in Chromium at two widths, the PDF, the release
# rebuilt from its zip, JupyterLab.  Both list the 20 slowest tests and every skip.  Whole
# files go to the workers, the slowest first (tests/conftest.py).
PYTEST = $(THREADS) $(BIN)/python -m pytest -q -rs -n 2 --dist loadfile --no-loadscope-reorder --durations=20

test: $(STAMP)
	$(PYTEST) tests chapters solutions $(NBVAL) -m "not full"

test-all: $(STAMP)
	$(PYTEST) tests solutions $(NBVAL)

notebooks: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py $(NB)

nbval: $(STAMP)
	$(THREADS) $(BIN)/python -m pytest $(NBVAL) -q $(NB)

assign: $(STAMP)
	$(BIN)/lecturelib assign solutions/*.ipynb

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/svm_solvers.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/grading_app.py
	$(BIN)/python benchmarks/groups.py --before 1d4f219
	$(BIN)/python benchmarks/grading_team.py
	$(BIN)/python benchmarks/metric_learning.py
	$(BIN)/python benchmarks/table1.py

# BOOK_HTML=DIR ships a student book already rendered there instead of running make book.
# The working tree is checked first: a refusal costs no book build.
release: $(STAMP)
	$(BIN)/python tools/release.py --check
	$(if $(BOOK_HTML),,$(MAKE) book)
	$(BIN)/python tools/release.py $(RELEASE) $(BOOK_HTML)
