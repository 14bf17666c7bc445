"""``write_json``: replace a JSON file atomically, for the files mcpclient keeps (OAuth tokens,
tool pins): a temporary file of our own in the same directory (``mkstemp``: created new, never
one someone planted), written, synced, given its mode, then ``os.replace``d over the old one.
A missing folder is made first (mode 0700).
A reader never sees half a file, and a crash leaves the old one whole."""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any

__all__ = ["write_json"]


def write_json(path: str, data: Any, *, mode: int, **dump_options: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically, with permissions ``mode``."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)  # (~/.config/myapp/ on a first run; only ours can read it)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, **dump_options)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
