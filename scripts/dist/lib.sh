# Shared by tarball.sh and deb.sh: the version, and laying out the binary, its links, man
# pages, completions, unit and configuration under a staging root.
# shellcheck shell=bash

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1)"
out="${CARGO_TARGET_DIR:-$repo/target}/dist"

die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

# stage_binary BINARY BINDIR: the binary as BINDIR/slurmlet and every command's link beside
# it, made by the binary itself (`sbatch -> slurmlet`, relative, so the tree can move).
stage_binary() {
    local binary="$1" bindir="$2"
    mkdir -p "$bindir"
    install -m 755 "$binary" "$bindir/slurmlet"
    "$bindir/slurmlet" install-links "$bindir" >/dev/null
    # An older binary (upgrade.sh packages one) linked by absolute path, into this staging
    # tree: those links are made relative here.
    local link absolute
    absolute="$(realpath "$bindir/slurmlet")"
    for link in "$bindir"/*; do
        if [ -L "$link" ] && [ "$(readlink "$link")" = "$absolute" ]; then
            ln -sfn slurmlet "$link"
        fi
    done
    [ "$(readlink "$bindir/sbatch")" = slurmlet ] || die "install-links did not make relative links in $bindir"
}

# stage_docs SHARE: man pages (gzipped, as Debian has them) and the completions of bash, zsh
# and fish, each where that shell looks for vendors' files under SHARE (/usr/share or
# /usr/local/share).
stage_docs() {
    local share="$1" zsh_dir="$2" f name
    mkdir -p "$share/man/man1" "$share/bash-completion/completions" "$share/$zsh_dir" \
        "$share/fish/vendor_completions.d"
    for f in "$repo"/man/*.1; do
        gzip -9n <"$f" >"$share/man/man1/$(basename "$f").gz"
    done
    for f in "$repo"/completions/bash/*; do
        install -m 644 "$f" "$share/bash-completion/completions/"
    done
    for f in "$repo"/completions/zsh/_*; do
        install -m 644 "$f" "$share/$zsh_dir/"
    done
    for f in "$repo"/completions/fish/*.fish; do
        install -m 644 "$f" "$share/fish/vendor_completions.d/"
    done
    for name in README.md docs/configuration.md docs/shared-server.md docs/install.md; do
        install -D -m 644 "$repo/$name" "$share/doc/slurmlet/$(basename "$name")"
    done
}

# stage_unit FILE BINDIR: dist/slurmlet.service with the daemon started from BINDIR.
stage_unit() {
    local file="$1" bindir="$2"
    mkdir -p "$(dirname "$file")"
    sed "s#/usr/local/bin/slurmletd#$bindir/slurmletd#; /^# Install: /d" "$repo/dist/slurmlet.service" >"$file"
    chmod 644 "$file"
}

# config_file: the system configuration, `mode = "system"` and every key of
# docs/configuration.md's example commented out, with what it means and its default.
config_file() {
    cat <<'HEAD'
# slurmlet's system configuration: the root daemon's (slurmletd --system) and, since this
# file exists, the commands', which then always use that daemon. Every key is optional; each
# one is below, commented out, with what it means and its default. The daemon re-reads this
# file on `systemctl reload slurmlet` (SIGHUP). See /usr/share/doc/slurmlet/configuration.md.
mode = "system"

HEAD
    awk '/^```toml$/ { n++; if (n == 1) { on = 1; next } } on && /^```$/ { exit } on {
        if ($0 ~ /^#/ || $0 ~ /^[[:space:]]*$/) print; else print "# " $0 }' "$repo/docs/configuration.md"
}
