"""The command line's models (cli/models.py): the presets are
``chainer.links``' models built without weights; a user's module or
factory that exits (SystemExit) is a failure of the model, one error line
naming the user's line, status 2; Ctrl-C still stops the command
(130)."""

from chainer_computational_cost.cli.main import main
from chainer_computational_cost.cli.models import MODELS
from cli_runs import error_of
from cli_runs import write_module


def test_the_presets_are_chainer_links_models_without_weights(monkeypatch):
    # (no weights can be downloaded here, and the costs need shapes only)
    import chainer.links as L
    made = []
    for name in ('VGG16Layers', 'VGG19Layers', 'ResNet50Layers',
                 'ResNet101Layers', 'ResNet152Layers', 'GoogLeNet'):
        monkeypatch.setattr(L, name, lambda name=name, **kwargs: (
            made.append(kwargs) or name))
    assert {preset: build() for preset, build in MODELS.items()} == {
        'vgg16': 'VGG16Layers', 'vgg19': 'VGG19Layers',
        'resnet50': 'ResNet50Layers', 'resnet101': 'ResNet101Layers',
        'resnet152': 'ResNet152Layers', 'googlenet': 'GoogLeNet'}
    assert made == [{'pretrained_model': None}] * 6


def test_a_module_that_exits_on_import(tmp_path, monkeypatch, capsys):
    path = write_module(tmp_path, 'cli_exits_on_import',
                        'import sys\n'
                        'sys.exit(3)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_exits_on_import:build') == (
        "error: importing module 'cli_exits_on_import' failed at {}:2: "
        'SystemExit: 3'.format(path))


def test_a_factory_that_exits(tmp_path, monkeypatch, capsys):
    path = write_module(tmp_path, 'cli_exiting_factory',
                        'def build():\n'
                        '    raise SystemExit(5)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_exiting_factory:build') == (
        'error: building the model failed at {}:2: SystemExit: '
        '5'.format(path))


def test_ctrl_c_in_a_factory_is_still_an_interruption(tmp_path, monkeypatch,
                                                      capsys):
    write_module(tmp_path, 'cli_interrupted_factory',
                 'def build():\n'
                 '    raise KeyboardInterrupt\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(['cli_interrupted_factory:build']) == 130
    assert capsys.readouterr().err == 'interrupted\n'


def test_an_exception_that_cannot_be_told_is_named_by_its_type(
        tmp_path, monkeypatch, capsys):
    # its __str__ raised inside the error's own formatting: a traceback
    # and status 1; its repr is taken, else its type alone
    path = write_module(tmp_path, 'cli_untellable',
                        'class Weird(Exception):\n'
                        '    def __str__(self):\n'
                        "        raise RuntimeError('str fails')\n"
                        'class Weirder(Weird):\n'
                        '    def __repr__(self):\n'
                        "        raise RuntimeError('repr fails')\n"
                        'def build():\n'
                        '    raise Weird(1)\n'
                        'def build2():\n'
                        '    raise Weirder()\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_untellable:build') == (
        'error: building the model failed at {}:8: Weird: Weird(1)'.format(
            path))
    assert error_of(capsys, 'cli_untellable:build2') == (
        'error: building the model failed at {}:10: Weirder'.format(path))


def test_a_model_that_exits_while_it_runs(tmp_path, monkeypatch, capsys):
    # sys.exit(0) in the forward pass is not a success without a report
    path = write_module(
        tmp_path, 'cli_exiting_model',
        'import sys\n'
        'import chainer.links as L\n'
        'def build(code=0):\n'
        '    link = L.Linear(3, 2)\n'
        '    def run(x):\n'
        '        link(x)\n'
        '        sys.exit(code)\n'
        '    return run\n'
        'def build4():\n'
        '    return build(4)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec, code in (('build', 0), ('build4', 4)):
        for extra in ((), ('--train',)):
            assert error_of(
                capsys, 'cli_exiting_model:' + spec, '--shape', '2,3',
                *extra) == (
                    'error: the model exited on input of shape (2, 3) and '
                    'dtype float32 at {}:7: SystemExit: {}'.format(path, code))


def test_a_library_base_exception_is_a_failure_of_the_model(
        tmp_path, monkeypatch, capsys):
    # (as a coroutine library's own BaseException subclasses)
    path = write_module(tmp_path, 'cli_base_exception',
                        'class Abort(BaseException):\n'
                        '    pass\n'
                        'def build():\n'
                        "    raise Abort('stopped')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_base_exception:build') == (
        'error: building the model failed at {}:4: Abort: stopped'.format(
            path))


def test_an_optimizer_update_that_exits_is_a_failure_of_the_update(
        tmp_path, monkeypatch, capsys):
    # SGD's update replaced by one that calls sys.exit: one line, status
    # 2, where it happened (not a traceback, nor status 5)
    import chainer
    path = write_module(tmp_path, 'cli_exiting_update',
                        'import sys\n'
                        'def update(self, lossfun=None, *args, **kwargs):\n'
                        '    sys.exit(5)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import cli_exiting_update
    monkeypatch.setattr(chainer.optimizers.SGD, 'update',
                        cli_exiting_update.update)
    assert error_of(capsys, 'cli_models:build_linear', '--shape', '2,3',
                    '--train', '--optimizer', 'sgd') == (
        "error: the optimizer's update failed at {}:3: SystemExit: "
        '5'.format(path))
