"""Fenced code blocks of the project's documentation, as test cases.

Every fenced block of README.md, docs/*.md and the markdown cells of
notebooks/*.ipynb is collected with its language and line. A block can be
steered by an HTML comment on the line right above its opening fence:

    <!-- doc-test: skip: REASON -->     not run; REASON is shown as the skip reason
    <!-- doc-test: file NAME -->        the block's text is written to NAME in the working folder
                                        (a Python file is compiled, not run: later blocks import it)
    <!-- doc-test: exit N -->           the shell block must end with exit status N
    <!-- doc-test: define -->           a Python block that defines tests for the reader's
                                        project: executed, its test functions not called

What runs: ``bash``/``sh``/``console`` blocks (with ``bash -eo pipefail``),
``python`` blocks (executed in one namespace per document, so later blocks
see earlier names), and ``yaml`` blocks that are whole suites or identity-term
files (validated). ``json``/``text`` and unmarked blocks are data to read.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
MARK = re.compile(r"<!--\s*doc-test:\s*(skip|file|exit|define)\s*:?\s*(.*?)\s*-->")
RUNNABLE = {"bash": "shell", "sh": "shell", "shell": "shell", "console": "shell", "python": "python",
            "yaml": "yaml", "yml": "yaml"}


@dataclass
class Block:
    doc: str            # path relative to the repository
    line: int           # line of the opening fence (1-based; cell index for notebooks)
    lang: str
    text: str
    skip: str | None = None
    file: str | None = None
    exit: int = 0
    define: bool = False

    @property
    def kind(self) -> str | None:
        return RUNNABLE.get(self.lang.lower())

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _blocks_in(text: str, doc: str, line_of=lambda i: i + 1) -> list[Block]:
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(rf"^{re.escape(indent)}```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        block = Block(doc, line_of(start), lang, "\n".join(body) + "\n")
        j = start - 1
        while j >= 0 and MARK.search(lines[j]):
            kind, arg = MARK.search(lines[j]).groups()
            if kind == "skip":
                block.skip = arg or "marked skip"
            elif kind == "file":
                block.file = arg
            elif kind == "define":
                block.define = True
            else:
                block.exit = int(arg)
            j -= 1
        out.append(block)
    return out


def collect() -> list[Block]:
    """All blocks of README.md, docs/*.md and the notebooks' markdown."""
    blocks: list[Block] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks += _blocks_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for k, cell in enumerate(cells):
            if cell["cell_type"] == "markdown":
                src = "".join(cell["source"])
                blocks += _blocks_in(src, f"{nb.relative_to(ROOT)}#cell{k}", line_of=lambda i, k=k: k)
    return blocks


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<img[^>]+src=\"([^\"]+)\"")


def relative_links() -> list[tuple[str, int, str]]:
    """(document, line, target) of every link that is not a URL or an anchor."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        in_code = False
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                out.append((str(path.relative_to(ROOT)), n, target))
    return out
