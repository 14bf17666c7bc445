"""The MCP Apps Flask example (examples/mcp_app_flask.py) in a real headless browser:
Debian's ``chromium`` + ``chromium-driver`` driven by selenium.

The host page and the sandbox proxy run on two ports of 127.0.0.1 (two origins); the counter
app of ``python -m mcpclient.testing --apps`` renders in the proxy's inner sandboxed iframe,
its clicks go through ``AppBridge.handle_json`` to the MCP server, and the results come back
into the app and the host page. One browser for the module; every wait is explicit (<= 10 s).

Skipped without chromium/chromedriver, selenium or Python 3.10+ (selenium's floor), except
under CI (``CI`` set), where ``.ci/run`` installs them, so a missing piece fails instead.
selenium-manager never runs: the driver's path is given.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from typing import Any, Iterator, Tuple

import pytest

from ._procs import EXAMPLES

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WAIT = 10.0


def _missing() -> str:
    if sys.version_info < (3, 10):
        return "selenium needs Python 3.10+"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (test extra)"
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        return "chromium / chromium-driver are not installed (apt-get install chromium chromium-driver)"
    if importlib.util.find_spec("flask") is None:
        return "flask is not installed (test extra)"
    return ""


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("mcp_app_flask", EXAMPLES / "mcp_app_flask.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page() -> Iterator[Tuple[Any, Any]]:
    """(driver, the example's Servers) with the host page loaded."""
    missing = _missing()
    if sys.version_info < (3, 10):
        pytest.skip(missing)  # (the test extra has no selenium for it: nothing CI could install)
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI must have it (.ci/run installs it)")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    example = _example()
    client = example.make_client()
    profile = tempfile.mkdtemp(prefix="mcp-app-chromium-")
    driver = servers = None
    try:
        with client:
            servers = example.Servers(client, host_port=0, proxy_port=0).start()
            options = webdriver.ChromeOptions()
            options.binary_location = CHROMIUM
            for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={profile}"):
                options.add_argument(arg)
            driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
            driver.set_page_load_timeout(WAIT)
            driver.get(servers.host_url + "/")
            yield driver, servers
    finally:
        if driver is not None:
            driver.quit()
        if servers is not None:
            servers.stop()
        shutil.rmtree(profile, ignore_errors=True)


def _into_app(driver: Any) -> None:
    """Switch from the host page into the app: the proxy frame, then its inner iframe."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.switch_to.default_content()
    WebDriverWait(driver, WAIT).until(ec.frame_to_be_available_and_switch_to_it((By.ID, "proxy")))
    WebDriverWait(driver, WAIT).until(ec.frame_to_be_available_and_switch_to_it((By.ID, "app")))


def _text_is(driver: Any, element_id: str, text: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT).until(ec.text_to_be_present_in_element((By.ID, element_id), text))
    assert driver.find_element(By.ID, element_id).text == text


def test_the_app_renders_in_its_sandbox_with_its_policy(page):
    from selenium.webdriver.common.by import By

    driver, servers = page
    assert driver.title == "MCP App host"
    proxy = driver.find_element(By.ID, "proxy")
    assert proxy.get_attribute("src") == servers.proxy_url + "/sandbox"
    assert proxy.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    assert servers.proxy_url != servers.host_url
    driver.switch_to.frame(proxy)
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    inner = WebDriverWait(driver, WAIT).until(ec.presence_of_element_located((By.ID, "app")))
    assert inner.get_attribute("sandbox") == "allow-scripts"
    assert inner.get_attribute("allow") == "clipboard-write"
    _into_app(driver)
    _text_is(driver, "status", "ready")
    csp = driver.find_element(By.CSS_SELECTOR, 'head > meta[http-equiv="Content-Security-Policy"]')
    assert csp.get_attribute("content") == servers.bridge.view().csp
    assert driver.execute_script("return window.origin") == "null"  # opaque: no access to either page
    _text_is(driver, "count", "0")  # the counter tool's result, sent once the app was initialized
    driver.switch_to.default_content()
    _text_is(driver, "status", "app ready")


def test_a_click_calls_an_app_tool_through_the_bridge(page):
    from selenium.webdriver.common.by import By

    driver, _ = page
    _into_app(driver)
    _text_is(driver, "count", "0")
    driver.find_element(By.ID, "increment").click()
    _text_is(driver, "count", "1")
    driver.switch_to.default_content()
    _text_is(driver, "last-result", '{"content":[{"type":"text","text":"{\\"count\\": 1}"}],'
                                    '"structuredContent":{"count":1}}')


def test_a_model_only_tool_is_refused(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = page
    _into_app(driver)
    driver.find_element(By.ID, "forbidden").click()
    _text_is(driver, "error", "-32602")
    driver.switch_to.default_content()
    WebDriverWait(driver, WAIT).until(ec.text_to_be_present_in_element((By.ID, "last-result"), "-32602"))
    assert "the secret is" not in driver.page_source


def test_the_policy_binds_an_app_that_puts_a_script_before_its_head(page):
    """``AppView.srcdoc()`` in Chromium: HTML whose script and image come before its ``<head>`` is
    still under the policy (the image is blocked, a ``securitypolicyviolation`` is reported)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from mcpclient.types._ui import UIResourceMeta
    from mcpclient.extensions.apps.bridge import AppView

    driver, servers = page
    hostile = ('<!doctype html><script>document.addEventListener("securitypolicyviolation", function (e) {'
               ' document.title = "blocked " + e.effectiveDirective; });</script>'
               f'<img src="{servers.proxy_url}/nothing.png"><head><title>open</title></head>')
    meta = UIResourceMeta()
    view = AppView("ui://x/y", hostile, meta, meta.csp_header(), "")
    driver.switch_to.default_content()
    driver.execute_script("var f = document.createElement('iframe'); f.id = 'hostile';"
                          "f.setAttribute('sandbox', 'allow-scripts'); f.srcdoc = arguments[0];"
                          "document.body.appendChild(f);", view.srcdoc())
    try:
        driver.switch_to.frame(driver.find_element(By.ID, "hostile"))
        WebDriverWait(driver, WAIT).until(lambda d: d.execute_script("return document.title").startswith("blocked"))
        assert driver.execute_script("return document.title") == "blocked img-src"
    finally:
        driver.switch_to.default_content()
        driver.execute_script("document.getElementById('hostile').remove();")


def test_the_host_refuses_an_oversized_message_before_reading_it():
    """The bridge's ``max_message_bytes`` bounds what it parses; the example's back end must not
    buffer a bigger body first (the app chooses what the host page posts): 413, unread."""
    pytest.importorskip("flask")
    example = _example()

    class NoClient:  # nothing may reach a client for a refused body
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the client was used: {name}")

    bridge = example.AppBridge(NoClient(), "ui://counter/app.html", max_message_bytes=example.MAX_MESSAGE_BYTES)
    web = example.host_app(bridge, "http://127.0.0.1:2", "http://127.0.0.1:1").test_client()
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * example.MAX_MESSAGE_BYTES + b'"}}'
    answer = web.post("/app/rpc", data=big, headers={"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"})
    assert answer.status_code == 413
    ping = web.post("/app/rpc", data=b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}',
                    headers={"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"})
    assert ping.status_code == 200 and ping.get_json() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_the_host_page_takes_messages_only_from_its_proxy(page):
    """The app (or anything else in the page) posting straight to the host page is ignored: only
    what comes from the proxy frame, from the proxy's origin, reaches the back end. The forged
    message is posted before the click, so the host page handles it first (one FIFO queue)."""
    from selenium.webdriver.common.by import By

    driver, _ = page
    driver.switch_to.default_content()
    driver.execute_script("window.__posted = []; var fetched = window.fetch;"
                          "window.fetch = function (path, init) {"
                          "  if (init && init.body) { window.__posted.push(init.body); }"
                          "  return fetched.apply(this, arguments); };")
    _into_app(driver)
    before = int(driver.find_element(By.ID, "count").text)
    driver.execute_script("window.top.postMessage({jsonrpc: '2.0', id: 'forged', method: 'tools/call',"
                          " params: {name: 'increment', arguments: {}}}, '*');")
    driver.find_element(By.ID, "increment").click()
    _text_is(driver, "count", str(before + 1))  # one increment: the click's
    driver.switch_to.default_content()
    posted = driver.execute_script("return window.__posted")
    assert any('"increment"' in body for body in posted) and not any("forged" in body for body in posted)
