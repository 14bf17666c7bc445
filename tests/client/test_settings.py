"""A client made without ``timeout=`` or ``limits=`` (or with seconds) reads the same values
from plain stand-ins as it would from ``Timeout(seconds)`` and ``Limits()``, without loading
those classes."""
from __future__ import annotations

import dataclasses
import pytest

from mcpclient import Client, Limits, Timeout
from mcpclient._client.settings import DEFAULT_LIMITS, Seconds
from conftest import TESTING_SERVER
from mcpclient._util.sentinel import DEFAULT


@pytest.mark.parametrize("seconds", [None, 0, 2.5, 30])
def test_seconds_reads_as_the_timeout_of_those_seconds(seconds):
    made = Timeout(seconds)
    stand_in = Seconds(seconds)
    for field in dataclasses.fields(Timeout):
        if field.init:
            assert getattr(stand_in, field.name) == getattr(made, field.name), field.name
            assert type(getattr(stand_in, field.name)) is type(getattr(made, field.name)), field.name


def test_default_limits_read_as_limits_left_out():
    for field in dataclasses.fields(Limits):
        assert getattr(DEFAULT_LIMITS, field.name) == getattr(Limits(), field.name), field.name


def test_a_client_given_seconds_times_its_calls_and_its_connect_by_them():
    with Client(TESTING_SERVER, timeout=7) as client:
        channel = client._channel
        assert channel.deadline().remaining() == pytest.approx(7, abs=0.5)
        assert channel._connect_deadline(DEFAULT).remaining() == pytest.approx(7, abs=0.5)
        assert channel._connect_deadline(3).remaining() == pytest.approx(3, abs=0.5)
        assert channel._connect_deadline(Timeout(9, connect=4)).remaining() == pytest.approx(4, abs=0.5)
        assert channel.deadline(Timeout(2)).remaining() == pytest.approx(2, abs=0.5)
        assert channel.deadline(None).remaining() is None
        with pytest.raises(TypeError):
            channel.deadline("soon")
