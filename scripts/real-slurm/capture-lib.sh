# scripts/real-slurm/capture-lib.sh - what the capture scripts (priority.sh, sreport.sh, reservations.sh) share:
# where the chroot and the repository are, timed progress lines, and running the cluster's own commands.
# Sourced after the script has set HERE to its own folder; not run on its own.
REPO="$(cd "$HERE/../.." && pwd)"
CACHE=${REAL_SLURM_CACHE:-/var/cache/slurmlet-real-slurm}
R=$CACHE/forky
SL=$HERE/sl
T0=${EPOCHREALTIME/[.,]/}
SCRIPT="real-slurm/$(basename "$0")"
log() { local d=$(( (${EPOCHREALTIME/[.,]/} - T0) / 100000 )); printf '[%s %4d.%ds] %s\n' "$SCRIPT" $((d / 10)) $((d % 10)) "$*" >&2; }
die() { echo "$SCRIPT: FAILED: $*" >&2; exit 1; }
C() { chroot "$R" "$@"; }
as() { local u=$1; shift; SL_USER=$u "$SL" "$@"; }   # as USER CMD... : the cluster's client as USER
