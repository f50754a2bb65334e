"""``tinyadder check-certificate FILE``: re-check a proof with the independent checker."""

from ..proof import floatcheck, setcheck
from ..proof.certificate import Invalid, Malformed, check, load
from .options import PROG, Parser, add_jobs_option


def build_parser():
    parser = Parser(
        prog=f"{PROG} check-certificate",
        description="Re-check a certificate written by 'tinyadder prove --certificate' with "
                    "a small checker that shares no code with the derivation beyond the "
                    "model's weights (a generic method's certificate: with its own evaluator "
                    "of the forward pass over the certificate's regions, and for a float "
                    "program's certificate its own rounding rules). Exit status 0 when it is "
                    "valid, 1 when it does not "
                    "check, 2 when the file cannot be read or is not a certificate.")
    parser.add_argument("file", metavar="FILE", help="the certificate (JSON)")
    add_jobs_option(parser, "the re-decision of a generic method's leaves (leaf i by process "
                            "i mod N)")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    args = build_parser().parse_args(argv)  # a usage error exits 2 (cli.main)
    try:
        data = setcheck.read(args.file)  # read once, checked by its format's checker
        if setcheck.of_format(data):
            print(setcheck.check(data, jobs=args.jobs), file=out)
        elif setcheck.of_format(data, floatcheck.FORMAT):
            print(floatcheck.check(data, jobs=args.jobs), file=out)
        else:
            print(check(load(args.file)), file=out)
    except Malformed as why:
        print(f"{PROG}: error: {why}; give a file written by '{PROG} prove --certificate'",
              file=err)
        return 2
    except Invalid as why:
        print(f"certificate invalid: {why}", file=out)
        return 1
    return 0
