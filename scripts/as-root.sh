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
