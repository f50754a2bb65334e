"""Pin a board fixture's figures from the model file (run with the repository's python, after a
converter recorded the original's answers): the ledger's count, and of the recorded logits
the steps, the steps where tinyadder's float replay gives every logit bit for bit, and the
largest difference (tests/test_board.py checks all three).

    python3 tools/convert/pins.py NAME ...
"""

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tinyadder import models  # noqa: E402
from tinyadder.analysis import board, ledger  # noqa: E402


def pins(name):
    path = ROOT / "tests" / "fixtures" / "board" / f"{name}.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        fx = json.load(f)
    model = models.build(name)
    steps = board.recorded_steps(model, fx["logits"])
    assert all(mine == want for _, _, mine, want, _ in steps), name
    worst = max(diff for *_, diff in steps)
    same, steps = sum(diff == 0 for *_, diff in steps), len(steps)
    fx["pins"] = {"params_counted": ledger.totals(ledger.ledger(model)).params,
                  "logits_steps": steps, "logits_identical_steps": same,
                  "logits_max_diff": worst.hex()}
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(fx, f)
    wrong = {s: len(v["wrong"]) for s, v in fx["suites"].items()}
    print(name, fx["pins"], "original wrong:", wrong)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        pins(name)
