"""Release metadata, checked without building (``tests/packaging/check_dist.py`` builds and
installs; CI runs it): the license is declared the PEP 639 way and matches the LICENSE file, the
Python classifiers match ``python_requires``, and the sdist's manifest carries every directory
the tests read."""
from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The interpreter ``.ci/run`` runs the suite on first (the machine's default Python).
MAIN = (3, 11)


def _metadata() -> configparser.SectionProxy:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "setup.cfg")
    return cfg["metadata"]


def _lines(value: str) -> list:
    return [line.strip() for line in value.splitlines() if line.strip()]


def test_license_is_an_spdx_expression_matching_the_license_file():
    meta = _metadata()
    assert meta["license_expression"] == "MIT"
    assert "license" not in meta  # the deprecated free-text License field
    assert _lines(meta["license_files"]) == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text
    assert re.search(r"^Copyright \(c\) \d{4} ", text, re.M)
    assert not [c for c in _lines(meta["classifiers"]) if c.startswith("License ::")]
    build = (ROOT / "pyproject.toml").read_text()
    assert int(re.search(r"requires = \[\"setuptools>=(\d+)\"\]", build).group(1)) >= 77  # PEP 639


def _matrix() -> list:
    """The interpreters ``.ci/run`` runs the suite on besides the main one (its matrix loop)."""
    found = re.search(r"^for version in ([0-9. ]+); do$", (ROOT / ".ci" / "run").read_text(), re.M)
    assert found, ".ci/run has no interpreter matrix"
    return [tuple(int(p) for p in v.split(".")) for v in found.group(1).split()]


def test_python_classifiers_claim_exactly_the_interpreters_ci_tests():
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "setup.cfg")
    low = tuple(int(p) for p in cfg["options"]["python_requires"].lstrip(">=").split("."))
    claimed = sorted(tuple(int(p) for p in c.rsplit(" :: ", 1)[1].split("."))
                     for c in _lines(_metadata()["classifiers"])
                     if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    tested = sorted(_matrix() + [MAIN])
    assert claimed == tested
    assert claimed == [(3, minor) for minor in range(low[1], claimed[-1][1] + 1)]  # none skipped
    urls = dict(line.split(" = ", 1) for line in _lines(_metadata()["project_urls"]))
    assert sorted(urls) == ["Changelog", "Documentation", "Issues", "Source"]


def test_manifest_grafts_every_directory_the_tests_read():
    manifest = _lines((ROOT / "MANIFEST.in").read_text())
    for needed in ("graft tests", "graft examples", "graft benchmarks", "include LICENSE README.md CHANGELOG.md"):
        assert needed in manifest
    assert "global-exclude __pycache__ *.py[cod]" in manifest
