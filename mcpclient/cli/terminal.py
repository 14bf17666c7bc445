"""Writing to the terminal: glyphs the stream can encode, its width, aligned tables, the ``Output``
every command writes through, and the ``ProgressBar`` drawn on stderr.

Nothing here knows about MCP; ``render`` turns MCP results into the text written here.
"""
from __future__ import annotations

import json
import shutil
import sys
import textwrap
from typing import IO, Any, Iterable, List, Optional, Sequence


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _can_encode(stream: Any, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _width(stream: Any) -> int:
    """Columns available on ``stream`` (80 when it is not a terminal)."""
    if not isatty(stream):
        return 80
    return max(40, shutil.get_terminal_size((80, 24)).columns)


class Style:
    """Glyphs for a stream: Unicode when it can encode them, ASCII otherwise."""

    def __init__(self, stream: Any) -> None:
        fancy = _can_encode(stream, "\u2192\u2026\u2014\u2588\u2591")
        self.arrow = "\u2192" if fancy else "->"
        self.ellipsis = "\u2026" if fancy else "..."
        self.dash = "\u2014" if fancy else "-"
        self.full = "\u2588" if fancy else "#"
        self.empty = "\u2591" if fancy else "."


def _truncate(text: str, width: int, ellipsis: str) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - len(ellipsis))] + ellipsis


def one_line(text: Optional[str]) -> str:
    """``text`` with every run of whitespace (newlines too) folded into one space."""
    return " ".join((text or "").split())


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def table(rows: Sequence[Sequence[str]], headers: Optional[Sequence[str]] = None, *, indent: str = "",
          max_width: Optional[int] = None, ellipsis: str = "...") -> List[str]:
    """Left-aligned columns separated by two spaces; the last column is cut to ``max_width``."""
    all_rows = ([list(headers)] if headers else []) + [list(r) for r in rows]
    if not all_rows:
        return []
    ncols = max(len(r) for r in all_rows)
    for r in all_rows:
        r.extend([""] * (ncols - len(r)))
    widths = [max(len(r[i]) for r in all_rows) for i in range(ncols - 1)]
    lines = []
    for r in all_rows:
        head = "".join(cell.ljust(w) + "  " for cell, w in zip(r, widths))
        last = r[-1]
        if max_width is not None:
            last = _truncate(last, max_width - len(indent) - len(head), ellipsis)
        lines.append((indent + head + last).rstrip())
    return lines


class Output:
    """Where a command writes: stdout for results, stderr for diagnostics."""

    def __init__(self, out: Optional[IO[str]] = None, err: Optional[IO[str]] = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.style = Style(self.out)
        self.width = _width(self.out)
        self.cut = isatty(self.out)  # only shorten lines for a human at a terminal

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def lines(self, lines: Iterable[str]) -> None:
        for text in lines:
            self.line(text)

    def flush(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass

    def json(self, value: Any) -> None:
        self.line(json_text(value))

    def table(self, rows: Sequence[Sequence[str]], headers: Optional[Sequence[str]] = None,
              indent: str = "") -> None:
        self.lines(table(rows, headers, indent=indent, max_width=self.width if self.cut else None,
                         ellipsis=self.style.ellipsis))

    def wrapped(self, text: str, indent: str, first: str = "") -> None:
        """``first`` then ``text`` wrapped to the terminal, continuation lines under ``indent``."""
        width = max(self.width, len(indent) + 20)
        self.lines(textwrap.wrap(one_line(text), width, initial_indent=first.ljust(len(indent)),
                                 subsequent_indent=indent) or [first])


class ProgressBar:
    """An ``on_progress`` callback that counts updates and, when stderr is a terminal, draws a bar.

    The client runs it on its notification thread and ``call_tool()`` returns only after the
    call's progress callbacks ran; if the call fails instead, close the bar after the client is
    closed (which stops its callbacks), so nothing draws over what follows.
    """

    CELLS = 24

    def __init__(self, label: str, stream: Optional[IO[str]] = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = isatty(self.stream)
        self.style = Style(self.stream)
        self.updates = 0
        self.message: Optional[str] = None  # the last update's message
        self._drawn = 0  # length of the line on screen; 0 = nothing to clear

    def __call__(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        self.updates += 1
        self.message = message
        if self.tty:
            self._draw(progress, total, message)

    def _draw(self, progress: float, total: Optional[float], message: Optional[str]) -> None:
        if total:
            fraction = min(max(progress / total, 0.0), 1.0)
            filled = int(round(fraction * self.CELLS))
            bar = "[" + self.style.full * filled + self.style.empty * (self.CELLS - filled) + "]"
            count = f"{_num(progress)}/{_num(total)}  {fraction * 100:3.0f}%"
        else:
            bar = ""
            count = f"{_num(progress)} so far"
        parts = [p for p in (self.label, bar, count, one_line(message)) if p]
        line = _truncate("  ".join(parts), _width(self.stream) - 1, self.style.ellipsis)
        pad = " " * max(0, self._drawn - len(line))
        try:
            self.stream.write("\r" + line + pad)
            self.stream.flush()
        except (OSError, ValueError):
            return
        self._drawn = len(line)

    def close(self, keep: bool = False) -> None:
        """End the bar: keep it on its own line or wipe it. Closing again does nothing."""
        if not self._drawn:
            return
        try:
            self.stream.write("\n" if keep else "\r" + " " * self._drawn + "\r")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self._drawn = 0


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
