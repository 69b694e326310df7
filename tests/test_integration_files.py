"""The integration's metadata files, as hassfest and HACS would see them.

hassfest cannot run here (it lives in Home Assistant core's repository), so
``scripts/check_integration.py`` checks what it and HACS would reject. These
tests hold the repository to it, show that it reports each kind of mistake on
a copy with that mistake, and that the shipped brand images are what
``scripts/make_brand.py`` draws.
"""

from __future__ import annotations

from collections.abc import Callable
import json
from pathlib import Path
import shutil
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import yaml

from scripts import check_integration, make_brand
from scripts.check_integration import check_repository

ROOT = Path(__file__).resolve().parents[1]
INTEGRATION = "custom_components/voicestack"
BRAND = f"{INTEGRATION}/brand"
# The start of each problem line about a file.
MANIFEST = f"{INTEGRATION}/manifest.json: "
STRINGS = f"{INTEGRATION}/strings.json: "
ICONS = f"{INTEGRATION}/icons.json: "
ENGLISH = f"{INTEGRATION}/translations/en.json: "
SCALE = f"{INTEGRATION}/quality_scale.yaml: "


def test_the_repository_has_no_problems(capsys: pytest.CaptureFixture[str]) -> None:
    """What ships passes, and the command says so in one line (exit 0)."""
    assert check_repository(ROOT) == []
    assert check_integration.main([str(ROOT)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].startswith(f"{INTEGRATION} OK:")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the files the checker reads, to break one at a time."""
    shutil.copy(ROOT / "hacs.json", tmp_path)
    shutil.copytree(
        ROOT / INTEGRATION,
        tmp_path / INTEGRATION,
        ignore=shutil.ignore_patterns("*.py", "__pycache__", "core"),
    )
    assert check_repository(tmp_path) == []
    return tmp_path


def edit_json(path: Path, change: Callable[[Any], object]) -> None:
    """Load, change in place, save (in the original key order)."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False))


def edit_strings(repo: Path, change: Callable[[Any], object]) -> None:
    """Change strings.json and translations/en.json alike (so they still agree)."""
    for name in ("strings.json", "translations/en.json"):
        edit_json(repo / INTEGRATION / name, change)


def edit_quality_scale(repo: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """Change the rules of quality_scale.yaml."""
    path = repo / INTEGRATION / "quality_scale.yaml"
    data = yaml.safe_load(path.read_text())
    change(data["rules"])
    path.write_text(yaml.safe_dump(data))


def reorder_manifest(data: dict[str, Any]) -> None:
    """Put ``version`` first, as a hand edit might."""
    rest = dict(data)
    data.clear()
    data.update({"version": rest.pop("version"), **rest})


def blank_png(width: int, height: int) -> bytes:
    """A transparent PNG of the given size."""
    return make_brand.png(np.zeros((height, width, 4), np.uint8))


def opaque_png(width: int, height: int) -> bytes:
    """A PNG without an alpha channel (colour type 2 in its header)."""
    data = bytearray(blank_png(width, height))
    data[25] = 2
    return bytes(data)


def write(relative: str, data: bytes) -> Callable[[Path], object]:
    """A breakage: write ``data`` to a file of the copy."""
    return lambda repo: (repo / relative).write_bytes(data)


def test_problems_are_printed_one_per_line_with_exit_1(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command's contract: each problem on its own line, then exit code 1."""
    (repo / "hacs.json").write_text('{"homeassistant": "soon"}')
    assert check_integration.main([str(repo)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "hacs.json: 'name' is missing or empty",
        (
            "hacs.json: 'homeassistant' is 'soon', not a Home Assistant version"
            " such as '2026.3.0'"
        ),
    ]


BREAKAGES: dict[str, tuple[Callable[[Path], object], list[str]]] = {
    "hacs.json is not JSON": (
        write("hacs.json", b"{"),
        ["hacs.json: not valid JSON"],
    ),
    "hacs.json key HACS does not know": (
        lambda repo: edit_json(repo / "hacs.json", lambda d: d.update(zip=True)),
        ["hacs.json: unknown key 'zip' (HACS knows: content_in_root, country,"],
    ),
    "hacs.json boolean as a string": (
        lambda repo: edit_json(
            repo / "hacs.json", lambda d: d.update(render_readme="yes")
        ),
        ["hacs.json: 'render_readme' must be true or false"],
    ),
    "manifest without version": (
        lambda repo: edit_json(
            repo / INTEGRATION / "manifest.json", lambda d: d.pop("version")
        ),
        [MANIFEST + "required key 'version' is missing"],
    ),
    "manifest with another domain": (
        lambda repo: edit_json(
            repo / INTEGRATION / "manifest.json", lambda d: d.update(domain="vs")
        ),
        [MANIFEST + "domain 'vs' is not the folder's name 'voicestack'"],
    ),
    "manifest with bad values": (
        lambda repo: edit_json(
            repo / INTEGRATION / "manifest.json",
            lambda d: d.update(
                iot_class="local_pull",
                integration_type="virtual",
                version="one point oh",
                requirements=["wyoming>=>1"],
                codeowners=["voicestack"],
                issue_tracker="issues",
            ),
        ),
        [
            MANIFEST + "iot_class 'local_pull' is not one of",
            MANIFEST + "integration_type 'virtual' is not one of",
            MANIFEST + "version 'one point oh' is not a version, so Home Assistant",
            MANIFEST + "issue_tracker 'issues' is not a URL",
            MANIFEST + "code owner 'voicestack' is not a GitHub @name",
            MANIFEST + "requirement 'wyoming>=>1' is not PEP 508",
        ],
    ),
    "manifest keys out of order": (
        lambda repo: edit_json(repo / INTEGRATION / "manifest.json", reorder_manifest),
        [MANIFEST + "keys are not in hassfest's order (domain, name, then"],
    ),
    "icon of the wrong size": (
        write(f"{BRAND}/icon.png", blank_png(128, 128)),
        [
            f"{BRAND}/dark_icon.png: is 256x256, not the size of icon.png (128x128)",
            f"{BRAND}/icon.png: is 128x128, an icon must be 256px square",
            f"{BRAND}/icon@2x.png: is 512x512, not twice icon.png (128x128)",
        ],
    ),
    "logo too small, its @2x not double": (
        write(f"{BRAND}/dark_logo.png", blank_png(300, 100)),
        [
            f"{BRAND}/dark_logo.png: is 300x100, a logo's short side must be 128 to",
            f"{BRAND}/dark_logo.png: is 300x100, not the size of logo.png (560x128)",
            f"{BRAND}/dark_logo@2x.png: is 1120x256, not twice dark_logo.png (300x100)",
        ],
    ),
    "brand images missing, misnamed, not PNG, opaque": (
        lambda repo: [
            (repo / BRAND / "logo.png").unlink(),
            (repo / BRAND / "icon_dark.png").write_bytes(blank_png(256, 256)),
            (repo / BRAND / "dark_icon.png").write_bytes(b"GIF89a"),
            (repo / BRAND / "icon@2x.png").write_bytes(opaque_png(512, 512)),
        ],
        [
            f"{BRAND}/logo.png: missing",
            f"{BRAND}/dark_icon.png: not a PNG",
            f"{BRAND}/icon@2x.png: has no transparency (brand images need it)",
            f"{BRAND}/icon_dark.png: not a brand image Home Assistant serves",
        ],
    ),
    "action without strings or icon": (
        lambda repo: [
            edit_strings(repo, lambda d: d["services"].pop("drain_queue")),
            edit_json(
                repo / INTEGRATION / "icons.json",
                lambda d: d["services"].pop("drain_queue"),
            ),
        ],
        [
            ICONS + "services.drain_queue.service is missing",
            STRINGS + "services.drain_queue is missing",
        ],
    ),
    "action and field without a description": (
        lambda repo: edit_strings(
            repo,
            lambda d: [
                d["services"]["abort_mode"].update(description=""),
                d["services"]["announce"]["fields"]["ttl"].pop("description"),
            ],
        ),
        [
            STRINGS + "services.announce.fields.ttl.description is missing or empty",
            STRINGS + "services.abort_mode.description is missing or empty",
        ],
    ),
    "strings and icons for actions and fields that do not exist": (
        lambda repo: [
            edit_strings(
                repo,
                lambda d: [
                    d["services"].update(old={"name": "Old", "description": "Gone."}),
                    d["services"]["announce"]["fields"].update(
                        volume={"name": "Volume", "description": "How loud."}
                    ),
                ],
            ),
            edit_json(
                repo / INTEGRATION / "icons.json",
                lambda d: d["services"].update(old={"service": "mdi:delete"}),
            ),
        ],
        [
            STRINGS + "services.announce.fields.volume: no such field",
            STRINGS + "services.old: no such action in services.yaml",
            ICONS + "services.old: no such action in services.yaml",
        ],
    ),
    "selector translation_key without strings": (
        lambda repo: edit_strings(repo, lambda d: d["selector"].pop("priority")),
        [
            STRINGS + "selector.priority is missing"
            " (services.yaml: announce.priority, select selector)"
        ],
    ),
    "select option without a label": (
        lambda repo: edit_strings(
            repo, lambda d: d["selector"]["destination"]["options"].pop("queue")
        ),
        [
            STRINGS + "selector.destination.options.queue is missing"
            f" (services.yaml: {action}.destination, select selector)"
            for action in ("start_dictation", "start_inventory", "start_query")
        ],
    ),
    "translations/en.json out of step": (
        lambda repo: edit_json(
            repo / INTEGRATION / "translations/en.json",
            lambda d: d["config"]["step"]["user"].update(title="Old title"),
        ),
        [ENGLISH + "config.step.user.title differs from strings.json"],
    ),
    "a [%key:...%] reference": (
        lambda repo: edit_strings(
            repo,
            lambda d: d["config"]["abort"].update(
                already_configured="[%key:common::config_flow::abort::already_configured_device%]"
            ),
        ),
        [STRINGS + "config.abort.already_configured: [%key:...%] is resolved only"],
    ),
    "quality scale: unknown rule, bad status, exempt without a comment": (
        lambda repo: edit_quality_scale(
            repo,
            lambda rules: rules.update(
                {
                    "fast": "done",
                    "brands": "maybe",
                    "reauthentication-flow": "exempt",
                    "stale-devices": {"status": "exempt", "comment": " "},
                    "diagnostics": {"status": "finished", "comment": "Yes."},
                }
            ),
        ),
        [
            SCALE + "brands: 'maybe' is not done, todo or exempt",
            SCALE + "diagnostics: expected status: done|todo|exempt and comment",
            SCALE + "reauthentication-flow: exempt needs a comment (status: exempt,",
            SCALE + "stale-devices: status exempt needs a comment",
            SCALE + "fast: not a quality scale rule",
        ],
    ),
    "quality scale without rules": (
        write(f"{INTEGRATION}/quality_scale.yaml", b"rule:\n  brands: done\n"),
        [SCALE + "needs a 'rules:' mapping"],
    ),
    "no integration for HACS": (
        lambda repo: (repo / INTEGRATION / "manifest.json").unlink(),
        ["custom_components/ must hold exactly one integration (with a manifest"],
    ),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_each_kind_of_problem_is_reported(repo: Path, breakage: str) -> None:
    """Exactly the expected lines (each checked by its start), nothing else."""
    break_it, expected = BREAKAGES[breakage]
    break_it(repo)
    problems = check_repository(repo)
    assert len(problems) == len(expected), problems
    for problem, start in zip(sorted(problems), sorted(expected), strict=True):
        assert problem.startswith(start), (problem, start)


def test_shipped_brand_images_are_what_the_script_draws() -> None:
    """``make_brand --check`` agrees with the files (the command, as CI runs it)."""
    result = subprocess.run(
        [sys.executable, "-m", "scripts.make_brand", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "")


def test_brand_check_reports_a_changed_or_missing_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A redrawn or deleted image fails ``--check``, naming the file."""
    shutil.copytree(ROOT / BRAND, tmp_path, dirs_exist_ok=True)
    (tmp_path / "logo.png").write_bytes(blank_png(560, 128))
    (tmp_path / "dark_icon@2x.png").unlink()
    assert make_brand.main(["--check", "--dir", str(tmp_path)]) == 1
    reported = sorted(
        Path(line.split(":")[0]).name for line in capsys.readouterr().out.splitlines()
    )
    assert reported == ["dark_icon@2x.png", "logo.png"]


@pytest.mark.parametrize(
    "draw",
    [
        lambda: make_brand.icon(make_brand.ICON_PX, make_brand.LIGHT),
        lambda: make_brand.logo(1, make_brand.LIGHT),
    ],
    ids=["icon", "logo"],
)
def test_brand_images_are_trimmed_on_a_transparent_background(
    draw: Callable[[], np.ndarray],
) -> None:
    """The brands repository's rules: no wide empty margins, corners transparent."""
    alpha = draw()[..., 3]
    rows, cols = np.nonzero(alpha)
    height, width = alpha.shape
    margins = rows.min(), cols.min(), height - 1 - rows.max(), width - 1 - cols.max()
    assert max(margins) <= 0.04 * max(width, height)
    assert min(margins[0], margins[2]) <= 4  # touches (almost) top or bottom
    assert alpha[[0, 0, -1, -1], [0, -1, 0, -1]].tolist() == [0, 0, 0, 0]
