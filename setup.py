"""Packaging of chainer_computational_cost."""

import os

from setuptools import find_packages
from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'README.md')) as f:
    long_description = f.read()

setup(
    name='chainer_computational_cost',
    version='0.3.0',
    description='Theoretical computational cost (FLOPs, memory traffic) of '
                'Chainer forward passes and training steps, layer by layer',
    long_description=long_description,
    long_description_content_type='text/markdown',
    # An SPDX expression and the file: the 'License ::' classifier is
    # deprecated (setuptools warns about it).
    license='MIT',
    license_files=['LICENSE'],
    packages=find_packages(exclude=['tests', 'tests.*']),
    # Chainer (7.8.1 and 6.7.0) imports numpy.distutils when it starts, and
    # numpy has no distutils on Python 3.12 and later: chainer cannot even
    # be imported there.
    python_requires='>=3.8,<3.12',
    # Chainer 7.8.1 ships as an sdist that needs setuptools<81 and numpy<2
    # in the environment before it builds: see docs/install.md (make setup).
    install_requires=['chainer>=6.0', 'numpy<2'],
    entry_points={
        'console_scripts': [
            'chainer-computational-cost = '
            'chainer_computational_cost.cli.main:console',
        ],
    },
    extras_require={
        'table': ['texttable>=1.4.0'],
        'plot': ['matplotlib'],
        'mpi': ['mpich', 'mpi4py'],
        # pytest-xdist: make test runs the tests on every core
        'test': ['texttable>=1.4.0', 'matplotlib', 'pytest', 'hypothesis',
                 'flake8', 'pytest-xdist'],
        # make docs: the Sphinx site of docs/ (MyST Markdown pages, the
        # command line's reference from its argparse parser, MathJax
        # copied into the site so that it works offline)
        'docs': ['sphinx>=7', 'myst-parser>=3', 'furo', 'sphinx-argparse',
                 'sphinx-mathjax-offline'],
    },
    classifiers=[
        'Programming Language :: Python :: 3',
        'Programming Language :: Python :: 3 :: Only',
        'Programming Language :: Python :: 3.11',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
