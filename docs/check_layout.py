"""Check the built site in a real browser: no code block scrolls sideways.

    mkdocs build --strict -f docs/mkdocs.yml -d /tmp/site
    python docs/check_layout.py /tmp/site [--widths 1280,800] [--screenshots DIR]

Serves the built site on a free loopback port, opens every page in headless chromium (Debian's
``chromium`` and ``chromedriver``, driven by selenium from the test extra) at each window width,
and reports every ``pre code`` element whose content is wider than its box (``scrollWidth >
clientWidth``), and every table that scrolls sideways. Exits 1 if there is one. ``--screenshots DIR`` also saves a PNG of the home page
and of the ``Client`` reference at each width.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path
from typing import List, Tuple

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SHOTS = {"home": "", "api-client": "api/client/"}

#: The number of ``pre code`` elements, and for each one (or table) that overflows: the start of
#: its text and the two widths.
OVERFLOW_JS = """
const found = [];
for (const el of document.querySelectorAll('pre code')) {
  if (el.offsetParent === null) continue;  // hidden (a closed tab or details block)
  if (el.scrollWidth > el.clientWidth) {
    found.push([el.textContent.slice(0, 60), el.scrollWidth, el.clientWidth]);
  }
}
// tables: Material wraps each in a box that scrolls sideways when the table is too wide
for (const el of document.querySelectorAll('.md-typeset__scrollwrap')) {
  if (el.scrollWidth > el.clientWidth) {
    found.push(['table: ' + el.textContent.trim().slice(0, 53), el.scrollWidth, el.clientWidth]);
  }
}
return [document.querySelectorAll('pre code').length, found];
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def pages(site: Path) -> List[str]:
    """Every page of the site, as a path relative to its root (``""`` is the home page)."""
    out = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        out.append("" if rel == "." else rel + "/")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--widths", default="1280,800")
    parser.add_argument("--screenshots", type=Path)
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    handler = functools.partial(_QuietHandler, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--hide-scrollbars"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    bad: List[Tuple[int, str, str, int, int]] = []
    checked = blocks = 0
    try:
        for width in (int(w) for w in args.widths.split(",")):
            driver.set_window_size(width, 900)
            for page in pages(args.site):
                driver.get(base + page)
                count, found = driver.execute_script(OVERFLOW_JS)
                checked += 1
                blocks += count
                bad += [(width, page or "/", text, sw, cw) for text, sw, cw in found]
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                for name, page in SHOTS.items():
                    driver.get(base + page)
                    driver.save_screenshot(str(args.screenshots / f"{name}-{width}.png"))
    finally:
        driver.quit()
        server.shutdown()
    for width, page, text, sw, cw in bad:
        print(f"{width}px {page}: {sw} > {cw}: {text!r}")
    print(f"{checked} page loads, {blocks} code blocks, {len(bad)} overflowing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
