"""Every shell example in README.md and docs/*.md runs and prints what the page shows."""

import re
import shlex
from pathlib import Path

import pytest

from cli_runs import cli_once
from explore_cases import EXAMPLE, traced
from tinyadder.analysis.pictures.explore import VIEWS
from tinyadder.analysis.pictures.tour import SECTIONS, steps
from tinyadder.analysis.pictures.variants import changes
from tinyadder.construction import build

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
    """The command line runs in this process (cli.main on the page's argv, from the
    repository's root), as ``python -m tinyadder`` runs it; the real process around it is
    tested in test_bad_input and test_fuzz."""
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "tinyadder"], command
    code, out, err = cli_once(*argv[3:])
    if status is None:
        assert out == expected, err
    else:
        assert (out + err, code) == (expected, status)


WALKTHROUGH = ROOT / "docs" / "walkthrough.md"
PAGES_DIGITS = {"explore.html": 10, "explore-flaw.html": 10, "explore-warmup.html": 3}


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def sections(text):
    """{heading: its text} of the numbered '## N.' sections."""
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {p.split("\n", 1)[0]: p for p in parts if re.match(r"\d+\.", p)}


def test_every_walkthrough_section_links_the_explorer():
    """Each numbered section opens the explorer in a state that exists: a page the
    walkthrough's own commands write, a tour step, a position, stage, head and variant."""
    text = WALKTHROUGH.read_text(encoding="utf-8")
    for page in PAGES_DIGITS:
        assert f"-o docs/{page}" in text, page
    variants = {c.key for c in changes(build("published"))}
    stages = {"embed", "L0.attn", "L0.mlp", "L1.attn", "L1.mlp", "readout"}
    for heading, body in sections(text).items():
        links = re.findall(r"\]\((explore[\w-]*\.html)#([^)]+)\)", body)
        assert links, f"section {heading!r} links no explorer state"
        for page, fragment in links:
            n = PAGES_DIGITS[page]
            for key, value in (part.split("=") for part in fragment.split("&")):
                assert {"tour": lambda v: 1 <= int(v) <= 12,
                        "pos": lambda v: 0 <= int(v) < 3 * n + 4,
                        "stage": lambda v: v in stages,
                        "head": lambda v: v in ("L0.h3", "L0.h4", "L1.h0"),
                        "mode": lambda v: v in ("softmax1", "softmax"),
                        "variant": lambda v: v in variants,
                        "view": lambda v: v in VIEWS}[key](value), (page, fragment)
    assert len(steps(traced(EXAMPLE)[1])) == 12


def test_the_page_links_sections_that_exist():
    anchors = {slug(h) for h in re.findall(r"^## (.*)$", WALKTHROUGH.read_text(encoding="utf-8"),
                                           flags=re.M)}
    for key, (number, anchor) in SECTIONS.items():
        assert anchor in anchors and anchor.startswith(f"{number}-"), key


def test_learner13_each_walkthrough_tour_link_opens_its_sections_step():
    """A link 'tour step K' in a numbered section of the walkthrough (after §0, the overview,
    which links the tour's start) opens a step that section explains (the tour follows the
    sections' order: learner13 3)."""
    tour = steps(traced(EXAMPLE)[1])
    for heading, body in sections(WALKTHROUGH.read_text(encoding="utf-8")).items():
        number = heading.split(".")[0]
        for k in [] if number == "0" else re.findall(r"\]\(explore(?:-flaw)?\.html#tour=(\d+)\)", body):
            assert SECTIONS[tour[int(k) - 1]["section"]][0] == number, (heading, k)


def test_learner13_exercise_6c_runs_on_the_setup_alone():
    """Exercise 6c's answer needs only the page's setup blocks, not 6b's hidden answer
    (learner13 4: it raised NameError on `models` when 6b was skipped)."""
    import doctest
    text = (ROOT / "docs" / "exercises.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    setup = [b for b in blocks if text.index(b) < text.index("## 1. ")]
    six_c = text[text.index("*6c "):text.index("*6d ")]
    code = "".join(setup) + re.search(r"```python\n(.*?)```", six_c, re.S).group(1)
    test = doctest.DocTestParser().get_doctest(code, {}, "6c", "exercises.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    assert runner.run(test, out=lambda s: None).failed == 0
