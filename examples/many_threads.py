"""Share one client between many threads: each caller gets its own answer.

    python examples/many_threads.py
"""
from concurrent.futures import ThreadPoolExecutor

from mcpclient import Client
from mcpclient.testing import server_command

with Client(server_command()) as client:
    def echo(text: str) -> str:
        return client.call_tool("echo", {"text": text}).text

    with ThreadPoolExecutor(16) as pool:
        texts = [f"message {i}" for i in range(200)]
        answers = list(pool.map(echo, texts))
    assert answers == texts
    print(f"{len(answers)} calls from 16 threads over one connection: all answered correctly")

    # Or without threads of your own: start calls and collect their futures.
    futures = [client.call_tool_future("add", {"a": i, "b": i}) for i in range(5)]
    outputs = [f.result().structured_content for f in futures]  # JSON as the server sent it: {"sum": ...}
    print([output["sum"] for output in outputs if isinstance(output, dict)])
