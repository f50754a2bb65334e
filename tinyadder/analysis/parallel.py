"""``--jobs``: work split over processes (standard-library ``multiprocessing``) by a fixed
rule, so that the result does not depend on how many processes there are or which ran what.

The processes are forked (so the work, a model included, reaches them without pickling; only
the parts and the results travel between processes); where the platform cannot fork, the
parts run one after the other in this process."""

import multiprocessing
import signal

_WORK = None  # the work of this process, in a worker


def shares(items, jobs):
    """``items`` (a list) in at most ``jobs`` shares: item k goes to share k mod jobs."""
    return [items[j::jobs] for j in range(jobs) if items[j::jobs]]


def run_shares(work, parts, jobs, progress=None):
    """[work(part) for part in parts], in ``jobs`` processes when jobs > 1, the results in
    the order of the parts; ``progress(done, total)`` after each part."""
    out = []
    for result in each_share(work, parts, jobs):
        out.append(result)
        if progress:
            progress(len(out), len(parts))
    return out


def each_share(work, parts, jobs):
    """work(part) for part in parts, yielded in the order of the parts as they come, from
    ``jobs`` processes when jobs > 1; the processes end when the caller stops (or is
    interrupted)."""
    if jobs <= 1 or len(parts) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(work, parts)
        return
    pool = multiprocessing.get_context("fork").Pool(
        min(jobs, len(parts)), initializer=_install, initargs=(work,))
    try:
        yield from pool.imap(_run, parts)
    finally:
        pool.terminate()


def _install(work):
    global _WORK
    _WORK = work
    # Ctrl-C reaches the whole process group: the parent stops the run and ends the workers,
    # which would otherwise each print a KeyboardInterrupt traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(part):
    return _WORK(part)
