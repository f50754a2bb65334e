"""Every shell example in README.md and docs/*.md runs and prints what the page shows."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = ("pip install", "pytest", "-m venv")  # the test command itself, installs, the venv


def console_examples(path):
    """(command, expected stdout) for each '$ ' line of the page's ```console blocks."""
    for block in re.findall(r"```console\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            if not any(s in command for s in SKIP):
                yield command, output


EXAMPLES = [(path.name, cmd, out) for path in PAGES for cmd, out in console_examples(path)]


def test_readme_has_examples():
    assert sum(name == "README.md" for name, _, _ in EXAMPLES) >= 3


@pytest.mark.parametrize("page, command, expected", EXAMPLES,
                         ids=[f"{p}:{c[:40]}" for p, c, _ in EXAMPLES])
def test_console_example(page, command, expected):
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "tinyadder"], command
    done = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.stdout == expected, done.stderr
