"""Step through a trace one half-layer at a time, like a debugger, with keys from any stream.

The states are, for each chosen position, the embedding, each half-layer and the readout.
Commands (one per line; an empty line is ``n``)::

    n next   p previous   j POS jump to a position   s SLOT print a slot exactly
    (a long one readably, -10 + 10^-11 + 4.2484*10^-17 + r, |r| < 10^-21, and its size;
    ``s SLOT exact`` prints every digit)
    a HEAD   attention row of a head (h3, or 0.h3 for another layer)
    c continue to the end   q quit   h help

End of input and Ctrl-C end the session quietly, as ``q`` does.
"""

from . import show
from .text import readable
from ..cache import stages

HELP = "n next, p prev, j POS, s SLOT [exact], a HEAD (h3 or 0.h3), c continue, q quit, h help"
PROMPT = "(step) "
LONG = 200   # exact texts longer than this print only on request
CLOSE = 20   # significant digits of a long value without a readable form


def _size(value):
    """'a ratio of integers of 8512 and 8480 digits' (or 'an integer of 312 digits')."""
    n, d = (len(show.int_text(abs(v))) for v in (value.numerator, value.denominator))
    if d == 1:
        return f"an integer of {n} digits"
    return f"a ratio of integers of {n} and {d} digits"


class Session:
    """Where the session is: an index into the (position, stage) states."""

    def __init__(self, cache, positions, slots, sig):
        self.cache, self.slots, self.sig = cache, slots, sig
        self.n_stages = len(stages(cache.model)) + 1  # the readout comes last
        self.states = [(pos, k) for pos in positions for k in range(self.n_stages)]
        self.at = 0

    def show(self):
        pos, k = self.states[self.at]
        lines = [f"[{self.at + 1}/{len(self.states)}] {show.position_header(self.cache, pos)}"]
        if k == self.n_stages - 1:
            lines += show.logit_lines(self.cache, pos, self.sig)
        else:
            lines += show.stage_lines(self.cache, k, pos, self.slots, self.sig)
        return lines

    def layer(self):
        _, k = self.states[self.at]
        return stages(self.cache.model)[k].layer if k < self.n_stages - 1 else None

    def command(self, line):
        """Carry out one command: (lines to print, whether the session goes on)."""
        word, _, arg = line.strip().partition(" ")
        arg = arg.strip()
        if word in ("", "n", "next"):
            if self.at + 1 == len(self.states):
                return ["end of trace"], False
            self.at += 1
            return self.show(), True
        if word in ("p", "prev", "previous"):
            if self.at == 0:
                return ["at the first state"], True
            self.at -= 1
            return self.show(), True
        if word in ("j", "jump"):
            wanted = [i for i, (pos, k) in enumerate(self.states) if str(pos) == arg and k == 0]
            if not wanted:
                shown = sorted({pos for pos, _ in self.states})
                return [f"no position {arg!r} here; positions {shown[0]} to {shown[-1]}"], True
            self.at = wanted[0]
            return self.show(), True
        if word in ("s", "slot"):
            return self.slot(arg), True
        if word in ("a", "attn"):
            return self.attention(arg), True
        if word in ("c", "continue"):
            lines = []
            while self.at + 1 < len(self.states):
                self.at += 1
                lines += self.show()
            return lines + ["end of trace"], False
        if word in ("q", "quit"):
            return [], False
        if word in ("h", "help", "?"):
            return [HELP], True
        return [f"unknown command {word!r}; {HELP}"], True

    def slot(self, arg):
        name, _, every = arg.partition(" ")
        pos, k = self.states[self.at]
        k = min(k, self.n_stages - 2)  # at the readout, the stream after the last half-layer
        view = self.cache.view(stages(self.cache.model)[k].name, pos)
        if name not in view:
            return [f"no slot {name!r} at this state; slots: {', '.join(view)}"]
        if every.strip() not in ("", "exact"):
            return [f"s takes a slot and optionally 'exact', not {every.strip()!r}"]
        value = view[name]
        exact = show.fmt(value, exact=True)
        if every.strip() == "exact" or len(exact) <= LONG:
            return [f"{name} ~ {show.rounded(value)}, exactly:", exact]
        lines = [f"{name} ~ {show.rounded(value)}"]
        form = readable(value)  # a ratio of 1000-digit integers needs its leading terms
        lines.append(f"readably: {form}" if form else
                     f"to {CLOSE} significant digits: {show.rounded(value, CLOSE)}")
        return lines + [f"exactly: {_size(value)}", f"  ('s {name} exact' prints every digit)"]
    def attention(self, arg):
        layer_text, _, head = arg.rpartition(".")
        layer = self.layer() if not layer_text else layer_text.lstrip("L")
        blocks = self.cache.model.blocks
        if layer is None or not str(layer).isdigit() or int(layer) >= len(blocks):
            return [f"which layer? use a L.HEAD such as 0.h3 (layers 0 to {len(blocks) - 1})"]
        heads = blocks[int(layer)].attn.heads
        if head not in heads:
            return [f"no head {head!r} in layer {layer}; heads: {', '.join(heads)}"]
        pos, _ = self.states[self.at]
        return show.attention_row(self.cache, int(layer), head, pos, self.sig)


def session(cache, keys, out, positions=None, slots=None, sig=show.SIG):
    """Run a step-through session reading commands from ``keys``, writing to ``out``."""
    positions = cache.predicting if positions is None else positions
    state = Session(cache, list(positions), slots, sig)
    lines = show.legend(cache, sig) + [HELP] + state.show()
    going = True
    try:
        while True:
            out.write("\n".join(lines) + "\n" if lines else "")
            if not going:
                return
            out.write(PROMPT)
            out.flush()
            line = keys.readline()
            if not line:  # end of input
                out.write("\n")
                return
            if not keys.isatty():  # echo piped keys, so the transcript reads as typed
                out.write(line if line.endswith("\n") else line + "\n")
            lines, going = state.command(line)
    except KeyboardInterrupt:
        out.write("\n")
