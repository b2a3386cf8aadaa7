#!/usr/bin/env bash
# scripts/real-slurm/sreport.sh - capture, byte for byte, what a real Slurm 26.05 sreport prints for a known set of
# finished jobs (fixtures for slurmlet's sreport, compared by tests/integration/real_slurm_sreport.rs).
#
# Usage (as root, after `scripts/real-slurm/up.sh > /tmp/real-slurm.env`; a fresh up.sh is expected):
#   scripts/real-slurm/sreport.sh [OUT_DIR]        default OUT_DIR: tests/fixtures/real-slurm-sreport
#   SREPORT_DOWN=1 scripts/real-slurm/sreport.sh   ... and run down.sh at the end
#
# sreport reads only the usage slurmdbd has rolled up by the hour, so jobs that just ran are not in it until
# their hours are rolled up. This script therefore writes finished jobs with known past times straight into
# the cluster's job table and lets slurmdbd roll them up:
#   1. accounts physics and chem under root (research is up.sh's); users root (research), daemon and bin
#      (physics and chem). daemon and bin are users that exist, with the same uid and gecos, on the chroot
#      and on the machines the tests run on, so the same names come out of both.
#   2. slurmdbd stopped; the cluster's "Cluster Registered TRES" event moved back to 2026-11-25T00:00:00 (the
#      cluster existed over the whole report period: 2 CPUs, 4 GPUs), the last rollup times set to it, and the
#      jobs of JOBS below inserted as COMPLETED (eligible = start: no planned time).
#   3. slurmdbd started again: it rolls up every hour since (checked in the hourly usage table).
#   4. the captures: each command's stdout in its own file, stderr in NAME.stderr.txt when non-empty, and
#      INDEX.md with the command lines.
# The same jobs are written into a slurmlet store by the test (its JOBS table must stay equal to this one).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"
OUT=${1:-$REPO/tests/fixtures/real-slurm-sreport}
CLUSTER=ci26
BT='`'   # partition is a reserved word in SQL
DB() { C mariadb slurm_acct_db -N -B -e "$1"; }
ts() { C date -u -d "$1" +%s; }

[ "$(id -u)" = 0 ] || die "must run as root"
C scontrol ping >/dev/null 2>&1 || die "the cluster in $R is not up (run scripts/real-slurm/up.sh first)"

# id user account cpus gpus start end (UTC)
JOBS='
1 root research 2 1 2026-11-26T01:00:00 2026-11-26T03:30:00
2 daemon physics 1 2 2026-11-26T03:30:00 2026-11-26T05:45:30
3 bin physics 1 0 2026-11-26T04:10:00 2026-11-26T04:30:00
4 daemon chem 2 4 2026-11-26T22:30:00 2026-11-27T01:00:00
5 bin chem 1 1 2026-11-25T23:00:00 2026-11-26T00:40:00
6 root research 1 0 2026-11-27T05:00:00 2026-11-27T06:10:00
7 bin physics 2 3 2026-11-26T12:00:00 2026-11-26T12:00:40
'
ORIGIN=2026-11-25T00:00:00

# ------------------------------------------------------------------ 1. accounts and users ---
sm() { C sacctmgr -i "$@" >/dev/null || log "WARNING: sacctmgr $* -> rc $?"; }
have_acct() { C sacctmgr -n -P list account "$1" format=account | grep -qx "$1"; }
have_assoc() { C sacctmgr -n -P list assoc cluster=$CLUSTER account="$1" user="$2" format=user | grep -qx "$2"; }
have_acct physics || sm add account physics Cluster=$CLUSTER Parent=root Description=physics Organization=physics
have_acct chem || sm add account chem Cluster=$CLUSTER Parent=root Description=chem Organization=chem
for u in daemon bin; do
  have_assoc physics $u || sm add user $u Account=physics DefaultAccount=physics Cluster=$CLUSTER
  have_assoc chem $u || sm add user $u Account=chem Cluster=$CLUSTER
done
assoc_id() { DB "select id_assoc from ${CLUSTER}_assoc_table where user='$1' and acct='$2' and ${BT}partition${BT}='' and deleted=0"; }

# ------------------------------------------------------------------ 2. jobs in the past ---
log "stopping slurmdbd"
p=$(C cat /run/slurmdbd.pid); kill -TERM "$p"; for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
origin=$(ts $ORIGIN)
DB "update ${CLUSTER}_event_table set time_start=$origin where node_name='' and time_end=0"
DB "delete from ${CLUSTER}_last_ran_table; insert into ${CLUSTER}_last_ran_table (hourly_rollup, daily_rollup, monthly_rollup) values ($origin, $origin, $origin)"
DB "delete from ${CLUSTER}_job_table; delete from ${CLUSTER}_assoc_usage_hour_table; delete from ${CLUSTER}_assoc_usage_day_table; delete from ${CLUSTER}_assoc_usage_month_table; delete from ${CLUSTER}_usage_hour_table; delete from ${CLUSTER}_usage_day_table; delete from ${CLUSTER}_usage_month_table"
while read -r id user acct cpus gpus start end; do
  [ -n "$id" ] || continue
  s=$(ts "$start"); e=$(ts "$end"); a=$(assoc_id "$user" "$acct"); uid=$(C id -u "$user")
  [ -n "$a" ] || die "no association $user/$acct"
  tres="1=$cpus,2=$((cpus * 1000)),4=1,5=$cpus"; [ "$gpus" != 0 ] && tres+=",1001=$gpus"
  DB "insert into ${CLUSTER}_job_table (mod_time, account, cpus_req, job_name, id_assoc, id_job, id_resv, id_wckey,
      id_user, id_group, het_job_id, het_job_offset, state_reason_prev, nodelist, nodes_alloc, node_inx, ${BT}partition${BT},
      priority, state, timelimit, time_submit, time_eligible, time_start, time_end, tres_alloc, tres_req, work_dir)
      values ($e, '$acct', $cpus, 'job$id', $a, $id, 0, 0, $uid, $uid, 0, 4294967294, 0, 'node1', 1, '0', 'gpu',
      1, 3, 600, $s, $s, $s, $e, '$tres', '$tres', '/tmp')" || die "insert of job $id"
done <<< "$JOBS"
log "starting slurmdbd (it rolls up every hour since $ORIGIN)"
C /usr/sbin/slurmdbd
for _ in $(seq 150); do C sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.2; done
want=$(( ($(date +%s) / 3600 * 3600 - origin) / 3600 ))
for _ in $(seq 300); do
  n=$(DB "select count(distinct time_start) from ${CLUSTER}_usage_hour_table")
  [ "${n:-0}" -ge "$want" ] && break; sleep 1
done
log "hourly usage rows: $n of $want hours"
[ "${n:-0}" -ge "$want" ] || die "slurmdbd did not roll the hours up"
sleep 2

# ------------------------------------------------------------------ 3. captures ---
mkdir -p "$OUT"; rm -f "$OUT"/*.txt
INDEX=$OUT/INDEX.md
{
  echo "# Real Slurm $(C sinfo -V | awk '{print $2}') captures: sreport"
  echo
  echo "Made by \`scripts/real-slurm/sreport.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) (cluster $CLUSTER, node node1,"
  echo "2 CPUs, gpu:4, TZ=UTC). The jobs below were written into the job table as COMPLETED with these times"
  echo "(eligible = start) and rolled up by slurmdbd; the cluster registered its TRES at $ORIGIN."
  echo "\`tests/integration/real_slurm_sreport.rs\` writes the same jobs into a slurmlet store and expects each"
  echo "file byte for byte. stdout is \`FILE\`, stderr (only when non-empty) the file in the last column."
  echo
  echo '```'
  echo "id user account cpus gpus start end"
  echo "${JOBS#$'\n'}" | sed '/^$/d'
  echo '```'
  echo
  echo "| file | command | exit | stderr |"
  echo "|---|---|---|---|"
} > "$INDEX"
N=0
cap() {  # cap CMD... : stdout -> NN.txt
  local name rc q a
  N=$((N + 1)); name=$(printf '%02d' $N)
  TZ=UTC "$SL" "$@" > "$OUT/$name.txt" 2> "$OUT/$name.stderr.txt"; rc=$?
  [ -s "$OUT/$name.stderr.txt" ] || rm -f "$OUT/$name.stderr.txt"
  q=""; for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_.,=%/:+-]+$ ]]; then q+="$a "; else q+="'$a' "; fi
  done
  local err=""; [ -e "$OUT/$name.stderr.txt" ] && err="\`$name.stderr.txt\`"
  printf '| `%s.txt` | `%s` | %s | %s |\n' "$name" "${q% }" "$rc" "$err" >> "$INDEX"
}
P='start=2026-11-26T00:00:00 end=2026-11-27T00:00:00'
# shellcheck disable=SC2086
{
  cap sreport cluster utilization $P
  cap sreport cluster utilization $P -t hours
  cap sreport cluster utilization $P -t percent
  cap sreport cluster utilization $P --tres=cpu,gres/gpu
  cap sreport cluster utilization $P -t minper --tres=gres/gpu
  cap sreport cluster utilization $P -P
  cap sreport cluster utilization $P -p -n
  cap sreport cluster utilization start=2026-11-26T03:00:00 end=2026-11-26T05:00:00
  cap sreport cluster utilization start=2026-11-26T03:20:00 end=2026-11-26T05:50:00
  cap sreport cluster utilization start=2026-11-25 end=2026-11-28 -t hourper
  cap sreport cluster AccountUtilizationByUser $P
  cap sreport cluster AccountUtilizationByUser $P --tres=cpu,gres/gpu
  cap sreport cluster AccountUtilizationByUser $P -t percent
  cap sreport cluster AccountUtilizationByUser $P -P
  cap sreport cluster AccountUtilizationByUser $P accounts=physics
  cap sreport cluster AccountUtilizationByUser $P users=bin
  cap sreport cluster AccountUtilizationByUser $P format=Account,Login,Used
  cap sreport cluster UserUtilizationByAccount $P
  cap sreport cluster UserUtilizationByAccount $P --tres=cpu,gres/gpu -t hours
  cap sreport cluster UserUtilizationByAccount $P -P -t minper
  cap sreport cluster UserUtilizationByAccount $P users=daemon
  cap sreport cluster UserUtilizationByAccount $P accounts=chem -n
  cap sreport user topusage $P
  cap sreport user topusage $P --tres=cpu,gres/gpu
  cap sreport user topusage $P -t percent
  cap sreport user topusage start=2026-11-25 end=2026-11-28 -P
  cap sreport user topusage $P accounts=physics
  cap sreport job sizesbyaccount $P
  cap sreport job sizesbyaccount $P -t percent
  cap sreport job sizesbyaccount $P --tres=gres/gpu
  cap sreport job sizesbyaccount $P -P
  cap sreport job sizesbyaccount start=2026-11-25 end=2026-11-28 grouping=1,2
  cap sreport cluster utilization $P cluster=ci26
  cap sreport cluster utilization $P cluster=other
  cap sreport cluster bogus $P
  cap sreport -t bogus cluster utilization $P
}
log "captures in $OUT"
if [ "${SREPORT_DOWN:-0}" = 1 ]; then "$HERE/down.sh"; fi
exit 0
