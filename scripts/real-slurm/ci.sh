#!/usr/bin/env bash
# scripts/real-slurm/ci.sh [CMD ARGS...] - what CI runs for the real-Slurm tests:
#   up.sh (build the chroot the first time, else start from the cache) -> smoke.sh -> CMD (with the REAL_SLURM_*
#   variables of up.sh exported, e.g. `cargo test --test real_slurm`) -> down.sh (always, also on failure).
# When up.sh says the chroot cannot be built here (its exit 3), prints a loud SKIPPED banner and exits 0
# (exit 1 instead with REAL_SLURM_REQUIRED=1); with REAL_SLURM_SKIPPED_LIST naming a file, also adds its line to it
# (the list of skipped tests .ci/run gives at the end of its run). Any other failure fails. The token is kept in a mode-600 file,
# never printed. Not root: runs up.sh/down.sh through `sudo -n` when that works, else skips (loudly).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
T0=$SECONDS
SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n --preserve-env=REAL_SLURM_CACHE,REAL_SLURM_MIRROR,REAL_SLURM_REST_PORT,REAL_SLURM_CTLD_PORT,REAL_SLURM_SLURMD_PORT,REAL_SLURM_DBD_PORT,REAL_SLURM_USER,REAL_SLURM_TOKEN_LIFESPAN,REAL_SLURM_NO_APT); fi
fi
banner() {
  local line='################################################################################'
  printf '\n%s\n### SKIPPED: real Slurm 26.05 tests did not run\n### reason: %s\n%s\n\n' "$line" "$1" "$line" >&2
  if [ -n "${REAL_SLURM_SKIPPED_LIST:-}" ]; then
    printf '*** real_slurm (every test) SKIPPED, nothing checked: %s ***\n' "$1" >> "$REAL_SLURM_SKIPPED_LIST"
  fi
  [ "${REAL_SLURM_REQUIRED:-0}" = 1 ] && { echo "REAL_SLURM_REQUIRED=1: failing instead of skipping" >&2; exit 1; }
  exit 0
}
if [ "$(id -u)" != 0 ] && [ ${#SUDO[@]} = 0 ]; then banner "not root and no password-less sudo (debootstrap, chroot and mount need root)"; fi

ENVF=$(mktemp); chmod 600 "$ENVF"
ERRF=$(mktemp)
cleanup() { "${SUDO[@]}" "$HERE/down.sh" || echo "real-slurm/ci.sh: down.sh failed" >&2; rm -f "$ENVF" "$ERRF"; }
"${SUDO[@]}" "$HERE/up.sh" > "$ENVF" 2> >(tee "$ERRF" >&2)
rc=$?
sleep 0.2   # let tee flush
if [ $rc = 3 ]; then
  reason=$(sed -n 's/^real-slurm: UNAVAILABLE: //p' "$ERRF" | tail -1)
  rm -f "$ENVF" "$ERRF"
  banner "${reason:-up.sh exit 3}"
fi
trap cleanup EXIT
[ $rc = 0 ] || { echo "real-slurm/ci.sh: up.sh failed (exit $rc)" >&2; exit 1; }
echo "real-slurm/ci.sh: cluster up after $((SECONDS - T0)) s" >&2
set -a; . "$ENVF"; set +a
"$HERE/smoke.sh" >&2 || { echo "real-slurm/ci.sh: smoke test failed" >&2; exit 1; }
st=0
if [ $# -gt 0 ]; then "$@"; st=$?; fi
echo "real-slurm/ci.sh: ${*:-smoke test only} -> exit $st after $((SECONDS - T0)) s in all" >&2
exit $st
