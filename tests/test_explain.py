"""``tinyadder explain``: the narration agrees with the model's own choices."""

from fractions import Fraction
import io
import re
from pathlib import Path

import pytest

from explore_cases import EXAMPLE, exact_run
from tinyadder import build, cases, run_with_cache
from tinyadder.analysis.explain import decisions, narrate, remaining_values, scales
from tinyadder.analysis.families import carry as carry_into, digit as digit_of
from tinyadder.cli import main
from tinyadder.numbers import number_system

ROPE1 = Path(__file__).resolve().parent / "models" / "rope1.json"
WALKTHROUGH = Path(__file__).resolve().parent.parent / "docs" / "walkthrough.md"


def check_agrees(cache, a, b):
    """Every figure of every decision against the model's own run: the written digit, the
    readout's choice, the nearest mark, R, the place and the margin in the logits."""
    found = decisions(cache)
    written = "".join(d.written for d in found)
    assert written == cache.text.split("=")[1]
    unit, err_scale, _ = scales(cache.model)
    for d, expected in zip(found, remaining_values(a, b, written)):
        assert str(d.chosen) == d.written                        # the readout's own choice
        assert d.remaining == expected                           # R is a + b minus the written
        # docs/digits.md: 0 <= leakage < 0.32, less the place values' relative error
        # (about e^-40 at N = 10, e^-19 at N = 3) times R
        assert -Fraction(1, 10 ** 5) < d.leakage < Fraction(32, 100)
        assert d.power == len(written) - 1 - (d.pos - found[0].pos)
        n = len(written) - 1     # the place is 10^k shrunk by count's leakage, < 10^-(N+1)
        assert 0 <= 1 - d.place / 10 ** d.power < Fraction(1, 10 ** (n + 1))
        x = d.x                                                  # the nearest mark, by hand
        assert d.nearest == min(range(10), key=lambda u: abs(x - u - Fraction(1, 2)))
        assert d.margin > 0
        if not d.flipped:
            assert d.nearest == d.chosen
    return found


# every edge case on both models, and the counterexample on the repaired one (the published
# model's flaw there is test_the_flaw's)
EDGE_10 = [(variant, a, b) for variant in ("published", "repaired")
           for a, b in cases.edge_cases(10)] + [("repaired", *cases.COUNTEREXAMPLE)]


@pytest.mark.parametrize("variant, a, b", EDGE_10)
def test_agrees_with_the_model_on_edge_cases_decimal(variant, a, b):
    model = build(variant)
    _, cache = run_with_cache(model, f"{a}+{b}", ns=number_system("decimal"))
    check_agrees(cache, a, b)


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_agrees_exactly_on_edge_cases_at_three_digits(variant):
    model = build(variant, digits=3)
    for a, b in cases.edge_cases(3):
        logits, cache = run_with_cache(model, f"{a}+{b}")
        for d in check_agrees(cache, a, b):
            # in the fraction system the margin is the logits' gap, exactly, once scaled
            unit, err_scale, _ = scales(model)
            size = err_scale * unit * Fraction(1, d.pos + 2)
            row = logits[d.pos]
            if variant == "repaired":
                assert (row[d.nearest] - row[d.runner]) == d.margin * size


def test_the_flaw():
    a, b = cases.COUNTEREXAMPLE
    _, cache = exact_run(f"{a}+{b}")
    found = decisions(cache)
    flipped = [d for d in found if d.flipped]
    assert [d.pos for d in flipped] == [23]
    d = flipped[0]
    assert (d.remaining, d.power, d.nearest, d.chosen) == (6999999940, 9, 6, 7)
    # the tilt is cand1 - cand2 = 1000 P / (i + 2) in the slots, P / 10^6 = 1000 units
    assert abs(d.tilt - 1000) < Fraction(1, 10 ** 6)
    # the margin: marks 6.5 P and 7.5 P around R + b = 6.99999994 P, so 14 P - 2 (R + b),
    # about 2 (60 - b) = 119 units
    assert d.margin == 14 * d.place - 2 * d.total
    assert 119 < d.margin < Fraction(1193, 10)
    assert d.tilt > d.margin
    # the lead of the written 7 is the tilt less the margin, in units of the sum
    assert d.lead == d.tilt - d.margin
    text = narrate(cache, a, b)
    assert ("position 23 ('0'): R = 6999999940, P = 10^9, offset 0.38\n"
            "  x = 6.99999994 -> nearest mark 6.5 -> digit 6; margin 119 units over 7\n"
            "  ! the readout's tilt favours 7 by 1000 units, 8.4 times the margin: it writes\n"
            "    7, not 6\n") in text
    # one notation for large figures, the page's m·10^e, never 6e9 beside 74200
    assert "digit 0; margin 6·10^9 units over 1\n" in text
    assert not re.search(r"\de-?\d", text)
    # the nine zeros after the false carry are one block, not nine
    assert text.count("R < 0") == 1
    assert ("positions 24 to 32: R = -60 at each place from 10^8 to 10^0, offset 0.40 to "
            "0.52\n") in text
    # decided at 23, written at 24
    assert text.endswith("the first wrong digit, decided at\n"
                         "  position 23, was written at position 24: the readout's tilt beat "
                         "the margin\n")
    # the repaired model, same figures up to the readout, writes 6
    _, fixed = exact_run(f"{a}+{b}", "repaired")
    check_agrees(fixed, a, b)
    assert decisions(fixed)[1].margin == d.margin


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    from tinyadder.cli import explain
    status = explain.main(list(argv), out, err, None)
    return status, out.getvalue(), err.getvalue()


def test_cli_narrates_and_exits_like_the_main_command():
    status, out, err = run_cli("--digits", "3", "123+989")
    assert status == 0 and err == ""
    assert out.startswith("123+989=1112\n")
    assert "position 10 ('1'): R = 12, P = 10^1, offset 0.561\n" in out  # 12.561/10 = 1.2561
    assert "numbers: fraction\n" in out  # the rounding's details are --verbose's
    status, out, err = run_cli("--digits", "3", "123+989", "--verbose")
    assert "position 10 ('1'): R = 12, P = 10^1, offset 0.561 (b = 0.451, leakage 0.11)\n" in out
    assert "numbers: fraction (exact; e^x rounded to 43 digits once\n" in out
    assert out.endswith("sum 1112: right\n")
    assert max(len(line) for line in out.splitlines()) <= 80
    status, out, err = run_cli("--number", "decimal", "5193798811+1806201129")
    assert status == 1
    assert err.startswith("tinyadder: warning: the published model's sum 7000000000 is wrong")
    assert max(len(line) for line in (out + err).splitlines()) <= 80
    assert run_cli("--model", "repaired", "--number", "float", "5193798811+1806201129")[0] == 0


def test_cli_flags_a_rounding_error():
    status, out, err = run_cli("--number", "float32", "7650676663+0149460439")
    assert status == 1 and "rounding error of float32" in err
    assert "! R is off by" in out
    summary = " ".join(out.split()[-30:])
    assert "the first wrong digit, decided at position 29, was written at position 30" in summary
    assert "the number system's rounding moved x past a boundary" in summary


def test_cli_bad_input_is_one_line_exit_2(capsys):
    assert main(["explain", "1+"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinyadder: error: missing operand")
    assert main(["explain", "1+2", "--digits", "0"]) == 2


def test_x_is_r_plus_b_plus_leakage_over_p():
    """x, printed as x, is (R + b + leakage)/P, not (R + b)/P: 2.6020 at 123 + 989's units."""
    _, cache = run_with_cache(build("repaired", digits=3), "123+989")
    d = decisions(cache)[-1]
    assert d.x == (d.remaining + d.bias + d.leakage) / d.place
    assert round(float(d.x), 4) == 2.602 and round(float((d.remaining + d.bias) / d.place), 3) \
        == 2.492
    assert "  x = 2.6020 -> nearest mark 2.5 -> digit 2; margin 0.796 units over 3\n" in \
        narrate(cache, 123, 989)


def test_learner19_the_division_printed_works_out():
    """599 + 401's s3: R + offset = 1000.409 over P = 10^3 is 1.000409, yet x printed 1.00042:
    P is the marks' spacing, 10^3 less 0.010, so P is printed where 10^k is not close enough,
    and the offset to as many decimals as the division needs; at every position of three
    runs (R + offset)/P, as printed, rounds to the x printed."""
    _, out, _ = run_cli("--digits", "3", "--verbose", "599+401")
    assert ("position 8 ('='): R = 1000, P = 999.99 (just under 10^3), offset 0.409 (b =\n"
            "    0.369, leakage 0.040)\n  x = 1.00042 -> ") in out
    for expr, model, n in (("599+401", "published", 3), ("123+989", "repaired", 3),
                           (EXAMPLE, "published", 10)):
        a, b = map(int, expr.split("+"))
        out = narrate(exact_run(expr, model, n)[1], a, b)
        found = re.findall(r"R = (-?\d+), P = (\S+)(?: \(just under 10\^\d+\))?, offset (\S+)"
                           r"\n  x = (\S+) ", out)
        assert len(found) == n + 1
        for r, p, offset, x in found:
            place = Fraction(10) ** int(p[3:]) if p.startswith("10^") else Fraction(p)
            quotient = (int(r) + Fraction(offset)) / place
            assert round(quotient * 10 ** len(x.split(".")[1])) == round(
                Fraction(x) * 10 ** len(x.split(".")[1])), (expr, r, p, offset, x)


def test_repr_is_readable_and_the_digits_are_there_on_request():
    """The exact run's values have numerators of thousands of digits: the repr shows their
    readable forms (str() of such a Fraction raises on Python >= 3.11), exact() every digit."""
    _, cache = exact_run("7650676663+0149460439")
    d = decisions(cache)[0]
    text = repr(d)
    assert text.startswith("Decision(pos=22, token='=', written='0', total=<~7.80013710235*10^9>, "
                           "bias=Fraction(69, 200), remaining=7800137102, place=<10^10 - 0.01 - ")
    assert len(text) < 2000
    numerator, denominator = d.exact("total").split("/")
    for text, n in ((numerator, d.total.numerator), (denominator, d.total.denominator)):
        assert len(text) > 4300 and text[:12] == str(n // 10 ** (len(text) - 12))


def test_the_offset_not_a_negative_leakage():
    """59999999+0's leakage is negative (-8.7e-9 at N = 8, -2.2e-13 at N = 10): the
    narration prints the offset b + leakage that x reads."""
    status, out, err = run_cli("--digits", "8", "59999999+0")
    assert "position 18 ('='): R = 59999999, P = 10^8, offset 0.34\n" in out
    assert "leakage" not in out.split("\n\n", 2)[2]


def test_any_model_is_narrated_by_its_roles_and_logits():
    """A model outside the family (rope1 writes the units first, then a stop token): each
    predicting position by its role, the digit written and its lead in logits."""
    status, out, err = run_cli("--model", str(ROPE1), "7+8")
    assert (status, err) == (0, "")
    assert "prompt layout: <bos> a0 '+' b0 '=' then s0..s1 <eos>\n" in out
    assert "position 4 (separator '=') writes s0 = '5': lead 1.00 logits over '4'\n" in out
    assert "position 5 (s0 = '5') writes s1 = '1': lead 1.00 logits over '2'\n" in out
    assert "position 6 (s1 = '1') writes '<eos>': lead 50 logits over '0'\n" in out
    assert out.endswith("sum 15: right\n")


def test_zcbtrak_6s_leads_are_about_a_tenth_of_a_logit():
    """The walkthrough's zcbtrak-6 section: on its sum the lead of the winner over the
    runner-up is 'about a tenth of a logit (0.072 to 0.101)' at every position that decides a
    digit (float, the file's dtype float64)."""
    from tinyadder import models
    from tinyadder.addition import encode
    from tinyadder.cache import run_with_cache
    model = models.build("zcbtrak-6", None)
    logits, cache = run_with_cache(model, encode(model, 7650676663, 149460439), ns="float")
    leads = [(lambda top: top[-1] - top[-2])(sorted(logits[p])) for p in cache.predicting]
    assert len(leads) == 11 and all(0.0715 <= x < 0.1015 for x in leads), leads
    assert max(leads) > 0.1  # "about", not "under": 0.1005 and 0.1006 at positions 36, 37


def test_a_board_models_verdict_prints_every_digit_written():
    """zcbtrak-6 writes 11 digits, the leading 0 of 07800137102 among them: its narration's
    last line prints all of them, as TinyAdder-36's does."""
    status, out, err = run_cli("--model", "zcbtrak-6", "--number", "float",
                               "7650676663+0149460439")
    assert (status, err) == (0, "")
    assert out.endswith("\nsum 07800137102: right\n")
    # a rope-19 model's column, with the digits put in (the page's hovers say the same)
    assert ("position 31 (s0 = '2') writes s1 = '0': lead 0.0801 logits over '1'\n"
            "  x1 after attention 100.002, within 0.25 of 10·(a1 + b1 + c1) − c0 = 10·(6 + 3\n"
            "    + 1) − 0 = 100\n"
            "  x1 after the FFN 0.992544, within 2.5 of 10·s1 = 10·0 = 0\n") in out


def test_learner17_a_board_models_narration_reads_as_an_addition_and_zeroes_past_digits():
    """zcbtrak-6's tokens (a and b least significant digit first, padded) do not show the sum:
    the narration's second line reads them as an addition, as the trace's legend does; at the
    top place its formula names a10 and b10, past the operands, and says they are 0."""
    status, out, err = run_cli("--model", "zcbtrak-6", "--number", "float",
                               "7650676663+0149460439")
    assert (status, err) == (0, "")
    assert out.startswith("036667605670000000009340649410020173100870\n"
                          "as an addition: 7650676663+0149460439=07800137102\n"
                          "zcbtrak-6, numbers: float")
    assert ("  x1 after attention 0.00170270, within 0.25 of 10·(a10 + b10 + c10) − c9 (a10 =\n"
            "    b10 = 0: past the operands) = 10·(0 + 0 + 0) − 0 = 0\n") in out
    assert out.count("past the operands") == 1
    # TinyAdder-36's tokens are the addition already: no second reading
    status, out, _ = run_cli("--number", "float", "7650676663+0149460439")
    assert status == 0 and "as an addition" not in out


def test_a_rope_19_column_line_holds_at_every_position():
    """x1 after the attention is 10·(a_k + b_k + c_k) − c_(k−1) to within 0.25, and after the
    FFN 10·s_k to within 2.5, at each position the narration names (the numbers it prints)."""
    import re
    from tinyadder.analysis.explain import _q
    status, out, err = run_cli("--model", "zcbtrak-6", "--number", "float", "5999999999+1")
    assert status == 0
    said = " ".join(out.split())
    found = re.findall(r"attention (\S+), within 0.25 of 10·\(a\d+ \+ b\d+ \+ c\d+\)(?: − c\d+)? "
                       r"(?:\(a10 = b10 = 0: past the operands\) )?= 10·\((\d) \+ (\d) \+ (\d)\)(?: − (\d))? = −?\d+ x1 after the FFN (\S+), "
                       r"within 2.5 of 10·s\d+ = 10·\d = (\d+)", said)
    assert len(found) == 11
    for mid, a, b, c, below, post, target in found:
        column = 10 * (int(a) + int(b) + int(c)) - int(below or 0)
        mid, post = (float(v.replace("\u2212", "-")) for v in (mid, post))  # the sign: U+2212
        assert abs(_q(mid) - column) < Fraction(1, 4)
        assert abs(post - int(target)) < 2.5
    assert "10·(9 + 0 + 1) − 1" in said   # the carry chain of 5999999999 + 1


def _column(a, b, k):
    return digit_of(a, k) + digit_of(b, k)


# what each design's position that predicts s_k holds, written out here (the hovers' formulas,
# docs/explorer.md): (stage, slot, value from a, b, k and the slot's embedded value e, bound);
# None where the design gives the slot no value at the units
_QWEN_COLUMN = [("L0.attn", "x2", lambda a, b, k, e: e + _column(a, b, k), Fraction(1, 1000)),
                ("L0.attn", "x1", lambda a, b, k, e: carry_into(a, b, k - 1)
                 - 10 * carry_into(a, b, k), Fraction(1, 1000))]
COLUMNS = {
    "zcbtrak-6": ("float", [
        ("L0.attn", "x1", lambda a, b, k, e: 10 * (_column(a, b, k) + carry_into(a, b, k))
         - carry_into(a, b, k - 1), Fraction(1, 4)),
        ("L0.mlp", "x1", lambda a, b, k, e: 10 * digit_of(a + b, k), Fraction(5, 2))]),
    "lichengliu03-50": ("float32", [
        ("L0.attn", "acc", lambda a, b, k, e: _column(a, b, k), Fraction(3, 10)),
        ("L0.attn", "pe_sin", lambda a, b, k, e: e + _column(a, b, k - 1) if k else None,
         Fraction(1, 200)),
        ("L0.mlp", "acc", lambda a, b, k, e: digit_of(a + b, k), Fraction(1, 2))]),
    "jacobli99-28": ("float32", [
        ("L0.attn", "x1", lambda a, b, k, e: _column(a, b, k), 0),
        ("L0.attn", "x0", lambda a, b, k, e: e + carry_into(a, b, k - 1)
         - 10 * carry_into(a, b, k), 0),
        ("L0.mlp", "x1", lambda a, b, k, e: digit_of(a + b, k), 0)]),
    "nino-116": ("float32", _QWEN_COLUMN + [
        ("L0.mlp", "x2", lambda a, b, k, e: _column(a, b, k) - 10 * carry_into(a, b, k + 1),
         Fraction(1, 100))]),
    "wonderfall-130": ("float32", _QWEN_COLUMN + [
        ("L0.mlp", "x2", lambda a, b, k, e: digit_of(a + b, k)
         - Fraction(carry_into(a, b, k - 1), 10) + Fraction(1, 20), Fraction(1, 100))]),
    "wonderfall-139": ("float32", _QWEN_COLUMN + [
        ("L0.mlp", "x2", lambda a, b, k, e: digit_of(a + b, k), Fraction(1, 100))]),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_every_designed_familys_column_line_holds_at_every_position(name):
    """One model of each design (rope-19, sinusoid-11, jacobli99's rope-10000 and the three
    Qwen-style carries), on a sum with and without carries into its places: at every position
    that predicts s_k, each slot the design gives a value holds the formula (written out
    above, from the digits) within its bound in the run, and the narration prints that value
    and the formula's."""
    from tinyadder import models
    from tinyadder.addition import encode
    from tinyadder.analysis.explain import column_lines, figure, minus
    from tinyadder.analysis.roles import roles
    from tinyadder.cache import stages
    ns, expect = COLUMNS[name]
    model = models.build(name, None)
    a, b = 7650676663, 149460439   # carries into places 1, 2, 3, 5, 6, 8, 9, none into 4, 7
    _, cache = run_with_cache(model, encode(model, a, b), ns=ns)
    stage = {s.short: s.name for s in stages(model)}
    layout = roles(model)
    places = []
    for pos in cache.predicting:
        k = layout[pos + 1].place
        lines = column_lines(cache, pos, k, a, b)
        joined = []
        for line in lines:
            if line.startswith("    "):
                joined[-1] += " " + line.strip()
            else:
                joined.append(line.strip())
        shown = []
        for st, slot, formula, within in expect:
            embedded = Fraction(cache.view(stage["embed"], pos)[slot])
            want = formula(a, b, k, embedded)
            if want is None:
                continue
            read = Fraction(cache.view(stage[st], pos)[slot])
            assert abs(read - want) <= within, (pos, slot, read, want)
            where = "after attention" if st == "L0.attn" else "after the FFN"
            shown.append((f"{slot} {where} {minus(figure(read, 6))}",
                          f" = {minus(figure(want, 6))}"))
        assert len(joined) == len(shown) and all(
            line.startswith(start) and line.endswith(end)
            for line, (start, end) in zip(joined, shown)), (joined, shown)
        places.append(k)
    assert places == list(range(11))


def test_a_float_lead_is_counted_in_the_systems_spacings():
    """jacobli99-28's float32 leads (2.44·10^-4 logits) are a few float32 spacings at its
    logits near 1000, 2^-14 each: the line says how many, and the count is the lead's own."""
    from tinyadder import models
    from tinyadder.addition import encode
    from tinyadder.analysis.explain import narrate_logits
    model = models.build("jacobli99-28", None)
    a, b = 7650676663, 149460439
    _, cache = run_with_cache(model, encode(model, a, b), ns="float32")
    text = narrate_logits(cache, a, b).replace("\n  ", " ")
    said = re.findall(r"lead (\S+) logits over '\d' \((\d+) float32 spacings, 2\^-14 = "
                      r"6\.1·10\^-5 each for logits near (?:990|991|1000|1001)\)", text)
    assert len(said) == 11
    for lead, count in said:
        assert abs(float(lead.replace("·10^", "e")) - int(count) * 2 ** -14) < 1e-6, lead
    assert "spacings" not in narrate_logits(exact_run("12+34")[1], 12, 34)  # exact: none


def test_a_multiscale_is_printed_from_its_parts_without_expanding():
    """A value such as the fraction system's e^-10^10 (9.28·10^-4342944820: as a rational, ten
    billion digits) is never expanded to print it: R + e^-10^10 with R = −0.0009819595, a
    midpoint at 6 digits, rounds by the tiny part's sign (read off its own enclosure), and
    the tiny part alone prints its own digits. jacobli99-28's exact explain took minutes on
    such values; it takes seconds."""
    from tinyadder.analysis.explain import figure
    from tinyadder.analysis.pictures import views
    tiny = number_system("fraction").exp(Fraction(-10 ** 10))
    r = Fraction(-1963919, 2 * 10 ** 9)
    assert (figure(r + tiny, 6), figure(r - tiny, 6)) == ("-9.81959·10^-4", "-9.8196·10^-4")
    assert (views.text(r + tiny), views.text(r - tiny)) == ("~-0.000981959", "~-0.000981960")
    assert figure((r + tiny) - r) == "9.28·10^-4342944820"
    assert figure(r + tiny - tiny, 6) == "-9.8196·10^-4"  # exactly r: -0.0009819595 to 6 digits


@pytest.mark.slow
def test_an_exact_rope_10000_explain_reads_its_values_without_expanding():
    """jacobli99-28's exact run holds values 10^-226919005 from 0 (x1 after the FFN where
    s_k = 0): explain prints their digits, and every column line holds."""
    from cli_runs import cli_once
    status, out, _ = cli_once("explain", "--model", "jacobli99-28", "5999999999+1")
    assert status == 0 and out.count("within 0.001 of") == 33, out
    assert "x1 after the FFN \u22121.99129·10^-226919005, within 0.001 of s0 = 0" in out


def test_a_verbose_offset_has_the_digits_of_its_parts():
    """--verbose prints b to three digits beside the offset b + ℓ: the offset gets three too
    (0.345 − 2.2·10^-13 printed 0.34 beside b = 0.345)."""
    from cli_runs import cli_once
    _, out, _ = cli_once("explain", "--verbose", "--number", "decimal", "59999999+0")
    assert "offset 0.345 (b = 0.345, leakage\n    -2.2·10^-13)" in out


def test_a_column_line_writes_one_minus_sign():
    """nino-116's carry D = c0 − 10·c1 is −10 at position 24: the run's value and the
    formula's are written with the formula's minus sign, U+2212, not '-' beside '−'."""
    status, out, _ = run_cli("--model", "nino-116", "--number", "float",
                             "7650676663+0149460439")
    said = " ".join(out.split())
    assert status == 0 and ("x1 after attention \u22129.99981, within 0.001 of c0 \u2212 "
                            "10·c1 = 0 \u2212 10·1 = \u221210") in said


def test_every_published_position_prints_its_tilt_and_lead():
    """The legend defines the tilt, so each position of the published model prints it, with
    the digit it favours and the lead (margin - tilt), as walkthrough §7 quotes it; the
    repaired readout has no other contents, hence no tilt line."""
    a, b = map(int, EXAMPLE.split("+"))
    text = narrate(exact_run(EXAMPLE)[1], a, b)
    quoted = "tilt -100 units (towards 8, the winner), so 8 leads by 2.74·10^5 units"
    assert ("position 24 ('7'): R = 800137102, P = 10^8, offset 0.38\n"
            "  x = 8.0014 -> nearest mark 8.5 -> digit 8; margin 2.74·10^5 units over 7\n"
            f"  {quoted}\n") in text
    assert f"`{quoted}`" in WALKTHROUGH.read_text(encoding="utf-8")
    assert "  tilt 1000 units (towards 8, the rival), so 7 leads by 4·10^8 units\n" in text
    assert "  tilt 0, so 0 leads by 4.4·10^9 units\n" in text                     # at 22
    assert len(re.findall(r"^  tilt .*, so \d leads by ", text, re.M)) == 11
    repaired = narrate(exact_run("123+989", "repaired", 3)[1], 123, 989)
    assert "tilt 0" not in repaired and "leads by" not in repaired


def test_learner20_a_tilt_has_one_notation_and_a_negligible_one_is_about_0():
    """The tilt read '-10^-9', '-0.00100' and '3.4·10^-17' within five lines: one notation
    (m·10^e, its mantissa written, outside 1 .. 10^4), and '≈ 0' where it is under 10^-6 of
    the margin (positions 28 and 32)."""
    a, b = map(int, EXAMPLE.split("+"))
    text = narrate(exact_run(EXAMPLE)[1], a, b)
    tilts = re.findall(r"^  tilt (.*?)(?: units \(|, so)", text, re.M)
    assert tilts == ["0", "1000", "-100", "0", "0", "0", "\u2248 0 (under 10^-6 of the margin)",
                     "-1.0·10^-3", "0", "0", "\u2248 0 (under 10^-6 of the margin)"]


def test_learner13_a_negative_tilt_is_said_to_favour_the_winner():
    """A negative tilt favours the nearest digit, which is the one written: the line says it
    is towards the winner (not 'favours 8' beside '8 leads', which read as a contradiction),
    and a positive one towards the rival (learner13 6)."""
    a, b = map(int, EXAMPLE.split("+"))
    text = narrate(exact_run(EXAMPLE)[1], a, b)
    lines = re.findall(r"^  tilt (-?)\S+ units \(towards (\d), the (\w+)\), so (\d) leads",
                       text, re.M)
    assert lines and all((sign == "-") == (who == "winner") for sign, _, who, _ in lines)
    assert all((towards == leader) == (who == "winner") for _, towards, who, leader in lines)
    assert {who for *_, who, _ in lines} == {"winner", "rival"}
