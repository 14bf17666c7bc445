#!/usr/bin/env bash
# Create <repo>/.venv-tasks: a separate venv with mcp 1.30.0 (the last official Python SDK with the
# 2025-11-25 experimental tasks) for tests/servers/tasks_server.py. The main test venv keeps mcp 2.x.
#
#   tests/servers/setup-tasks-venv.sh            # uses ${PYTHON:-python3}
#   PYTHON=python3.12 tests/servers/setup-tasks-venv.sh
#
# Idempotent: does nothing when .venv-tasks already has mcp 1.30.0. Tests find the interpreter at
# .venv-tasks/bin/python (or $MCPCLIENT_TASKS_PYTHON); see tests/tasks_servers.py.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$repo/.venv-tasks"
requirements="$here/tasks-requirements.txt"
want="1.30.0"

have_mcp() {
    [ -x "$venv/bin/python" ] &&
        [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" = "$want" ]
}

if have_mcp; then
    echo "$venv: mcp $want already installed"
    exit 0
fi

"${PYTHON:-python3}" -m venv "$venv"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup-tasks-venv: pip install failed" >&2
    exit 1
fi
if ! have_mcp; then
    echo "setup-tasks-venv: $venv has no mcp $want after install" >&2
    exit 1
fi
echo "$venv: mcp $want installed"
