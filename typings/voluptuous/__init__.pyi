# Home Assistant 2026.11 (the newest release, which mypy checks against) replaced
# voluptuous with probatio and, at start-up (homeassistant/__init__.py,
# probatio.compat.install_as_voluptuous), registers probatio's voluptuous shim as
# the module `voluptuous`. So on that release `import voluptuous as vol` is probatio,
# and Home Assistant's signatures (async_show_form, async_register, websocket
# commands) are annotated with probatio's types. This stub tells mypy the same; the
# integration keeps importing `voluptuous`, which the oldest supported release
# (2026.3.4) still ships for real.
from probatio import *  # noqa: F403  (the whole surface, as the shim re-exports it)
