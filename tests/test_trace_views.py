"""The text trace's reading aids: each position's role in the prompt layout, the count of the
values rounded (``--roundings`` lists them) and ``--heat`` on the explorer's clipped scale with
the top weights as numbers."""

import re

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
    # ten equal bands of 2.5 decades from 10^-5 down to the clip, 10^-30 (learner15 6); each
    # head's key once, before the first position (learner17 8)
    at = lines.index("  L0.h3: ' ' below 10^-30 (the clip); from 10^-5 down to the clip ten equal")
    assert lines[at - 2:at] == [
        "heat: a head's row has one character per key from position 0 (then the sink), on",
        "the head's clipped scale over the run:"]
    assert lines[at + 1:at + 5] == [
        "    bands of 2.5 decades, '0' for the largest weights (10^-5..10^-7.5) to '9'",
        "    for the smallest (10^-27.5..10^-30; '3' is 10^-12.5..10^-15); '+*#%@' a",
        "    decade each from 10^-5 up to 1",
        "  L0.h4: ' ' below 10^-2, '+*#%@' a decade each up to 1"]
    at = lines.index("position 10 (s2): '0', predicts s1 '4' at 11") + 2
    row = lines[at].split()
    assert row[:2] == ["L0.h3", "0-10"] and row[-2:] == ["sink", "@"]
    assert lines[at] == "    L0.h3 0-10 5   3   2   sink @"
    assert lines[at + 1] == "      top: sink 1.00, '=' (8) 5.6·10^-11, '+' (4) 5.6·10^-15"
    # head 4 gives the 11 keys and the sink one weight each: said once, as the page says it
    assert lines[at + 2:at + 4] == [
        "    L0.h4 0-10 %%%%%%%%%%% sink %",
        "      top: uniform: 1/12 on each of the 11 keys and the sink"]


def test_learner17_heat_prints_each_key_once_and_a_row_per_head_and_position():
    """12+34's whole heat trace: 599 lines when each head's 1 to 4 line key came again at
    each of the 11 positions; now the keys once (head 4 and layer 1's head share a scale, so
    a line), and per position and head its row and its top weights, the rows unchanged."""
    status, out, _ = cli_once("12+34", "--trace", "--heat")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 543
    assert "  L0.h4, L1.h0: ' ' below 10^-2, '+*#%@' a decade each up to 1" in lines
    assert sum(line.startswith("  L0.h") for line in lines) == 2
    rows = [line for line in lines if re.match(r"    L\d\.h\d \d+-\d+ ", line)]
    tops = [line for line in lines if line.startswith("      top: ")]
    assert len(rows) == len(tops) == 11 * 3
    assert "    L0.h3 0-22 6          4          2 sink @" in rows


def test_learner20_a_trace_without_pos_names_the_positions_to_pick():
    """Without --pos, the header ends with the positions that predict the answer and an
    example --pos, from the run: the first and the one whose winner leads by least (12+34:
    32, the units; zcbtrak-6, which writes the units first: 30); with --pos, no hint."""
    hints = []
    for argv in (("12+34", "--trace", "--heat"), ("--model", "zcbtrak-6", "--number",
                                                  "float", "12+34", "--trace")):
        _, out, _ = cli_once(*argv)
        head = out.split("\n\nposition ")[0]
        hints.append(" ".join(head[head.index("positions "):].split()))
    assert hints == [
        "positions 22 to 32 predict the 11 tokens of the answer, all traced below; to read "
        "fewer, e.g. --pos 22,32 (22 predicts s10, the first; 32 predicts s0, the last and "
        "the narrowest lead)",
        "positions 30 to 40 predict the 11 tokens of the answer, all traced below; to read "
        "fewer, e.g. --pos 30,40 (30 predicts s0, the first and the narrowest lead; 40 "
        "predicts s10, the last)"]
    assert "e.g. --pos" not in cli_once("12+34", "--trace", "--pos", "22")[1]


def test_heat_keeps_head_3s_special_keys_eleven_decades_apart():
    """Head 3's '=' (4.25e-20), '+' (4.25e-31) and <bos> (e-42) drew alike ('-') when four
    characters shared the 55 decades below 10^-5; ten bands of 5.5 decades tell them apart."""
    from tinyadder import build
    from tinyadder.analysis import heat
    from tinyadder.cache import run_with_cache
    _, cache = run_with_cache(build("published"), "12+34")
    row = heat.heat_lines(cache, 0, "h3", 24)[0][len("    L0.h3 0-24 "):]
    assert (row[0], row[11], row[22], row[25:]) == ("6", "4", "2", " sink @")
    assert [heat.ramp(log, -60) for log in (-4.5, -5.5, -19.4, -30.4, -41.4, -60, -61)] == [
        "+", "0", "2", "4", "6", "9", " "]


def test_heat_tells_rope_19s_ten_to_one_apart():
    """rope-19's whole mechanism is a 10:1 pair of weights, 0.454 and 0.0455: one decade
    apart, they are '@' and '%' (both were '@')."""
    status, out, _ = cli_once("--model", "zcbtrak-6", "--number", "float",
                              "7650676663+0149460439", "--trace", "--heat", "--pos", "31",
                              "--layer", "0")
    lines = out.splitlines()
    at = lines.index("position 31 (s0): '2', predicts s1 '0' at 32") + 2
    row = lines[at][len("    L0.h 0-31 "):]
    assert (row[2], row[21], row[1], row[20]) == ("@", "@", "%", "%")
    assert lines[at + 1] == "      top: b1 (21) 0.454, a1 (2) 0.454, a0 (1) 0.0455, b0 (20) 0.0455"
    # the explorer's clip (learner20 4): an ordinary softmax's scale stops at 10^-10, so the
    # row marks the four keys the top line names and their neighbours, not all 32 keys
    assert "  L0.h: ' ' below 10^-10 (the clip); from 10^-5 down to the clip ten equal bands" \
        in lines
    assert [k for k, c in enumerate(row) if c != " "] == [0, 1, 2, 3, 19, 20, 21, 22]


def test_the_heat_legend_says_which_way_the_digits_run_and_each_end_s_span():
    """One scheme for every model (learner15 6): '0' .. '9' in ten equal bands from 10^-5
    down to the clip ('0' the largest weights, '9' the smallest), where the digits ran a
    digit per 6 decades from '1' on head 3's scale and a digit per 10 from '0' on rope-19's,
    with ends 4 and 11 decades wide. Each span the legend states is the ramp's own digit at
    both of its ends, and every band is as wide as the others."""
    from fractions import Fraction
    from tinyadder.analysis import heat
    for lo in (-60, -100, -70, -30, -11, -8, -6):
        spans = heat.digit_spans(lo)
        assert [d for d, _, _ in spans] == list(range(10))
        assert {b - a for _, a, b in spans} == {Fraction(-5 - lo, 10)}
        assert spans[0][1] == 5 and spans[-1][2] == -lo
        for digit, upper, lower in spans:
            assert heat.ramp(-float(upper) - 1e-9, lo) == heat.ramp(-float(lower) + 1e-9, lo) \
                == str(digit)
        assert heat.ramp(lo - 0.5, lo) == " " and heat.ramp(lo, lo) == "9"
    assert heat.legend("L0.h", -100) == [
        "  L0.h: ' ' below 10^-100 (the clip); from 10^-5 down to the clip ten equal",
        "    bands of 9.5 decades, '0' for the largest weights (10^-5..10^-14.5) to '9'",
        "    for the smallest (10^-90.5..10^-100; '3' is 10^-33.5..10^-43); '+*#%@' a",
        "    decade each from 10^-5 up to 1"]
