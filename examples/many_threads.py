"""Share one client between many threads: each caller gets its own answer.

    python examples/many_threads.py
"""
from concurrent.futures import ThreadPoolExecutor

from mcpclient import Client
from mcpclient.testing import server_command

with Client(server_command()) as client:
    with ThreadPoolExecutor(16) as pool:
        texts = [f"message {i}" for i in range(200)]
        answers = list(pool.map(lambda t: client.call_tool("echo", {"text": t}).text, texts))
    assert answers == texts
    print(f"{len(answers)} calls from 16 threads over one connection: all answered correctly")

    # Or without threads of your own: start calls and collect their futures.
    futures = [client.call_tool_future("add", {"a": i, "b": i}) for i in range(5)]
    print([f.result().structured_content["sum"] for f in futures])
