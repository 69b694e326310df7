#!/usr/bin/env bash
# Create or update one Python 3.14 virtualenv (called by scripts/setup through
# scripts/ha-run, so it runs with the Python Home Assistant needs).
#   py314-venv.sh VENV TEST_PLUGIN HA_VERSION FILES LOCK RELOCK(0|1) UV_VERSION
# A Home Assistant venv names its test plugin and HA version; the engines venv
# (Wyoming servers and satellites, apart from Home Assistant) passes "-" for both.
# With RELOCK (or no LOCK yet) it resolves the test plugin with Home Assistant
# HA_VERSION, HA's component requirements and requirements/FILES (comma-separated)
# under HA's package constraints, and writes LOCK; otherwise it installs LOCK
# exactly. ./protocol (voicestack-protocol, which the integration's manifest and
# the satellite require; wyoming is in every lock) and ./satellite are installed
# editable either way, and in a Home Assistant venv ./client too (its one
# dependency, aiohttp, is Home Assistant's own).
set -euo pipefail
venv=$1 plugin=$2 ha=$3 files=$4 lock=$5 relock=$6 uv_version=$7
python=${VOICESTACK_HA_PYTHON:-python3.14}

if ! "$venv/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 14, 2) else 1)' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
# uv lives outside the venvs: Home Assistant pins its own uv, which a lock may hold.
uv_home=.cache/uv-$uv_version
if [ ! -x "$uv_home/bin/uv" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --target "$uv_home" "uv==$uv_version"
fi
uv=("$uv_home/bin/uv" pip)
target=(--python "$venv/bin/python" -q)
requirement_files=()
for f in ${files//,/ }; do requirement_files+=(-r "requirements/$f.txt"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

resolve_home_assistant() {
  echo "homeassistant==$ha" >"$work/override.txt"
  "${uv[@]}" install "${target[@]}" "$plugin" --override "$work/override.txt"
  local constraints
  constraints=$("$venv/bin/python" -c 'import homeassistant, pathlib; print(pathlib.Path(homeassistant.__file__).parent / "package_constraints.txt")')
  "$venv/bin/python" -m scripts.ha_requirements >"$work/components.txt"
  # HA's constraints win over the test plugin's pins where the plugin trails HA.
  "${uv[@]}" install "${target[@]}" -c "$constraints" --override "$constraints" \
    --override "$work/override.txt" \
    "$plugin" -r "$work/components.txt" "${requirement_files[@]}"
}

if [ "$relock" -eq 1 ] || [ ! -f "$lock" ]; then
  if [ "$ha" = "-" ]; then
    "${uv[@]}" install "${target[@]}" "${requirement_files[@]}" ./protocol ./satellite
    what="no Home Assistant"
  else
    resolve_home_assistant
    what="Home Assistant $ha"
  fi
  { echo "# Exact versions in $venv ($what); rewritten by scripts/setup --relock."
    "${uv[@]}" freeze --python "$venv/bin/python" --exclude-editable | grep -v -E '^voicestack-(satellite|protocol)'; } >"$lock"
else
  "${uv[@]}" sync "${target[@]}" "$lock"
fi
"${uv[@]}" install "${target[@]}" --no-deps -e ./protocol -e ./satellite
# The voice gate's weights, without their torch (requirements/barge-in-no-deps.txt).
case ",$files," in *,barge-in,*)
  "${uv[@]}" install "${target[@]}" --no-deps -r requirements/barge-in-no-deps.txt ;;
esac
if [ "$ha" != "-" ]; then
  "${uv[@]}" install "${target[@]}" --no-deps -e ./client
fi
