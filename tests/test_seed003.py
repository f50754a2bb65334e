"""Seed 003's lookup machine, a model that does not add, through the commands that run a model:
its file's task (A, B, C -> 03, 06, 10), the main command, --trace, --step, --json, verify and
prove by exhaustion (docs/program.md, docs/model-format.md)."""

import io
import json
import re
from pathlib import Path

import pytest

from cli_runs import cli_once
from tinyadder import build, run_with_cache
from tinyadder.analysis import exhaust, trace_json
from tinyadder.cli import main
from tinyadder.compiler import compile_program
from tinyadder.modelfile import ModelFileError, dump, loads
from tinyadder.numbers import number_system
from tinyadder.task import inputs, parse_input, run

ROOT = Path(__file__).resolve().parent.parent
LOOKUP = ROOT / "tinyadder" / "models" / "programs" / "seed003-lookup.tap"
TABLE = {"A": 2, "B": 5, "C": 9}  # the seed's lookup; z = lookup[x] + 1


@pytest.fixture(scope="module")
def wrong_file(tmp_path_factory):
    """The lookup compiled with B's value 7 (it writes 08) and its task unchanged (06)."""
    text = LOOKUP.read_text().replace("5*keyB", "7*keyB")
    path = tmp_path_factory.mktemp("seed003") / "wrong.json"
    path.write_text(json.dumps(compile_program(text)))
    return str(path)


def test_the_task_is_the_seeds_program():
    model = build("seed003-lookup")
    assert inputs(model) == tuple(TABLE)
    assert {x: "".join(a) for x, a in model.task.cases.items()} == \
        {x: "%02d" % (y + 1) for x, y in TABLE.items()}
    assert [run(model, "fraction", x) for x in TABLE] == ["A -> 03", "B -> 06", "C -> 10"]


def test_the_trace_holds_x_y_z_in_slots_3_4_5():
    model = build("seed003-lookup")
    for k, (x, y) in enumerate(TABLE.items()):
        _, cache = run_with_cache(model, x)
        assert cache.text == f"<bos>{x}%02d" % (y + 1)
        state = cache["resid_post", 0][1]  # the input's position, after layer 0's FFN
        assert model.slots[3:6] == ("x", "y", "z")
        assert state[3:6] == [k + 1, y, y + 1]


def test_the_main_command_runs_each_input_and_refuses_others():
    assert cli_once("--model", "seed003-lookup", "A", "B", "C") == \
        (0, "A -> 03\nB -> 06\nC -> 10\n", "")
    assert cli_once("--model", "seed003-lookup", "12+34") == (
        2, "", "tinyadder: error: '12+34' is not an input of seed003-lookup; use A, B or C\n")


def test_a_run_that_is_not_the_tasks_answer_warns(wrong_file):
    code, out, err = cli_once("--model", wrong_file, "B")
    assert (code, out) == (1, "B -> 08\n")
    assert err == f"tinyadder: warning: the {wrong_file} model writes 08 for B; its task says 06\n"


def test_trace_and_step_show_the_slots():
    code, out, err = cli_once("--model", "seed003-lookup", "--trace", "--pos", "1", "--slots",
                              "x,y,z", "--layer", "0", "C")
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == ["<bos>C10", "as its task: C -> 10, the task's answer"]
    assert "    x                      3  *y                      9" in out
    assert "   *z                     10" in out
    out, err = io.StringIO(), io.StringIO()
    code = main(["--model", "seed003-lookup", "--step", "A"], out=out, err=err,
                stdin=io.StringIO("n\nn\nq\n"))
    assert (code, err.getvalue()) == (0, "")
    assert "[3/12] position 1: 'A', predicts '0' at 2" in out.getvalue()
    assert "    y                      2  *z                      3" in out.getvalue()


def test_the_json_trace_reads_back_with_its_task():
    code, out, err = cli_once("--model", "seed003-lookup", "--json", "B")
    doc = json.loads(out)
    assert (doc["digits"], doc["addition"]) == (None, None)
    assert doc["task"] == {"input": "B", "answer": "06", "expected": "06"}
    again = trace_json.load(io.StringIO(out))
    assert again.tokens == [0, 2, 4, 10]
    doc["task"]["answer"] = "07"
    with pytest.raises(trace_json.TraceFormatError, match="'task' is not what"):
        trace_json.from_json(doc)


def test_verify_and_prove_run_every_input(wrong_file):
    code, out, _ = cli_once("verify", "--model", "seed003-lookup")
    assert code == 0 and out.splitlines()[-4:] == [
        "  A -> 03  right", "  B -> 06  right", "  C -> 10  right", "passed 3/3"]
    code, out, _ = cli_once("prove", "--model", "seed003-lookup")
    assert code == 0 and out.splitlines()[-1] == (
        "proved by exhaustion: 3 of 3 inputs (re-run: tinyadder verify --model seed003-lookup)")
    code, out, _ = cli_once("prove", "--model", wrong_file)
    assert code == 1 and "  B -> 08  wrong: the task says 06" in out
    assert "fails: 1 of 3 inputs written wrong" in out
    code, out, _ = cli_once("verify", "--model", wrong_file, "--number", "float32")
    assert code == 1 and out.splitlines()[-1] == "passed 2/3"


def test_exhaustion_decides_every_input():
    found = exhaust.runs(build("seed003-lookup"), number_system("fraction"))
    assert [(r.input, r.wrote, r.expected) for r in found] == \
        [("A", "03", "03"), ("B", "06", "06"), ("C", "10", "10")]
    assert exhaust.verdict(found) == "proved"


@pytest.mark.parametrize("argv", [["census"], ["verify", "--suite", "edges"],
                                  ["prove", "--generic"], ["verify", "--digits", "3"]])
def test_commands_that_read_an_addition_refuse_it_in_one_line(argv):
    code, out, err = cli_once(argv[0], "--model", "seed003-lookup", *argv[1:])
    assert (code, out) == (2, "") and err.count("\n") == 1


def test_an_input_is_one_of_the_tasks():
    model = build("seed003-lookup")
    assert parse_input(model, " C ") == "C"
    with pytest.raises(ValueError, match="'<bos>' is not an input of seed003-lookup"):
        parse_input(model, "<bos>")


def test_the_task_in_a_model_file():
    text = dump(build("seed003-lookup"))
    assert dump(loads(text)) == text
    data = json.loads(text)
    for change, message in [
            (("cases", "C", ["1", "<bos>"]), "task.cases['C']: '<bos>' is not a readout token"),
            (("cases", "C", ["1"]), "task.cases: every answer is one or more tokens, all of "
                                    "one length"),
            (("before", None, ["<eos>"]), "task: '<eos>' is not a token"),
            (("prompt", None, None), "task: a model has an addition prompt or a task")]:
        bad = json.loads(text)
        key, sub, value = change
        if key == "prompt":
            bad["prompt"] = {"digits": 1, "question": ["<bos>", "a", "A", "b", "B"]}
        elif sub is None:
            bad["task"][key] = value
        else:
            bad["task"][key][sub] = value
        with pytest.raises(ModelFileError, match="^" + message.replace("[", r"\[")):
            loads(json.dumps(bad))
    assert data["task"]["before"] == ["<bos>"]


def test_digits_are_refused_for_a_model_without_operands():
    assert cli_once("--model", "seed003-lookup", "--digits", "3", "A") == (
        2, "", "tinyadder: error: the model seed003-lookup has no operands (it does not add); "
               "leave the digits out\n")


# ---- the explorer, figure and explain draw the task ---------------------------------------

def page_data(text):
    """The explorer page's embedded data (its <script id="data">)."""
    found = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


def test_explore_shows_the_slots_and_the_tasks_answer(tmp_path):
    """explore --model seed003-lookup B: "computes B", the positions by role (the input, the
    answer's tokens), x = 2 and y = lookup[B] = 5 after layer 0's attention and z = 6 after its
    FFN at the input's position, and the readout's winners 0 then 6: the answer 06."""
    path = tmp_path / "b.html"
    code, out, err = cli_once("explore", "--model", "seed003-lookup", "B", "-o", str(path))
    assert (code, err) == (0, "")
    text = path.read_text(encoding="utf-8")
    assert "<h1>seed003-lookup computes B</h1>" in text
    assert 'It writes the answer <b class="mono">06</b>: right' in text
    data = page_data(text)
    assert [(t["label"], t["text"], t["role"]) for t in data["tokens"]] == [
        ("<bos>", "<bos>", "special"), ("input", "B", "input"), ("out0", "0", "sum"),
        ("out1", "6", "sum")]
    rows = {stage: data["residual"][stage]["rows"] for stage in ("L0.attn", "L0.mlp")}
    at_input = {slot: rows["L0.attn"][slot]["cells"][1][2] for slot in ("x", "y", "z")}
    assert at_input == {"x": "2", "y": "5", "z": "0"}
    assert rows["L0.mlp"]["z"]["cells"][1][2] == "6"
    readout = data["residual"]["readout"]["rows"]
    winners = [next(r[6:] for r, row in readout.items() if r.startswith("logit ") and
                    row["changed"][pos] == "1") for pos in (1, 2)]
    assert "".join(winners) == "06" == "".join(build("seed003-lookup").task.cases["B"])


def test_figure_and_explain_take_the_task_and_refuse_other_inputs(tmp_path, wrong_file):
    path = tmp_path / "z.svg"
    code, out, err = cli_once("figure", "slots", "--model", "seed003-lookup", "--stage",
                              "L0.mlp", "--pos", "1", "C", "-o", str(path))
    assert (code, err) == (0, "")
    assert "<title>Residual stream after layer 0 FFN (L0.mlp)</title>" in path.read_text()
    code, out, err = cli_once("explain", "--model", "seed003-lookup", "C")
    assert code == 0 and out.endswith("position 2 (out0 = '1') writes out1 = '0': lead 1 "
                                      "logits over '1'\n\nanswer 10: right\n")
    code, out, err = cli_once("explore", "--compare", "seed003-lookup", "published", "B")
    assert (code, out) == (2, "") and err == (
        "tinyadder explore: error: --compare draws two adders on one sum; seed003-lookup "
        "computes a finite task ('explore --model seed003-lookup INPUT' draws it alone)\n")
    for argv in (["explore", "D"], ["figure", "slots", "D"], ["explain", "D"]):
        code, out, err = cli_once(argv[0], "--model", "seed003-lookup", *argv[1:])
        assert (code, out) == (2, "") and err.count("\n") == 1
        assert "'D' is not an input of seed003-lookup; use A, B or C" in err
    code, out, err = cli_once("explore", "--model", wrong_file, "B", "-o",
                              str(tmp_path / "w.html"))
    assert code == 1 and err.endswith("model's answer '08' to B is wrong: the task says 06\n")
