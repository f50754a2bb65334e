"""The walkthrough's sections as HTML, for the explorer page to carry inside itself.

The page links each view to the walkthrough section that explains it. A relative link to
docs/walkthrough.md opens raw Markdown from disk, and a page written elsewhere links into the
writer's checkout; so the page embeds the sections it cites (``sections``), rendered by the
small subset of Markdown the walkthrough uses: headings, paragraphs, lists, fenced blocks,
tables as text, `code`, **bold**, *emphasis*, <sub>/<sup>, and links (a web address kept, a
relative link reduced to its text: the page stands alone; a paragraph that is only a link into
an explorer page is left out). Outside a checkout there is no walkthrough to embed, and the page
names the sections without links.

>>> html = render("Some `code` and **bold**, [a link](other.md) and [web](https://x.org).")
>>> html
'<p>Some <code>code</code> and <b>bold</b>, a link and <a href="https://x.org">web</a>.</p>'
>>> render("Text.\\n\\n[Explorer: the guided tour](explore.html#tour=1)")
'<p>Text.</p>'
>>> render("a<sub>k</sub> and <b>not bold</b>")
'<p>a<sub>k</sub> and &lt;b&gt;not bold&lt;/b&gt;</p>'
>>> render("1. one\\n2. two\\n\\n<details><summary>more</summary>\\n\\n```\\nx\\n```\\n\\n</details>")
'<ol><li>one</li><li>two</li></ol><details><summary>more</summary><pre>x</pre></details>'
"""

from html import escape
from pathlib import Path
import re

WALKTHROUGH = Path(__file__).resolve().parents[3] / "docs" / "walkthrough.md"
MODELS = WALKTHROUGH.with_name("models.md")


def _inline(text):
    text = escape(text, quote=False)
    text = re.sub(r"&lt;(sub|sup)&gt;([^&<]*)&lt;/\1&gt;", r"<\1>\2</\1>", text)  # a_k as HTML
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"[figure: \1]", text)
    text = re.sub(r"\[([^\]]+)\]\((https?://[^)\s]+)\)", r'<a href="\2">\1</a>', text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", text)


def render(markdown):
    """HTML of a Markdown text in the walkthrough's subset."""
    out, para, items, ordered = [], [], [], [False]

    def flush():
        # a paragraph that is only a link into an explorer page points at the page the reader
        # is on, or at another model's: dropped
        if para and not re.fullmatch(r"\[[^\]]*\]\(explore[\w-]*\.html[^)]*\)", " ".join(para)):
            out.append(f"<p>{_inline(' '.join(para))}</p>")
        para.clear()
        if items:
            kind = "ol" if ordered[0] else "ul"
            out.append(f"<{kind}>" + "".join(f"<li>{_inline(i)}</li>" for i in items) +
                       f"</{kind}>")
            items.clear()
            ordered[0] = False
    lines = markdown.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("```"):
            flush()
            end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("```")),
                       len(lines))
            out.append(f"<pre>{escape(chr(10).join(lines[k + 1:end]))}</pre>")
            k = end + 1
            continue
        tag = re.fullmatch(r"\s*</?details>|\s*<details><summary>.*</summary>\s*", line)
        if tag:  # the walkthrough folds a listing: the page folds it too
            flush()
            out.append(line.strip())
            k += 1
            continue
        numbered = re.match(r"\d+\. (.*)", line)
        heading = re.match(r"(#{1,4}) (.*)", line)
        if numbered and not para:
            if items and not ordered[0]:
                flush()
            items.append(numbered.group(1))
            ordered[0] = True
        elif heading:
            flush()
            level = min(6, len(heading.group(1)) + 2)
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.startswith("|"):
            flush()
            out.append(f"<pre>{escape(line)}</pre>")
        elif re.match(r"\s*[-*] ", line):
            if para or ordered[0]:
                flush()
            items.append(re.sub(r"^\s*[-*] ", "", line))
        elif not line.strip():
            flush()
        elif items:
            items[-1] += " " + line.strip()
        else:
            para.append(line.strip())
        k += 1
    flush()
    return "".join(out).replace("</pre><pre>", "\n")


def sections(anchors, path=WALKTHROUGH):
    """{anchor: (heading, HTML of its section)} for each '## ' heading whose GitHub anchor is
    in ``anchors``; None without the walkthrough (outside a checkout)."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    out = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        if anchor in anchors:
            out[anchor] = (heading.strip(), render(body))
    return out


def slug(name):
    """The anchor the page gives a family's worked example: 'models-rope-10000'."""
    return "models-" + re.sub(r"[^\w]+", "-", name.lower()).strip("-")


def examples(path=MODELS):
    """{anchor (``slug``): (heading, HTML)} of each family's worked example in docs/models.md
    ("Worked examples, one per family": a paragraph that opens '**rope-10000.**' and what
    follows it up to the next); None outside a checkout."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    section = re.split(r"^## ", text.split("\n## Worked examples", 1)[1], flags=re.M)[0]
    out = {}
    for part in re.split(r"^(?=\*\*[^*\n]+\.\*\* )", section, flags=re.M)[1:]:
        name = re.match(r"\*\*([^*]+)\.\*\*", part).group(1)
        out[slug(name)] = (f"Worked example: {name} (docs/models.md)", render(part.strip()))
    return out
