"""``python -m voicestack_client``: one announcement from a shell, cron or systemd.

The token never goes on the command line (``ps`` shows it to every user): it is
read from ``--token-file`` / ``$VOICESTACK_TOKEN_FILE``, or taken from
``$VOICESTACK_TOKEN``. Exit codes: 0 sent, 1 not sent within ``--timeout``
(Home Assistant unreachable), 2 bad arguments, 3 token refused, 4 Home
Assistant refused the message (its own message is printed).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping, Sequence
import logging
import os
from pathlib import Path
import sys

from .client import VoiceClient
from .connection import websocket_url
from .model import PRIORITIES, Delivery

PROG = "voicestack_client"
EXIT_UNSENT, EXIT_USAGE, EXIT_AUTH, EXIT_REFUSED = 1, 2, 3, 4


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def parser() -> argparse.ArgumentParser:
    """The command line's options."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Say MESSAGE on VoiceStack satellites (voicestack.announce).",
        epilog="The token comes from --token-file, $VOICESTACK_TOKEN_FILE or "
        "$VOICESTACK_TOKEN. Exit codes: 0 sent, 1 not sent in time, 2 bad "
        "arguments, 3 token refused, 4 Home Assistant refused the message.",
    )
    p.add_argument("message", help="what to say")
    p.add_argument(
        "--url",
        help="Home Assistant, e.g. http://homeassistant.local:8123 ($VOICESTACK_URL)",
    )
    p.add_argument(
        "--token-file", type=Path, help="file holding a long-lived access token"
    )
    p.add_argument("--priority", choices=PRIORITIES, default="normal")
    p.add_argument(
        "--category",
        default="general",
        help="e.g. warning, error, ready (default general)",
    )
    p.add_argument(
        "--source", help="who is speaking, e.g. backup (groups and merges messages)"
    )
    p.add_argument(
        "--target",
        action="append",
        metavar="ENTITY_ID",
        help="a satellite entity; repeat for more (default: all)",
    )
    p.add_argument("--dedup-key", help="VoiceStack drops a repeat with the same key")
    p.add_argument(
        "--ttl",
        type=_positive,
        metavar="SECONDS",
        help="drop it if not said within this long",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        default=10.0,
        metavar="SECONDS",
        help="give up if not sent within this long (default 10)",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="log connection attempts"
    )
    return p


def _token(
    p: argparse.ArgumentParser, args: argparse.Namespace, env: Mapping[str, str]
) -> str:
    path = args.token_file or (
        Path(env["VOICESTACK_TOKEN_FILE"]) if env.get("VOICESTACK_TOKEN_FILE") else None
    )
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as err:
            p.error(f"cannot read the token file {path}: {err.strerror or err}")
        if not token:
            p.error(f"the token file {path} is empty")
        return token
    token = env.get("VOICESTACK_TOKEN", "").strip()
    if not token:
        p.error(
            "no access token: use --token-file FILE, $VOICESTACK_TOKEN_FILE or $VOICESTACK_TOKEN"
        )
    return token


def main(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> int:
    """Parse, validate, send; the exit code."""
    env = os.environ if env is None else env
    p = parser()
    args = p.parse_args(argv)
    if not args.message.strip():
        p.error("the message is empty")
    url = args.url or env.get("VOICESTACK_URL", "")
    if not url:
        p.error("no Home Assistant address: use --url URL or $VOICESTACK_URL")
    try:
        websocket_url(url)
    except ValueError as err:
        p.error(str(err))
    token = _token(p, args, env)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.CRITICAL,
        format=f"{PROG}: %(message)s",
    )
    return asyncio.run(_send(args, url, token))


async def _send(args: argparse.Namespace, url: str, token: str) -> int:
    deliveries: list[Delivery] = []
    client = VoiceClient(url, token, max_queue=1, on_delivery=deliveries.append)
    client.start()
    await client.announce(
        args.message,
        priority=args.priority,
        category=args.category,
        source=args.source,
        target=args.target,
        dedup_key=args.dedup_key,
        ttl=args.ttl,
    )
    report = await client.close(deadline_s=args.timeout)
    if report.error is not None:
        return _fail(EXIT_AUTH, str(report.error))
    for delivery in deliveries:
        if delivery.error is not None:
            return _fail(
                EXIT_REFUSED,
                f"Home Assistant refused the message: {delivery.error.message}",
            )
        for receipt in delivery.receipts:
            reason = f" ({receipt.reason})" if receipt.reason else ""
            sys.stdout.write(
                f"{receipt.satellite}: {receipt.status}{reason} [{receipt.id}]\n"
            )
    if report.unsent:
        why = f": {client.last_error}" if client.last_error else ""
        return _fail(EXIT_UNSENT, f"not sent within {args.timeout:g} s{why}")
    return 0


def _fail(code: int, message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return code
