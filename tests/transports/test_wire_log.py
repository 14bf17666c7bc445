"""The wire log (``mcpclient.wire``) redacts secrets from the messages it shows."""
from __future__ import annotations

from mcpclient._util.wire import format_message, redact


def test_wire_log_redacts_secrets():
    message = {"params": {"arguments": {"api_key": "sk-123", "Authorization": "Bearer x", "text": "ok"},
                          "_meta": {"progressToken": 3}}}
    assert redact(message)["params"]["arguments"] == {"api_key": "***", "Authorization": "***", "text": "ok"}
    text = format_message(message)
    assert "sk-123" not in text and "Bearer" not in text and '"progressToken": 3' in text
