"""The command line's models and the one-line errors of the user's code.

* :func:`load_model`: a built-in model of ``chainer.links`` (:data:`MODELS`,
  any case) or a user's ``package.module:factory``;
* :class:`CommandError`, the command's one-line mistakes, and the helpers
  that turn a failure of the user's code into one, naming the user's line
  (:func:`failure`) rather than Chainer's, unless the failure is a bug of
  this package (:func:`is_internal`).

Part of the command line (``__main__``); it imports only
:mod:`~chainer_computational_cost.core.records`.
"""

import difflib
import importlib
import os
import traceback

# Shared with the reports' tracebacks, which end in the user's code too.
from chainer_computational_cost.core.records import is_under
from chainer_computational_cost.core.records import PACKAGE_DIR
from chainer_computational_cost.core.records import (
    is_library_file as _is_library_file)  # NOQA


class CommandError(Exception):
    """A problem with what the command was given.

    :func:`main` prints its message as one line on stderr and exits with
    status 2: a traceback into this module would tell the user nothing.
    ``local`` is True for a failure the ranks of ``mpiexec`` need not
    share (the user's model, a file of this node, its memory): every rank
    that meets it tells it, not rank 0 alone.
    """

    local = False


def _chainer_links_model(class_name):
    def build():
        import chainer.links as L
        # Weights cannot (and need not) be downloaded: costs depend on shapes.
        return getattr(L, class_name)(pretrained_model=None)
    return build


#: Model name -> factory, for the models that ship with ``chainer.links``.
MODELS = {
    'vgg16': _chainer_links_model('VGG16Layers'),
    'vgg19': _chainer_links_model('VGG19Layers'),
    'resnet50': _chainer_links_model('ResNet50Layers'),
    'resnet101': _chainer_links_model('ResNet101Layers'),
    'resnet152': _chainer_links_model('ResNet152Layers'),
    'googlenet': _chainer_links_model('GoogLeNet'),
}

#: Built-in model -> the layer whose output is the logits --train's loss
#: needs (by default these models end with a softmax, 'prob').
LOGITS = {
    'vgg16': 'fc8', 'vgg19': 'fc8', 'resnet50': 'fc6', 'resnet101': 'fc6',
    'resnet152': 'fc6', 'googlenet': 'loss3_fc',
}


#: --optimizer -> the class of chainer.optimizers whose update --train's
#: step runs (the keys of memory.OPTIMIZERS).
OPTIMIZER_CLASSES = {'sgd': 'SGD', 'momentumsgd': 'MomentumSGD',
                     'adam': 'Adam'}


def make_optimizer(name):
    """A new optimizer of chainer.optimizers for --optimizer ``name``,
    with Chainer's default hyperparameters."""
    import chainer.optimizers
    return getattr(chainer.optimizers, OPTIMIZER_CLASSES[name])()


#: The command line's own folder: a failure raised there is the user's (a
#: model that returned the wrong thing), not a bug of the reports.
_CLI_DIR = os.path.join(PACKAGE_DIR, 'cli')


def _user_location(error):
    """'file:line' of the innermost frame of ``error`` in the user's code,
    or None.

    A model typically fails deep inside Chainer; the line worth showing
    is the user's call that led there.
    """
    if isinstance(error, SyntaxError) and error.filename:
        # The failing line never became a frame: the parser reports it.
        return '{}:{}'.format(error.filename, error.lineno)
    location = None
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename
        if not _is_library_file(filename):
            location = '{}:{}'.format(filename, lineno)
    return location


def user_failure(error):
    """Whether ``error``, raised by the user's code (importing, building
    or running the model), is that code's failure, told in one line: any
    exception, a ``sys.exit()`` and a library's own ``BaseException``;
    not Ctrl-C, which stops the command."""
    return not isinstance(error, KeyboardInterrupt)


def is_internal(error):
    """Whether ``error`` was raised inside this package's hook or report
    code: a bug here, whose traceback the user should see and report."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames:
        return False
    path = os.path.abspath(frames[-1][0].f_code.co_filename)
    return (is_under(path, PACKAGE_DIR) and not is_under(path, _CLI_DIR)
            and os.path.basename(path) != '__main__.py')


def _text(error):
    """``str(error)``, else its ``repr``, else '' (the type alone is
    told): an exception of the user's whose ``__str__`` fails must still
    be one line, not a traceback of its own."""
    for text in (str, repr):
        try:
            message = text(error)
        except Exception:
            continue
        if isinstance(message, str):
            return message
    return ''


def one_line(error):
    """'Type: message' with the message's lines joined: Chainer's type
    check errors span several lines."""
    if isinstance(error, SyntaxError):
        message = error.msg or ''
    else:
        message = _text(error)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    name = type(error).__name__
    return '{}: {}'.format(name, '; '.join(lines)) if lines else name


def failure(what, error):
    location = _user_location(error)
    where = ' at {}'.format(location) if location else ''
    return CommandError('{}{}: {}'.format(what, where, one_line(error)))


def _import_factory(spec, module_name, attr):
    try:
        factory = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only the user's own module being absent is a naming mistake; a
        # missing import inside that module is a failure of the module.
        if e.name and (module_name == e.name
                       or module_name.startswith(e.name + '.')):
            raise CommandError('cannot import module {!r} of model {!r}: '
                               '{}'.format(module_name, spec, e))
        raise failure('importing module {!r} failed'.format(module_name), e)
    except BaseException as e:
        if not user_failure(e):
            raise
        raise failure('importing module {!r} failed'.format(module_name), e)
    for part in attr.split('.'):
        try:
            factory = getattr(factory, part)
        except AttributeError as e:
            raise CommandError('cannot find the factory of model {!r}: '
                               '{}'.format(spec, e))
    if not callable(factory):
        raise CommandError('{} is an object of type {}, not a factory: give '
                           'a function that returns the model'.format(
                               spec, type(factory).__name__))
    return factory


def model_name(spec):
    """The name of a built-in model ``spec`` names in any case
    ('VGG16' is 'vgg16'), else ``spec`` unchanged."""
    return spec.lower() if spec.lower() in MODELS else spec


def _colon_hint(spec):
    """A hint for 'package.module.factory', which names the factory with a
    dot where a colon is needed."""
    module_name, dot, attr = spec.rpartition('.')
    if ':' in spec or not dot or not module_name or not attr:
        return ''
    return ' (a colon before the factory: {}:{}?)'.format(module_name, attr)


def _close(name, names):
    """The one of ``names`` ``name`` is most likely a slip for (any
    case), or None."""
    found = difflib.get_close_matches(name.lower(), list(names), n=1,
                                      cutoff=0.75)
    return found[0] if found else None


def check_model_or_command(spec, commands=()):
    """CommandError unless ``spec`` can name a model: a built-in one or
    ``package.module:factory``.  A slip for one of ``commands`` (the
    first argument, where a command goes) or a built-in model gets a
    suggestion."""
    if model_name(spec) in MODELS:
        return
    module_name, sep, attr = spec.partition(':')
    if sep and module_name and attr:
        return
    # (a start of a command's name, 3 letters or more: 'calib')
    starts = [c for c in commands if c.startswith(spec.lower())] \
        if len(spec) >= 3 else []
    command = starts[0] if len(starts) == 1 else _close(spec, commands)
    if command is not None:
        raise CommandError('unknown command or model {!r}; did you mean '
                           '{!r}?'.format(spec, command))
    model = _close(spec, MODELS)
    raise CommandError('unknown model {!r}{}: use one of {} or '
                       'package.module:factory{}'.format(
                           spec, '' if model is None else
                           ' (did you mean {!r}?)'.format(model),
                           ', '.join(sorted(MODELS)), _colon_hint(spec)))


def load_model(spec):
    """The model named by ``spec``, built by calling its factory.

    ``spec`` is a name in :data:`MODELS` or ``package.module:factory``
    (the factory is called without arguments). Every failure, the user's
    factory raising included, is a :class:`CommandError` with a one-line
    message.
    """
    if model_name(spec) in MODELS:
        factory = MODELS[model_name(spec)]
    else:
        check_model_or_command(spec)
        module_name, _, attr = spec.partition(':')
        factory = _import_factory(spec, module_name, attr)
    try:
        model = factory()
    except BaseException as e:
        if not user_failure(e):
            raise
        raise failure('building the model failed', e)
    if model is None:
        raise CommandError('the factory of {} returned None: it must return '
                           'the model'.format(spec))
    if not callable(model):
        raise CommandError('the factory of {} returned an object of type {}, '
                           'which is not callable: it must return the '
                           'model'.format(spec, type(model).__name__))
    return model
