"""Tool search (``ToolIndex``): names split on snake and camel case, BM25 ranking over names,
descriptions and parameters.
"""
from __future__ import annotations

import pytest

from mcpclient import Tool, ToolIndex
from mcpclient.group.search import tokenize


def _tool(name, description="", **properties):
    return Tool(name, description=description, input_schema={"type": "object", "properties": properties})


def test_tokenize_splits_snake_and_camel_case():
    assert tokenize("createGitHubIssue") == ["create", "git", "hub", "issue"]
    assert tokenize("read_file-v2 HTTPServer") == ["read", "file", "v", "2", "http", "server"]


def test_bm25_ranks_names_descriptions_and_parameters():
    tools = [_tool("gh_create_issue", "Open a new issue in a repository"),
             _tool("fs_read_file", "Read a file from disk", path={"description": "file path"}),
             _tool("web_fetch", "Fetch a URL", url={"description": "the page to download"}),
             _tool("slack_post", "Post a message to a channel")]
    index = ToolIndex(tools)
    assert [t.name for t in index.search("create issue", k=1)] == ["gh_create_issue"]
    assert index.search("download a page")[0].name == "web_fetch"  # parameter descriptions count
    assert [t.name for t in index.search("read file", k=5, always=["slack_post", "nope"])] == ["slack_post", "fs_read_file"]
    assert index.search("zebra") == [] and len(index) == 4
    with pytest.raises(ValueError):
        index.search("x", k=-1)
