"""JSON Schema validation of structured content: valid values pass, invalid ones are a
``SchemaValidationError``, and a remote ``$ref`` is never fetched.
"""
from __future__ import annotations

import pytest

from mcpclient import SchemaValidationError
from mcpclient.protocol.validation import validate_structured


def test_validation_accepts_rejects_and_never_fetches_remote_refs():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    validate_structured({"n": 1}, schema, "t")
    with pytest.raises(SchemaValidationError, match="/n"):
        validate_structured({"n": "x"}, schema, "t")
    remote = {"$ref": "http://127.0.0.1:9/never-fetched.json"}
    with pytest.raises(SchemaValidationError):
        validate_structured({"n": 1}, remote, "t")
    with pytest.raises(SchemaValidationError, match="unusable"):
        validate_structured({}, {"type": 12}, "t")
