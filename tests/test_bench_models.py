"""``tinyadder bench --only models``: per shipped model its rates against its original's own
program, read from the rates tests/benchmarks/originals.py recorded (torch is never a
dependency), and the board table's CPU by those rates. Two models by default (the part itself
runs every shipped model: minutes under load)."""

from tinyadder.analysis.bench import model_rates, originals
from tinyadder.cli import bench, main


def test_the_originals_rates_are_read_from_the_recorded_file():
    rates, why = originals()
    assert "recorded" in why and "not run now" in why
    assert rates["jacobli99-28"] > 0 and "lokimorty-10" not in rates  # MLX: not run here
    # the board's newest: on Kiguli/AdderBoard, or timed through their converters' add
    assert all(rates[name] > 0 for name in ("bingbangboom-lab-148", "yinglunz-512",
                                            "jackcai1206-234", "lokimorty-39"))
    assert "xangma-177" not in rates and "xangma-197" not in rates  # MLX


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
