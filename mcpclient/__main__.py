"""``python -m mcpclient``: the command line (``mcpclient.cli``; its ``main()`` is in ``commands``)."""
from __future__ import annotations

import sys

from .cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
