"""``tinyadder bench --only traces``: each shipped model's exact text trace at N = 10, its CPU
seconds against the speed issue's 10 s and its answer checked against a + b (one model by
default; the part runs every shipped model, a minute)."""

from tinyadder.analysis.bench import TRACE_PAIR, trace_seconds
from tinyadder.cli import bench, main


def test_a_trace_is_timed_and_its_answer_is_the_sum():
    seconds, total = trace_seconds("fblissjr-33")
    assert total == sum(int(x) for x in TRACE_PAIR.split("+")) and 0 < seconds < 60


def test_the_part_prints_a_row_per_model(monkeypatch, capsys):
    monkeypatch.setattr(bench, "names", lambda: ["fblissjr-33"])
    assert main(["bench", "--only", "traces"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line.split() for line in lines if line.startswith("  fblissjr-33"))
    assert row[2] == "right" and float(row[1]) < 10
    assert lines[-3] == "over 10 s: none"
