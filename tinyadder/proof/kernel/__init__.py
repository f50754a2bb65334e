"""The trusted part of the proofs: what a verdict is about (``claim``) and the certificate
checkers (``setcheck``: the generic method's; ``floatcheck``: a float program's). It imports
nothing of the search (``proof.search``), which imports it (tests/test_layers.py enforces it)."""
