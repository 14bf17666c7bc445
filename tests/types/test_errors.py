"""The error types: a JSON-RPC error becomes the subclass its code names (garbage tolerated),
and every error class pickles with its class, message and attributes (they cross processes).
"""
from __future__ import annotations

from mcpclient import InvalidParams, MethodNotFound, RPCError, ResourceNotFound


def test_rpc_error_subclass_by_code_and_tolerates_garbage():
    assert type(RPCError.from_wire({"code": -32601, "message": "x"})) is MethodNotFound
    assert type(RPCError.from_wire({"code": -32602, "message": "x"})) is InvalidParams
    assert type(RPCError.from_wire({"code": -32002, "message": "x"})) is ResourceNotFound
    odd = RPCError.from_wire({"code": 12345, "message": "custom"})
    assert type(odd) is RPCError and odd.code == 12345
    assert RPCError.from_wire("not a dict").code == -32603
    assert RPCError.from_wire({"code": "x", "message": 5}).code == -32603


def test_every_error_class_pickles_with_its_class_message_and_attributes():
    """Pools and Celery's pickle serializer send exceptions between processes: each class in
    ``mcpclient.errors`` comes back as itself, with its message and attributes."""
    import inspect
    import pickle

    from mcpclient import errors

    made = [errors.RPCError.from_wire({"code": -32602, "message": "bad", "data": {"k": 1}}, "tools/call"),
            errors.RPCError.from_wire({"code": -32021, "message": "needs tasks", "data": {
                "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}, "tools/call")]
    for cls in vars(errors).values():
        if inspect.isclass(cls) and issubclass(cls, errors.MCPError):
            error = cls.__new__(cls, f"{cls.__name__} happened")
            error.args = (f"{cls.__name__} happened",)
            error.__dict__.update(code=7, method="tools/call", data={"nested": [1, 2]})
            made.append(error)
    assert len(made) > 30
    for error in made:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.__dict__ == error.__dict__
    assert isinstance(made[1], errors.MissingClientCapability)
    assert pickle.loads(pickle.dumps(made[1])).missing_extensions == ["io.modelcontextprotocol/tasks"]


def test_every_error_says_whether_it_may_be_transient():
    """``retryable``: what a worker's retry policy (Celery ``autoretry_for``, tenacity) asks."""
    from mcpclient import errors

    transient = [errors.RequestTimeout("t"), errors.ConnectionClosed("c"), errors.ConnectError("refused"),
                 errors.ProcessExited(1), errors.SendTimeout("s"), errors.SessionExpired("e"),
                 errors.HTTPError(503), errors.HTTPError(429), errors.HTTPError(502)]
    lasting = [errors.ProtocolError("p"), errors.InvalidParams(-32602, "bad"), errors.MethodNotFound(-32601, "no"),
               errors.AuthError("denied"), errors.ClientClosedError("closed"), errors.HTTPError(400),
               errors.HTTPError(404), errors.RequestCancelled("c"), errors.SchemaValidationError("s")]
    assert [type(e).__name__ for e in transient if not e.retryable] == []
    assert [type(e).__name__ for e in lasting if e.retryable] == []
    for cls in vars(errors).values():  # every class answers, as a bool
        if isinstance(cls, type) and issubclass(cls, errors.MCPError) and cls is not errors.HTTPError:
            assert isinstance(cls.retryable, bool), cls
