"""``python -m chainer_computational_cost``: the command line (:mod:`.cli`)."""

import sys

from chainer_computational_cost.cli.main import main

if __name__ == '__main__':
    sys.exit(main())
