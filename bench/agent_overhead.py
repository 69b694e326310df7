"""What the VoiceStack conversation agent adds to each request over the agent it wraps.

One real Home Assistant in-process (``devstack.home``, its demo home: the kitchen
light) and a VoiceStack agent entry wrapping Home Assistant's own agent, added
through the config flow as a user does. Two paths, alternating call by call
(A B, B A, ...), after a warm-up each, the same commands ("turn on/off the
kitchen light", each one a real state change):

- VoiceStack: ``conversation.async_converse`` with our agent's entity (the
  device's router, then the wrapped agent);
- anchor: ``conversation.async_converse`` with Home Assistant's agent directly.

Per call: wall time of the call. The overhead is the difference of the medians;
the goal is at most 5 ms.

    scripts/ha-run .venv/bin/python -m bench.agent_overhead [--calls 200]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
import statistics
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.components import conversation
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er

from bench.common import figure, header, report
from custom_components.voicestack.agent.config import CONF_WRAPPED_AGENT
from custom_components.voicestack.const import DOMAIN
from devstack.home import HA_VERSION, Home
from devstack.runner import run_bench

COMMANDS = ("turn on the kitchen light", "turn off the kitchen light")
OVERHEAD_GOAL_MS = 5.0


async def our_agent(home: Home) -> str:
    """Our agent wrapping HA's, added through the config flow; its entity id."""
    flow = home.hass.config_entries.flow
    menu = await flow.async_init(DOMAIN, context={"source": "user"})
    form = await flow.async_configure(menu["flow_id"], {"next_step_id": "agent"})
    created = await flow.async_configure(
        form["flow_id"], {CONF_WRAPPED_AGENT: conversation.HOME_ASSISTANT_AGENT}
    )
    assert created["type"] is FlowResultType.CREATE_ENTRY, created
    entity_id = er.async_get(home.hass).async_get_entity_id(
        conversation.DOMAIN, DOMAIN, created["result"].entry_id
    )
    assert entity_id is not None
    return entity_id


async def one_call(home: Home, agent_id: str, text: str) -> float:
    """One request on ``agent_id``: its wall time in ms (the command must work)."""
    started = time.perf_counter()
    result = await conversation.async_converse(
        home.hass, text=text, conversation_id=None, context=None, agent_id=agent_id
    )
    elapsed = (time.perf_counter() - started) * 1000
    kind = result.response.response_type
    assert kind is not conversation.intent.IntentResponseType.ERROR, result.response
    return elapsed


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Everything; returns the exit code."""
    header("The VoiceStack conversation agent's overhead over the agent it wraps")
    report(f"Home Assistant {HA_VERSION}; {args.calls} calls per path after a warm-up")
    async with AsyncExitStack() as stack:
        home = await stack.enter_async_context(Home.running(workdir / "config"))
        ours = await our_agent(home)
        paths = {
            "VoiceStack agent": ours,
            "HA agent": conversation.HOME_ASSISTANT_AGENT,
        }
        times: dict[str, list[float]] = {name: [] for name in paths}
        for index in range(args.calls + 1):
            text = COMMANDS[index % len(COMMANDS)]
            order = list(paths) if index % 2 == 0 else list(paths)[::-1]
            for name in order:
                elapsed = await one_call(home, paths[name], text)
                if index > 0:  # the first of each is the warm-up
                    times[name].append(elapsed)
    for name, values in times.items():
        cuts = statistics.quantiles(values, n=20)
        report(
            f"  {name:<17} median {statistics.median(values):7.3f} ms"
            f" | p95 {cuts[18]:7.3f} ms"
        )
    mine = statistics.median(times["VoiceStack agent"])
    anchor = statistics.median(times["HA agent"])
    figure(
        "request through the VoiceStack agent, median",
        mine,
        "ms",
        anchor=("HA's agent alone, median", anchor),
        precision=3,
    )
    figure(
        "router overhead (difference of the medians)",
        mine - anchor,
        "ms",
        goal=(f"<= {OVERHEAD_GOAL_MS:g} ms", mine - anchor <= OVERHEAD_GOAL_MS),
        precision=3,
    )
    return 0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="bench.agent_overhead", description=__doc__.split("\n\n", 1)[0]
    )
    parser.add_argument("--calls", type=int, default=200, help="calls per path")
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary dir (logs)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("agent_overhead", args.keep, lambda workdir: bench(args, workdir))


if __name__ == "__main__":
    sys.exit(main())
