#!/usr/bin/env bash
# PID 1 of a private mount and PID namespace (started by scripts/ha-run): mounts
# what a Debian root needs, then runs the command inside it, with the repository
# at its own path. The kernel undoes every mount and ends every process started
# here when this script exits, whichever way it exits.
set -euo pipefail
root=$1 repo=$2
shift 2
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
# The repository at its own path, and the host's /tmp and /home: paths given on
# a command line (a WAV for the demo, a test's --basetemp) mean the same inside.
for path in "$repo" /tmp /home; do
  [ -d "$path" ] || continue
  mkdir -p "$root$path"
  mount --rbind "$path" "$root$path"
done

# Only what the tools inside need: the rest of the host's environment names
# paths that do not exist in the root.
keep=()
for name in $(compgen -e); do
  case $name in
    CI | TERM | COLUMNS | NO_COLOR | FORCE_COLOR | VOICESTACK_* | PYTEST_* | UV_* | \
      PIP_INDEX_URL | PIP_EXTRA_INDEX_URL | PIP_TRUSTED_HOST | PIP_DEFAULT_TIMEOUT)
      keep+=("$name=${!name}") ;;
  esac
done
status=0
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
  "${keep[@]}" \
  bash -c 'cd "$0" && exec "$@"' "$repo" "$@" || status=$?
exit "$status"
