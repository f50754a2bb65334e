"""The process around the command line: ``python -m tinyadder`` and the ``tinyadder`` command.

``entry`` runs ``cli.main`` on the real standard streams and exits with its status. Its first
instruction makes Ctrl-C during start-up (importing the package takes a good part of a
second) end the run at once, with one line and exit status 130, as Ctrl-C does later; so this
file imports nothing of the package before it, and takes signals from the C module
``_signal``, loaded with the interpreter (``signal`` imports ``enum``: milliseconds in which
Ctrl-C would be Python's traceback).
"""

import _signal
import os
import sys

INTERRUPTED = b"tinyadder: interrupted\n"


def _interrupted_at_start(signum, frame):
    """SIGINT before ``cli.main`` runs: nothing is written yet, so nothing is lost."""
    try:
        if sys.stderr is not None:
            os.write(sys.stderr.fileno(), INTERRUPTED)
    except (OSError, ValueError):
        pass
    os._exit(130)


def entry():
    """Console-script entry point: run the command line, exit with its status."""
    # Python's own handler unless SIGINT was ignored (nohup, a background job): keep that
    catching = _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
    if catching:
        _signal.signal(_signal.SIGINT, _interrupted_at_start)
    main, PROG, Diagnostics = _cli()
    try:
        if catching:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)  # cli.main takes Ctrl-C
        status = main()
    except KeyboardInterrupt:  # after start-up, before cli.main's own handler
        Diagnostics(sys.stderr).write(INTERRUPTED.decode())
        status = 130
    if catching:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the run is over: only exiting is left
    error = _settle(sys.stdout)
    if error and not isinstance(error, BrokenPipeError) and status != 2:
        # argparse's --help swallows a failed write: report it here
        Diagnostics(sys.stderr).write(f"{PROG}: error: cannot write standard output: "
                                      f"{getattr(error, 'strerror', None) or error}\n")
        status = 2
    _settle(sys.stderr)
    sys.exit(status)


def _cli():
    """(cli.main, PROG, Diagnostics) of this package; run as a path (``python
    path/to/tinyadder``), the package is the folder this file sits in, found by its path."""
    if __package__:
        from .cli import main
        from .cli.options import PROG, Diagnostics
        return main, PROG, Diagnostics
    import importlib
    folder = os.path.dirname(os.path.abspath(__file__))
    # Python put the folder itself first on the path, where its numbers/ hides the library's
    sys.path[:] = [os.path.dirname(folder)] + [p for p in sys.path
                                               if os.path.abspath(p or ".") != folder]
    options = importlib.import_module(f"{os.path.basename(folder)}.cli.options")
    return importlib.import_module(f"{os.path.basename(folder)}.cli").main, options.PROG, \
        options.Diagnostics


def _settle(stream):
    """Flush a standard stream; return None, or the error, after pointing the stream's
    descriptor at /dev/null: what is still buffered for a closed pipe or a full device must
    not fail again (an "Exception ignored" message, exit status 120) when Python flushes at
    exit."""
    if stream is None:
        return None
    try:
        stream.flush()
        return None
    except (OSError, ValueError) as error:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except (OSError, ValueError):
            pass
        return error

if __name__ == "__main__":
    entry()
