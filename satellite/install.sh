#!/usr/bin/env sh
# Install voicestack-satellite into a virtualenv, after checking that this machine
# can run it:   satellite/install.sh [VENV]    (default ~/voicestack)
#               satellite/install.sh --check   (only the checks)
#
# The speech engines ship binary wheels only for 64-bit machines with a recent C
# library: pyopen-wakeword's only aarch64 wheel needs glibc >= 2.35, and neither it,
# pymicro-vad nor numpy has wheels for 32-bit ARM. On a 32-bit Raspberry Pi OS, pip
# would try to build them from source and fail after a long time; this says why
# at once. 64-bit Raspberry Pi OS bookworm (glibc 2.36, Python 3.11) is fine.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
machine=${VOICESTACK_MACHINE:-$(uname -m)}
glibc=${VOICESTACK_GLIBC-$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')}
python=${PYTHON:-python3}

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

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

echo "install.sh: $machine, glibc $glibc, $("$python" --version): supported"
if [ "${1:-}" = "--check" ]; then
  exit 0
fi

venv=${1:-$HOME/voicestack}
"$python" -m venv "$venv"
"$venv/bin/pip" install --upgrade pip >/dev/null
"$venv/bin/pip" install "$here"
echo "install.sh: installed; run $venv/bin/voicestack-satellite --help"
