"""The text trace's reading aids: each position's role in the prompt layout, the count of the
values rounded (``--roundings`` lists them) and ``--heat`` on the explorer's clipped scale with
the top weights as numbers."""

from cli_runs import cli_once

ROPE1 = "tests/models/rope1.json"


def test_positions_are_named_by_their_role_in_the_layout():
    """rope1 writes the sum least significant digit first: '=' predicts s0, the units."""
    status, out, _ = cli_once("--model", ROPE1, "7+8", "--trace", "--pos", "4,5")
    assert status == 0
    assert "\nposition 4: '=', predicts s0 '5' at 5\n" in out
    assert "\nposition 5 (s0): '5', predicts s1 '1' at 6\n" in out
    status, out, _ = cli_once("--digits", "3", "12+34", "--trace", "--pos", "9",
                              "--layer", "0")
    assert "\nposition 9 (s3): '0', predicts s2 '0' at 10\n" in out


def test_many_roundings_are_one_line_and_listed_on_request():
    status, out, _ = cli_once("--model", ROPE1, "7+8", "--trace", "--pos", "4")
    assert status == 0
    assert ("rounded: 23 irrational values, once each to the stated digits (7 cos, 7 sin, 7\n"
            "  exp, 2 sqrt); --roundings lists them\n") in out
    status, out, _ = cli_once("--model", ROPE1, "7+8", "--trace", "--pos", "4", "--roundings")
    assert "rounded: sqrt(2), sqrt(500001/1000000), cos(1), sin(1)," in out
    assert "exp(-120), exp(-20)\n" in out


def test_heat_is_clipped_and_says_the_top_weights():
    """The '=' key at 10^-11 no longer draws like the sink at 1 (the ramp ran linearly from
    the head's smallest weight, 10^-460, so both were '@'); the top weights are numbers."""
    status, out, _ = cli_once("--digits", "3", "12+34", "--trace", "--heat", "--pos", "10",
                              "--layer", "0", "--slots", "count")
    lines = out.splitlines()
    at = lines.index("    L0.h3 attends from 10 (log10 weight: ' ' below 10^-30, '.' .. '@' "
                     "to 1):")
    row = lines[at + 1].split()
    assert row[0] == "0-10" and row[-2:] == ["sink", "@"]
    assert lines[at + 1] == "      0-10 =   +   *   sink @"
    assert lines[at + 2] == "      top: sink:~1.00  8:~5.60e-11  4:~5.60e-15"
