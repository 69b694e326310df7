"""The demo home's configuration: a configuration.yaml Home Assistant starts from.

Two lights and a fan switch over input_booleans, areas, and a custom sentence
whose intent_script answers in three sentences; VoiceStack is linked in as a
custom integration.
"""

from __future__ import annotations

from pathlib import Path

from custom_components.voicestack.const import DOMAIN

KITCHEN_LIGHT = "light.kitchen"
DEVICES = (KITCHEN_LIGHT, "light.living_room_lamp", "switch.fan")
KITCHEN_COMMAND = "Turn on the kitchen lights."
HOUSE_REPORT_COMMAND = "Tell me about the house."

CONFIGURATION_YAML = """\
# Written by devstack/home_config.py for scripts/demo and the benchmarks.
homeassistant:
  name: VoiceStack demo
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  currency: EUR
  language: en
  # Served on loopback only: Home Assistant's own URL for itself (an announce on
  # a stock Wyoming satellite has ffmpeg fetch the message from it) is too.
  internal_url: http://127.0.0.1:{http_port}
http:
  server_host: 127.0.0.1
  server_port: {http_port}
logger:
  default: warning
  logs:
    custom_components.voicestack: info
conversation:
assist_pipeline:
input_boolean:
  kitchen_light_power:
    name: Kitchen light power
  living_room_lamp_power:
    name: Living room lamp power
  fan_power:
    name: Fan power
template:
  - light:
      - name: Kitchen light
        unique_id: demo_kitchen_light
        default_entity_id: light.kitchen
{kitchen_light}
      - name: Living room lamp
        unique_id: demo_living_room_lamp
        default_entity_id: light.living_room_lamp
{living_room_lamp}
    switch:
      - name: Fan
        unique_id: demo_fan
        default_entity_id: switch.fan
{fan}
intent_script:
  HouseReport:
    speech:
      text: >-
        Here is your home.
        The kitchen light is {{{{ states('light.kitchen') }}}} and the living room lamp
        is {{{{ states('light.living_room_lamp') }}}}.
        The fan is {{{{ states('switch.fan') }}}}, and everything else is quiet.
"""

# Custom sentences live in <config>/custom_sentences/<language>/.
CUSTOM_SENTENCES_YAML = """\
language: en
intents:
  HouseReport:
    data:
      - sentences:
          - "tell me about the house"
          - "how is the house"
"""

AREAS = {
    KITCHEN_LIGHT: "Kitchen",
    "light.living_room_lamp": "Living Room",
    "switch.fan": "Living Room",
}


def _switched_by(boolean: str) -> str:
    """The YAML lines of a template entity that mirrors and switches ``boolean``."""
    target = f"input_boolean.{boolean}"
    return "\n".join(
        f"        {line}"
        for line in (
            f"state: \"{{{{ is_state('{target}', 'on') }}}}\"",
            f"turn_on: {{action: input_boolean.turn_on, target: {{entity_id: {target}}}}}",
            f"turn_off: {{action: input_boolean.turn_off, target: {{entity_id: {target}}}}}",
        )
    )


def write_config(config_dir: Path, http_port: int) -> None:
    """configuration.yaml, the custom sentence, and our integration linked in.

    Home Assistant loads custom integrations from <config>/custom_components; a
    symlink keeps the repository's code the one that runs.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "configuration.yaml").write_text(
        CONFIGURATION_YAML.format(
            http_port=http_port,
            kitchen_light=_switched_by("kitchen_light_power"),
            living_room_lamp=_switched_by("living_room_lamp_power"),
            fan=_switched_by("fan_power"),
        )
    )
    sentences = config_dir / "custom_sentences" / "en"
    sentences.mkdir(parents=True, exist_ok=True)
    (sentences / "house.yaml").write_text(CUSTOM_SENTENCES_YAML)
    custom = config_dir / "custom_components"
    custom.mkdir(exist_ok=True)
    link = custom / DOMAIN
    if not link.exists():
        link.symlink_to(
            Path(__file__).resolve().parents[1] / "custom_components" / DOMAIN
        )
