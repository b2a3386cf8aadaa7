#!/usr/bin/env bash
# scripts/dist/old-binary.sh REV: prints the path of slurmlet built from commit REV of this
# repository, built once into /var/cache/slurmlet-dist/REV (or $SLURMLET_DIST_CACHE) and reused.
# upgrade.sh installs it as the release an admin upgrades from. Built without optimisation
# (it only has to behave as that release did, and is built in a third of the time).
# Exit status 3: it cannot be built here (the commit is not in this clone, e.g. a shallow
# one), with the reason on the last line of standard error.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rev="${1:?usage: old-binary.sh REV}"
cache="${SLURMLET_DIST_CACHE:-/var/cache/slurmlet-dist}/$rev"

if [ -x "$cache/slurmlet" ]; then
    echo "$cache/slurmlet"
    exit 0
fi
if ! git -C "$repo" cat-file -e "$rev^{commit}" 2>/dev/null; then
    echo "old-binary.sh: UNAVAILABLE: commit $rev is not in this clone of the repository (a shallow clone?)" >&2
    exit 3
fi
building="$cache.building"
rm -rf "$building"
mkdir -p "$building/src"
git -C "$repo" archive "$rev" | tar -x -C "$building/src"
echo "old-binary.sh: building slurmlet at $rev (first time; cached in $cache afterwards)" >&2
(cd "$building/src" && CARGO_TARGET_DIR="$building/target" CARGO_PROFILE_DEV_DEBUG=0 \
    cargo build --locked --bin slurmlet >&2)
mkdir -p "$cache"
install -m 755 "$building/target/debug/slurmlet" "$cache/slurmlet"
rm -rf "$building"
echo "$cache/slurmlet"
