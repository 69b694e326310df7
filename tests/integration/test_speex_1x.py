"""The satellite's noise suppression and auto gain on pyspeex-noise 1.x.

Home Assistant pins pyspeex-noise 1.x (assist_pipeline; source only), so the
Home Assistant venvs have it, while the satellite's own venv has 2.x (wheels;
the ``[barge-in]`` extra's pin) and runs tests/satellite/test_mic_enhance.py on
it. Here the same checks run on the real 1.x: the other API shape
(``Process10ms``), and its automatic gain, which 2.0.1's does not do (the
satellite refuses ``--auto-gain`` there at startup).
"""

from __future__ import annotations

import importlib.metadata

from tests.satellite import test_mic_enhance as checks


def test_this_venv_has_home_assistants_pyspeex_noise_1x() -> None:
    assert importlib.metadata.version("pyspeex-noise").startswith("1.")


def test_auto_gain_lifts_quiet_speech_on_1x() -> None:
    checks.auto_gain_lifts_quiet_speech()


def test_noise_suppression_takes_noise_down_on_1x() -> None:
    checks.test_noise_suppression_takes_noise_down()


def test_the_1x_api_is_the_one_driven() -> None:
    checks.test_the_installed_pyspeex_noise_is_driven_through_its_own_api()
