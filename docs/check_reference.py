"""Check the built API reference: it shows what a user calls, not the package's internal notes.

    mkdocs build --strict -f docs/mkdocs.yml -d /tmp/site
    python docs/check_reference.py /tmp/site

Reads every page of the reference (``reference/`` and ``api/*/``) as a reader sees it and reports,
page by page, each line that is a note for the package's developers:

- what a module may import (``Imports: ...``: the layering, which tests/package checks);
- what a module costs at import, or that it loads on first use (``PEP 562``, ``at import``);
- a private module or class named in the text (``_stdin.StdinWriter``, ``_Value``);
- a private parameter, default or name in a signature (``_recorder=``, ``_Default()``);
- a base class a user cannot use: one of the package's the reference does not document (a private
  one, one of a private module), or ``ABC``.

Exits 1 if there is one. No browser: the text and the bases' link titles are in the HTML.
``hide_private.py`` (bases, signatures) and the docstrings themselves keep these out.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator, List, Tuple

#: (what the line is, the pattern that finds it in a page's text).
NOTES = [
    ("a module's import rule", re.compile(r"^\s*Imports:|\bimports nothing of\b", re.M)),
    ("an import cost", re.compile(
        r"PEP 562|loads? on first use|loaded on first use|__getattr__|\bat import\b|"
        r"import cost|costs? [^.]{0,40}\bimport\b|\bstays? cheap\b|\bdeferred\b", re.I)),
    # a private module's name before a dot (``_sessions._DELETE_TIMEOUT``), or a private class;
    # ``_meta`` is MCP's own field, and ``x._y``/``__version__`` are not matched
    ("a private name", re.compile(r"(?<![\w.])_(?!meta\b)[a-z]\w*\.\w|(?<![\w.])_[A-Z]\w*")),
]
#: A signature's private parameter, default or type (``__init__``-style names excepted).
PRIVATE_IN_SIGNATURE = re.compile(r"(?<![\w.])_[A-Za-z]\w*")
SIGNATURE = re.compile(r'<div class="[^"]*\bdoc-signature\b[^"]*">(.*?)</div>', re.S)
BASES = re.compile(r'<p class="doc doc-class-bases">(.*?)</p>', re.S)
#: One base: a link to a documented class (``<a ... title="Name (path)">``) or a ``<span
#: title="path">`` for a class the reference does not document.
BASE = re.compile(r'<(a|span)\b[^>]*\btitle="([^"]*)"')
TAG = re.compile(r"<[^>]+>")


class _ArticleText(HTMLParser):
    """The text of a page's ``<article>`` (the page body), one line per block element."""

    BLOCKS = {"p", "div", "li", "h1", "h2", "h3", "h4", "h5", "tr", "pre", "br", "dt", "dd"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []
        self.depth = 0  # inside <article>
        self.hidden = 0  # inside <script>/<style>

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "article":
            self.depth += 1
        elif tag in ("script", "style"):
            self.hidden += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.depth -= 1
        elif tag in ("script", "style"):
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if self.depth and not self.hidden:
            self.parts.append(data)


def page_text(page: str) -> str:
    parser = _ArticleText()
    parser.feed(page)
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def internal_bases(page: str) -> Iterator[str]:
    """Each base a class is shown with that a user cannot use."""
    for bases in BASES.findall(page):
        for kind, title in BASE.findall(bases):
            title = html.unescape(title).strip()
            if kind == "a":
                continue  # a documented class
            # an undocumented class of the package (private ones included), or ABC; another
            # library's class may live in a private module (concurrent.futures._base.Future)
            if title.startswith("mcpclient.") or title == "abc.ABC":
                yield f"Bases: {title}"


def notes(page: str) -> List[Tuple[str, str]]:
    """``(what, line)`` for every internal note on one page."""
    found = []
    for line in page_text(page).splitlines():
        if line.startswith("Bases:"):
            continue  # read from the links below, which name each base's module
        for what, pattern in NOTES:
            if pattern.search(line):
                found.append((what, line))
    for signature in SIGNATURE.findall(page):
        text = html.unescape(TAG.sub("", signature))
        for name in sorted(set(PRIVATE_IN_SIGNATURE.findall(text))):
            found.append(("a private name in a signature", f"{name} in {text.split('(')[0].strip()}"))
    found += [("a base a user cannot use", base) for base in internal_bases(page)]
    return found


def reference_pages(site: Path) -> List[Path]:
    return [site / "reference" / "index.html"] + sorted((site / "api").glob("*/index.html"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    args = parser.parse_args()
    pages = reference_pages(args.site)
    missing = [str(page) for page in pages if not page.is_file()]
    if missing or len(pages) < 2:
        print(f"not a built site (no reference pages): {', '.join(missing) or args.site}", file=sys.stderr)
        return 1
    failures = 0
    for page in pages:
        found = notes(page.read_text(encoding="utf-8"))
        failures += len(found)
        for what, line in found:
            print(f"{page.parent.relative_to(args.site).as_posix()}/: {what}: {line}")
    print(f"{len(pages)} reference pages, {failures} internal notes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
