"""The command line: ``python -m tinyadder 7650676663+0149460439`` and its subcommands.

Dispatch only: ``argv[0]`` names a subcommand (``SUBCOMMANDS``) or the arguments are the main
command's (``cli.main_command``). Every command is ``main(argv, out, err, stdin) -> exit status``; the
streams, the exceptions that end a run and the exit statuses are handled here, once.

Exit status (docs/cli.md): 0 every answer right; 1 the model gave a wrong sum (a warning names
it); 2 bad input or usage, or standard output could not be written or is closed (one line on
standard error; the other expressions are still answered); 130 interrupted (Ctrl-C). A reader
who closes the pipe early (``... | head``) ends the run after the expression at hand, whose
warning and status still count. Standard error that is closed or full changes nothing but
the messages lost. The process around this (start-up, exit) is ``tinyadder.__main__``.
"""

import importlib
import io
import sys

from .options import PROG, SUBCOMMANDS, Diagnostics, Output, OutputError


def _command(argv, out, err, stdin):
    """The exit status of one command line (a subcommand or the main command)."""
    if argv and argv[0] in SUBCOMMANDS:
        module, argv = SUBCOMMANDS[argv[0]], argv[1:]
    else:
        module = "main_command"
    return importlib.import_module(f"{__name__}.{module}").main(argv, out, err, stdin)


def main(argv=None, out=None, err=None, stdin=None):
    """Run one command line; return its exit status (see the module docstring)."""
    stdout, stderr = sys.stdout, sys.stderr
    out = Output(out or stdout)  # None when the shell closed it (>&-): a write fails at once
    err = Diagnostics(err or stderr)  # closed or full: dropped, standard output stays clean
    stdin = stdin or sys.stdin or io.StringIO()  # None when the shell closed it (<&-)
    argv = list(sys.argv[1:] if argv is None else argv)
    # argparse writes --help and --version to sys.stdout (ignoring OSError) and its errors to
    # sys.stderr: point them at this command's streams
    sys.stdout, sys.stderr = out, err
    try:
        try:
            status = _command(argv, out, err, stdin)
        except SystemExit as exit_:  # argparse: --help, --version, a usage error
            status = 0 if exit_.code is None else exit_.code
        out.flush()
        return status
    except OutputError as error:
        print(f"{PROG}: error: cannot write standard output: {error}", file=err)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    except MemoryError:
        print(f"{PROG}: error: out of memory; try a smaller --digits (a model file: its "
              f"prompt.digits) or fewer expressions", file=err)
        return 2
    finally:
        sys.stdout, sys.stderr = stdout, stderr
