#!/usr/bin/env bash
# scripts/dist/chroot.sh SUITE: prints the path of a clean Debian SUITE chroot (debootstrap
# minbase, nothing else installed), built once into /var/cache/slurmlet-clean-debian/SUITE
# and reused; check.sh copies it for each installation it tries, so the cached one stays clean.
# Exit status 3: it cannot be built here (not root, no debootstrap, no network), with the
# reason on the last line of standard error.
set -euo pipefail
suite="${1:?usage: chroot.sh SUITE}"
cache="${SLURMLET_CHROOT_CACHE:-/var/cache/slurmlet-clean-debian}"
mirror="${SLURMLET_CHROOT_MIRROR:-http://deb.debian.org/debian}"
root="$cache/$suite"

unavailable() {
    echo "chroot.sh: UNAVAILABLE: $*" >&2
    exit 3
}

[ "$(id -u)" = 0 ] || unavailable "must run as root (debootstrap, chroot, mount)"
if [ -f "$root/.complete" ]; then
    echo "$root"
    exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap debian-archive-keyring; } >&2 ||
        unavailable "debootstrap is not installed and apt-get install debootstrap failed"
fi
mkdir -p "$cache"
building="$root.building"
rm -rf --one-file-system "$building"
echo "chroot.sh: debootstrap $suite into $building (first build; cached afterwards)" >&2
debootstrap --variant=minbase "$suite" "$building" "$mirror" >"$cache/$suite.log" 2>&1 || {
    tail -n 5 "$cache/$suite.log" >&2
    unavailable "debootstrap $suite failed (log: $cache/$suite.log)"
}
# No service starts from dpkg inside the chroot (policy-rc.d), as in a container.
printf '#!/bin/sh\nexit 101\n' >"$building/usr/sbin/policy-rc.d"
chmod 755 "$building/usr/sbin/policy-rc.d"
rm -rf "$building/var/cache/apt/archives/"*.deb
touch "$building/.complete"
mv "$building" "$root"
echo "$root"
