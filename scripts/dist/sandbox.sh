# Shared by check.sh and upgrade.sh: a fresh copy of the clean Debian chroot (chroot.sh) to
# install into, commands run in it as root or as a user logged in, and the system daemon
# started and stopped as its systemd unit does. The sourcing script sets `kind` (what it
# checks, named in every line it prints) before sourcing, and calls `sandbox SUITE`.
# shellcheck shell=bash

dist_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work=""
root=""
daemon=""

# skip REASON: the check cannot run here. A SKIPPED banner, a line in $SLURMLET_SKIPPED_LIST
# when set, and exit status 3; with SLURMLET_DIST_REQUIRED=1 it fails instead.
skip() {
    local line='################################################################################'
    printf '\n%s\n### SKIPPED: the %s check did not run\n### reason: %s\n%s\n\n' "$line" "$kind" "$1" "$line" >&2
    if [ -n "${SLURMLET_SKIPPED_LIST:-}" ]; then
        printf '*** dist check (%s) SKIPPED, nothing checked: %s ***\n' "$kind" "$1" >>"$SLURMLET_SKIPPED_LIST"
    fi
    [ "${SLURMLET_DIST_REQUIRED:-0}" = 1 ] && exit 1
    exit 3
}

# fail WHAT: what was expected and did not hold, the daemon's last lines, exit status 1.
fail() {
    echo "$(basename "$0") ($kind): FAILED: $*" >&2
    if [ -n "$work" ] && [ -s "$work/daemon.log" ]; then
        echo "--- the daemon's log:" >&2
        tail -n 20 "$work/daemon.log" >&2
    fi
    exit 1
}

step() { echo "$(basename "$0") ($kind): $*" >&2; }

# sandbox SUITE: a fresh copy of the clean SUITE chroot at $root, with /proc and /dev, removed
# with everything running in it when the script exits. Skips where no chroot can be had.
sandbox() {
    local suite="$1" errors clean rc=0
    errors="$(mktemp)"
    clean="$("$dist_dir/chroot.sh" "$suite" 2>"$errors")" || rc=$?
    if [ $rc != 0 ]; then
        cat "$errors" >&2
        [ $rc = 3 ] && skip "$(sed -n 's/^chroot.sh: UNAVAILABLE: //p' "$errors" | tail -n 1)"
        exit $rc
    fi
    rm -f "$errors"
    work="$(mktemp -d /var/tmp/slurmlet-check.XXXXXX)"
    root="$work/root"
    trap sandbox_cleanup EXIT
    cp -a "$clean" "$root"
    mount -t proc proc "$root/proc"
    mount --bind /dev "$root/dev"
}

sandbox_cleanup() {
    stop_daemon
    # Jobs still running in the chroot (a failed check may leave some): their processes.
    local proc
    for proc in /proc/[0-9]*; do
        [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -KILL "${proc#/proc/}" 2>/dev/null
    done
    for m in dev proc; do umount -l "$root/$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$work"
}

# C COMMAND…: as root in the chroot.
C() { chroot "$root" "$@"; }

# as USER COMMAND…: a login as USER: their uid, groups and home, a clean environment, in
# their home.
as() {
    local user="$1"
    shift
    chroot --userspec="$user:$user" "$root" env -i HOME="/home/$user" USER="$user" LOGNAME="$user" \
        PATH=/usr/local/bin:/usr/bin:/bin sh -c 'cd "$HOME" && "$@"' sh "$@"
}

# start_daemon UNIT: the unit's ExecStart as root in the background, as systemd starts it,
# waited for until it answers squeue (10 s).
start_daemon() {
    local unit="$1" exec_start
    exec_start="$(sed -n 's/^ExecStart=//p' "$root$unit")"
    [ -n "$exec_start" ] || fail "$unit has no ExecStart"
    step "starting the daemon as the unit does: $exec_start"
    rm -f "$root/run/slurmlet/slurmlet.sock"
    # shellcheck disable=SC2086
    setsid chroot "$root" $exec_start >>"$work/daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 100); do
        [ -S "$root/run/slurmlet/slurmlet.sock" ] && C squeue >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "the daemon ($exec_start) did not answer squeue in 10 s"
}

# stop_daemon: as `systemctl stop` with KillMode=process: SIGTERM to the daemon alone, whose
# jobs keep running under their supervisors.
stop_daemon() {
    [ -n "$daemon" ] || return 0
    kill -TERM "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
    daemon=""
}

# install_deb FILE: `dpkg -i` of the package FILE in the chroot; its output shown if it fails.
install_deb() {
    cp "$1" "$root/tmp/slurmlet.deb"
    step "dpkg -i $(basename "$1")"
    C dpkg -i /tmp/slurmlet.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i $(basename "$1") failed"; }
}

# remove_and_purge: with the daemon stopped, `dpkg -r` removes the commands and keeps the job
# store and the configuration; `dpkg -P` then removes both.
remove_and_purge() {
    step "dpkg -r keeps the job store and the configuration"
    C dpkg -r slurmlet >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -r failed"; }
    [ ! -e "$root/usr/bin/sbatch" ] || fail "/usr/bin/sbatch is still there after dpkg -r"
    [ -s "$root/var/lib/slurmlet/slurmlet.db" ] || fail "dpkg -r removed the job store"
    [ -f "$root/etc/slurmlet/slurmlet.toml" ] || fail "dpkg -r removed the configuration"
    step "dpkg -P removes them"
    C dpkg -P slurmlet >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -P failed"; }
    [ ! -e "$root/var/lib/slurmlet" ] || fail "/var/lib/slurmlet is still there after dpkg -P"
    [ ! -e "$root/etc/slurmlet" ] || fail "/etc/slurmlet is still there after dpkg -P"
}
