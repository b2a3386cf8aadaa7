#!/usr/bin/env bash
# What CI runs for the ways of installing (docs/install.md): the Debian package and the
# static tarball, each built as a release is (deb.sh, tarball.sh), then installed into a clean
# Debian chroot where two users run a GPU job through the queue (check.sh). A step that cannot
# run here (no root, no chroot, no musl target) says SKIPPED loudly and joins the list of
# skipped tests ($SLURMLET_SKIPPED_LIST); any other failure fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
t0=$SECONDS

skipped() {
    local line='################################################################################'
    printf '\n%s\n### SKIPPED: %s\n%s\n\n' "$line" "$1" "$line" >&2
    [ -z "${SLURMLET_SKIPPED_LIST:-}" ] || printf '*** %s ***\n' "$1" >>"$SLURMLET_SKIPPED_LIST"
}

# check.sh's exit 3: skipped (it said so, and added its line).
check() {
    local rc=0
    "$here/check.sh" "$@" || rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || exit $rc
}

deb="$("$here/deb.sh" | tail -n 1)"
echo "dist/ci.sh: built $deb after $((SECONDS - t0)) s" >&2
check deb "$deb"

target="$(uname -m)-unknown-linux-musl"
if ! command -v musl-gcc >/dev/null 2>&1; then
    skipped "dist check (tarball) SKIPPED, nothing checked: musl-gcc is not installed (apt install musl-tools)"
elif ! rustup target list --installed 2>/dev/null | grep -qx "$target" && ! rustup target add "$target" >&2; then
    skipped "dist check (tarball) SKIPPED, nothing checked: rustup could not add the $target target"
else
    tarball="$("$here/tarball.sh" --target "$target" | tail -n 1)"
    echo "dist/ci.sh: built $tarball after $((SECONDS - t0)) s" >&2
    check tarball "$tarball" bookworm
fi
echo "dist/ci.sh: done in $((SECONDS - t0)) s" >&2
