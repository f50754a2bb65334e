"""Analyses of the core's runs. Libraries only: they return data, the command line
(``tinyadder.cli``) prints it; nothing here imports the command line.

- ``text``: readable exact forms of long rationals, and their magnitudes (log10)
- ``show``: the machine state as text, per position and half-layer (``--trace``)
- ``heat``: attention as a character ramp in the terminal (``--trace --heat``)
- ``step``: a debugger over a trace (``--step``)
- ``trace_json``: a whole trace as exact JSON and back (``--json``)
- ``probes``: what each slot is meant to hold, from a and b (``--check``)
- ``ledger``: the parameter count, rule by rule (``params``)
- ``program``: the weights read as a register machine (``program``)
- ``precision``: how many digits the arithmetic needs (``precision``)
- ``verify``: suites of additions against a + b (``verify``)
- ``parallel``: ``--jobs``, a fixed split of the work over processes (verify, prove, census)
- ``bench``: additions per second (``bench``)
- ``explain``: the algorithm narrated from a trace (``explain``)
- ``proof/``: the symbolic pass, digit decisions, ``prove``, ``census``, the certificate
  checker, stress variants
- ``pictures/``: the explorer's views as data, SVG figures, the explorer page
"""
