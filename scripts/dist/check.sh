#!/usr/bin/env bash
# scripts/dist/check.sh deb FILE | tarball FILE [SUITE]: installs a built package or tarball
# into a fresh copy of a clean Debian chroot (chroot.sh; default SUITE bookworm), starts the
# system daemon as its systemd unit starts it, runs a GPU job through the queue as each of
# two users, and checks what each sees; for the package, then `dpkg -r` (state kept) and
# `dpkg -P` (state gone). Every check that fails says what it expected and exits 1.
# Exit status 3 (and a SKIPPED banner, added to $SLURMLET_SKIPPED_LIST when set) where no
# chroot can be had here; with SLURMLET_DIST_REQUIRED=1 that fails instead.
set -euo pipefail
kind="${1:?usage: check.sh deb FILE | tarball FILE [SUITE]}"
artifact="$(realpath "${2:?usage: check.sh deb FILE | tarball FILE [SUITE]}")"
suite="${3:-bookworm}"
source "$(dirname "$0")/sandbox.sh"
sandbox "$suite"

case "$kind" in
deb)
    install_deb "$artifact"
    bindir=/usr/bin
    unit=/lib/systemd/system/slurmlet.service
    [ "$(C dpkg-query -W -f '${db:Status-Abbrev}' slurmlet)" = "ii " ] || fail "slurmlet is not installed"
    grep -qx /etc/slurmlet/slurmlet.toml "$root/var/lib/dpkg/info/slurmlet.conffiles" ||
        fail "/etc/slurmlet/slurmlet.toml is not a conffile"
    [ "$(stat -c %a "$root/var/lib/slurmlet")" = 711 ] || fail "/var/lib/slurmlet is not 0711"
    man=/usr/share/man/man1/sbatch.1.gz
    completions=(/usr/share/bash-completion/completions/sbatch /usr/share/zsh/vendor-completions/_sbatch
        /usr/share/fish/vendor_completions.d/sbatch.fish)
    ;;
tarball)
    step "tar -C /usr/local --strip-components=1 -xzf $(basename "$artifact") into a clean $suite"
    tar -C "$root/usr/local" --strip-components=1 -xzf "$artifact"
    mkdir -p "$root/etc/slurmlet"
    cp "$root/usr/local/share/doc/slurmlet/slurmlet.toml.example" "$root/etc/slurmlet/slurmlet.toml"
    mkdir -m 711 "$root/var/lib/slurmlet"
    bindir=/usr/local/bin
    unit=/usr/local/lib/systemd/system/slurmlet.service
    man=/usr/local/share/man/man1/sbatch.1.gz
    completions=(/usr/local/share/bash-completion/completions/sbatch /usr/local/share/zsh/site-functions/_sbatch
        /usr/local/share/fish/vendor_completions.d/sbatch.fish)
    ;;
*) fail "unknown kind $kind (deb or tarball)" ;;
esac

for cmd in sbatch srun salloc squeue scancel scontrol sinfo sacct sstat sprio sshare sreport sacctmgr seff slurmletd; do
    [ "$(readlink "$root$bindir/$cmd")" = slurmlet ] || fail "$bindir/$cmd is not a link to slurmlet"
done
for f in "$man" "${completions[@]}" "$unit"; do
    [ -s "$root$f" ] || fail "$f is missing"
done
C "$bindir/sbatch" --version | grep -q '^slurm ' || fail "sbatch --version does not answer"

# The machine: two GPUs stood in by configuration, jobs not moved into the host's cgroups.
cat >>"$root/etc/slurmlet/slurmlet.toml" <<'CONF'
cpus = 4
memory = 4096
gpus = 2
cgroup = { cgroup_plugin = "disabled" }
CONF
C useradd -m -s /bin/sh alice
C useradd -m -s /bin/sh bob

start_daemon "$unit"

for user in alice bob; do
    step "a GPU job as $user"
    id="$(as "$user" sbatch --parsable --wait --gres=gpu:1 \
        --wrap 'echo "$(id -un) job $SLURM_JOB_ID on GPU $CUDA_VISIBLE_DEVICES"')" ||
        fail "sbatch --wait as $user failed: $id"
    out="$root/home/$user/slurm-$id.out"
    [ -f "$out" ] || fail "$user's job $id wrote no /home/$user/slurm-$id.out"
    grep -qx "$user job $id on GPU [01]" "$out" || fail "$user's job $id printed: $(cat "$out")"
    [ "$(C stat -c %U "/home/$user/slurm-$id.out")" = "$user" ] || fail "slurm-$id.out is not $user's"
done
listed="$(as bob sacct -a -X -n -P -o User,State)"
for user in alice bob; do
    echo "$listed" | grep -qx "$user|COMPLETED" || fail "sacct as bob does not list $user's COMPLETED job: $listed"
done

if [ "$kind" = deb ]; then
    stop_daemon
    remove_and_purge
fi
step "passed"
