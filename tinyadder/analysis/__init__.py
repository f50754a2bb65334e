"""Analyses of the core's runs: the trace cache and its displays, probes, the parameter
ledger, the program listing, the precision lab, verify and bench. Libraries only: the command
line (``tinyadder.cli``) parses options and calls them; nothing here imports it."""
