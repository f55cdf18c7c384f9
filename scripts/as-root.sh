#!/usr/bin/env bash
# Runs a command as root: directly when already root (a fresh Debian 12 container or CI image has no
# sudo), else through sudo. Sourced by the set-up scripts; `as_root CMD ARGS...`.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "$(basename "$0"): '$*' needs root: run this as root, or install sudo" >&2
    exit 3
  fi
}

# Refreshes the package lists, retrying while a Debian mirror is mid-sync. During a sync apt sees an
# index whose size or hash does not match the Release file just fetched ("File has unexpected size
# ... Mirror sync in progress?") and exits 100; the mirror is consistent again within minutes, so
# a fresh machine waits and retries instead of failing the whole set-up on a transient. After the
# last try it goes on with what it has: apt keeps the lists that did download, and the install that
# follows names any package it then cannot find, which is the error worth reading.
# A mirror that stays stale (one seen for days: its armhf security index behind its Release file)
# costs three tries, about 45 s. PD_APT_TRIES (default 3) and PD_APT_WAIT_S (first wait, doubled up
# to 120 s; default 15).
apt_update() {
  local tries=${PD_APT_TRIES:-3} wait_s=${PD_APT_WAIT_S:-15} i
  for ((i = 1; i <= tries; i++)); do
    if as_root apt-get update -qq -o Acquire::Retries=3; then
      return 0
    fi
    if [ "$i" -lt "$tries" ]; then
      echo "$(basename "$0"): apt-get update failed (try $i of $tries), retrying in ${wait_s} s" >&2
      sleep "$wait_s"
      wait_s=$((wait_s * 2 > 120 ? 120 : wait_s * 2))
    fi
  done
  echo "$(basename "$0"): apt-get update still failing after $tries tries; installing from the lists it has" >&2
  return 0
}

# Installs packages; a failed download in a mirror sync (a .deb replaced under the lists just read:
# 404 or a hash mismatch) is retried after refreshing the lists. A package that does not exist fails
# every try, and the last try's apt error is what the user sees.
apt_install() {
  local tries=${PD_APT_TRIES:-3} i
  for ((i = 1; i < tries; i++)); do
    as_root apt-get install -y -qq --no-install-recommends -o Acquire::Retries=3 "$@" >/dev/null && return 0
    echo "$(basename "$0"): apt-get install failed (try $i of $tries); refreshing the lists" >&2
    sleep "${PD_APT_WAIT_S:-15}"
    apt_update
  done
  as_root apt-get install -y -qq --no-install-recommends -o Acquire::Retries=3 "$@" >/dev/null
}
