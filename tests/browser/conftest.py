"""The integration tests' fixtures: real Home Assistant, engines, a config dir."""

from tests.integration.conftest import (  # noqa: F401 - fixtures used by name
    config_dir,
    ha_core,
    piper,
    stack,
    whisper,
)
