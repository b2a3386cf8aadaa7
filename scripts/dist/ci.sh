#!/usr/bin/env bash
# What CI runs for the ways of installing (docs/install.md): the Debian package and the
# static tarball, each built as a release is (deb.sh, tarball.sh), then installed into a clean
# Debian chroot where two users run a GPU job through the queue (check.sh); and the package
# installed over an earlier release's, with jobs queued and running (upgrade.sh). A step that
# cannot run here (no root, no chroot, no musl target, no earlier commit) says SKIPPED loudly
# and joins the list of skipped tests ($SLURMLET_SKIPPED_LIST); any other failure fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
t0=$SECONDS

skipped() {
    local line='################################################################################'
    printf '\n%s\n### SKIPPED: %s\n%s\n\n' "$line" "$1" "$line" >&2
    [ -z "${SLURMLET_SKIPPED_LIST:-}" ] || printf '*** %s ***\n' "$1" >>"$SLURMLET_SKIPPED_LIST"
}

# A check's exit 3: skipped (it said so, and added its line).
check_with() {
    local rc=0
    "$@" || rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || exit $rc
}
check() { check_with "$here/check.sh" "$@"; }

deb="$("$here/deb.sh" | tail -n 1)"
echo "dist/ci.sh: built $deb after $((SECONDS - t0)) s" >&2
check deb "$deb"

# An upgrade from an earlier release keeps every job (upgrade.sh): the earlier release is the
# commit that wrote the oldest job store the tests keep (tests/fixtures/stores), built once
# per machine and packaged as `0.1.0~COMMIT`, until releases are tagged.
upgrade_from=bd33bde
rc=0
errors="$(mktemp)"
old_binary="$("$here/old-binary.sh" "$upgrade_from" 2>"$errors")" || rc=$?
cat "$errors" >&2
if [ $rc = 3 ]; then
    skipped "dist check (upgrade) SKIPPED, nothing checked: $(sed -n 's/^old-binary.sh: UNAVAILABLE: //p' "$errors")"
elif [ $rc != 0 ]; then
    exit $rc
else
    old_deb="$("$here/deb.sh" --binary "$old_binary" --version "$version~$upgrade_from" | tail -n 1)"
    echo "dist/ci.sh: built $old_deb after $((SECONDS - t0)) s" >&2
    check_with "$here/upgrade.sh" "$old_deb" "$deb"
fi
rm -f "$errors"

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
