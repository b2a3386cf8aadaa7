#!/usr/bin/env bash
# Builds the Debian package from a staged tree with dpkg-deb: the binary in /usr/bin with
# every command's link, man pages, completions, the systemd unit, the system configuration
# as a conffile, and dist/debian's maintainer scripts. The binary is the release build for
# this machine (glibc, so that NVIDIA's library can be loaded and users come through NSS).
# Usage: scripts/dist/deb.sh [--binary PATH] [--version VERSION]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

binary=""
while [ $# -gt 0 ]; do
    case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    *) die "unknown option $1 (usage: deb.sh [--binary PATH] [--version VERSION])" ;;
    esac
done
if [ -z "$binary" ]; then
    # Without its symbol tables (3.6 MB), as Debian ships binaries.
    (cd "$repo" && CARGO_PROFILE_RELEASE_STRIP=symbols cargo build --release --locked --bin slurmlet)
    binary="${CARGO_TARGET_DIR:-$repo/target}/release/slurmlet"
fi
arch="$(dpkg --print-architecture)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
stage_binary "$binary" "$root/usr/bin"
stage_docs "$root/usr/share" zsh/vendor-completions
stage_unit "$root/lib/systemd/system/slurmlet.service" /usr/bin
mkdir -p "$root/etc/slurmlet"
config_file >"$root/etc/slurmlet/slurmlet.toml"
chmod 644 "$root/etc/slurmlet/slurmlet.toml"
cat >"$root/usr/share/doc/slurmlet/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: slurmlet

Files: *
License: MIT or Apache-2.0
COPYRIGHT

# What the binary needs: the newest glibc symbol version it names, and libgcc_s where it is
# linked dynamically (a static binary needs nothing).
depends=""
if objdump -p "$binary" | grep -q NEEDED; then
    glibc="$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)"
    depends="libc6 (>= $glibc)"
    if objdump -p "$binary" | grep -q 'NEEDED.*libgcc_s'; then depends="$depends, libgcc-s1"; fi
fi
installed_kb="$(du -sk "$root" | cut -f1)"
mkdir -p "$root/DEBIAN"
install -m 755 "$repo"/dist/debian/postinst "$repo"/dist/debian/prerm "$repo"/dist/debian/postrm "$root/DEBIAN/"
echo /etc/slurmlet/slurmlet.toml >"$root/DEBIAN/conffiles"
{
    echo "Package: slurmlet"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: slurmlet developers <slurmlet@localhost>"
    echo "Installed-Size: $installed_kb"
    [ -z "$depends" ] || echo "Depends: $depends"
    echo "Recommends: systemd"
    # The same command names as Slurm's own client packages: one or the other.
    echo "Conflicts: slurm-client, slurm-client-emulator"
    echo "Section: admin"
    echo "Priority: optional"
    echo "Description: Slurm's commands and a GPU scheduler daemon for one shared machine"
    echo " sbatch, srun, salloc, squeue, scancel, scontrol, sinfo, sacct, sstat, sprio,"
    echo " sshare, sreport, seff and sacctmgr in one binary, with a scheduler daemon that"
    echo " gives each job its own GPUs on this machine, and talks to a real Slurm through"
    echo " slurmrestd. It installs the same command names as Slurm's slurm-client package,"
    echo " so the two cannot be installed together; use one or the other."
} >"$root/DEBIAN/control"

mkdir -p "$out"
deb="$out/slurmlet_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
