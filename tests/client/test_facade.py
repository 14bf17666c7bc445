"""``Client`` is the one façade: it holds one object, its channel, which none of the client's
request methods is repeated on; the channel's collaborators never hold the client."""
from __future__ import annotations

import gc
import inspect
import weakref

import pytest

from conftest import TESTING_SERVER
from mcpclient import Client
from mcpclient._client.channel import Channel

#: What ``Client`` does besides requests: the lifecycle and the state it reports.
NOT_REQUESTS = {"connect", "close", "extension", "server", "state", "transport"}


def _request_methods(cls: type) -> set:
    return {name for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(value)} - NOT_REQUESTS


def test_a_client_holds_one_channel_its_finalizer_and_the_keeper_of_its_callbacks():
    client = Client(TESTING_SERVER)
    try:
        held = {type(value).__name__ for value in vars(client).values()}
        assert held == {"Channel", "finalize", "CallbackKeeper"}
    finally:
        client.close()


def test_the_channel_repeats_none_of_the_client_request_methods():
    requests = _request_methods(Client)
    assert {"call_tool", "list_tools", "ping", "listen", "set_roots"} <= requests  # (what is compared)
    assert requests & {name for name in dir(Channel) if not name.startswith("_")} == set()


def test_a_connected_client_nobody_references_is_collected_though_its_channel_lives_on():
    client = Client(TESTING_SERVER).connect()
    channel, gone = client._channel, weakref.ref(client)
    try:
        with pytest.warns(ResourceWarning, match="unclosed mcpclient.Client"):
            del client  # (collected now, or by the collector if anything left a cycle)
            gc.collect()
        assert gone() is None  # (nothing the channel holds refers to the client: its finalizer closed it)
        assert channel.state == "closed"
    finally:
        channel.release()
