"""What the command line's parsers share: a one-line-error parser, validators, and the
--number, --model and --digits options.
"""

import argparse

from ..construction import DIGITS, MAX_DIGITS, VARIANTS, check_digits
from ..numbers import DEFAULT_DECIMAL_DIGITS, DEFAULT_EXP_DIGITS, NUMBER_CHOICES, number_system

PROG = "tinyadder"


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, without the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def number_arg(text):
    try:
        return number_system(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def model_arg(text):
    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(
            f"unknown model {text!r}; use {' or '.join(VARIANTS)}")
    return text


def digits_arg(text):
    try:
        return check_digits(int(text))
    except ValueError as err:
        if not text.strip().isdigit():
            err = f"N must be a whole number of digits, 1 to {MAX_DIGITS}; got {text!r}"
        raise argparse.ArgumentTypeError(str(err)) from None


def digits_list_arg(text):
    """'10,20,50' -> [10, 20, 50], each checked as --digits is."""
    return [digits_arg(part) for part in text.split(",")]


def add_digits_option(parser):
    """--digits N: the operand length the construction is built for."""
    parser.add_argument(
        "--digits", type=digits_arg, default=DIGITS, metavar="N",
        help=f"operand length: build the construction for N-digit operands, 1 <= N <= "
             f"{MAX_DIGITS} (default {DIGITS}, the published model). The sequence is 3N + 4 "
             f"tokens; the constants that depend on N are derived in docs/digits.md; the "
             f"parameter count stays 36")


def add_model_options(parser):
    """--number and --model, shared by every command that runs the model."""
    parser.add_argument(
        "--number", type=number_arg, default="fraction", metavar="SYSTEM",
        help=f"number system: {NUMBER_CHOICES}. fraction (default) is exact except that "
             f"e^x of the head-3 scores (e^-40 and e^-1000 at N = 10; e^40 is 1/e^-40) is "
             f"rounded to N + 40 digits ({DEFAULT_EXP_DIGITS} at N = 10) once per argument, "
             f"and every digit is certified for the real-number model. decimal "
             f"without P picks P = N + 30 significant digits (P = {DEFAULT_DECIMAL_DIGITS} "
             f"at N = 10): place values carry the rounding of scores of size about 10N into "
             f"sums of size 10^(N+4), and each digit is decided by a fifth of a unit, so P "
             f"must exceed about N + 4 digits; N + 30 leaves more than 20 to spare (see "
             f"'{PROG} precision'). float is IEEE double, like the "
             f"published PyTorch model; float32 is IEEE single (emulated), which fails at "
             f"N = 10")
    parser.add_argument(
        "--model", type=model_arg, default="published",
        help="published (default): the construction as published, including its readout "
             "flaw near carry boundaries; repaired: the same 36 parameters with the readout "
             "reading only the layer-1 FFN's own slots")
