"""What the command line's parsers share: a one-line-error parser, validators, the --number,
--model and --digits options, standard input read line by line, and standard output that
survives a reader who leaves (a closed pipe) and reports a failed write in one line.

Every subcommand gets these by using them: ``Parser`` for its options, ``int_arg`` for a whole
number, ``input_lines`` for standard input; ``Output`` and ``OutputError`` are applied by
``cli.main`` around every command.
"""

import argparse
from dataclasses import dataclass, replace
import os
import time
from typing import Optional

from .. import models, task
from ..addition import EXCERPT, InputError, excerpt, split_expression
from ..construction import DIGITS, MAX_DIGITS, SLOTS, VARIANTS, check_digits
from ..modelfile import ModelFileError
from ..onnx import OnnxError
from ..numbers import (DEFAULT_DECIMAL_DIGITS, DEFAULT_EXP_DIGITS, MAX_DECIMAL_DIGITS,
                       NUMBER_CHOICES, number_system)

PROG = "tinyadder"

# subcommand -> its module in tinyadder.cli; each owns its parser and main(argv, out, err, stdin)
SUBCOMMANDS = {
    "bench": "bench",
    "board": "board",
    "census": "census",
    "check-certificate": "check_certificate",
    "compile": "compile",
    "explain": "explain",
    "export": "export",
    "explore": "explore",
    "figure": "figure",
    "hunt": "hunt",
    "import": "import_onnx",
    "params": "params",
    "precision": "precision",
    "program": "program",
    "prove": "prove",
    "verify": "verify",
}
MESSAGE = 200  # characters of an argparse message (which may quote a whole argument)


def split_hint(parts):
    """The message for an addition the shell split into several arguments (``1 + 2``
    unquoted), or None if ``parts`` joined with spaces is not one addition."""
    text = " ".join(parts)
    try:
        split_expression(text)
    except InputError:
        return None
    quote = f': "{text}"' if len(text) <= EXCERPT else ""
    return f"the shell split {excerpt(text)} into several arguments; quote it{quote}"


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, without the usage block, quoting at most
    an excerpt of a long argument; an EXPR the shell split (``explain 1 + 2``) gets the hint
    to quote it instead of "unrecognized arguments". An option is taken only by its whole
    name (``--model`` is not ``--models`` abbreviated), and ``-o -`` is standard output where
    -o's help says that is its default (export), else refused."""

    def __init__(self, *args, allow_abbrev=False, **kwargs):
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)

    def error(self, message):
        message = " ".join(message.split())
        if len(message) > MESSAGE:
            message = message[:MESSAGE - 20] + f"... ({len(message)} characters)"
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            expression = getattr(parsed, "expression", None)
            hint = split_hint([expression] + extras) if isinstance(expression, str) else None
            self.error(hint or f"unrecognized arguments: {' '.join(extras)}")
        return self.checked(parsed)

    def parse_intermixed_args(self, args=None, namespace=None):
        return self.checked(super().parse_intermixed_args(args, namespace))

    def checked(self, parsed):
        """``-o -`` as standard output where -o's help says that is its default, else
        refused; --model FILE.onnx read again with --layout, once both are known."""
        if getattr(parsed, "output", None) == "-":
            helps = [a.help or "" for a in self._actions if a.dest == "output"]
            if not any("default: standard output" in h for h in helps):
                self.error("argument -o/--output: '-' (standard output) is not a place for "
                           "what this command writes; give a file name")
            parsed.output = None  # standard output, the default
        if getattr(parsed, "layout", None) is not None and hasattr(parsed, "model"):
            parsed.model = with_layout(self, parsed.model, parsed.layout)
        return parsed


def int_arg(lo=None, hi=None):
    """An argparse type: ASCII digits (and a '-' when ``lo`` allows it) giving an int in
    lo..hi. ``int()`` alone would take '٣' and '1_000', and fail past 4300 digits."""
    if lo is None:
        wanted = "an integer"
    elif hi is not None:
        wanted = f"an integer from {lo} to {hi}"
    else:
        wanted = {0: "a non-negative integer", 1: "a positive integer"}.get(
            lo, f"an integer of at least {lo}")

    def parse(text):
        body = text.strip()
        digits = body[1:] if body.startswith("-") and (lo is None or lo < 0) else body
        ok = digits.isascii() and digits.isdigit() and len(digits) <= 30
        value = int(body) if ok else None
        if (value is None or (lo is not None and value < lo)
                or (hi is not None and value > hi)):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {excerpt(text)}")
        return value
    return parse


def number_arg(text):
    try:
        return number_system(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


@dataclass(frozen=True)
class ModelChoice:
    """--model as given: a shipped model's name, or a model file and the model read from it."""

    text: str
    file: Optional[object] = None  # the file's Model

    def __str__(self):
        return self.text

    def build(self, digits):
        """The model for ``digits`` operand digits (None: the model's own N)."""
        return models.build(self.text, digits) if self.file is None else \
            models.at_digits(self.file, digits, self.text)


def model_arg(text):
    """A shipped model's name or the path of a model file (or an ONNX file, .onnx), read
    here, so that a bad file is this option's one-line error."""
    if text in models.names() or text in models.program_names():
        return ModelChoice(text)
    if os.path.exists(text) or text.endswith((".json", ".onnx")) or os.sep in text:
        try:
            return ModelChoice(text, models.read_file(text))
        except (ModelFileError, OnnxError) as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    raise argparse.ArgumentTypeError(f"unknown model {excerpt(text)}; use {models.others()}, "
                                     f"a board model (tinyadder board lists them) or a model file")


def layout_arg(text):
    """--layout FILE.json: a layout (``onnx.layout``), read here."""
    from ..onnx import layout  # here: most runs read no layout
    try:
        return layout.load(text)
    except OnnxError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def with_layout(parser, choice, layout):
    """The ONNX file of --model read again, named and prompted by --layout."""
    if choice is None or choice.file is None or not str(choice).endswith(".onnx"):
        parser.error(f"--layout names the tokens and prompt of an ONNX file given with "
                     f"--model FILE.onnx, not of {choice}")
    from ..onnx.read import load
    try:
        return ModelChoice(choice.text, load(choice.text, layout))
    except OnnxError as err:
        parser.error(str(err))


def model_of(parser, args, adds=True, tasks=False):
    """The model ``args.model`` and ``args.digits`` choose; a file for another N than --digits,
    or (``adds``) a model without an addition prompt (``tasks``: nor a finite task), is the
    parser's one-line error."""
    try:
        model = printable(args.model.build(getattr(args, "digits", None)))
    except ValueError as err:
        parser.error(str(err))
    if adds and model.prompt is None and model.task is not None and not tasks:
        parser.error(f"the model {args.model} does not add: it computes a finite task "
                     f"(inputs {task.listing(model)}), which the main command, verify, "
                     f"prove, explore, figure and explain take")
    if adds and model.prompt is None and model.task is None:
        hint = "; give its layout with --layout FILE.json (docs/onnx.md)" if \
            str(args.model).endswith(".onnx") else ""
        parser.error(f"the model {args.model} does not add: it has no prompt{hint}")
    return model


def printable(model):
    """``model``, or the same model named by ``ascii()`` of its name where that has a
    control character (a file's or an ONNX graph's name such as "\\x1b[2J...", which would
    clear the terminal): every line that prints the name is then safe, as an expression
    is quoted."""
    if model.name.isprintable():
        return model
    return replace(model, name=ascii(model.name))


def tinyadder_problem(model, what):
    """Why ``what``, which reads TinyAdder-36's slots and two layers by name, cannot explain
    ``model``; None if it can."""
    if set(SLOTS) <= set(model.slots) and len(model.blocks) == 2:
        return None
    return (f"{what} reads TinyAdder-36's slots ({', '.join(SLOTS[:5])}, ...) and two layers "
            f"by name; the model {model.name} has others")


MAX_JOBS = 64


def add_jobs_option(parser, what="the work"):
    """--jobs N: processes for ``what`` (``analysis.parallel``)."""
    parser.add_argument("--jobs", type=int_arg(1, MAX_JOBS), default=1, metavar="N",
                        help=f"split {what} over N processes, 1 <= N <= {MAX_JOBS} "
                             f"(default 1); the result is the same for every N")


def construction_only(parser, args, what):
    """Refuse a model file or a shipped AdderBoard model for ``what``, which builds the model
    at several N; hand the construction's name on to the analysis."""
    if args.model.file is not None or str(args.model) not in VARIANTS:
        kind = "a model file" if args.model.file is not None else f"{args.model}"
        parser.error(f"{what} builds the model for each N; {kind} is written for one N: use "
                     f"{', '.join(VARIANTS)}")
    args.model = str(args.model)


def digits_arg(text):
    body = text.strip()
    if not (body.isascii() and body.isdigit() and len(body) <= 30):
        raise argparse.ArgumentTypeError(
            f"N must be a whole number of digits, 1 to {MAX_DIGITS}; got {excerpt(text)}")
    try:
        return check_digits(int(body))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def digits_list_arg(text):
    """'10,20,50' -> [10, 20, 50], each checked as --digits is."""
    return [digits_arg(part) for part in text.split(",")]


def add_digits_option(parser):
    """--digits N: the operand length the construction is built for."""
    parser.add_argument(
        "--digits", type=digits_arg, default=None, metavar="N",
        help=f"operand length: build the construction for N-digit operands, 1 <= N <= "
             f"{MAX_DIGITS} (default {DIGITS}, the published model; a model file: its own "
             f"N). The sequence is 3N + 4 tokens; the constants that depend on N are derived "
             f"in docs/digits.md; the parameter count stays 36")


def add_model_options(parser, number="fraction", model="published"):
    """--number and --model, shared by every command that runs the model; ``number`` and
    ``model`` are this command's defaults (``number=None``: the command's own choice)."""
    default = {"fraction": "fraction (default)"}.get(number, "fraction")
    parser.add_argument(
        "--number", type=number_arg, default=number, metavar="SYSTEM",
        help=f"number system: {NUMBER_CHOICES}. {default} is exact except that "
             f"e^x of the head-3 scores (e^-40 and e^-1000 at N = 10; e^40 is 1/e^-40) is "
             f"rounded to N + 40 digits ({DEFAULT_EXP_DIGITS} at N = 10) once per argument, "
             f"and every digit is certified for the real-number model. decimal "
             f"without P picks P = N + 30 significant digits (P = {DEFAULT_DECIMAL_DIGITS} "
             f"at N = 10): place values carry the rounding of scores of size about 10N into "
             f"sums of size 10^(N+4), and each digit is decided by a fifth of a unit, so P "
             f"must exceed about N + 4 digits; N + 30 leaves more than 20 to spare (see "
             f"'{PROG} precision'). P is at most {MAX_DECIMAL_DIGITS}: that covers N + 30 "
             f"for every N up to {MAX_DIGITS}, and more digits only cost time (P = 10000 "
             f"takes 40 s per addition). float is IEEE double, like the "
             f"published PyTorch model; float32 is IEEE single (emulated), which fails at "
             f"N = 10" + (f". Default: {number}" if number not in (None, "fraction") else ""))
    add_model_option(parser, model)


def add_model_option(parser, model="published"):
    """--model NAME|FILE, ``model`` by default."""
    parser.add_argument(
        "--model", type=model_arg, default=model, metavar="NAME|FILE",
        help=f"published{' (default)' if model == 'published' else ''}: the construction as "
             f"published, including its readout flaw near carry boundaries; "
             f"repaired{' (default)' if model == 'repaired' else ''}: the same 36 parameters "
             f"with the readout reading only the layer-1 FFN's own slots; variant-28; a board "
             f"model, AdderBoard's entries (docs/models.md; '{PROG} board' lists them); or a "
             f"model file (docs/model-format.md) or an ONNX file, FILE.onnx (docs/onnx.md)")
    parser.add_argument(
        "--layout", type=layout_arg, metavar="FILE.json",
        help="with --model FILE.onnx from another tool: the tokens' names and the prompt, "
             "a JSON object of a model file's vocab and prompt (docs/onnx.md)")


# --- standard input and output ------------------------------------------------------------

MAX_LINE = 2 ** 20  # bytes (characters, for a text stream) of one line of standard input


def bounded_lines(stream, limit=MAX_LINE):
    """(line, whole) for each line of ``stream`` (bytes or text): a line longer than
    ``limit`` comes back cut to ``limit`` with ``whole`` false, its rest read and dropped
    chunk by chunk, so memory stays bounded whatever arrives (``- < /dev/zero`` never ends a
    line). OSError from a read propagates."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line[limit:] in ("\n", b"\n"):
            yield line, True
            continue
        yield line[:limit], False  # first: the rest may never end
        while line and line[-1:] not in ("\n", b"\n"):
            line = stream.readline(limit)


def input_lines(stdin):
    """(line number, text or None, problem) for each line of ``stdin``: bytes are decoded as
    UTF-8 here, so that a bad line is reported as "invalid UTF-8" and the others still read;
    a line longer than MAX_LINE is reported and skipped; a byte order mark opening the first
    line is dropped; a failed read ends the lines with its problem."""
    source = bounded_lines(getattr(stdin, "buffer", None) or stdin)
    number = 0
    while True:
        number += 1
        try:
            line, whole = next(source)
        except StopIteration:
            return
        except OSError as err:  # a closed descriptor, a device error
            yield number, None, f"cannot read standard input: {err.strerror or err}"
            return
        if not whole:
            yield number, None, (f"longer than {MAX_LINE:,} characters; an expression is "
                                 f"two operands of at most N digits")
            continue
        try:
            if isinstance(line, bytes):
                line = line.decode("utf-8")
            else:
                line.encode("utf-8")  # lone surrogates: bytes a text layer could not decode
        except UnicodeError:
            yield number, None, "invalid UTF-8"
            continue
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield number, line, None


class Keys:
    """Standard input as ``--step`` reads it: ``readline`` of at most ``limit`` characters
    (a command is a word and an argument: a longer line comes back cut, its rest dropped),
    and ``isatty``. A failed read ends the keys, as the end of input does."""

    def __init__(self, stream, limit=200):
        self.stream = stream
        self.lines = bounded_lines(stream, limit)

    def readline(self):
        try:
            return next(self.lines, ("", True))[0]
        except OSError:
            return ""

    def isatty(self):
        return hasattr(self.stream, "isatty") and self.stream.isatty()


class OutputError(Exception):
    """Standard output could not be written (a full disk, /dev/full, a lost device)."""


class Output:
    """A command's standard output. A reader who leaves (BrokenPipeError: ``... | head``) is
    not an error: later writes are dropped and ``left`` is set, so the command can stop after
    the item at hand, its warning and exit status intact. Any other failed write, or a write
    to a closed standard output (``stream`` None: the shell's ``>&-``), raises OutputError,
    which ``cli.main`` turns into one line and exit status 2."""

    def __init__(self, stream):
        self.stream = stream
        self.left = False
        self._bytes = False  # writing to the stream's byte layer (``_write``)

    def _do(self, call, *args):
        if self.left:
            return None
        if self.stream is None:
            raise OutputError("it is closed")
        try:
            return call(*args)
        except BrokenPipeError:
            self.left = True
        except OSError as err:
            raise OutputError(err.strerror or str(err)) from None
        return None

    def write(self, text):
        self._do(self._write, text)
        return len(text)

    def _write(self, text):
        """Write ``text`` whole. A text stream's byte layer is written here, not through the
        text layer, which drops a short write's count: past a file size limit (``ulimit -f``)
        the data would be cut without an error. The rest of a short write is written again,
        which fails with the cause (OSError: File too large)."""
        buffer = getattr(self.stream, "buffer", None)
        encoding = getattr(self.stream, "encoding", None)
        if buffer is None or not isinstance(encoding, str):
            self.stream.write(text)
            return
        if not self._bytes:  # what the text layer holds goes first
            self.stream.flush()
            self._bytes = True
        data = memoryview(text.encode(encoding, self.stream.errors or "strict"))
        while data:
            done = buffer.write(data)
            if not done:
                raise OSError("a write that wrote nothing")
            data = data[done:]
        if getattr(self.stream, "line_buffering", False) and ("\n" in text or "\r" in text):
            buffer.flush()

    def flush(self):
        self._do(lambda: self.stream.flush())

    def isatty(self):
        return hasattr(self.stream, "isatty") and self.stream.isatty()

    def __getattr__(self, name):
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


class Diagnostics:
    """A command's standard error: warnings, errors and progress. If it is closed (``2>&-``)
    or cannot be written (``2>/dev/full``), what is written to it is dropped: the run, its
    standard output and its exit status are the same as with a working standard error."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            self.stream.write(text)
        except (AttributeError, OSError, ValueError):  # None, a failed or a closed stream
            pass
        return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except (AttributeError, OSError, ValueError):
            pass

    def isatty(self):
        try:
            return self.stream.isatty()
        except (AttributeError, OSError, ValueError):
            return False


class Progress:
    """What a long command is doing, on ``stream`` (standard error): the one progress reporter.

    Analyses report each step as ``progress(done, total, note)`` (``total`` None when unknown).
    On a terminal one line is redrawn in place, with a bar when the total is known; elsewhere a
    plain line is printed at the first step (unless ``at_once`` is false), then every ``every``
    steps or ``seconds`` seconds, whichever comes first. Each line ends with the elapsed time
    and the rate.
    """

    def __init__(self, stream, what="", every=None, seconds=10.0, width=79, bar=20,
                 at_once=True):
        self.stream, self.what, self.every, self.seconds = stream, what, every, seconds
        self.width, self.bar = width, bar
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.start = time.perf_counter()
        self.last = None if at_once else self.start

    def __call__(self, done, total=None, note=""):
        now = time.perf_counter()
        elapsed = now - self.start
        count = f"{done}/{total}" if total is not None else f"{done}"
        head = f"{self.what}: " if self.what else ""
        tail = f" [{elapsed:.1f} s, {done / max(elapsed, 1e-9):.1f}/s]"
        if self.tty:
            bar = ""
            if total:
                filled = self.bar * min(done, total) // total
                bar = "[" + "#" * filled + "." * (self.bar - filled) + "] "
            text = f"{bar}{head}{count}{note}{tail}"[:self.width]
            self.stream.write("\r" + text.ljust(self.width))
            self.stream.flush()
            return
        due = self.last is None or now - self.last >= self.seconds or (
            self.every is not None and done % self.every == 0)
        if due:
            self.last = now
            print(f"progress: {head}{count}{note}{tail}", file=self.stream, flush=True)

    def done(self):
        """Clear the redrawn line (a terminal); nothing elsewhere."""
        if self.tty:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
