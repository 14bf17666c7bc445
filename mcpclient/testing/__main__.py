"""``python -m mcpclient.testing``: run the demo server on stdio (``--help`` lists its options)."""

from __future__ import annotations

from .server.__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())
