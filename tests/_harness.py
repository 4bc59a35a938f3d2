"""The command line without a new interpreter: ``forked_knnx`` runs ``knnx ARGS`` in a
fork of the test process (knnx, scikit-learn and numba already imported, the kernels
already loaded), its stdout and stderr in files, its exit code the process's: what a
user's shell sees, for a few milliseconds instead of two seconds of imports.

For cases that end their process (``os._exit`` in a user's class, a signal) or whose
exit code and stream are the point. What must be a real new process stays one: the
cold start, the import cost, signals sent from outside, a cold numba cache, an
environment read at import time (tests/experiment/test_warmup.py, test_runner_cost.py,
test_trust.py's kill -9, and one real ``python -m knnx.cli`` per exit-code contract in
test_containment.py and test_validation_guards.py)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _preload():
    """What ``knnx run`` imports (the runner, the estimators, the reporting): imported once
    here, so that no fork imports it again (the second it takes is the cost a fork saves)."""
    import knnx.cli  # noqa: F401
    import knnx.estimators.registry  # noqa: F401
    import knnx.experiment.runner  # noqa: F401
    import knnx.reporting.figures  # noqa: F401
    import knnx.reporting.html  # noqa: F401


_preload()


def forked_knnx(*args, timeout=240, cwd=None, env=None):
    """``subprocess.CompletedProcess`` of ``knnx ARGS`` run in a fork of this process
    (``cwd``: its folder; ``env``: variables set in it, read at run time only). The fork
    gets fresh module state for code the test process has not imported (a user's
    package beside a spec is imported in the fork, as in a new process)."""
    args = [str(a) for a in args]
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "out"), os.path.join(tmp, "err")]
        sys.stdout.flush(), sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            _child(args, paths, cwd, env)
        code = _wait(pid, timeout)
        out, err = (open(p, encoding="utf-8", errors="replace").read() for p in paths)
    if code is None:
        raise subprocess.TimeoutExpired(["knnx", *args], timeout, out, err)
    return subprocess.CompletedProcess(["knnx", *args], code, out, err)


def _child(args, paths, cwd, env):
    code = 70
    try:
        os.setpgid(0, 0)  # its own group: a timeout kills what it started too
        for fd, path in zip((1, 2), paths, strict=True):
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, fd)
            os.close(handle)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
        os.environ.update(env or {})
        _forget_user_modules()
        if cwd is not None:
            os.chdir(cwd)
        sys.path[:] = [os.getcwd(), *_fresh_path()[1:]]  # as `python -m knnx.cli` starts
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from knnx.cli import main

        sys.argv = ["knnx", *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as Python reports an uncaught exception
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            _shut_down()
            sys.stdout.flush(), sys.stderr.flush()
        finally:
            os._exit(code)


_FRESH_PATH = []


def _fresh_path():
    """``sys.path`` of a new interpreter started as this one is (its first entry, the
    folder of ``python -m``, replaced by the caller): earlier tests may have left theirs
    longer, and a folder on it may hold a package of the name a test's spec imports."""
    if not _FRESH_PATH:
        code = "import json, sys; print(json.dumps(sys.path))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        _FRESH_PATH.extend(json.loads(done.stdout))
    return _FRESH_PATH


def _forget_user_modules():
    """Forget the modules a new interpreter would not have: those imported from outside
    Python's and the environment's folders and this repository (a user's package that an
    earlier test imported from its temporary folder), so the fork imports them afresh."""
    import importlib

    roots = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, _REPO})
    for name, module in list(sys.modules.items()):
        if module is None:  # an import an earlier test blocked
            del sys.modules[name]
            continue
        paths = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
        paths = [os.path.realpath(p) for p in paths if isinstance(p, str)]  # a namespace package: its folders
        if paths and not all(p.startswith(roots) for p in paths):
            del sys.modules[name]
    sys.path_importer_cache.clear()  # folders listed before a test wrote its package there
    importlib.invalidate_caches()


def _shut_down():
    """What the interpreter's exit does for the pools a run may leave behind
    (multiprocessing's atexit hook: its worker processes joined or terminated)."""
    if "multiprocessing.util" in sys.modules:
        sys.modules["multiprocessing.util"]._exit_function()


def _wait(pid, timeout):
    """The exit code of child ``pid`` (-N for signal N, as subprocess says it), or None
    after ``timeout`` seconds (the child and its group then killed)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(0.005)


_fresh_path()  # once per test process, before any test changes its path


@contextlib.contextmanager
def numba_threads(n):
    """numba's thread count set to ``n`` (at most what numba started with) inside."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(before)
