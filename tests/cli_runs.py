"""Command lines whose output several tests assert (test_docs, test_bad_input, ...), each run
once per test session, in process: cli.main from the repository's root, no standard input."""

import functools
import io
import os
from pathlib import Path

from tinyadder.cli import main

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def cli_once(*argv):
    """(exit status, standard output, standard error) of ``python -m tinyadder ARGV``."""
    here = os.getcwd()
    os.chdir(ROOT)  # the pages' relative paths (tests/models/...) are from the root
    try:
        out, err = io.StringIO(), io.StringIO()
        status = main(list(argv), out=out, err=err, stdin=io.StringIO())
    finally:
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()
