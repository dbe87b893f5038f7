# Set-up and everyday commands. Everything installs into ./.venv (Chainer
# 7.8.1) and ./.venv6 (Chainer 6.7.0), so a fresh clone needs only Python 3.11.
#   make report     the VGG16 report (the main job)
#   make test-fast  the edit loop: the tests on Chainer 7.8.1 but the slow ones
#                   (full-size models, fuzzing, properties, mutants, the
#                   site's build: tests/conftest.py)
#   make test       flake8, DETAILS.md freshness, the fast tests on Chainer
#                   7.8.1 and on Chainer 6.7.0
#   make test-all   CI's run: flake8, DETAILS.md, every test on Chainer
#                   7.8.1 and on Chainer 6.7.0
# The tests run in parallel, one process per core (pytest-xdist).
#   make docs     the manual (docs/, Sphinx) into docs/_build/html, warnings
#                 as errors
PYTHON ?= python3.11
VENV ?= .venv
VENV6 ?= .venv6
PY = $(VENV)/bin/python
PY6 = $(VENV6)/bin/python

.PHONY: setup report test test-fast test-all lint details test7 test7-all test6 \
	test6-all bench docs

# Chainer cannot be imported on Python 3.12+ (it imports numpy.distutils):
# stop with one line before a venv is half made with the wrong Python.
# Running it, not just finding it, also catches a pyenv shim whose version
# is not installed.
PYTHON_OK = import sys; sys.exit(not (3, 8) <= sys.version_info[:2] < (3, 12))
PYTHON_HELP = install Python 3.11 or run make PYTHON=/path/to/python3.11
CHECK_PYTHON = @$(PYTHON) -c '$(PYTHON_OK)' >/dev/null 2>&1 || { \
	echo 'error: $(PYTHON) is missing or not Python 3.8-3.11;' \
	'$(PYTHON_HELP)' >&2; exit 1; }

# Chainer's sdist needs pkg_resources (setuptools<81) and numpy present
# before it builds, hence --no-build-isolation after installing them.
# NumPy 1.23.5, the last before 1.24 removed numpy.float, which Chainer's
# F.resize_images (7.8.1 and 6.7.0) still uses; pinning it again in the
# last install keeps pip from upgrading it (and picks a matplotlib that
# supports it).
NUMPY = 'numpy==1.23.5'

$(VENV)/.installed: setup.py pyproject.toml
	$(CHECK_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q 'setuptools<81' wheel $(NUMPY)
	$(PY) -m pip install -q --no-build-isolation 'chainer==7.8.1'
	$(PY) -m pip install -q --no-build-isolation -e '.[test,mpi,docs]' $(NUMPY)
	touch $@

# Chainer 6.7.0 pins typing_extensions<=3.6.6, too old for Python 3.11 (and
# for hypothesis): upgrade it last, after everything that re-applies the pin,
# with --no-deps, so that pip neither checks nor reports Chainer's pin
# (a red "ERROR: pip's dependency resolver" line on a working set-up).
$(VENV6)/.installed: setup.py pyproject.toml
	$(CHECK_PYTHON)
	$(PYTHON) -m venv $(VENV6)
	$(PY6) -m pip install -q 'setuptools<81' wheel $(NUMPY)
	$(PY6) -m pip install -q --no-build-isolation 'chainer==6.7.0'
	$(PY6) -m pip install -q --no-build-isolation -e '.[test,mpi]' $(NUMPY)
	$(PY6) -m pip install -q --no-deps -U 'typing_extensions>=4'
	touch $@

setup: $(VENV)/.installed

report: $(VENV)/.installed
	$(PY) -m chainer_computational_cost vgg16 --unit G --mode md

lint: $(VENV)/.installed
	$(PY) -m flake8

details: $(VENV)/.installed
	$(PY) make_details_md.py --check

PYTEST = -m pytest -q -n auto

test7: $(VENV)/.installed
	$(PY) $(PYTEST) -m 'not slow'

test7-all: $(VENV)/.installed
	$(PY) $(PYTEST)

test6: $(VENV6)/.installed
	$(PY6) $(PYTEST) -m 'not chainer7_only and not slow'

test6-all: $(VENV6)/.installed
	$(PY6) $(PYTEST) -m 'not chainer7_only'

test: lint details test7 test6

test-fast: $(VENV)/.installed
	$(PY) $(PYTEST) -m 'not slow'

test-all: lint details test7-all test6-all

bench: $(VENV)/.installed
	$(PY) benchmarks/overhead.py

# -W: a warning (a broken link or cross-reference, a page no toctree
# reaches, a docstring that is not valid reST) fails the build;
# --keep-going lists them all first. -n (nitpicky) also fails on a
# reference to a Python object the manual does not document.
DOCS_OUT ?= docs/_build/html
docs: $(VENV)/.installed
	$(PY) -m sphinx -W --keep-going -n -q -b html docs $(DOCS_OUT)
