"""What an install gave the satellite, in words: ``python -m voicestack_satellite.installed``.

``install.sh`` ends with it, so the user learns at install time, not from the
first answer that talks over itself, which barge-in parts are there and what
the satellite will do without the missing ones. It asks the package itself
(what imports, what the startup would choose), not what was meant to be installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys

from .echo_cancel import BACKENDS, EchoCancelError, open_backend
from .enhance import PACKAGE as SPEEX, EnhanceError, MicEnhancer
from .voice_gate import gate_available

SPEEX_OPTIONS = {"--noise-suppression": (0, 2), "--auto-gain": (10, 0)}


def _version(package: str) -> str:
    return importlib.metadata.version(package)


def summary(venv: str) -> list[str]:
    """One line per feature: what is installed and what the satellite does with it."""
    run = f"run {venv}/bin/voicestack-satellite --help"
    lines = [
        f"voicestack-satellite {_version('voicestack-satellite')} in {venv}: {run}",
        "- wake word (openWakeWord) and end of speech (micro VAD): on",
    ]
    try:
        backend, _cancel = open_backend()
        module = importlib.import_module(f".{BACKENDS[backend]}", __package__)
        package = module.PACKAGE
        lines.append(
            f"- barge-in: echo canceller {package} {_version(package)}: talking over"
            " an answer pauses it (--echo-cancel aec)"
        )
    except EchoCancelError:
        lines.append(
            "- barge-in: no echo canceller: the mic is ignored while the speaker is"
            " loud, so only the answer's pauses can be talked into (--echo-cancel gate)"
        )
    gate = "available" if gate_available() else "not installed"
    lines.append(f"- voice gate (only enrolled voices pause an answer): {gate}")
    for option, (auto_gain, noise_suppression) in SPEEX_OPTIONS.items():
        try:
            MicEnhancer(auto_gain, noise_suppression)
            lines.append(f"- {option}: {SPEEX} {_version(SPEEX)}")
        except EnhanceError as err:
            lines.append(f"- {option}: unavailable ({err})")
    return lines


def main() -> None:
    """Print the summary for the venv named on the command line."""
    print("\n".join(summary(sys.argv[1] if len(sys.argv) > 1 else sys.prefix)))  # noqa: T201


if __name__ == "__main__":
    main()
