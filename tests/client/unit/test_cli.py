"""``python -m voicestack_client``: argument checks, and real runs against the fake."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import os
from pathlib import Path
import sys

import pytest

from tests.client.loopback_site import LoopbackSite
from tests.client.unit.fake_home_assistant import (
    LOGIN,
    FakeHomeAssistant,
    fake_home_assistant,
)
from voicestack_client.cli import main

URL = "http://127.0.0.1:8123"


@pytest.mark.parametrize(
    ("argv", "env", "error"),
    [
        (["Hi"], {}, "no Home Assistant address: use --url URL or $VOICESTACK_URL"),
        (
            ["--url", "ftp://ha", "Hi"],
            {},
            "not a Home Assistant address: 'ftp://ha' (expected http://host:8123)",
        ),
        (["--url", URL, "  "], {}, "the message is empty"),
        (
            ["--url", URL, "Hi"],
            {},
            (
                "no access token: use --token-file FILE, $VOICESTACK_TOKEN_FILE or "
                "$VOICESTACK_TOKEN"
            ),
        ),
        (
            ["--url", URL, "--priority", "urgent", "Hi"],
            {},
            "argument --priority: invalid choice: 'urgent'",
        ),
        (
            ["--url", URL, "--ttl", "0", "Hi"],
            {},
            "argument --ttl: must be more than 0, got 0",
        ),
        (
            ["--url", URL, "--timeout", "soon", "Hi"],
            {},
            "argument --timeout: not a number: 'soon'",
        ),
    ],
)
def test_bad_arguments_get_one_clear_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str], error: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv, env)

    assert exited.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"voicestack_client: error: {error}")


def test_a_token_file_must_exist_and_hold_a_token(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    empty = tmp_path / "empty"
    empty.write_text("\n")
    errors = []
    for path in (missing, empty):
        with pytest.raises(SystemExit):
            main(["--url", URL, "--token-file", str(path), "Hi"], {})
        errors.append(capsys.readouterr().err.splitlines()[-1])
    with pytest.raises(SystemExit):
        main(["--url", URL, "Hi"], {"VOICESTACK_TOKEN_FILE": str(missing)})

    assert errors == [
        (
            f"voicestack_client: error: cannot read the token file {missing}: "
            "No such file or directory"
        ),
        f"voicestack_client: error: the token file {empty} is empty",
    ]
    assert "cannot read the token file" in capsys.readouterr().err


async def run_cli(*args: str, **env: str) -> tuple[int, str, str]:
    """Run the CLI as a program; its exit code, stdout and stderr."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VOICESTACK_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "voicestack_client",
        *args,
        env=clean | env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def home() -> AsyncIterator[tuple[FakeHomeAssistant, LoopbackSite]]:
    async with fake_home_assistant() as pair:
        yield pair


async def test_a_message_is_sent_with_the_token_from_a_file(
    home: tuple[FakeHomeAssistant, LoopbackSite], tmp_path: Path
) -> None:
    fake, site = home
    token_file = tmp_path / "token"
    token_file.write_text(LOGIN + "\n")

    code, out, err = await run_cli(
        "--url", site.url, "--token-file", str(token_file),
        "--priority", "high", "--category", "warning", "--source", "backup",
        "Backup done.",
    )  # fmt: skip

    assert (code, out, err) == (0, "kitchen: queued [fake-1]\n", "")
    assert fake.calls == [
        {
            "message": "Backup done.",
            "priority": "high",
            "category": "warning",
            "source": "backup",
        }
    ]


async def test_token_and_address_from_the_environment(
    home: tuple[FakeHomeAssistant, LoopbackSite],
) -> None:
    fake, site = home

    code, _out, _err = await run_cli(
        "Hello.", VOICESTACK_URL=site.url, VOICESTACK_TOKEN=LOGIN
    )

    assert code == 0
    assert fake.messages() == ["Hello."]


async def test_a_refused_token_exits_3_with_home_assistants_reason(
    home: tuple[FakeHomeAssistant, LoopbackSite],
) -> None:
    fake, site = home

    wrong = {"VOICESTACK_TOKEN": "wrong"}
    code, out, err = await run_cli("--url", site.url, "Hi", **wrong)

    assert (code, out) == (3, "")
    assert err == (
        "voicestack_client: error: Home Assistant refused the access token: "
        "Invalid access token or password\n"
    )
    assert fake.logins == 1


async def test_unreachable_home_assistant_exits_1_after_the_timeout(
    home: tuple[FakeHomeAssistant, LoopbackSite],
) -> None:
    _fake, site = home
    await site.stop()

    code, _out, err = await run_cli(
        "--url", site.url, "--timeout", "0.3", "Hi", VOICESTACK_TOKEN=LOGIN
    )

    assert code == 1
    assert err.startswith(
        "voicestack_client: error: not sent within 0.3 s: cannot connect to "
        f"ws://127.0.0.1:{site.port}/api/websocket"
    )
