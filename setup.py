"""Packaging of chainer_computational_cost."""

import os

from setuptools import find_packages
from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, 'README.md')) as f:
    long_description = f.read()

setup(
    name='chainer_computational_cost',
    version='0.2.0',
    description='Theoretical computational cost (FLOPs, memory traffic) of '
                'Chainer forward passes, layer by layer',
    long_description=long_description,
    long_description_content_type='text/markdown',
    license='MIT',
    packages=find_packages(exclude=['tests', 'tests.*']),
    python_requires='>=3.8',
    # Chainer 7.8.1 ships as an sdist that needs setuptools<81 and numpy<2
    # in the environment before it builds: see README (make setup).
    install_requires=['chainer>=6.0', 'numpy<2'],
    extras_require={
        'table': ['texttable>=1.4.0'],
        'test': ['texttable>=1.4.0', 'pytest', 'hypothesis', 'flake8'],
    },
    classifiers=[
        'Programming Language :: Python :: 3',
        'License :: OSI Approved :: MIT License',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
