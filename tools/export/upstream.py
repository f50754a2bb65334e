"""Export trained AdderBoard entries from their authors' own repositories (the module and the
checkpoint the board's model file was converted from: tools/convert/), as
tools/export/adderboard.py does for Kiguli/AdderBoard's files.

Run in the same scratch environment: ``python tools/export/upstream.py NAME CHECKOUT OUT``,
CHECKOUT a checkout of the entry's repository at the commit of ``ENTRIES`` (its code is
loaded from there at run time, by path; nothing of it is copied here), OUT the fixture folder.
Each entry's ``build(checkout)`` gives (model, add): the model as an ``nn.Module`` whose
forward takes token ids [1, T] and returns the logits [1, T, vocab] (a wrapper where the
original's forward returns more), and the original's own greedy ``add(model, a, b)``.
"""

import importlib
import importlib.util
import sys
from pathlib import Path

import torch

from adderboard import export_model


def _low_rank(checkpoint):
    """src.model.TinyDecoderLM from the checkpoint's config (yinglunz's code, which rezabyt's
    repository holds unchanged); forward gives (logits, loss); the prompt is a and b most
    significant first with '+' and '=', the answer 11 digits least significant first
    (src/data.py's preprocess and postprocess)."""
    return lambda checkout: _tiny_decoder(checkout, checkpoint)


def _tiny_decoder(checkout, checkpoint):
    sys.path.insert(0, str(checkout))
    model_mod, data = importlib.import_module("src.model"), importlib.import_module("src.data")
    blob = torch.load(Path(checkout) / checkpoint, map_location="cpu",
                      weights_only=False)
    inner = model_mod.TinyDecoderLM(model_mod.ModelConfig(**blob["model_config"]))
    inner.load_state_dict(blob["model_state"])
    model = Logits(inner.eval())

    def add(model, a, b):  # TinyDecoderLM.generate's loop, through the wrapper
        out = torch.tensor([data.preprocess(a, b)])
        for _ in range(data.TARGET_LEN):
            nxt = torch.argmax(model(out)[:, -1, :], dim=-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
        return data.postprocess(out[0, -data.TARGET_LEN:].tolist())
    return model, add


def _submission(folder, file):
    """An AdderBoard submission module in its own folder of the checkout (build_model loads
    its checkpoint from beside it), with the board's build_model() and add(model, a, b)."""
    def build(checkout):
        path = Path(checkout) / folder / file
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.build_model()[0], module.add
    return build


class Logits(torch.nn.Module):
    """The original's forward, its first output (the logits)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, tokens):
        return self.inner(tokens)[0]


# name: (repo, commit, build)
ENTRIES = {
    "yinglunz-456": ("yinglunz/A-456-Parameter-Transformer-Solves-10-Digit-Addition",
                     "1fb37db3fb7dd0df9da51f1d91b86b3f5e507e85",
                     _low_rank("checkpoints/best_456p_s43.pt")),
    "yinglunz-512": ("yinglunz/A-456-Parameter-Transformer-Solves-10-Digit-Addition",
                     "1fb37db3fb7dd0df9da51f1d91b86b3f5e507e85",
                     _low_rank("checkpoints/best_512params.pt")),
    "rezabyt-311": ("rezabyt/digit-addition-311p", "b1fec04ce160e307a5635dc18eb8d6f45ac2f8c7",
                    _low_rank("checkpoints/best_311p_s34.pt")),
    "evindor-57": ("evindor/MicroAdder", "fafb573fb9000ff34b3965a02f48d3f30ac7787d",
                   _submission("submission_57p", "submission_57p.py")),
    "evindor-67": ("evindor/MicroAdder", "fafb573fb9000ff34b3965a02f48d3f30ac7787d",
                   _submission("submission_67p", "submission_67p.py")),
    "jackcai1206-234": ("JackCai1206/smallest-addition-transformer",
                        "c9e31ff9515f5c277e21a0cdcccc16222f5f0d94",
                        _submission(".", "submission_234.py")),
    "vijec-52": ("vijec/AdderBoard-Submission", "2d6f7510bfa7b3a7c041117790bf30effdf81bc4",
                 _submission("submission-52", "submission_52p.py")),
}


if __name__ == "__main__":
    name, checkout, out = sys.argv[1:4]
    repo, commit, build = ENTRIES[name]
    model, add = build(checkout)
    export_model(Path(out), name, model, add, {"repo": repo, "commit": commit})
