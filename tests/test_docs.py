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
    """(command, expected output, expected exit status) for each '$ ' line of the page's
    ```console blocks. The output is standard output; for a command followed by '$ echo $?' it
    is what a terminal shows, standard output then standard error, and the status is the
    echo's (else None)."""
    for block in re.findall(r"```console\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        chunks = [c.partition("\n") for c in re.split(r"^\$ ", block, flags=re.M)[1:]]
        for i, (command, _, output) in enumerate(chunks):
            follow = chunks[i + 1] if i + 1 < len(chunks) else ("", "", "")
            status = int(follow[2]) if follow[0] == "echo $?" else None
            if command != "echo $?" and not any(s in command for s in SKIP):
                yield command, output, status


EXAMPLES = [(path.name, *example) for path in PAGES for example in console_examples(path)]


def test_readme_has_examples():
    assert sum(name == "README.md" for name, *_ in EXAMPLES) >= 3


@pytest.mark.parametrize("page, command, expected, status", EXAMPLES,
                         ids=[f"{p}:{c[:40]}" for p, c, _, _ in EXAMPLES])
def test_console_example(page, command, expected, status):
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "tinyadder"], command
    done = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    if status is None:
        assert done.stdout == expected, done.stderr
    else:
        assert (done.stdout + done.stderr, done.returncode) == (expected, status)
