"""Model factories for tests/cli/test_main.py, given on its command lines as
``cli_models:<factory>``.

test_main.py finds the lines where these raise by their text, so keep each
``raise`` and the convolution call unique in this file.
"""

import os

import chainer
import chainer.functions as F
import chainer.links as L


class Tiny(chainer.Chain):
    def forward(self, x):
        return F.relu(x)


def build_tiny():
    """A model of one ReLU."""
    return Tiny()


class Relus(chainer.Chain):
    def forward(self, x):
        for _ in range(10000):
            x = F.relu(x)
        return x


def build_relus():
    """A model of 10000 ReLUs in a row: many short calls."""
    return Relus()


class ConvLinear(chainer.Chain):
    def __init__(self):
        super(ConvLinear, self).__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, ksize=3)
            # in_size None: the weight is created at the first call, so the
            # dtype must still be in force during the forward pass.
            self.fc = L.Linear(None, 5)

    def forward(self, x):
        h = self.conv(x)  # conv call
        return self.fc(h)


def build_conv_linear():
    """A 3x3 convolution from 3 to 4 channels, then a linear layer to 5."""
    return ConvLinear()


def build_linear():
    """A linear layer from 3 to 2: logits of 2 classes (--train)."""
    return L.Linear(3, 2)


class ClassToken(chainer.Chain):
    """A class token broadcast to the batch, then a linear layer from 3
    to 2: the first call (BroadcastTo) is on a parameter of batch 1."""

    def __init__(self):
        super(ClassToken, self).__init__()
        with self.init_scope():
            self.token = chainer.Parameter(
                chainer.initializers.Zero(), (1, 3))
            self.fc = L.Linear(3, 2)

    def forward(self, x):
        return self.fc(x + F.broadcast_to(self.token, x.shape))


def build_class_token():
    """A class token added to the input, then logits of 2 classes."""
    return ClassToken()


class TwoOutputs(chainer.Chain):
    def forward(self, x):
        return {'relu': F.relu(x), 'sigmoid': F.sigmoid(x)}


def build_two_outputs():
    """A model returning a dict of two entries: no single logits."""
    return TwoOutputs()


class OneOutput(chainer.Chain):
    def __init__(self):
        super(OneOutput, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 2)

    def forward(self, x):
        return {'fc': self.fc(x)}


def build_one_output():
    """A model returning its logits as the one entry of a dict."""
    return OneOutput()


def build_tuple_output():
    """A model returning a tuple: not logits."""
    return lambda x: (F.relu(x), F.relu(x))


def build_gram():
    """x x^T: its FLOPs grow as the square of the batch size."""
    return lambda x: F.matmul(x, x, transb=True)


def build_per_sample():
    """A ReLU per sample: the number of calls follows the batch size."""
    return lambda x: [F.relu(row) for row in x]


def build_raising():
    """A factory that fails, as a buggy user factory would."""
    raise ValueError('no weights for width 0')  # factory raise


def build_not_callable():
    """A factory that returns something that is not a model."""
    return 42


def build_none():
    """A factory that forgot its return statement."""
    ConvLinear()


NOT_A_FACTORY = 'vgg16'


class FailsAsIfInThePackage(object):
    """A model whose call raises from a frame filed under this package's
    directory, standing in for a bug in the hook."""

    def __call__(self, x):
        import chainer_computational_cost
        path = os.path.join(
            os.path.dirname(chainer_computational_cost.__file__), 'hook.py')
        exec(compile("raise RuntimeError('bug')", path, 'exec'))


def build_package_bug():
    """A model that fails as a bug in chainer_computational_cost would."""
    return FailsAsIfInThePackage()


class Centered(chainer.Chain):
    """Linear(3 -> 2), its outputs centred on the batch mean: at batch 1
    every logit is 0, and the step's memory does not follow the line its
    runs at batch 2 and 3 draw."""

    def __init__(self):
        super(Centered, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 2)

    def forward(self, x):
        h = self.fc(x)
        return h - F.broadcast_to(F.mean(h, axis=0), h.shape)


def build_centered():
    return Centered()


#: Seconds after which build_slow's model gives up on its own: a test
#: that dies before its Ctrl-C (killed, timed out) leaves no process
#: running for long.
SLOW_LIMIT = 120


def build_slow():
    """A model that runs until stopped (Ctrl-C tests): it creates the file
    named by $CLI_STARTED once running, then calls ReLU until interrupted,
    until its parent (the test) is gone, or for SLOW_LIMIT seconds."""
    import time

    parent = os.getppid()

    def forward(x):
        open(os.environ['CLI_STARTED'], 'w').close()
        deadline = time.monotonic() + SLOW_LIMIT
        while time.monotonic() < deadline and os.getppid() == parent:
            x = F.relu(x)
            time.sleep(0.01)
        raise SystemExit('build_slow: not interrupted within {} s, or its '
                         'parent is gone'.format(SLOW_LIMIT))
    return forward
