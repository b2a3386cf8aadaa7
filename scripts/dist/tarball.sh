#!/usr/bin/env bash
# Builds the release tarball: one static binary (musl) with every command's link, the man
# pages, completions, the systemd unit and an example configuration, laid out as a prefix
# (bin/, share/, lib/systemd/system/), so that `tar -C /usr/local --strip-components=1 -xzf`
# or `-C ~/.local` installs it. Runs on any x86_64 (or aarch64) Linux: it needs no library
# at all. Usage: scripts/dist/tarball.sh [--binary PATH] [--target TRIPLE]
#   --binary PATH   package this binary instead of building one
#   --target TRIPLE build for this target (default: this machine's architecture, musl)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

arch="$(uname -m)"
target="$arch-unknown-linux-musl"
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    *) die "unknown option $1 (usage: tarball.sh [--binary PATH] [--target TRIPLE])" ;;
    esac
done
if [ -z "$binary" ]; then
    # musl-gcc builds the C parts (SQLite, ring) for musl: Debian's musl-tools.
    command -v musl-gcc >/dev/null || die "musl-gcc not found: apt install musl-tools"
    rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
    # Without its symbol tables (3.5 MB): a panic still says where, by file and line.
    (cd "$repo" && CARGO_PROFILE_RELEASE_STRIP=symbols cargo build --release --locked --target "$target" --bin slurmlet)
    binary="${CARGO_TARGET_DIR:-$repo/target}/$target/release/slurmlet"
fi
# A static binary asks for no program interpreter (the dynamic loader).
! readelf -l "$binary" | grep -q 'Requesting program interpreter' || die "$binary is not a static binary"

name="slurmlet-$version-${target%%-*}-linux"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
stage_binary "$binary" "$root/bin"
stage_docs "$root/share" zsh/site-functions
stage_unit "$root/lib/systemd/system/slurmlet.service" /usr/local/bin
config_file >"$root/share/doc/slurmlet/slurmlet.toml.example"
mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
