"""Check the integration's metadata files the way hassfest and HACS would.

Home Assistant's own validator, hassfest, lives in Home Assistant core's git
repository (``script/hassfest``), not in the ``homeassistant`` wheel, so it
cannot run here (and HACS's validation runs as a GitHub action). No test of
the integration's code catches mistakes in these files, yet they show: an
action without a name, a select option shown as its raw key, a missing icon,
an integration HACS refuses or Home Assistant will not load. This checks:

- ``hacs.json``: keys HACS knows, a name, a valid minimum Home Assistant version;
- ``manifest.json``: the keys a custom integration needs, valid values, the
  requirements as PEP 508, the key order hassfest wants;
- ``brand/``: the images Home Assistant serves, their sizes;
- ``services.yaml`` against ``strings.json`` and ``icons.json``, and
  ``translations/en.json`` against ``strings.json`` (a custom integration is
  translated from ``translations/``; ``strings.json`` is only the source);
- ``quality_scale.yaml``: the format hassfest accepts.

It prints one line per problem and exits 1, or prints a summary and exits 0.
Run (from the repository's root):

    scripts/ha-run .venv/bin/python -m scripts.check_integration
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
import json
from pathlib import Path
import struct
import sys
from typing import Any
from urllib.parse import urlparse

from awesomeversion import AwesomeVersion, AwesomeVersionStrategy
from packaging.requirements import InvalidRequirement, Requirement
import yaml

ROOT = Path(__file__).resolve().parents[1]

# hacs.json keys (https://hacs.xyz/docs/publish/start/#hacsjson).
HACS_KEYS = frozenset(
    {
        "name",
        "homeassistant",
        "render_readme",
        "content_in_root",
        "zip_release",
        "filename",
        "hide_default_branch",
        "country",
        "persistent_directory",
        "hacs",
    }
)
HACS_BOOLEANS = (
    "render_readme",
    "content_in_root",
    "zip_release",
    "hide_default_branch",
)

MANIFEST_REQUIRED = (
    "domain",
    "name",
    "codeowners",
    "documentation",
    "issue_tracker",
    "iot_class",
    "version",
    "requirements",
    "integration_type",
    "config_flow",
)
IOT_CLASSES = frozenset(
    {
        "assumed_state",
        "calculated",
        "cloud_polling",
        "cloud_push",
        "local_polling",
        "local_push",
    }
)
# homeassistant.loader.Manifest; "virtual" is for core integrations only.
INTEGRATION_TYPES = frozenset(
    {"device", "entity", "hardware", "helper", "hub", "service", "system"}
)
# What Home Assistant's loader accepts as a custom integration's version.
VERSION_STRATEGIES = [
    AwesomeVersionStrategy.CALVER,
    AwesomeVersionStrategy.SEMVER,
    AwesomeVersionStrategy.SIMPLEVER,
    AwesomeVersionStrategy.BUILDVER,
    AwesomeVersionStrategy.PEP440,
]

# homeassistant.components.brands.const.ALLOWED_IMAGES
BRAND_IMAGES = frozenset(
    f"{dark}{kind}{hidpi}.png"
    for dark in ("", "dark_")
    for kind in ("icon", "logo")
    for hidpi in ("", "@2x")
)
ICON_PX = 256
LOGO_SHORT_SIDE_PX = (128, 256)  # the brands repository's bounds for logo.png

# script/hassfest/quality_scale.py ALL_RULES, Bronze to Platinum.
QUALITY_SCALE_RULES = frozenset(
    {
        # Bronze
        "action-setup",
        "appropriate-polling",
        "brands",
        "common-modules",
        "config-flow",
        "config-flow-test-coverage",
        "dependency-transparency",
        "docs-actions",
        "docs-conditions",
        "docs-high-level-description",
        "docs-installation-instructions",
        "docs-removal-instructions",
        "docs-triggers",
        "entity-event-setup",
        "entity-unique-id",
        "has-entity-name",
        "runtime-data",
        "test-before-configure",
        "test-before-setup",
        "unique-config-entry",
        # Silver
        "action-exceptions",
        "config-entry-unloading",
        "docs-configuration-parameters",
        "docs-installation-parameters",
        "entity-unavailable",
        "integration-owner",
        "log-when-unavailable",
        "parallel-updates",
        "reauthentication-flow",
        "test-coverage",
        # Gold
        "devices",
        "diagnostics",
        "discovery",
        "discovery-update-info",
        "docs-data-update",
        "docs-examples",
        "docs-known-limitations",
        "docs-supported-devices",
        "docs-supported-functions",
        "docs-troubleshooting",
        "docs-use-cases",
        "dynamic-devices",
        "entity-category",
        "entity-device-class",
        "entity-disabled-by-default",
        "entity-translations",
        "exception-translations",
        "icon-translations",
        "reconfiguration-flow",
        "repair-issues",
        "stale-devices",
        # Platinum
        "async-dependency",
        "inject-websession",
        "strict-typing",
    }
)


class UnreadableError(Exception):
    """A file is missing or does not parse (the message says which)."""


class Report:
    """The problems found so far, each a file and what is wrong with it."""

    def __init__(self) -> None:
        """Nothing wrong yet."""
        self.problems: list[tuple[Path, str]] = []

    def add(self, path: Path, message: str) -> None:
        """Note one problem."""
        self.problems.append((path, message))

    def lines(self, root: Path) -> list[str]:
        """``file: what is wrong``, the file relative to ``root``."""
        return [
            f"{path.relative_to(root) if path.is_relative_to(root) else path}: {text}"
            for path, text in self.problems
        ]


def load_json(path: Path) -> Any:
    """Parsed JSON; raise ``UnreadableError`` if missing or invalid."""
    return _load(path, json.loads, json.JSONDecodeError, "JSON")


def load_yaml(path: Path) -> Any:
    """Parsed YAML; raise ``UnreadableError`` if missing or invalid."""
    return _load(path, yaml.safe_load, yaml.YAMLError, "YAML")


def _load(
    path: Path,
    parse: Callable[[str], Any],
    invalid: type[Exception],
    kind: str,
) -> Any:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UnreadableError("missing") from None
    except invalid as err:
        raise UnreadableError(
            f"not valid {kind}: {' '.join(str(err).split())}"
        ) from None


def _dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else empty (its type is reported elsewhere)."""
    return value if isinstance(value, dict) else {}


def _is_version(value: Any, strategies: list[AwesomeVersionStrategy]) -> bool:
    return isinstance(value, str) and AwesomeVersion(value).strategy in strategies


def _is_url(value: Any) -> bool:
    url = urlparse(value if isinstance(value, str) else "")
    return url.scheme in ("http", "https") and bool(url.netloc)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def load_object(path: Path, report: Report) -> dict[str, Any] | None:
    """``path`` as a JSON object, or None with the problem reported."""
    try:
        data = load_json(path)
    except UnreadableError as err:
        report.add(path, str(err))
        return None
    if not isinstance(data, dict):
        report.add(path, "must be a JSON object")
        return None
    return data


# -- hacs.json -----------------------------------------------------------------------


def check_hacs(root: Path, report: Report) -> None:
    """Keys HACS knows, ``name``, and a Home Assistant version HACS can compare."""
    path = root / "hacs.json"
    if (data := load_object(path, report)) is None:
        return
    for key in sorted(data.keys() - HACS_KEYS):
        report.add(
            path, f"unknown key '{key}' (HACS knows: {', '.join(sorted(HACS_KEYS))})"
        )
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        report.add(path, "'name' is missing or empty")
    if "homeassistant" in data and not _is_version(
        data["homeassistant"], [AwesomeVersionStrategy.CALVER]
    ):
        report.add(
            path,
            f"'homeassistant' is {data['homeassistant']!r},"
            " not a Home Assistant version such as '2026.3.0'",
        )
    for key in HACS_BOOLEANS:
        if key in data and not isinstance(data[key], bool):
            report.add(path, f"'{key}' must be true or false")


# -- manifest.json -------------------------------------------------------------------


def check_manifest(integration: Path, report: Report) -> None:
    """What hassfest and Home Assistant's loader demand of a custom integration."""
    path = integration / "manifest.json"
    if (data := load_object(path, report)) is None:
        return
    for key in MANIFEST_REQUIRED:
        if key not in data:
            report.add(path, f"required key '{key}' is missing")
    if "domain" in data and data["domain"] != integration.name:
        report.add(
            path,
            f"domain {data['domain']!r} is not the folder's name {integration.name!r}",
        )
    if "iot_class" in data and data["iot_class"] not in IOT_CLASSES:
        report.add(
            path,
            f"iot_class {data['iot_class']!r} is not one of"
            f" {', '.join(sorted(IOT_CLASSES))}",
        )
    if "integration_type" in data and data["integration_type"] not in INTEGRATION_TYPES:
        report.add(
            path,
            f"integration_type {data['integration_type']!r} is not one of"
            f" {', '.join(sorted(INTEGRATION_TYPES))}",
        )
    if "version" in data and not _is_version(data["version"], VERSION_STRATEGIES):
        report.add(
            path,
            f"version {data['version']!r} is not a version, so Home Assistant"
            " refuses to load the integration",
        )
    if "config_flow" in data and not isinstance(data["config_flow"], bool):
        report.add(path, "config_flow must be true or false")
    for key in ("documentation", "issue_tracker"):
        if key in data and not _is_url(data[key]):
            report.add(path, f"{key} {data[key]!r} is not a URL")
    for key in ("codeowners", "requirements", "dependencies", "after_dependencies"):
        if key in data and not _is_strings(data[key]):
            report.add(path, f"{key} must be a list of strings")
    for owner in data["codeowners"] if _is_strings(data.get("codeowners")) else []:
        if not owner.startswith("@"):
            report.add(path, f"code owner {owner!r} is not a GitHub @name")
    for requirement in (
        data["requirements"] if _is_strings(data.get("requirements")) else []
    ):
        try:
            Requirement(requirement)
        except InvalidRequirement as err:
            report.add(path, f"requirement {requirement!r} is not PEP 508: {err}")
    order = ["domain", "name", *sorted(data.keys() - {"domain", "name"})]
    if list(data) != order:
        report.add(
            path,
            "keys are not in hassfest's order (domain, name, then alphabetical):"
            f" {', '.join(order)}",
        )


# -- brand images --------------------------------------------------------------------


def png_info(path: Path) -> tuple[int, int, bool] | None:
    """Width, height and whether it has transparency; None if not a PNG."""
    data = path.read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or data[12:16] != b"IHDR":
        return None
    width, height, _depth, color_type = struct.unpack(">IIBB", data[16:26])
    return width, height, color_type in (4, 6) or b"tRNS" in data


def check_brand(integration: Path, report: Report) -> None:
    """The images Home Assistant (2026.3+) serves from ``brand/``, and their sizes.

    Sizes follow the brands repository: icons square, 256 px (512 at @2x); logos
    128 to 256 px on their short side; @2x twice the size; dark_ as the light one.
    """
    folder = integration / "brand"
    for name in ("icon.png", "logo.png"):
        if not (folder / name).is_file():
            report.add(folder / name, "missing")
    sizes: dict[str, tuple[int, int]] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name not in BRAND_IMAGES:
            report.add(
                path,
                "not a brand image Home Assistant serves"
                f" ({', '.join(sorted(BRAND_IMAGES))})",
            )
        elif (info := png_info(path)) is None:
            report.add(path, "not a PNG")
        else:
            width, height, alpha = info
            sizes[path.name] = (width, height)
            if not alpha:
                report.add(path, "has no transparency (brand images need it)")
    for name, (width, height) in sizes.items():
        path, size = folder / name, f"is {width}x{height}"
        kind = name.removeprefix("dark_").replace("@2x", "")
        scale = 2 if "@2x" in name else 1
        if kind == "icon.png" and (width, height) != (scale * ICON_PX,) * 2:
            report.add(path, f"{size}, an icon must be {scale * ICON_PX}px square")
        low, high = (scale * side for side in LOGO_SHORT_SIDE_PX)
        if kind == "logo.png" and not low <= min(width, height) <= high:
            report.add(path, f"{size}, a logo's short side must be {low} to {high} px")
        single = name.replace("@2x", "")
        if scale == 2 and single in sizes:
            single_width, single_height = sizes[single]
            if (width, height) != (2 * single_width, 2 * single_height):
                report.add(path, f"{size}, not twice {single} ({_size(sizes[single])})")
        light = name.removeprefix("dark_")
        if light != name and light in sizes and sizes[light] != (width, height):
            report.add(path, f"{size}, not the size of {light} ({_size(sizes[light])})")


def _size(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


# -- services, strings, icons, translations ------------------------------------------


def service_fields(spec: Any) -> Iterator[tuple[str | None, str, dict[str, Any]]]:
    """(section or None, field, field spec) of one services.yaml entry."""
    for name, field in _dict(_dict(spec).get("fields")).items():
        if isinstance(field, dict) and "fields" in field:  # a section
            for inner, inner_field in _dict(field["fields"]).items():
                yield name, inner, _dict(inner_field)
        else:
            yield None, name, _dict(field)


def check_services(integration: Path, report: Report) -> None:
    """Every action named, described and with an icon; every field labelled."""
    paths = {
        "services": integration / "services.yaml",
        "strings": integration / "strings.json",
        "icons": integration / "icons.json",
    }
    loaded = {}
    for key, path in paths.items():
        try:
            loaded[key] = (load_yaml if path.suffix == ".yaml" else load_json)(path)
        except UnreadableError as err:
            report.add(path, str(err))
    if len(loaded) < len(paths):
        return
    services, strings_path, icons_path = (
        loaded["services"] or {},
        paths["strings"],
        paths["icons"],
    )
    if not isinstance(services, dict):
        report.add(paths["services"], "must be a mapping of action names")
        return
    texts = _dict(_dict(loaded["strings"]).get("services"))
    icons = _dict(_dict(loaded["icons"]).get("services"))
    selectors = _dict(_dict(loaded["strings"]).get("selector"))
    for service, spec in services.items():
        if not _dict(icons.get(service)).get("service"):
            report.add(icons_path, f"services.{service}.service is missing")
        if not isinstance(text := texts.get(service), dict):
            report.add(strings_path, f"services.{service} is missing")
            continue
        for key in ("name", "description"):
            if not text.get(key):
                report.add(
                    strings_path, f"services.{service}.{key} is missing or empty"
                )
        fields = list(service_fields(spec))
        field_texts = _dict(text.get("fields"))
        for section in sorted({section for section, _, _ in fields if section}):
            if not _dict(_dict(text.get("sections")).get(section)).get("name"):
                report.add(
                    strings_path,
                    f"services.{service}.sections.{section}.name is missing",
                )
        for _section, name, field in fields:
            for key in ("name", "description"):
                if not _dict(field_texts.get(name)).get(key):
                    report.add(
                        strings_path,
                        f"services.{service}.fields.{name}.{key} is missing or empty",
                    )
            for message in _selector_problems(service, name, field, selectors):
                report.add(strings_path, message)
        for name in sorted(field_texts.keys() - {name for _, name, _ in fields}):
            report.add(strings_path, f"services.{service}.fields.{name}: no such field")
    for path, entries in ((strings_path, texts), (icons_path, icons)):
        for service in sorted(entries.keys() - services.keys()):
            report.add(path, f"services.{service}: no such action in services.yaml")


def _selector_problems(
    service: str, field: str, spec: dict[str, Any], selectors: dict[str, Any]
) -> Iterator[str]:
    """A selector's translation_key exists in strings.json and labels each option."""
    for kind, config in _dict(spec.get("selector")).items():
        key = _dict(config).get("translation_key")
        if key is None:
            continue
        where = f"(services.yaml: {service}.{field}, {kind} selector)"
        if key not in selectors:
            yield f"selector.{key} is missing {where}"
            continue
        labels = _dict(_dict(selectors[key]).get("options"))
        for option in _dict(config).get("options", []):
            if isinstance(option, str) and not labels.get(option):
                yield f"selector.{key}.options.{option} is missing {where}"


def check_translations(integration: Path, report: Report) -> None:
    """``translations/en.json`` is ``strings.json``, with no ``[%key:…%]`` left.

    Home Assistant reads a custom integration's texts from ``translations/``
    only, and core's translation build, which resolves ``[%key:…%]``
    references, does not run for it: the UI would show the reference itself.
    """
    strings_path = integration / "strings.json"
    english_path = integration / "translations/en.json"
    try:
        strings = load_json(strings_path)
    except UnreadableError as err:
        report.add(strings_path, str(err))
        return
    try:
        english = load_json(english_path)
    except UnreadableError as err:
        report.add(english_path, f"{err} (a copy of strings.json)")
        return
    for where in _differences(strings, english)[:5]:
        report.add(english_path, f"{where} differs from strings.json")
    for where, value in _leaves(strings):
        if isinstance(value, str) and "[%key:" in value:
            report.add(strings_path, f"{where}: [%key:...%] is resolved only in core")


def _leaves(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every non-mapping value in ``value``."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, f"{where}.{key}" if where else str(key))
    else:
        yield where or "(top)", value


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Dotted paths at which ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            diff
            for key in [*a, *(key for key in b if key not in a)]
            for diff in _differences(
                a.get(key), b.get(key), f"{where}.{key}" if where else key
            )
        ]
    return [] if a == b else [where or "(top)"]


# -- quality_scale.yaml --------------------------------------------------------------


def check_quality_scale(integration: Path, report: Report) -> None:
    """Known rules, each ``done``/``todo`` or ``{status: ..., comment: ...}``.

    As hassfest: ``exempt`` only with a comment saying why.
    """
    path = integration / "quality_scale.yaml"
    if not path.exists():
        return
    try:
        rules = _dict(load_yaml(path)).get("rules")
    except UnreadableError as err:
        report.add(path, str(err))
        return
    if not isinstance(rules, dict):
        report.add(path, "needs a 'rules:' mapping")
        return
    for rule, value in rules.items():
        if rule not in QUALITY_SCALE_RULES:
            report.add(path, f"{rule}: not a quality scale rule")
        elif value == "exempt":
            report.add(
                path, f"{rule}: exempt needs a comment (status: exempt, comment: why)"
            )
        elif isinstance(value, dict):
            comment = value.get("comment")
            if value.get("status") not in ("done", "todo", "exempt") or value.keys() - {
                "status",
                "comment",
            }:
                report.add(
                    path, f"{rule}: expected status: done|todo|exempt and comment"
                )
            elif not isinstance(comment, str) or not comment.strip():
                report.add(path, f"{rule}: status {value['status']} needs a comment")
        elif value not in ("done", "todo"):
            report.add(path, f"{rule}: {value!r} is not done, todo or exempt")


# -- all together ------------------------------------------------------------------------


def find_integration(root: Path) -> Path:
    """The one integration HACS installs from ``custom_components/``."""
    found = sorted(p.parent for p in root.glob("custom_components/*/manifest.json"))
    if len(found) != 1:
        raise UnreadableError(
            "custom_components/ must hold exactly one integration (with a"
            f" manifest.json) for HACS, found {len(found)}"
        )
    return found[0]


def check_repository(root: Path) -> list[str]:
    """Every problem, one line each: ``file: what is wrong``."""
    report = Report()
    try:
        integration = find_integration(root)
    except UnreadableError as err:
        return [str(err)]
    check_hacs(root, report)
    for check in (
        check_manifest,
        check_brand,
        check_services,
        check_translations,
        check_quality_scale,
    ):
        check(integration, report)
    return report.lines(root)


def summary(root: Path) -> str:
    """One line on what was checked (for a clean run)."""
    integration = find_integration(root)
    services = load_yaml(integration / "services.yaml") or {}
    images = list((integration / "brand").glob("*.png"))
    scale = integration / "quality_scale.yaml"
    rules = _dict(_dict(load_yaml(scale)).get("rules")) if scale.exists() else {}
    return (
        f"{integration.relative_to(root)} OK: hacs.json, manifest.json,"
        f" {len(images)} brand images, {len(services)} actions in services.yaml,"
        f" strings.json, icons.json and translations/en.json agree,"
        f" {len(rules)} quality scale rules"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the problems (exit 1) or a summary (exit 0)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "root", nargs="?", type=Path, default=ROOT, help="repository (default: this)"
    )
    root = parser.parse_args(argv).root.resolve()
    problems = check_repository(root)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(summary(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
