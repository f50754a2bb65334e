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
    ns = board.native(model)
    worst, same, steps = 0.0, 0, 0
    for rec in fx["logits"]:
        got = board.step_logits(model, ns, rec["a"], rec["b"], len(rec["steps"]))
        for row, want in zip(got, rec["steps"]):
            want = [float.fromhex(x) for x in want]
            diff = max(abs(g - w) for g, w in zip(row, want) if g is not None)
            worst, same, steps = max(worst, diff), same + (diff == 0), steps + 1
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
