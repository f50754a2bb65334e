"""``--jobs``: work split over processes (standard-library ``multiprocessing``) by a fixed
rule, so that the result does not depend on how many processes there are or which ran what.

Part k goes to process k mod jobs, and the results are read back in the order of the parts.
The processes are forked (so the work, a model included, reaches them without pickling; only
the results travel, one pipe per process) and the parent starts no thread of its own: a
``multiprocessing.Pool`` keeps three, and forking beside threads can leave a child holding a
lock that no thread of it will release. Where the platform cannot fork, the parts run one
after the other in this process."""

import multiprocessing
import signal


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
    """work(part) for part in parts, yielded in the order of the parts, from ``jobs``
    processes when jobs > 1 (part k computed by process k mod jobs); a part's exception is
    raised here, and the processes end when the caller stops (or is interrupted)."""
    if jobs <= 1 or len(parts) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(work, parts)
        return
    context = multiprocessing.get_context("fork")
    workers = []
    try:
        for j in range(min(jobs, len(parts))):
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_serve, args=(work, parts[j::jobs], send),
                                      daemon=True)
            process.start()
            send.close()  # the child's end: EOF here once the child is gone
            workers.append((process, receive))
        for k in range(len(parts)):
            process, receive = workers[k % len(workers)]
            try:
                ok, value = receive.recv()
            except EOFError:
                process.join(5)  # reaped, so that its exit status is known
                raise RuntimeError(f"--jobs: worker process {process.pid} ended (exit status "
                                   f"{process.exitcode}) before its part {k} was done") from None
            if not ok:
                raise value
            yield value
    finally:
        for process, receive in workers:
            process.terminate()
            process.join()
            receive.close()


def _serve(work, parts, send):
    """In a worker: (True, work(part)) for each part, in order, or (False, its exception)."""
    # Ctrl-C reaches the whole process group: the parent stops the run and ends the workers,
    # which would otherwise each print a KeyboardInterrupt traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for part in parts:
        try:
            result = (True, work(part))
        except Exception as error:  # raised again in the parent
            result = (False, error)
        try:
            send.send(result)
        except Exception as error:  # an exception or result that does not pickle
            send.send((False, RuntimeError(f"--jobs: a part's result could not be sent: "
                                           f"{error!r}")))
        if not result[0]:
            return
