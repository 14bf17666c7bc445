"""The README's set-up commands are the ones that are run: its test command is the line ``.ci/run``
runs verbatim, and its install commands are what ``tests/packaging/check_dist.py`` runs in a
fresh clone (that step needs a build and a venv, so CI runs it, not the suite)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> List[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def _section(text: str, heading: str) -> str:
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert found, f"no '## {heading}' section"
    return found.group(1)


@pytest.mark.skipif(not (ROOT / ".ci" / "run").is_file(), reason="an unpacked sdist has no .ci/run")
def test_the_readme_test_command_is_the_line_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = [line for line in _bash_blocks(_section(readme, "Development"))[0].splitlines() if line]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    said = ci.index("# The README's test command, verbatim:")
    assert ci[said + 1] == command
    development = (ROOT / "docs" / "pages" / "development.md").read_text(encoding="utf-8")
    assert command in _bash_blocks(_section(development, "The test suite"))[0].splitlines()


def _check_dist() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / "tests" / "packaging" / "check_dist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_installs_from_the_checkout_what_check_dist_runs():
    """Until mcpclient is on a package index, the install commands install the clone (``pip
    install .``) and run the demo, and the extras table names the clone's extras; check_dist
    runs this block."""
    block = _check_dist().readme_install_block()
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["pip install .", "mcpclient demo"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("[start:install]", 1)[1].split("[end:install]", 1)[0]
    extras = re.findall(r"^\| `pip install '([^']*)'` \|", install, re.M)
    assert extras and all(extra.startswith(".[") for extra in extras), extras
