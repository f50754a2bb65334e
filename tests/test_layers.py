"""The package's layers, read from its imports: core <- analysis <- proof, pictures <- cli.

The core is every module outside ``tinyadder.analysis``, ``tinyadder.proof`` and
``tinyadder.cli`` (the number systems included); the flat modules of ``tinyadder.analysis``
may import the core; ``tinyadder.proof`` and ``tinyadder.analysis.pictures`` may import both,
but not each other; ``tinyadder.cli`` may import everything. Two entry points sit outside the layers: ``__main__`` (runs the command
line) and ``adderboard`` (AdderBoard's interface, which counts parameters with the ledger).
No module imports one that imports it back, lazily or not.
"""

import ast
import functools
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tinyadder"
RANK = {"core": 0, "analysis": 1, "proof": 2, "pictures": 2, "cli": 3}
ENTRY_POINTS = {"__main__", "adderboard"}


def layer(module):
    """'tinyadder.analysis.show' -> 'analysis'; 'tinyadder.proof.census' -> 'proof';
    'tinyadder.numbers.fraction' -> 'core'."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("cli", "proof"):
        return parts[1]
    if len(parts) > 1 and parts[1] == "analysis":
        return "pictures" if len(parts) > 2 and parts[2] == "pictures" else "analysis"
    return "core"


def _modules(root):
    """{module name: path} of every module file under root (a package by its __init__)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(("tinyadder",) + parts)] = path
    return out


@functools.lru_cache(maxsize=None)  # both checks read every file: parse each once
def imports(path, root=PACKAGE):
    """(this module's name, absolute names of the tinyadder modules the file imports, a
    frozenset)."""
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
    return here.replace(".__init__", ""), frozenset(found)


def upward_imports(root=PACKAGE):
    """Every import, anywhere in a file (lazy ones too), of a higher layer than the file's, or
    of the other sub-package of the same rank (proof and pictures)."""
    upward = []
    for path in sorted(root.rglob("*.py")):
        here, found = imports(path, root)
        if here.split(".")[-1] in ENTRY_POINTS:
            continue
        for module in found:
            mine, theirs = layer(here), layer(module)
            if RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                upward.append(f"{here} imports {module}")
    return sorted(upward)


def import_graph(root=PACKAGE):
    """{module: the modules it imports} over the module files under root. Importing names
    from a package counts as importing the package, unless every name is a module of it."""
    modules = _modules(root)
    graph = {}
    for name, path in modules.items():
        here, found = imports(path, root)
        targets = {m for m in found if m in modules and m != here}
        # 'from .. import addition' runs the package's __init__ anyway; it is not a use of it
        for package in [m for m in targets if (modules[m].name == "__init__.py")]:
            named = {m for m in found if m.startswith(package + ".") and m.count(".") ==
                     package.count(".") + 1}
            if named and named <= set(modules):
                targets.discard(package)
        graph[name] = targets
    return graph


def circles(graph):
    """Every module that can reach itself through imports, with one such path."""
    found = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append(" -> ".join(path + [start]))
                    stack = []
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return found


def test_nothing_imports_upward():
    assert upward_imports() == []


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_an_upward_import_is_seen(tmp_path):
    (tmp_path / "proof").mkdir()
    (tmp_path / "analysis" / "pictures").mkdir(parents=True)
    (tmp_path / "forward.py").write_text("def f():\n    from .analysis import show\n")
    (tmp_path / "analysis" / "show.py").write_text("from ..cli.options import Parser\n")
    (tmp_path / "analysis" / "ok.py").write_text("from .. import forward\nfrom . import show\n")
    (tmp_path / "proof" / "prove.py").write_text("from ..analysis.pictures import views\n")
    assert upward_imports(tmp_path) == [
        "tinyadder.analysis.show imports tinyadder.cli.options",
        "tinyadder.analysis.show imports tinyadder.cli.options.Parser",
        "tinyadder.forward imports tinyadder.analysis",
        "tinyadder.forward imports tinyadder.analysis.show",
        "tinyadder.proof.prove imports tinyadder.analysis.pictures",
        "tinyadder.proof.prove imports tinyadder.analysis.pictures.views"]


def test_a_circle_is_seen(tmp_path):
    (tmp_path / "numbers").mkdir()
    (tmp_path / "numbers" / "__init__.py").write_text("from .fraction import F\n")
    (tmp_path / "numbers" / "fraction.py").write_text(
        "def d():\n    from .enclosures import e\n")
    (tmp_path / "numbers" / "enclosures.py").write_text("from .fraction import F\n")
    (tmp_path / "forward.py").write_text("from . import numbers\n")
    assert circles(import_graph(tmp_path)) == [
        "tinyadder.numbers.enclosures -> tinyadder.numbers.fraction -> "
        "tinyadder.numbers.enclosures",
        "tinyadder.numbers.fraction -> tinyadder.numbers.enclosures -> "
        "tinyadder.numbers.fraction"]


def test_importing_the_core_loads_no_analysis_and_no_cli():
    code = ("import sys, tinyadder, tinyadder.adderboard\n"
            "print(sorted({m.split('.')[1] for m in sys.modules\n"
            "              if m.startswith('tinyadder.') and m.count('.') >= 1}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert "'cli'" not in out
    code = "import sys, tinyadder\nprint(any(m.startswith('tinyadder.analysis') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert out.strip() == "False"
    # adderboard counts its parameters with the ledger, and needs nothing else of analysis
    code = ("import sys, tinyadder.adderboard\n"
            "print(sorted(m for m in sys.modules if m.startswith('tinyadder.analysis.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert out.strip() == "['tinyadder.analysis.ledger']"


def kernel_imports(root=PACKAGE):
    """Every import by a module of ``tinyadder.proof.kernel`` (the trusted part of the
    proofs) of any other module of ``tinyadder.proof``: the search, the closed form, the
    census. The kernel may import the core, ``analysis.parallel`` and itself only."""
    out = []
    for path in sorted((root / "proof" / "kernel").rglob("*.py")):
        here, found = imports(path, root)
        out += [f"{here} imports {m}" for m in sorted(found)
                if m.startswith("tinyadder.proof") and not m.startswith("tinyadder.proof.kernel")
                or m.startswith("tinyadder.analysis") and m != "tinyadder.analysis.parallel"
                and not m.startswith("tinyadder.analysis.parallel.")]
    return out


def test_the_proof_kernel_imports_no_search():
    assert kernel_imports() == []


def test_a_kernel_import_of_the_search_is_seen(tmp_path):
    (tmp_path / "proof" / "kernel").mkdir(parents=True)
    (tmp_path / "proof" / "kernel" / "check.py").write_text(
        "from ..search.generic import Prover\nfrom ...analysis.parallel import each_share\n"
        "from .claim import named\n")
    assert kernel_imports(tmp_path) == [
        "tinyadder.proof.kernel.check imports tinyadder.proof.search.generic",
        "tinyadder.proof.kernel.check imports tinyadder.proof.search.generic.Prover"]


def test_docs_proof_states_the_kernel_as_it_is():
    """docs/proof.md's table of the trusted base lists every module of the kernel with its
    line count, and their total, as the tree has them."""
    import re
    text = (PACKAGE.parent / "docs" / "proof.md").read_text()
    table = text.split("<!-- kernel lines")[1].split("<!-- end kernel lines -->")[0]
    rows = dict(re.findall(r"^\| `proof/kernel/([\w/]+\.py)` \| (\d+) \|", table, re.M))
    found = {p.relative_to(PACKAGE / "proof" / "kernel").as_posix():
             str(len(p.read_text().splitlines()))
             for p in sorted((PACKAGE / "proof" / "kernel").rglob("*.py"))}
    assert rows == found
    total = re.search(r"^\| kernel total \| (\d+) \|", table, re.M).group(1)
    assert int(total) == sum(map(int, found.values()))
