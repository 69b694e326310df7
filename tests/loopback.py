"""Pytest plugin: real parts talk over loopback, nothing reaches further.

Home Assistant's test plugin (when installed) disables TCP sockets in
``pytest_runtest_setup``. VoiceStack's tests use real Wyoming sockets and real
server subprocesses, so sockets are re-enabled before every fixture (of any scope)
sets up, keeping the plugin's host restriction: connections only to 127.0.0.1.
Loaded for the whole run by ``-p tests.loopback`` (pyproject.toml), because a
conftest's hooks do not reach session-scoped fixtures.
"""

from __future__ import annotations

from collections.abc import Generator
import importlib.util
from typing import Any

import pytest


def allow_loopback_sockets() -> None:
    """Enable sockets, restricted to loopback, if pytest-socket is in use."""
    if importlib.util.find_spec("pytest_socket") is None:
        return
    import pytest_socket

    pytest_socket.enable_socket()
    pytest_socket.socket_allow_hosts(["127.0.0.1"], allow_unix_socket=True)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    """Allow loopback before each fixture; this also covers the test body."""
    allow_loopback_sockets()
    return (yield)
