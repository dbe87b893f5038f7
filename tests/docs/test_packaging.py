"""The source distribution carries everything the tests need: each file of
the project (outside the package, which setup.py's ``packages`` adds) is
taken by a line of MANIFEST.in, so pytest runs from an unpacked sdist."""

import importlib
import os
import sys
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

#: Never part of the project's sources: version control, venvs, caches and
#: build outputs.
SKIPPED_DIRS = ('.git', '.venv', '.venv6', '.tox', '.pytest_cache',
                '.hypothesis', '__pycache__', 'build', 'dist', '_build')


def _project_files():
    """Paths (relative, '/'-separated) of the project's own files."""
    found = []
    for directory, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS
                   and not d.endswith('.egg-info')
                   and not d.startswith('.')]
        for name in files:
            if name.startswith('.') or name.endswith(('.pyc', '.pyo')):
                continue
            path = os.path.relpath(os.path.join(directory, name), ROOT)
            found.append(path.replace(os.sep, '/'))
    return found


def _manifest_files(monkeypatch):
    """The files MANIFEST.in's lines select, as setuptools reads them."""
    egg_info = pytest.importorskip('setuptools.command.egg_info')
    monkeypatch.chdir(ROOT)
    file_list = egg_info.FileList()
    with open('MANIFEST.in') as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                file_list.process_template_line(line)
    return {p.replace(os.sep, '/') for p in file_list.files}


def test_manifest_takes_every_file_of_the_project(monkeypatch):
    included = _manifest_files(monkeypatch)
    # setup.py and MANIFEST.in (always in an sdist) and the package (its
    # packages) need no line; the build writes PKG-INFO into an sdist
    missing = [p for p in _project_files()
               if p not in included
               and p not in ('setup.py', 'MANIFEST.in', 'PKG-INFO')
               and not p.startswith('chainer_computational_cost/')]
    assert missing == []


def test_manifest_takes_what_pytest_needs(monkeypatch):
    included = _manifest_files(monkeypatch)
    for path in ('LICENSE', 'README.md', 'DETAILS.md', 'make_details_md.py',
                 'Makefile', 'setup.cfg', 'pyproject.toml', 'tests/helpers.py',
                 'tests/property_cases.py', 'tests/cli_models.py',
                 'tests/models/model_helpers.py',
                 'tests/models/test_models.py'):
        assert path in included, path


def test_license_is_mit():
    with open(os.path.join(ROOT, 'LICENSE')) as f:
        text = f.read()
    assert text.startswith('MIT License\n')
    assert 'Copyright (c) the chainer_computational_cost authors' in text


def test_console_command(monkeypatch, capsys):
    # the function setup.py's entry point names, as pip's script imports
    # it (it named one that had moved: every call an ImportError)
    with open(os.path.join(ROOT, 'setup.py')) as f:
        setup = f.read()
    target = re.search(r"'chainer-computational-cost = '\s*'([\w.]+):(\w+)'",
                       setup)
    assert target is not None
    console = getattr(importlib.import_module(target.group(1)),
                      target.group(2))
    monkeypatch.setattr('sys.argv', ['chainer-computational-cost', '--help'])
    with pytest.raises(SystemExit) as e:
        console()
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(
        'usage: chainer-computational-cost ')


def test_console_command_finds_a_model_in_the_current_directory(
        tmp_path, monkeypatch, capsys):
    # python -m puts the current directory on the import path, a console
    # script its own folder: 'models:build' was found by one only
    from chainer_computational_cost.cli.main import console
    (tmp_path / 'console_models.py').write_text(
        'import chainer.links as L\n\n\ndef build():\n'
        '    return L.Linear(3, 2)\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr('sys.path', [p for p in sys.path
                                     if p not in ('', str(tmp_path))])
    monkeypatch.setattr('sys.argv', [
        'chainer-computational-cost', 'console_models:build', '--shape',
        '1,3', '--mode', 'csv', '--columns', 'flops'])
    with pytest.raises(SystemExit) as e:
        console()
    # Linear(3, 2) on one row: 3*2 multiply-adds, 1 FLOP each, + 2 biases
    assert (e.value.code, capsys.readouterr().out) == (
        0, 'FLOPs\n8\n8\n')
