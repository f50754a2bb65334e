"""``tinyadder check-certificate FILE [--model M]``: re-check a proof with the independent
checker, and (``--model``) that it is about M."""

import re

from ..proof.kernel import floatcheck, setcheck
from ..proof.closedform_check import FORMAT, Invalid, Malformed, check, load, parse
from ..proof import reading
from ..proof.reading import json_of, of_format, read_bytes
from ..proof.kernel.claim import differs
from .options import PROG, Parser, add_jobs_option, add_model_option


def build_parser():
    parser = Parser(
        prog=f"{PROG} check-certificate",
        description="Re-check a certificate written by 'tinyadder prove --certificate' with "
                    "a small checker that shares no code with the derivation beyond the "
                    "model's weights (a generic method's certificate: with its own evaluator "
                    "of the forward pass over the certificate's regions, and for a float "
                    "program's certificate its own rounding rules). The verdict names the "
                    "model by the sha256 of the model text the certificate holds; --model M "
                    "checks that this is M. Exit status 0 when it is valid, 1 when it does "
                    "not check (or is about another model), 2 when the file cannot be read or "
                    "is not a certificate.")
    parser.add_argument("file", metavar="FILE", help="the certificate (JSON, or gzip of it)")
    add_model_option(parser, None)
    add_jobs_option(parser, "the re-decision of a generic method's leaves (leaf i by process "
                            "i mod N)")
    return parser


# a line from a file never reaches the terminal raw: control characters are escaped
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def quoted(line):
    """``line`` with every control character written as its escape (ascii() of it)."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], line)


def _about(data, args):
    """None when no --model is given or the certificate is about it, else why not."""
    if args.model is None:
        return None
    if any(of_format(data, f) for f in (setcheck.FORMAT, setcheck.COUNT_FORMAT,
                                        floatcheck.FORMAT)):
        text, n = data.get("model"), data.get("digits")
        if not isinstance(text, str):
            raise Malformed("model: not the text of a model file")
    else:
        cert = parse(data)
        text, n = cert.text, cert.digits
    try:
        model = args.model.build(n)
    except ValueError:  # a model file of another N: not this certificate's model
        try:
            model = args.model.build(None)
        except ValueError as why:
            raise BadModel(str(why)) from None
    return differs(text, model)


class BadModel(ValueError):
    """--model names no model that can be built (bad input, exit 2)."""


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    args = build_parser().parse_args(argv)  # a usage error exits 2 (cli.main)
    try:
        raw = read_bytes(args.file, reading.MAX_BYTES)  # read once, by its format's checker
        data = json_of(raw, args.file)
        if isinstance(data, dict) and data.get("format") == FORMAT:
            data = load(args.file, raw)  # its own bounds
        other = _about(data, args)
        if other:
            print(f"certificate not about the given model: {other}", file=out)
            return 1
        if of_format(data, setcheck.FORMAT):
            print(quoted(setcheck.check(data, jobs=args.jobs)), file=out)
        elif of_format(data, setcheck.COUNT_FORMAT):
            print(quoted(setcheck.count_check(data, jobs=args.jobs)), file=out)
        elif of_format(data, floatcheck.FORMAT):
            print(quoted(floatcheck.check(data, jobs=args.jobs)), file=out)
        elif isinstance(data, dict) and data.get("format") == FORMAT:
            print(quoted(check(data)), file=out)
        else:
            raise Malformed(f"{args.file} is not a certificate (format {FORMAT}, "
                            f"{setcheck.FORMAT} or {floatcheck.FORMAT})")
    except Malformed as why:
        print(quoted(f"{PROG}: error: {why}; give a file written by '{PROG} prove "
                     f"--certificate'"), file=err)
        return 2
    except BadModel as why:
        print(quoted(f"{PROG} check-certificate: error: --model: {why}"), file=err)
        return 2
    except Invalid as why:
        print(quoted(f"certificate invalid: {why}"), file=out)
        return 1
    return 0
