#!/usr/bin/env bash
# scripts/real-slurm/down.sh - stop what up.sh started and unmount the chroot's /proc, /sys and /dev.
# Keeps the cached chroot (and, until the next up.sh without --keep-state, the slurm state and database).
#
# Usage: sudo scripts/real-slurm/down.sh [--quiet]
#   1. cancel all jobs (so no slurmstepd / job script is left), 2. SIGTERM the six daemons by their PID files
#   inside the chroot, slurm daemons before slurmdbd before mariadb/munge (SIGKILL after 30 s), 3. SIGTERM, then SIGKILL, any process still left whose root
#   directory is this chroot (only processes up.sh's daemons started can have it), 4. unmount.
# Exit status: 0 when nothing of the cluster is left running (also when it was not running or never built).
set -uo pipefail
CACHE=${REAL_SLURM_CACHE:-/var/cache/slurmlet-real-slurm}
R=$CACHE/forky
QUIET=0; [ "${1:-}" = --quiet ] && QUIET=1
T0=${EPOCHREALTIME/[.,]/}
log() {
  [ "$QUIET" = 1 ] && return; local d=$(( (${EPOCHREALTIME/[.,]/} - T0) / 100000 ))
  printf '[real-slurm/down.sh %4d.%ds] %s\n' $((d / 10)) $((d % 10)) "$*" >&2
}
[ "$(id -u)" = 0 ] || { echo "real-slurm/down.sh: must run as root" >&2; exit 1; }
[ -d "$R" ] || { log "no chroot at $R: nothing to stop"; exit 0; }
if [ "${REAL_SLURM_LOCKED:-0}" != 1 ]; then exec 9>"$CACHE/lock"; flock -w 300 9 || { echo "real-slurm/down.sh: $CACHE/lock busy" >&2; exit 1; }; fi

# pid files are read from inside the chroot: the host would resolve a symlink among them against its own root
alive() { p=$(chroot "$R" cat "$1" 2>/dev/null) && [[ "$p" =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null; }
in_chroot() {  # host pids whose root directory is this chroot
  local d
  for d in /proc/[0-9]*; do
    [ "$(readlink "$d/root" 2>/dev/null)" = "$R" ] && echo "${d#/proc/}"
  done
}

if alive /run/slurmctld.pid; then
  ids=$(chroot "$R" squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${ids// /}" ]; then
    log "cancelling $(echo $ids | wc -w) job(s)"
    # shellcheck disable=SC2086
    chroot "$R" scancel $ids 2>/dev/null
    for _ in $(seq 100); do [ -z "$(chroot "$R" squeue -h -t R,CG -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
fi
stop() {  # stop PIDFILE... : SIGTERM all of them at once, wait up to 30 s, then SIGKILL
  local f pids=() p
  for f in "$@"; do
    if alive /run/$f.pid; then log "$f: SIGTERM $p"; kill -TERM "$p"; pids+=("$p"); fi
    chroot "$R" rm -f "/run/$f.pid"
  done
  for _ in $(seq 300); do
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && { sleep 0.1; continue 2; }; done
    return 0
  done
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && { log "pid $p still alive after 30 s: SIGKILL"; kill -KILL "$p"; }; done
}
stop slurmrestd slurmrestd-v42 slurmrestd-v43 slurmrestd-v44 slurmrestd-v45 slurmd slurmctld   # slurmctld sends its last records to slurmdbd before it exits
stop slurmdbd
stop mysqld/mysqld munge/munged
left=$(in_chroot)
if [ -n "$left" ]; then
  log "SIGTERM to processes left in the chroot: $(echo $left)"
  # shellcheck disable=SC2086
  kill -TERM $left 2>/dev/null
  for _ in $(seq 50); do [ -z "$(in_chroot)" ] && break; sleep 0.1; done
  left=$(in_chroot)
  # shellcheck disable=SC2086
  [ -n "$left" ] && { log "SIGKILL $(echo $left)"; kill -KILL $left 2>/dev/null; sleep 0.5; }
fi
for m in $(awk -v r="$R/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
  umount "$m" 2>/dev/null || umount -l "$m"
done
left=$(in_chroot)
[ -z "$left" ] || { echo "real-slurm/down.sh: processes still running in $R: $(echo $left)" >&2; exit 1; }
log "stopped (chroot kept at $R)"
