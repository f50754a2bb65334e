"""The package's layers, read from its imports: core <- analysis <- cli, nothing upward.

The core is every module at the top of the package; ``tinyadder.analysis`` may import the core;
``tinyadder.cli`` may import both. Two entry points sit outside the layers: ``__main__`` (runs
the command line) and ``adderboard`` (AdderBoard's interface, which counts parameters with the
ledger). ``tinyadder/__init__`` loads ``run_with_cache`` lazily, so importing the core never
loads an analysis.
"""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tinyadder"
RANK = {"core": 0, "analysis": 1, "cli": 2}
ENTRY_POINTS = {"__main__", "adderboard"}


def layer(module):
    """'tinyadder.analysis.show' -> 'analysis'; 'tinyadder.forward' -> 'core'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("analysis", "cli") else "core"


def imports(path, root=PACKAGE):
    """(this module's name, absolute names of the tinyadder modules the file imports)."""
    here = "tinyadder." + ".".join(path.relative_to(root).with_suffix("").parts)
    package = here.rsplit(".", 1)[0] if path.name != "__init__.py" else here[:-len(".__init__")]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("tinyadder"):
                found.add(module)
                found |= {f"{module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tinyadder")}
    return here, found


def upward_imports(root=PACKAGE):
    """Every import, anywhere in a file (lazy ones too), of a higher layer than the file's."""
    upward = []
    for path in sorted(root.rglob("*.py")):
        here, found = imports(path, root)
        if here.split(".")[-1] in ENTRY_POINTS or here == "tinyadder.__init__":
            continue
        for module in found:
            if RANK[layer(module)] > RANK[layer(here)]:
                upward.append(f"{here} imports {module}")
    return sorted(upward)


def test_nothing_imports_upward():
    assert upward_imports() == []


def test_an_upward_import_is_seen(tmp_path):
    (tmp_path / "analysis").mkdir()
    (tmp_path / "forward.py").write_text("def f():\n    from .analysis import show\n")
    (tmp_path / "analysis" / "show.py").write_text("from ..cli.options import Parser\n")
    (tmp_path / "analysis" / "ok.py").write_text("from .. import forward\nfrom . import show\n")
    assert upward_imports(tmp_path) == [
        "tinyadder.analysis.show imports tinyadder.cli.options",
        "tinyadder.analysis.show imports tinyadder.cli.options.Parser",
        "tinyadder.forward imports tinyadder.analysis",
        "tinyadder.forward imports tinyadder.analysis.show"]


def test_importing_the_core_loads_no_analysis_and_no_cli():
    code = ("import sys, tinyadder, tinyadder.adderboard\n"
            "print(sorted({m.split('.')[1] for m in sys.modules\n"
            "              if m.startswith('tinyadder.') and m.count('.') >= 1}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert "'cli'" not in out
    # adderboard counts its parameters with the ledger, and needs nothing else of analysis
    code = ("import sys, tinyadder.adderboard\n"
            "print(sorted(m for m in sys.modules if m.startswith('tinyadder.analysis.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert out.strip() == "['tinyadder.analysis.ledger']"
