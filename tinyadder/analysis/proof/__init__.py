"""Proofs over all 10^(2N) pairs: the symbolic pass (``symbolic``), every digit decision as a
formula (``decisions``), the proof (``prove``), the exact failure count (``census``), the
independent checker of a proof's certificate (``certificate``) and stress variants (``stress``)."""
