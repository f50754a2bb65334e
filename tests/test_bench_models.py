"""``tinyadder bench --only models``: per shipped model its rates against its original's own
program, read from the rates tests/benchmarks/originals.py recorded (torch is never a
dependency), and the board table's CPU by those rates. Two models by default (the part itself
runs every shipped model: minutes under load)."""

import json

from tinyadder.analysis.bench import ORIGINALS, model_rates, originals
from tinyadder.cli import bench, main
from tinyadder.models import board_names


def test_the_originals_rates_are_read_from_the_recorded_file():
    """Every shipped board model has its original's rate, each right on every pair it ran."""
    rates, why = originals()
    assert "recorded" in why and "not run now" in why
    recorded = json.loads(ORIGINALS.read_text())["models"]
    assert set(rates) == set(recorded) == set(board_names())
    assert all(rates[name] > 0 for name in rates)
    assert all(e["right"] == e["cases"] > 0 for e in recorded.values())
    # MLX originals (Apple's framework, its Linux CPU wheel) and those in their own repository
    assert all("mlx" in recorded[name]["framework"] for name in ("lokimorty-10", "xangma-177",
                                                                  "wonderfall-27", "staghado-122"))
    assert recorded["kswain98-8"]["source"] == "kswain98/AdderBoard/submission_8p.py"


def test_model_rates_are_of_its_exact_and_float_systems():
    row = model_rates("zcbtrak-6", scale=0.05)
    assert row.dtype == "float" and set(row.rates) == {"fraction", "float", "float32"}
    assert all(rate > 0 for rate in row.rates.values())
    assert row.wrong == {"fraction": 0, "float": 0, "float32": 0}


def test_the_part_prints_a_row_per_model_and_the_table(monkeypatch, capsys):
    """A row per shipped model and per built model of the board's list (variant-22), the
    longest board name (20 characters) within 80 columns; the table counts the board's."""
    monkeypatch.setattr(bench, "names", lambda: ["published", "bingbangboom-lab-148"])
    monkeypatch.setattr(bench, "board_names", lambda: ["bingbangboom-lab-148"])
    monkeypatch.setattr(bench.board, "OWN", {"published": "", "variant-22": ""})
    assert main(["bench", "--only", "models", "--scale", "0.05"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    rows = {line.split()[0]: line.split() for line in lines
            if line.startswith(("pub", "bing", "variant"))}
    assert set(rows) == {"published", "bingbangboom-lab-148", "variant-22"}
    assert rows["published"][2] == "-" and rows["bingbangboom-lab-148"][2] != "-"
    assert rows["bingbangboom-lab-148"][5:7] == ["f32", rows["bingbangboom-lab-148"][6]]
    assert any(line.startswith("board --table (3 models") for line in lines)
