"""The command line: ``python -m chainer_computational_cost``."""
