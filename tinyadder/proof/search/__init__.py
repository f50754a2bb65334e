"""The generic method's search: regions of pairs (``sets``), the forward pass over them
(``setsystem``; ``floatsets`` for a float program), and the prover that splits them
(``generic``). Untrusted: what it finds is re-checked by ``proof.kernel``."""
