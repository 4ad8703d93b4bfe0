# The student's targets: set up, read, run. The course's Makefile includes this file, and
# the student edition (make release) ships it as its Makefile.
# Each target builds the virtual environment from the pinned requirements first.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# make lab LAB_PORT=9999 LAB_OPTS="--no-browser": another port, other JupyterLab options;
# LAB_DIR: the folder it shows (default: the course).
LAB_PORT ?= 8888
LAB_DIR  ?= $(CURDIR)
LAB_OPTS ?=
# JupyterLab refuses to run as root (in a container, say) unless told to.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help venv book lab clean

help::
	@echo "make book             render the student book to _build/html (no solutions)"
	@echo "make lab              start JupyterLab on the course (chapters and exercises), printing its address"
	@echo "make venv             only create the virtual environment .venv"

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

# JUPYTER_PREFER_ENV_PATH: the kernels and settings of .venv come before any of the user's.
# Loopback only, and no news or update checks: the course works offline.  The settings'
# override (in .venv, JupyterLab's documented overrides.json) answers "never" to the question
# about Jupyter news that JupyterLab otherwise asks at every start.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP)
	@mkdir -p $(dir $(LAB_OVERRIDES))
	@echo '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' > $(LAB_OVERRIDES)
	@echo "Starting JupyterLab on $(LAB_DIR) with the course's environment; open the address printed below."
	JUPYTER_PREFER_ENV_PATH=1 $(BIN)/jupyter lab --ServerApp.root_dir="$(LAB_DIR)" \
	    --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) --ServerApp.port_retries=0 \
	    --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	    --LabApp.extension_manager=readonly $(LAB_ROOT) $(LAB_OPTS)

clean:
	rm -rf _build
