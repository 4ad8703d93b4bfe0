# The two commands of the course: `make book` and `make test`.
# Each builds its own virtual environment from the pinned requirements first.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# One BLAS thread: the stored notebook outputs are reproduced digit for digit.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONHASHSEED=0
NBVAL   := --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg

.PHONY: help venv book book-instructor test test-fast notebooks nbval assign bench clean

help:
	@echo "make book             render the student book to _build/html (no solutions)"
	@echo "make book-instructor  render the instructor book (solutions shown) to _build/instructor/_build/html"
	@echo "make test             run every test (library, notebooks, grader, book, browser)"
	@echo "make bench            run the benchmarks against scikit-learn (writes benchmarks/RESULTS.md)"
	@echo "make notebooks NB=... execute notebooks in place, storing outputs"
	@echo "make assign           regenerate exercises/ from solutions/"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "Open _build/html/index.html"

book-instructor: $(STAMP)
	$(BIN)/python tools/bookconfig.py instructor _build/instructor-config
	rm -rf _build/instructor
	$(BIN)/jupyter-book build . -W -n --keep-going \
	    --config _build/instructor-config/_config.yml --toc _build/instructor-config/_toc.yml \
	    --path-output _build/instructor
	@echo "Open _build/instructor/_build/html/index.html"

test: $(STAMP)
	$(THREADS) $(BIN)/python -m pytest tests chapters solutions $(NBVAL) -q -n 2 --dist loadfile

notebooks: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py $(NB)

nbval: $(STAMP)
	$(THREADS) $(BIN)/python -m pytest $(NBVAL) -q $(NB)

assign: $(STAMP)
	$(BIN)/lecturelib assign solutions/*.ipynb

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/grading.py

clean:
	rm -rf _build
