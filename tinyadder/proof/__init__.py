"""Proofs over all 10^(2N) pairs, one module a step:

- ``kernel``: the trusted part: ``claim`` (what a verdict is about: the whole sum, the model
  text by its hash) and the certificate checkers (``certificate``, ``setcheck``,
  ``floatcheck``); it imports nothing of the rest
- ``search``: the generic method (regions of pairs, the pass over them, the prover), whose
  certificates the kernel checks
- ``symbolic``: the number system of affine forms in the digits with a certified radius
- ``reals``: exact sums known at once by a float enclosure (the forms' bounds over the box)
- ``formulas``: every digit decision as a formula, read off the model's own forward pass
- ``prove``: the induction over the digits, and the certificate's data
- ``windows``: where the proof fails, the failing set as windows of the sum
- ``columns``: counting pairs over the digit columns of a and b
- ``census``: the exact number of failing pairs, window by window
- ``stress``: stress variants (a weaker layer-1 FFN) for testing the census

``--jobs`` splits their work over processes by ``analysis.parallel``'s fixed rule.
"""
