#!/usr/bin/env bash
# scripts/real-slurm/reservations.sh - capture, byte for byte, what a real Slurm 26.05 prints and does for advance
# reservations (scontrol create/show/update/delete reservation, sinfo -T, and jobs around and inside reservations):
# fixtures for slurmlet's reimplementation.
#
# Usage (as root, after `scripts/real-slurm/up.sh > /tmp/real-slurm.env`; a fresh up.sh is expected, so that
# generated reservation names and job ids come out as in the committed captures):
#   scripts/real-slurm/reservations.sh [OUT_DIR]          default OUT_DIR: tests/fixtures/real-slurm-reservations
#   RESV_DOWN=1 scripts/real-slurm/reservations.sh        ... and run down.sh at the end
#   RESV_NO_JOBS=1 scripts/real-slurm/reservations.sh     only the parts that do not wait (sections A-H, < 30 s)
#
# What it does (idempotent: safe to run again on the same cluster; it cancels every job and deletes every
# reservation first, but only a fresh `up.sh` gives the same generated names and job ids again):
#   1. user bob (uid 2002) inside the chroot and in the accounting database (account research, like alice)
#   2. sections A-H: reservations at FIXED times in 2030/2031 (outputs do not depend on when this runs):
#      A empty system, B create (times, users/accounts, GPUs through TRES, CoreCnt, Nodes, partitions),
#      C flags, D generated names, E show / sinfo -T, F update, G delete, H create errors
#   3. sections J0-J3: jobs and reservations that start 60-90 s after they are made (relative times, noted in
#      INDEX.md): J0 the pending reason of a job that overlaps a not-yet-started reservation of each kind;
#      J1 a whole-node MAINT reservation with jobs outside it (one waits, a short one backfills) and inside it
#      (one fits, one runs past the reservation's end); J2 a GPU reservation (TRES=cpu=1,gres/gpu=2) with jobs of
#      other users beside it, an allowed and a refused user, and a nonexistent reservation (sbatch/srun/salloc);
#      J3 DAILY and WEEKLY reservations that start, end and advance, one with a job in it. About 8 minutes in all.
#   4. each command's stdout in its own file NNN_LABEL.txt, stderr in NNN_LABEL.stderr.txt when non-empty, and
#      INDEX.md with the command line, the user it ran as, the exit status and the time of each capture; a
#      leading `.` marks notes (the times of the reservations in J0-J3). Nothing in the files is normalised.
#   5. cancels all jobs, deletes all reservations (and runs down.sh with RESV_DOWN=1)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"
OUT=${1:-$REPO/tests/fixtures/real-slurm-reservations}
CLUSTER=ci26

[ "$(id -u)" = 0 ] || die "must run as root (chroot into $R)"
C scontrol ping >/dev/null 2>&1 || die "the cluster in $R is not up (run scripts/real-slurm/up.sh first)"

# ------------------------------------------------------------------ helpers ---
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S; }     # utc EPOCH -> 2026-12-07T10:00:00 (the cluster runs in UTC)
stamp() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
cancel_all() {
  local ids; ids=$(C squeue -h -o %i | tr '\n' ' ')
  [ -n "${ids// /}" ] || return 0
  # shellcheck disable=SC2086
  C scancel $ids
  for _ in $(seq 150); do [ -z "$(C squeue -h -t PD,R,CG,S -o %i)" ] && return 0; sleep 0.2; done
  log "WARNING: jobs still there after scancel: $(C squeue -h -o '%i %T' | tr '\n' ' ')"
}
delete_all_resv() {
  local n
  for n in $(C scontrol -o show reservation 2>/dev/null | sed -n 's/^ReservationName=\([^ ]*\) .*/\1/p'); do
    C scontrol delete reservation "$n" >/dev/null 2>&1 || log "WARNING: could not delete reservation $n"
  done
}
job_state() { C squeue -h -t all -j "$1" -o %T 2>/dev/null; }
wait_state() {  # wait_state JOBID 'RE' SECONDS : until squeue's state of JOBID matches ^(RE)$
  local i
  for ((i = 0; i < $3 * 5; i++)); do [[ "$(job_state "$1")" =~ ^($2)$ ]] && return 0; sleep 0.2; done
  log "WARNING: job $1 did not reach state '$2' within $3 s (state: $(job_state "$1"))"; return 1
}
wait_until() {  # wait_until EPOCH
  local d=$(( $1 - $(date +%s) ))
  [ "$d" -gt 0 ] && { log "waiting $d s (until $(utc "$1"))"; sleep "$d"; }
  return 0
}

INDEX=$OUT/INDEX.md
N=0
LAST=""; LAST_RC=0
cap() {  # cap LABEL USER CMD... : stdout -> NNN_LABEL.txt, stderr -> NNN_LABEL.stderr.txt (when non-empty)
  local label=$1 user=$2; shift 2
  local name t rc q a err=""
  N=$((N + 1)); name=$(printf '%03d_%s' "$N" "$label")
  t=$(stamp)
  TZ=UTC SL_USER=$user timeout -k 5 60 "$SL" "$@" > "$OUT/$name.txt" 2> "$OUT/$name.stderr.txt"; rc=$?
  [ -s "$OUT/$name.stderr.txt" ] || rm -f "$OUT/$name.stderr.txt"
  q=""; for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_.,=%/:+@-]+$ ]]; then q+="$a "; else q+="'$a' "; fi
  done
  q=${q% }
  [ -e "$OUT/$name.stderr.txt" ] && err="\`$name.stderr.txt\`"
  printf '| `%s.txt` | `%s` | %s | %s | %s | %s |\n' "$name" "${q//|/\\|}" "$user" "$rc" "$t" "$err" >> "$INDEX"
  LAST=$OUT/$name.txt; LAST_RC=$rc
}
root() { local l=$1; shift; cap "$l" root "$@"; }   # root LABEL CMD... is cap LABEL root CMD...
note() { printf '| . | _%s_ | | | %s | |\n' "$*" "$(stamp)" >> "$INDEX"; }
section() {
  printf '\n## %s\n\n' "$1" >> "$INDEX"
  [ $# -gt 1 ] && printf '%s\n' "${@:2}" '' >> "$INDEX"
  printf '| file | command | user | exit | captured at (UTC) | stderr |\n|---|---|---|---|---|---|\n' >> "$INDEX"
  log "section: $1"
}
JID=""
sub() {  # sub LABEL USER SBATCH_ARGS... : captured sbatch; the job id in $JID (empty when refused)
  local label=$1 user=$2; shift 2
  cap "$label" "$user" sbatch "$@"
  JID=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$LAST")
}
RC() { cap "$1" root scontrol create reservation "${@:2}"; }   # RC LABEL ARGS... : scontrol create reservation ARGS
RS() { cap "$1" root scontrol show reservation "${@:2}"; }     # RS LABEL [NAME] : scontrol show reservation [NAME]
RU() { cap "$1" root scontrol update reservation "${@:2}"; }   # RU LABEL ARGS... : scontrol update reservation ARGS

# ------------------------------------------------------------------ 1. user bob, a clean slate ---
if ! C id bob >/dev/null 2>&1; then
  log "useradd bob (uid 2002) in the chroot"
  C useradd -m -u 2002 -s /bin/bash bob || die "useradd bob"
fi
if ! C sacctmgr -n -P list assoc cluster=$CLUSTER account=research user=bob format=user | grep -qx bob; then
  C sacctmgr -i add user bob Account=research DefaultAccount=research Cluster=$CLUSTER >/dev/null ||
    log "WARNING: sacctmgr add user bob -> rc $?"
  sleep 1   # slurmdbd -> slurmctld association update
fi
cancel_all
delete_all_resv
FRESH=yes
if [ -n "$(C sacct -a -X -n -S 2020-01-01 -o JobID 2>/dev/null | head -1)" ]; then
  FRESH=no
  log "WARNING: this cluster has run jobs before: job ids and generated reservation names will differ from a fresh up.sh"
fi
for _ in $(seq 100); do C sinfo -h -n node1 -o %t | grep -Eq '^idle' && break; sleep 0.2; done

mkdir -p "$OUT"; rm -f "$OUT"/*.txt
{
  echo "# Real Slurm $(C sinfo -V | awk '{print $2}') captures: advance reservations"
  echo
  echo "Made by \`scripts/real-slurm/reservations.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) (cluster $CLUSTER, node node1,"
  echo "CPUs=2 (1 socket x 2 cores), Gres=gpu:4, partitions gpu (default, MaxTime=INFINITE) and debug (MaxTime=30),"
  echo "select/cons_tres CR_Core_Memory, sched/backfill, AccountingStorageEnforce=none, ResvOverRun=0, TZ=UTC;"
  echo "users root, alice (2001) and bob (2002), all in account research; fresh cluster: $FRESH). Every command ran"
  echo "inside the chroot through \`scripts/real-slurm/sl\` as the user shown (\`SL_USER=USER sl CMD...\`), with TZ=UTC."
  echo "stdout is \`FILE\`, stderr (only when non-empty) the file in the last column; exit is the command's exit status."
  echo "Rows whose file is \`.\` are notes: what happened between captures, and the times of the reservations and jobs."
  echo "See FINDINGS.md for what these show."
  echo
  echo "Sections A-H use fixed times in 2030/2031 and should give the same bytes on every run after a fresh \`up.sh\`;"
  echo "sections J0-J3 use reservations that start 60-90 s after they are made, so their times differ on every run"
  echo "(the notes give them) and their pending reasons and start times depend on when the scheduler ran."
} > "$INDEX"

# ------------------------------------------------------------------ A. nothing there ---
section "A. no reservations"
RS A_show_reservation
root A_show_res scontrol show res
root A_-o_show_reservation scontrol -o show reservation
root A_sinfo_-T sinfo -T
root A_sinfo_--reservation sinfo --reservation
root A_sinfo_-T_-h sinfo -T -h
RS A_show_reservation_nosuch nosuch
root A_show_reservation_nosuch_-o scontrol -o show reservation nosuch
cap A_show_reservation.as-alice alice scontrol show reservation

# ------------------------------------------------------------------ B. create ---
section "B. create: times, users, accounts, cores, nodes, partitions, GPUs" \
  "Each reservation has its own time slot (2030-01-07 .. 2030-01-15, 2031-01-06) unless it tests an overlap."
RC B_users ReservationName=resv_users StartTime=2030-01-07T10:00:00 Duration=60 Users=alice CoreCnt=1
RS B_show_resv_users resv_users
RC B_endtime ReservationName=resv_endtime StartTime=2030-01-07T12:00:00 EndTime=2030-01-07T13:30:00 Users=alice,root Nodes=node1
RS B_show_resv_endtime resv_endtime
RC B_start_duration_end ReservationName=resv_sde StartTime=2030-01-07T14:00:00 Duration=30 EndTime=2030-01-07T14:30:00 Users=alice CoreCnt=1
RC B_accounts_1day ReservationName=resv_accounts StartTime=2030-01-08T10:00:00 Duration=1-00:00:00 Accounts=research CoreCnt=1
RC B_users_and_accounts ReservationName=resv_ua StartTime=2030-01-09T08:00:00 Duration=30 Users=alice Accounts=research CoreCnt=1
RC B_duration_hms ReservationName=resv_hms StartTime=2030-01-09T10:00:00 Duration=2:30:00 Users=alice CoreCnt=2
RC B_comment ReservationName=resv_comment StartTime=2030-01-09T14:00:00 Duration=45 Users=alice CoreCnt=1 'Comment=GPU driver update'
RS B_show_resv_comment resv_comment
RC B_maxstartdelay ReservationName=resv_msd StartTime=2030-01-09T16:00:00 Duration=45 Users=alice CoreCnt=1 MaxStartDelay=10:00
RS B_show_resv_msd resv_msd
RC B_duration_unlimited ReservationName=resv_unlimited StartTime=2031-01-06T10:00:00 Duration=UNLIMITED Users=alice CoreCnt=1
RS B_show_resv_unlimited resv_unlimited
RC B_nodecnt ReservationName=resv_nodecnt StartTime=2030-01-10T10:00:00 Duration=60 Users=alice NodeCnt=1
RC B_corecnt2 ReservationName=resv_corecnt2 StartTime=2030-01-10T12:00:00 Duration=60 Users=alice CoreCnt=2
RC B_nodes_all ReservationName=resv_nodes_all StartTime=2030-01-10T14:00:00 Duration=60 Users=alice Nodes=ALL
RC B_partition_debug ReservationName=resv_part StartTime=2030-01-10T16:00:00 Duration=60 Users=alice PartitionName=debug
RC B_partition_debug_corecnt ReservationName=resv_part_core StartTime=2030-01-10T18:00:00 Duration=60 Users=alice PartitionName=debug CoreCnt=1
RC B_tres_node1 ReservationName=resv_tres_node StartTime=2030-01-10T20:00:00 Duration=60 Users=alice TRES=node=1
RC B_tres_cpu1 ReservationName=resv_tres_cpu StartTime=2030-01-10T22:00:00 Duration=60 Users=alice TRES=cpu=1
RS B_show_after_nodes_partitions
# GPUs
RC B_gpu_tres_gres_gpu2 ReservationName=gpu_only StartTime=2030-01-14T10:00:00 Duration=60 Users=alice TRES=gres/gpu=2
RS B_show_gpu_only gpu_only
RC B_gpu_tres_cpu1_gpu2 ReservationName=gpu_cpu1 StartTime=2030-01-14T12:00:00 Duration=60 Users=alice TRES=cpu=1,gres/gpu=2
RS B_show_gpu_cpu1 gpu_cpu1
RC B_gpu_tres_colon ReservationName=gpu_colon StartTime=2030-01-14T14:00:00 Duration=60 Users=alice TRES=cpu=1,gres/gpu:2
RC B_gpu_trespernode ReservationName=gpu_pernode StartTime=2030-01-14T16:00:00 Duration=60 Users=alice TRESPerNode=gres/gpu=2
RC B_gpu_tres_corecnt ReservationName=gpu_corecnt StartTime=2030-01-14T18:00:00 Duration=60 Users=alice TRES=gres/gpu=2 CoreCnt=1
RC B_gpu_tres_nodes ReservationName=gpu_nodes StartTime=2030-01-14T20:00:00 Duration=60 Users=alice TRES=gres/gpu=2 Nodes=node1
RC B_gpu_all4 ReservationName=gpu_all4 StartTime=2030-01-15T10:00:00 Duration=60 Users=alice TRES=cpu=2,gres/gpu=4
RC B_gpu_half_a ReservationName=gpu_half_a StartTime=2030-01-15T12:00:00 Duration=60 Users=alice TRES=cpu=1,gres/gpu=2
RC B_gpu_half_b ReservationName=gpu_half_b StartTime=2030-01-15T12:00:00 Duration=60 Users=bob TRES=cpu=1,gres/gpu=2
RC B_gpu_half_c_busy ReservationName=gpu_half_c StartTime=2030-01-15T12:30:00 Duration=60 Users=bob TRES=gres/gpu=1
RC B_gpu_tres_and_node ReservationName=gpu_tres_node StartTime=2030-01-15T14:00:00 Duration=60 Users=alice TRES=cpu=1,gres/gpu=1,node=1
RS B_show_after_gpus
root B_sinfo_-T_after_gpus sinfo -T
# GPU requests that are refused
RC B_err_gpu5 ReservationName=gpu5 StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=gres/gpu=5
RC B_err_gpu5_nodes ReservationName=gpu5n StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=gres/gpu=5 Nodes=node1
RC B_err_tres_gpu_no_prefix ReservationName=gpu_noprefix StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=gpu=2
RC B_err_tres_gpu0 ReservationName=gpu0 StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=gres/gpu=0
RC B_err_tres_gpu_typed ReservationName=gpu_typed StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=gres/gpu:tesla=1
RC B_err_gres_option ReservationName=gpu_gres StartTime=2030-01-15T16:00:00 Duration=60 Users=alice Gres=gpu:2
RC B_err_tres_plus ReservationName=gpu_plus StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES+=gres/gpu=1
RC B_err_tres_cpu3 ReservationName=cpu3 StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=cpu=3
RC B_err_tres_and_corecnt ReservationName=cpu_both StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=cpu=1 CoreCnt=1
RC B_err_corecnt3 ReservationName=core3 StartTime=2030-01-15T16:00:00 Duration=60 Users=alice CoreCnt=3
RC B_err_tres_bogus ReservationName=tres_bogus StartTime=2030-01-15T16:00:00 Duration=60 Users=alice TRES=bogus=1
RC B_err_nodes_nosuch ReservationName=nodes_nosuch StartTime=2030-01-15T16:00:00 Duration=60 Users=alice Nodes=node9
RC B_err_partition_nosuch ReservationName=part_nosuch StartTime=2030-01-15T16:00:00 Duration=60 Users=alice PartitionName=nosuch
# overlaps
RC B_err_overlap_nodes ReservationName=ovl_nodes StartTime=2030-01-07T12:30:00 Duration=60 Users=alice Nodes=node1
RC B_err_overlap_corecnt ReservationName=ovl_core StartTime=2030-01-07T12:30:00 Duration=60 Users=alice CoreCnt=1
RC B_err_overlap_gpu ReservationName=ovl_gpu StartTime=2030-01-07T12:30:00 Duration=60 Users=alice TRES=gres/gpu=1
RC B_err_overlap_partial ReservationName=ovl_part StartTime=2030-01-10T12:30:00 Duration=60 Users=alice CoreCnt=1
RC B_overlap_flag ReservationName=ovl_flag StartTime=2030-01-07T12:30:00 Duration=60 Users=alice Nodes=node1 Flags=OVERLAP
RC B_corecnt_beside_corecnt ReservationName=core_beside StartTime=2030-01-07T10:30:00 Duration=60 Users=bob CoreCnt=1
RC B_err_duplicate_name ReservationName=resv_users StartTime=2030-01-15T18:00:00 Duration=60 Users=alice CoreCnt=1

# ------------------------------------------------------------------ C. flags ---
section "C. flags" "One time slot each on 2030-01-21/22 (full node unless CoreCnt is given). The recurring ones are" \
  "shown, skipped (scontrol update ... Skip: the same code that advances them when they end) and deleted at once, so" \
  "that their repetitions do not collide with later reservations."
RC C_maint ReservationName=f_maint StartTime=2030-01-21T00:00:00 Duration=60 Users=root Nodes=node1 Flags=MAINT
RS C_show_f_maint f_maint
RC C_ignore_jobs ReservationName=f_ignore StartTime=2030-01-21T02:00:00 Duration=60 Users=root Nodes=node1 Flags=IGNORE_JOBS
RC C_maint_ignore_jobs ReservationName=f_maint_ign StartTime=2030-01-21T04:00:00 Duration=60 Users=root Nodes=node1 Flags=MAINT,IGNORE_JOBS
RC C_lowercase_abbrev ReservationName=f_lower StartTime=2030-01-21T06:00:00 Duration=60 Users=root Nodes=node1 Flags=mai,ig
RC C_flex ReservationName=f_flex StartTime=2030-01-21T08:00:00 Duration=60 Users=alice CoreCnt=1 Flags=FLEX
RC C_magnetic ReservationName=f_magnetic StartTime=2030-01-21T08:00:00 Duration=60 Users=alice CoreCnt=1 Flags=MAGNETIC
RC C_purge_comp ReservationName=f_purge StartTime=2030-01-21T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=PURGE_COMP
RC C_purge_comp_time ReservationName=f_purge5 StartTime=2030-01-21T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=PURGE_COMP=00:05:00
RC C_static_alloc ReservationName=f_static StartTime=2030-01-21T12:00:00 Duration=60 Users=alice Nodes=node1 Flags=STATIC_ALLOC
RC C_no_hold ReservationName=f_nohold StartTime=2030-01-21T14:00:00 Duration=60 Users=alice CoreCnt=1 Flags=NO_HOLD_JOBS_AFTER_END
RC C_user_delete ReservationName=f_userdel StartTime=2030-01-21T14:00:00 Duration=60 Users=alice CoreCnt=1 Flags=USER_DELETE
RC C_replace ReservationName=f_replace StartTime=2030-01-21T16:00:00 Duration=60 Users=alice NodeCnt=1 Flags=REPLACE
RC C_part_nodes ReservationName=f_partnodes StartTime=2030-01-21T18:00:00 Duration=60 Users=alice PartitionName=debug Nodes=ALL Flags=PART_NODES
RC C_many ReservationName=f_many StartTime=2030-01-21T20:00:00 Duration=60 Users=alice Nodes=node1 Flags=MAINT,IGNORE_JOBS,FLEX,NO_HOLD_JOBS_AFTER_END,USER_DELETE,PURGE_COMP=1:00:00
RS C_show_after_flags
# recurring
RC C_daily ReservationName=f_daily StartTime=2030-01-22T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=DAILY
RS C_show_f_daily f_daily
RU C_skip_f_daily ReservationName=f_daily Skip
RS C_show_f_daily_after_skip f_daily
root C_delete_f_daily scontrol delete reservation f_daily
RC C_weekly ReservationName=f_weekly StartTime=2030-01-22T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=WEEKLY
RU C_skip_f_weekly ReservationName=f_weekly Skip
RS C_show_f_weekly_after_skip f_weekly
root C_delete_f_weekly scontrol delete reservation f_weekly
RC C_hourly ReservationName=f_hourly StartTime=2030-01-22T10:00:00 Duration=30 Users=alice CoreCnt=1 Flags=HOURLY
RU C_skip_f_hourly ReservationName=f_hourly Skip
RS C_show_f_hourly_after_skip f_hourly
root C_delete_f_hourly scontrol delete reservation f_hourly
RC C_weekday ReservationName=f_weekday StartTime=2030-01-22T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=WEEKDAY
RC C_weekend ReservationName=f_weekend StartTime=2030-01-26T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=WEEKEND
RC C_daily_maint ReservationName=f_daily_maint StartTime=2030-01-23T10:00:00 Duration=60 Users=root Nodes=node1 Flags=DAILY,MAINT
RC C_weekly_ignore_jobs ReservationName=f_weekly_ign StartTime=2030-01-23T12:00:00 Duration=60 Users=root Nodes=node1 Flags=WEEKLY,IGNORE_JOBS
RS C_show_recurring
root C_sinfo_-T_recurring sinfo -T
for n in f_weekday f_weekend f_daily_maint f_weekly_ign; do root "C_delete_$n" scontrol delete reservation "$n"; done
# refused flags
RC C_err_bogus ReservationName=f_bogus StartTime=2030-01-24T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=BOGUS
RC C_err_daily_weekly ReservationName=f_dw StartTime=2030-01-24T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=DAILY,WEEKLY
RC C_err_force_start ReservationName=f_force StartTime=2030-01-24T10:00:00 Duration=60 Users=alice CoreCnt=1 Flags=FORCE_START
RC C_err_part_nodes_no_partition ReservationName=f_pn StartTime=2030-01-24T10:00:00 Duration=60 Users=alice Nodes=ALL Flags=PART_NODES
RC C_err_time_float_daily ReservationName=f_tfd StartTime=now+1day Duration=60 Users=alice CoreCnt=1 Flags=TIME_FLOAT,DAILY
RC C_err_replace_maint ReservationName=f_rm StartTime=2030-01-24T10:00:00 Duration=60 Users=alice NodeCnt=1 Flags=REPLACE,MAINT
RC C_err_replace_nodes ReservationName=f_rn StartTime=2030-01-24T10:00:00 Duration=60 Users=alice Nodes=node1 Flags=REPLACE
RC C_skip_on_create_accepted ReservationName=f_skip StartTime=2030-01-24T10:00:00 Duration=60 Users=alice CoreCnt=1 Skip

# ------------------------------------------------------------------ D. generated names ---
section "D. no ReservationName: the name Slurm makes up"
RC D_users StartTime=2030-01-28T10:00:00 Duration=60 Users=alice CoreCnt=1
RC D_users_list StartTime=2030-01-28T12:00:00 Duration=60 Users=bob,alice CoreCnt=1
RC D_accounts StartTime=2030-01-28T14:00:00 Duration=60 Accounts=research CoreCnt=1
RC D_users_and_accounts StartTime=2030-01-28T16:00:00 Duration=60 Users=alice Accounts=research CoreCnt=1
RC D_users_negated StartTime=2030-01-28T18:00:00 Duration=60 Users=-bob CoreCnt=1
RC D_groups StartTime=2030-01-28T20:00:00 Duration=60 Groups=alice CoreCnt=1
RC D_empty_name ReservationName= StartTime=2030-01-29T10:00:00 Duration=60 Users=alice CoreCnt=1
RC D_users_again StartTime=2030-01-29T12:00:00 Duration=60 Users=alice CoreCnt=1
RS D_show_generated
root D_sinfo_-T_generated sinfo -T

# ------------------------------------------------------------------ E. show ---
section "E. show and sinfo -T with many reservations (all INACTIVE: they are in 2030/2031)"
RS E_show_reservation
root E_show_res scontrol show res
root E_-o_show_reservation scontrol -o show reservation
root E_show_res_-o scontrol show res -o
RS E_show_reservation_resv_users resv_users
root E_show_res_resv_users_-o scontrol show res resv_users -o
root E_-o_show_res_gpu_cpu1 scontrol -o show res gpu_cpu1
root E_show_ReservationName=resv_endtime scontrol show ReservationName=resv_endtime
root E_show_reservationname_resv_endtime scontrol show reservationname resv_endtime
RS E_show_reservation_nosuch nosuch
root E_-o_show_reservation_nosuch scontrol -o show reservation nosuch
root E_show_reservation_nosuch_-Q scontrol -Q show reservation nosuch
root E_show_reservation_prefix scontrol show reservation resv_user
root E_show_reservation_too_many scontrol show reservation resv_users gpu_cpu1
cap E_show_reservation.as-alice alice scontrol show reservation
cap E_show_reservation_resv_users.as-bob bob scontrol show reservation resv_users
root E_sinfo_-T sinfo -T
root E_sinfo_--reservation sinfo --reservation
root E_sinfo_-T_-h sinfo -T -h
root E_sinfo_-T_--noheader sinfo -T --noheader
root E_sinfo_-T_-o sinfo -T -o '%P %a'
root E_sinfo_-T_-p_debug sinfo -T -p debug
root E_sinfo_-T_-l sinfo -T -l
root E_sinfo_-T_-N sinfo -T -N
root E_sinfo_-T_-n_node1 sinfo -T -n node1
cap E_sinfo_-T.as-alice alice sinfo -T
RC E_long_name ReservationName=a_rather_long_reservation_name_x StartTime=2030-01-29T14:00:00 Duration=60 Users=alice CoreCnt=1
root E_sinfo_-T_long_name sinfo -T
root E_sinfo_-T_-h_long_name sinfo -T -h
root E_delete_long_name scontrol delete reservation a_rather_long_reservation_name_x

# ------------------------------------------------------------------ F. update ---
section "F. update" "upd: full node (Nodes=node1) 2030-02-04T10:00:00 60 min, Users=alice; upd_core: CoreCnt=1 2030-02-05T10:00:00."
RC F_create_upd ReservationName=upd StartTime=2030-02-04T10:00:00 Duration=60 Users=alice Nodes=node1
RC F_create_upd_core ReservationName=upd_core StartTime=2030-02-05T10:00:00 Duration=60 Users=alice CoreCnt=1
RC F_create_upd_gpu ReservationName=upd_gpu StartTime=2030-02-06T10:00:00 Duration=60 Users=alice TRES=cpu=1,gres/gpu=2
RU F_duration ReservationName=upd Duration=120
RS F_show_after_duration upd
RU F_duration_plus ReservationName=upd Duration+=30
root F_show_after_duration_plus scontrol -o show reservation upd
RU F_duration_minus ReservationName=upd Duration-=15
root F_show_after_duration_minus scontrol -o show reservation upd
RU F_starttime ReservationName=upd StartTime=2030-02-04T08:00:00
root F_show_after_starttime scontrol -o show reservation upd
RU F_endtime ReservationName=upd EndTime=2030-02-04T12:00:00
root F_show_after_endtime scontrol -o show reservation upd
RU F_starttime_after_endtime ReservationName=upd StartTime=2030-02-04T09:00:00
root F_show_after_starttime_after_endtime scontrol -o show reservation upd
RU F_users_plus_bob ReservationName=upd Users+=bob
root F_show_after_users_plus scontrol -o show reservation upd
RU F_users_minus_alice ReservationName=upd Users-=alice
root F_show_after_users_minus scontrol -o show reservation upd
RU F_users_set ReservationName=upd Users=alice,root
root F_show_after_users_set scontrol -o show reservation upd
RU F_accounts ReservationName=upd Accounts=research
root F_show_after_accounts scontrol -o show reservation upd
RU F_flags_maint ReservationName=upd Flags=MAINT
root F_show_after_flags_maint scontrol -o show reservation upd
RU F_flags_plus_ignore_jobs ReservationName=upd Flags+=IGNORE_JOBS
root F_show_after_flags_plus scontrol -o show reservation upd
RU F_flags_minus_maint ReservationName=upd Flags-=MAINT
root F_show_after_flags_minus scontrol -o show reservation upd
RU F_flags_daily ReservationName=upd Flags=DAILY
root F_show_after_flags_daily scontrol -o show reservation upd
RU F_err_flags_weekly_when_daily ReservationName=upd Flags=WEEKLY
RU F_flags_minus_daily ReservationName=upd Flags=-DAILY
root F_show_after_flags_minus_daily scontrol -o show reservation upd
RU F_partition ReservationName=upd PartitionName=debug
RU F_comment ReservationName=upd 'Comment=moved twice'
RU F_several ReservationName=upd Duration=90 Users=alice Flags=MAINT
RS F_show_upd upd
root F_update_without_reservation_word scontrol update ReservationName=upd Duration=60
root F_show_after_without_word scontrol -o show reservation upd
RU F_nodecnt_full_node ReservationName=upd NodeCnt=1
RU F_err_nodes_core_based ReservationName=upd_core Nodes=node1
RU F_err_corecnt ReservationName=upd_core CoreCnt=2
RU F_err_tres_gpu ReservationName=upd_gpu TRES=cpu=1,gres/gpu=1
RU F_gpu_duration ReservationName=upd_gpu Duration=30 Users+=bob
root F_show_upd_gpu scontrol -o show reservation upd_gpu
# errors
RU F_err_nosuch ReservationName=nosuch Duration=30
RU F_err_no_name Duration=30
RU F_err_duration_bad ReservationName=upd Duration=soon
RU F_err_starttime_bad ReservationName=upd StartTime=tomorrowish
RU F_err_starttime_past ReservationName=upd StartTime=2020-01-01T00:00:00
RU F_err_endtime_before_start ReservationName=upd EndTime=2030-02-04T07:00:00
RU F_err_users_unknown ReservationName=upd Users=nosuchuser
RU F_accounts_unknown_accepted ReservationName=upd Accounts=nosuchacct
RU F_err_remove_all_access ReservationName=upd_core Users-=alice
RU F_err_flags_bogus ReservationName=upd Flags=BOGUS
RU F_err_unknown_param ReservationName=upd Colour=blue
RU F_err_skip_not_recurring ReservationName=upd Skip
RU F_maint_overlap_accepted ReservationName=upd StartTime=2030-01-07T12:00:00
RC F_create_upd2 ReservationName=upd2 StartTime=2030-02-07T10:00:00 Duration=60 Users=alice Nodes=node1
RU F_err_overlap ReservationName=upd2 StartTime=2030-01-07T12:00:00
cap F_err_update.as-alice alice scontrol update reservation ReservationName=upd Duration=30
cap F_err_skip.as-alice alice scontrol update reservation ReservationName=upd Skip
root F_show_upd_after_errors scontrol -o show reservation upd
root F_show_upd2_unchanged scontrol -o show reservation upd2

# ------------------------------------------------------------------ G. delete ---
section "G. delete"
root G_delete_reservation_NAME scontrol delete reservation upd
root G_delete_ReservationName=NAME scontrol delete ReservationName=upd_core
root G_delete_res_NAME scontrol delete res upd_gpu
root G_delete_reservation_nosuch scontrol delete reservation nosuch
root G_delete_ReservationName=nosuch scontrol delete ReservationName=nosuch
root G_delete_reservation_no_name scontrol delete reservation
root G_delete_too_many scontrol delete reservation resv_users resv_hms
cap G_delete.as-alice alice scontrol delete reservation resv_users
cap G_delete_user_delete_flag.as-bob bob scontrol delete reservation f_userdel
cap G_delete_user_delete_flag.as-alice alice scontrol delete reservation f_userdel
RS G_show_f_userdel_gone f_userdel
RC G_create_del_pending ReservationName=del_pending StartTime=2030-02-11T10:00:00 Duration=60 Users=alice CoreCnt=1
sub G_sbatch_into_del_pending alice --reservation=del_pending -t 1 -J in_del_pending -o /dev/null --wrap 'sleep 10'
DEL_JOB=$JID
sleep 2
cap G_squeue_before_delete root squeue -o '%i %u %T %r %v'
root G_err_delete_with_pending_job scontrol delete reservation del_pending
[ -n "$DEL_JOB" ] && root G_show_job_pending_in_resv scontrol show job "$DEL_JOB"
cancel_all
note "the job is cancelled"
root G_delete_after_cancel scontrol delete reservation del_pending

# ------------------------------------------------------------------ H. create errors ---
section "H. create: refused requests"
RC H_err_no_starttime ReservationName=h1 Duration=60 Users=alice CoreCnt=1
RC H_err_no_duration_or_end ReservationName=h2 StartTime=2030-03-04T10:00:00 Users=alice CoreCnt=1
RC H_err_no_users_accounts ReservationName=h3 StartTime=2030-03-04T10:00:00 Duration=60 CoreCnt=1
RC H_err_no_resources ReservationName=h4 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice
RC H_err_users_unknown ReservationName=h5 StartTime=2030-03-04T10:00:00 Duration=60 Users=nosuchuser CoreCnt=1
RC H_err_users_one_unknown ReservationName=h5b StartTime=2030-03-04T10:00:00 Duration=60 Users=alice,nosuchuser CoreCnt=1
RC H_err_accounts_unknown ReservationName=h6 StartTime=2030-03-04T10:00:00 Duration=60 Accounts=nosuchacct CoreCnt=1
RC H_err_groups_unknown ReservationName=h6b StartTime=2030-03-04T10:00:00 Duration=60 Groups=nosuchgroup CoreCnt=1
RC H_err_users_and_groups ReservationName=h6c StartTime=2030-03-04T10:00:00 Duration=60 Users=alice Groups=alice CoreCnt=1
RC H_err_end_before_start ReservationName=h7 StartTime=2030-03-04T10:00:00 EndTime=2030-03-04T09:00:00 Users=alice CoreCnt=1
RC H_end_equals_start_accepted ReservationName=h7b StartTime=2030-03-04T10:00:00 EndTime=2030-03-04T10:00:00 Users=alice CoreCnt=1
RC H_err_duration_mismatch ReservationName=h8 StartTime=2030-03-04T10:00:00 Duration=60 EndTime=2030-03-04T12:00:00 Users=alice CoreCnt=1
RC H_err_start_in_past ReservationName=h9 StartTime=2020-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1
RC H_err_starttime_bad ReservationName=h10 StartTime=someday Duration=60 Users=alice CoreCnt=1
RC H_err_duration_bad ReservationName=h11 StartTime=2030-03-04T10:00:00 Duration=long Users=alice CoreCnt=1
RC H_duration_zero_accepted ReservationName=h11b StartTime=2030-03-04T10:00:00 Duration=0 Users=alice CoreCnt=1
RC H_err_unknown_param ReservationName=h12 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1 Colour=blue
RC H_err_no_equals ReservationName=h13 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1 Bogus
RC H_err_users_twice ReservationName=h14 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice Users=bob CoreCnt=1
RC H_err_overlap_same_node ReservationName=h15 StartTime=2030-01-07T12:15:00 Duration=30 Users=alice Nodes=node1
RC H_err_more_gpus_than_exist ReservationName=h16 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice TRES=gres/gpu=8
RC H_err_more_cores_than_exist ReservationName=h17 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=4
RC H_err_nodecnt_too_many ReservationName=h18 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice NodeCnt=2
cap H_err_create.as-alice alice scontrol create reservation ReservationName=h19 StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1
cap H_err_create_no_name.as-alice alice scontrol create reservation StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1
root H_err_create_nothing scontrol create reservation
root H_err_create_without_res_word scontrol create StartTime=2030-03-04T10:00:00 Duration=60 Users=alice CoreCnt=1
RS H_show_nothing_created h1

# ------------------------------------------------------------------ the static part ends ---
root Z_show_all_static scontrol show reservation
root Z_sinfo_-T_static sinfo -T
delete_all_resv
note "all reservations of sections A-H deleted"

if [ "${RESV_NO_JOBS:-0}" = 1 ]; then
  log "RESV_NO_JOBS=1: skipping J0-J3; captures in $OUT"
  [ "${RESV_DOWN:-0}" = 1 ] && "$HERE/down.sh"
  exit 0
fi

# ------------------------------------------------------------------ J0. pending reasons before a start ---
section "J0. the pending reason of a job that overlaps a reservation that has not started yet" \
  "Each probe: a reservation starting 80 s later (1 minute), then jobs of alice that are not in it, submitted at" \
  "once and looked at 3 s later (the scheduler tries a job when it is submitted); then all cancelled and deleted."
probe() {  # probe LABEL RESV_ARGS... -- JOB_ARGS... [-- JOB_ARGS...]
  local label=$1; shift
  local rargs=() s
  while [ $# -gt 0 ] && [ "$1" != -- ]; do rargs+=("$1"); shift; done
  s=$(( $(date +%s) + 80 ))
  RC "J0_${label}_create" ReservationName="p_$label" StartTime="$(utc $s)" Duration=1 "${rargs[@]}"
  note "p_$label starts $(utc $s), ends $(utc $((s + 60)))"
  local k=0 jargs
  while [ $# -gt 0 ]; do
    shift; jargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do jargs+=("$1"); shift; done
    k=$((k + 1))
    sub "J0_${label}_sbatch$k" alice -o /dev/null "${jargs[@]}"
  done
  sleep 3
  cap "J0_${label}_squeue" root squeue -o '%.4i %.9P %.8j %.6u %.8T %.10l %.5C %.12b %.20S %r'
  cap "J0_${label}_squeue_%r" root squeue -h -o '%i %r'
  local id
  for id in $(C squeue -h -o %i); do
    cap "J0_${label}_show_job_$id" root scontrol show job "$id"
  done
  cancel_all
  root "J0_${label}_delete" scontrol delete reservation "p_$label"
}
probe full_node Users=root Nodes=node1 -- -J j0_a -t 5 --wrap 'sleep 30'
probe full_node_maint Users=root Nodes=node1 Flags=MAINT -- -J j0_a -t 5 --wrap 'sleep 30'
probe nodes_all Users=root Nodes=ALL -- -J j0_a -t 5 --wrap 'sleep 30'
probe partition_gpu Users=root PartitionName=gpu -- -J j0_a -t 5 --wrap 'sleep 30' -- -J j0_dbg -p debug -t 5 --wrap 'sleep 30'
probe corecnt2 Users=root CoreCnt=2 -- -J j0_a -t 5 --wrap 'sleep 30'
probe gpu_partial_gpu3 Users=root TRES=cpu=1,gres/gpu=2 -- -J j0_gpu3 -t 5 --gres=gpu:3 --wrap 'sleep 30'
probe gpu_partial_cpu2 Users=root TRES=cpu=1,gres/gpu=2 -- -J j0_cpu2 -t 5 -c 2 --wrap 'sleep 30'
probe gpu_partial_gpu2 Users=root TRES=cpu=1,gres/gpu=2 -- -J j0_gpu2 -t 5 --gres=gpu:2 --wrap 'sleep 30'
probe gpu_only Users=root TRES=gres/gpu=2 -- -J j0_gpu1 -t 5 --gres=gpu:1 --wrap 'sleep 30'

# ------------------------------------------------------------------ J1. MAINT, whole node ---
section "J1. a MAINT reservation of the whole node, with jobs outside and inside it" \
  "maint_j: Nodes=node1 Flags=MAINT Users=alice, starting 75 s after it is made, 1 minute. Outside it: j1_wait" \
  "(alice, -t 5, gpu:1: overlaps it, so waits until it ends), j1_short (alice, -t 1: ends before it starts, so" \
  "runs at once). Inside it (--reservation=maint_j): j1_fits (-t 1, sleep 20) and j1_overrun (-t 5, sleep 600: its" \
  "time limit runs past the reservation's end); j1_late (-c 2, submitted while it is active: cannot start before" \
  "it ends, as j1_overrun holds a CPU). \`later\` is an INACTIVE reservation in 2030, there to be listed."
RC J1_create_later ReservationName=later StartTime=2030-04-01T10:00:00 Duration=60 Users=alice CoreCnt=1
S1=$(( $(date +%s) + 75 )); E1=$((S1 + 60))
RC J1_create_maint_j ReservationName=maint_j StartTime="$(utc $S1)" Duration=1 Users=alice Nodes=node1 Flags=MAINT
note "maint_j starts $(utc $S1), ends $(utc $E1)"
sub J1_sbatch_wait alice -J j1_wait -t 5 --gres=gpu:1 -o /dev/null --wrap 'sleep 20'; J1_WAIT=$JID
sub J1_sbatch_short alice -J j1_short -t 1 -o /dev/null --wrap 'sleep 15'; J1_SHORT=$JID
sub J1_sbatch_fits alice --reservation=maint_j -J j1_fits -t 1 -o /dev/null --wrap 'sleep 20'; J1_FITS=$JID
sub J1_sbatch_overrun alice --reservation=maint_j -J j1_overrun -t 5 -o /dev/null --wrap 'sleep 600'; J1_OVER=$JID
note "jobs: j1_wait=$J1_WAIT j1_short=$J1_SHORT j1_fits=$J1_FITS j1_overrun=$J1_OVER"
sleep 3
SQ='%.4i %.9P %.10j %.6u %.8T %.10M %.10l %.12b %.20S %.10v %r'
jobs_capture() {  # jobs_capture PREFIX IDS...
  local p=$1 id; shift
  cap "${p}_squeue" root squeue
  cap "${p}_squeue_%i_%r_%v" root squeue -o '%i %r %v'
  cap "${p}_squeue_long" root squeue -o "$SQ"
  for id in "$@"; do [ -n "$id" ] && cap "${p}_show_job_$id" root scontrol show job "$id"; done
}
jobs_capture J1_before "$J1_WAIT" "$J1_SHORT" "$J1_FITS" "$J1_OVER"
cap J1_before_squeue_%v root squeue -o %v
cap J1_before_squeue_-R root squeue -R maint_j
cap J1_before_squeue_-R_nosuch root squeue -R nosuch
cap J1_before_squeue_%v.as-alice alice squeue -o '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %v'
root J1_before_show_reservation scontrol show reservation
root J1_before_sinfo_-T sinfo -T
root J1_before_sinfo sinfo
root J1_before_sacct sacct -X -j "$J1_WAIT,$J1_SHORT,$J1_FITS,$J1_OVER" -o JobID,JobName,Reservation,State,Timelimit
wait_state "$J1_SHORT" 'COMPLETED' 40 && note "j1_short ended (COMPLETED)"
wait_until $((S1 + 1))
note "maint_j has started"
wait_state "$J1_OVER" 'RUNNING' 60 && note "j1_overrun is RUNNING"
wait_state "$J1_FITS" 'RUNNING|COMPLETED' 30
note "j1_fits: $(job_state "$J1_FITS")"
jobs_capture J1_active "$J1_WAIT" "$J1_FITS" "$J1_OVER"
root J1_active_show_reservation scontrol show reservation
root J1_active_show_res_maint_j_-o scontrol show res maint_j -o
root J1_active_sinfo_-T sinfo -T
root J1_active_sinfo sinfo
root J1_active_sinfo_-N_-l sinfo -N -l
root J1_active_show_node scontrol show node node1
root J1_active_sacct sacct -X -j "$J1_WAIT,$J1_SHORT,$J1_FITS,$J1_OVER" -o JobID,JobName,Reservation,State,Timelimit
root J1_active_sacct_%30 sacct -j "$J1_OVER" -o JobID,Reservation%30,ReservationId,State
root J1_active_delete_busy scontrol delete reservation maint_j
RU J1_active_err_starttime ReservationName=maint_j StartTime="$(utc $((S1 + 600)))"
sub J1_active_sbatch_in_running_resv alice --reservation=maint_j -J j1_late -t 1 -c 2 -o /dev/null --wrap 'sleep 5'; J1_LATE=$JID
sleep 2
cap J1_active_squeue_after_late root squeue -o "$SQ"
wait_until $((E1 + 1))
note "maint_j has ended (by its EndTime)"
wait_state "$J1_OVER" 'TIMEOUT|COMPLETED|CANCELLED|FAILED' 90
note "j1_overrun: $(job_state "$J1_OVER")"
sleep 1
jobs_capture J1_after "$J1_WAIT" "$J1_FITS" "$J1_OVER" "$J1_LATE"
root J1_after_show_reservation scontrol show reservation
root J1_after_sinfo_-T sinfo -T
root J1_after_sinfo sinfo
wait_state "$J1_WAIT" 'RUNNING|COMPLETED' 90 && note "j1_wait: $(job_state "$J1_WAIT")"
cap J1_end_squeue_all root squeue -t all -o "$SQ"
root J1_end_sacct sacct -X -j "$J1_WAIT,$J1_SHORT,$J1_FITS,$J1_OVER${J1_LATE:+,$J1_LATE}" -o JobID,JobName,Reservation,State,Timelimit,Start,End,Elapsed
[ -n "$J1_LATE" ] && root J1_end_show_job_late scontrol show job "$J1_LATE"
root J1_end_show_reservation scontrol show reservation
root J1_end_sacct_steps sacct -j "$J1_OVER" -o JobID,JobName,Reservation,State,ExitCode,Elapsed
cancel_all
delete_all_resv

# ------------------------------------------------------------------ J2. GPUs, part of the node ---
section "J2. a GPU reservation (part of the node) with jobs beside and inside it" \
  "gpu_j: TRES=cpu=1,gres/gpu=2 Users=alice, starting 75 s after it is made, 2 minutes. Beside it (bob, not in it," \
  "submitted in this order): j2_gpu2 (-t 5, gpu:2: fits beside it, runs through it), j2_short (-t 1, gpu:1: ends" \
  "before it starts), j2_gpu3 (-t 5, gpu:3: needs reserved GPUs). Inside it: j2_in (alice, --reservation=gpu_j," \
  "gpu:2, -t 1, sleep 20), j2_in_gpu3 (alice, gpu:3: more than it holds). Then the refused submissions (they use up" \
  "job ids too), and j2_root (root is not in Users= but may use any reservation)."
RC J2_create_later ReservationName=later StartTime=2030-04-01T10:00:00 Duration=60 Users=alice CoreCnt=1
S2=$(( $(date +%s) + 75 )); E2=$((S2 + 120))
RC J2_create_gpu_j ReservationName=gpu_j StartTime="$(utc $S2)" Duration=2 Users=alice TRES=cpu=1,gres/gpu=2
note "gpu_j starts $(utc $S2), ends $(utc $E2)"
root J2_show_gpu_j scontrol show reservation gpu_j
sub J2_sbatch_gpu2 bob -J j2_gpu2 -t 5 --gres=gpu:2 -o /dev/null --wrap 'sleep 300'; J2_GPU2=$JID
sub J2_sbatch_short bob -J j2_short -t 1 --gres=gpu:1 -o /dev/null --wrap 'sleep 15'; J2_SHORT=$JID
sub J2_sbatch_gpu3 bob -J j2_gpu3 -t 5 --gres=gpu:3 -o /dev/null --wrap 'sleep 20'; J2_GPU3=$JID
sub J2_sbatch_in alice --reservation=gpu_j -J j2_in -t 1 --gres=gpu:2 -o /dev/null --wrap 'sleep 20'; J2_IN=$JID
sub J2_sbatch_in_gpu3 alice --reservation=gpu_j -J j2_in_gpu3 -t 1 --gres=gpu:3 -o /dev/null --wrap 'sleep 5'; J2_IN3=$JID
note "jobs: j2_gpu3=$J2_GPU3 j2_gpu2=$J2_GPU2 j2_short=$J2_SHORT j2_in=$J2_IN j2_in_gpu3=$J2_IN3"
# refused submissions
sub J2_err_sbatch_not_allowed bob --reservation=gpu_j -J j2_bob -t 1 -o /dev/null --wrap 'sleep 5'
sub J2_err_sbatch_nosuch alice --reservation=nosuch -J j2_nosuch -t 1 -o /dev/null --wrap 'sleep 5'
sub J2_err_sbatch_two_one_bad alice --reservation=gpu_j,nosuch -J j2_two -t 1 -o /dev/null --wrap 'sleep 5'
cap J2_err_srun_not_allowed bob srun --reservation=gpu_j -t 1 true
cap J2_err_srun_nosuch alice srun --reservation=nosuch -t 1 true
cap J2_err_salloc_not_allowed bob salloc --reservation=gpu_j -t 1 true
cap J2_err_salloc_nosuch alice salloc --reservation=nosuch -t 1 true
sub J2_sbatch_root_not_listed root --reservation=gpu_j -J j2_root -t 1 -o /dev/null --wrap 'sleep 5'; J2_ROOT=$JID
sleep 3
jobs_capture J2_before "$J2_GPU3" "$J2_GPU2" "$J2_SHORT" "$J2_IN" "$J2_IN3" "$J2_ROOT"
root J2_before_show_node scontrol show node node1
root J2_before_sinfo_-T sinfo -T
wait_until $((S2 + 1))
note "gpu_j has started"
wait_state "$J2_IN" 'RUNNING|COMPLETED' 60 && note "j2_in: $(job_state "$J2_IN")"
jobs_capture J2_active "$J2_GPU3" "$J2_GPU2" "$J2_IN" "$J2_IN3" "$J2_ROOT"
root J2_active_show_reservation scontrol show reservation
root J2_active_sinfo_-T sinfo -T
root J2_active_sinfo sinfo
root J2_active_show_node scontrol show node node1
root J2_active_sacct sacct -X -j "$J2_IN" -o JobID,Reservation,State
root J2_active_sacct_all sacct -X -j "$J2_GPU3,$J2_GPU2,$J2_SHORT,$J2_IN,$J2_IN3${J2_ROOT:+,$J2_ROOT}" -o JobID,JobName,User,Reservation,State,AllocTRES%40
cap J2_active_squeue_%v.as-alice alice squeue -o '%i %j %T %v %r'
RU J2_active_users_plus_bob ReservationName=gpu_j Users+=bob
root J2_active_show_gpu_j scontrol -o show reservation gpu_j
RU J2_active_duration ReservationName=gpu_j Duration=3
root J2_active_show_gpu_j_duration scontrol -o show reservation gpu_j
wait_state "$J2_IN" 'COMPLETED' 60 && note "j2_in COMPLETED"
sleep 1
root J2_done_sacct sacct -X -j "$J2_IN" -o JobID,Reservation,State
root J2_done_sacct_all sacct -X -j "$J2_GPU3,$J2_GPU2,$J2_SHORT,$J2_IN,$J2_IN3${J2_ROOT:+,$J2_ROOT}" -o JobID,JobName,User,Reservation,State,Start,End
cap J2_done_squeue root squeue -t all -o "$SQ"
cancel_all
note "all jobs cancelled; gpu_j is still active"
root J2_done_sinfo_idle_in_active_resv sinfo
root J2_done_show_node_idle_in_active_resv scontrol show node node1
root J2_done_delete_active_no_jobs scontrol delete reservation gpu_j
root J2_done_sinfo_-T sinfo -T
delete_all_resv

# ------------------------------------------------------------------ J3. DAILY / WEEKLY advance ---
section "J3. DAILY and WEEKLY reservations that start, end and move on" \
  "daily_j (CoreCnt=1, Flags=DAILY, Users=alice) and weekly_j (CoreCnt=1, Flags=WEEKLY, Users=alice), both starting" \
  "60 s after they are made, 1 minute; j3_in (alice, --reservation=daily_j, -t 5, sleep 600) runs in daily_j past" \
  "its end."
S3=$(( $(date +%s) + 60 )); E3=$((S3 + 60))
RC J3_create_daily_j ReservationName=daily_j StartTime="$(utc $S3)" Duration=1 Users=alice CoreCnt=1 Flags=DAILY
RC J3_create_weekly_j ReservationName=weekly_j StartTime="$(utc $S3)" Duration=1 Users=alice CoreCnt=1 Flags=WEEKLY
note "daily_j and weekly_j start $(utc $S3), end $(utc $E3)"
sub J3_sbatch_in alice --reservation=daily_j -J j3_in -t 5 -o /dev/null --wrap 'sleep 600'; J3_IN=$JID
sleep 2
root J3_before_show_reservation scontrol show reservation
cap J3_before_squeue root squeue -o "$SQ"
wait_until $((S3 + 1))
wait_state "$J3_IN" 'RUNNING' 60 && note "j3_in RUNNING"
root J3_active_show_reservation scontrol show reservation
root J3_active_sinfo_-T sinfo -T
cap J3_active_squeue root squeue -o "$SQ"
wait_until $((E3 + 1))
note "daily_j and weekly_j have ended (by their EndTime)"
for _ in $(seq 90); do
  [ "$(C scontrol -o show reservation weekly_j | sed -n 's/.* StartTime=\([^ ]*\) .*/\1/p')" != "$(utc $S3)" ] && break
  sleep 1
done
note "weekly_j moved on; j3_in: $(job_state "$J3_IN")"
wait_state "$J3_IN" 'TIMEOUT|COMPLETED|CANCELLED|FAILED' 60
note "j3_in: $(job_state "$J3_IN")"
root J3_after_show_reservation scontrol show reservation
root J3_after_sinfo_-T sinfo -T
cap J3_after_squeue root squeue -t all -o "$SQ"
root J3_after_show_job scontrol show job "$J3_IN"
root J3_after_sacct sacct -j "$J3_IN" -o JobID,JobName,Reservation,ReservationId,State,Elapsed

# ------------------------------------------------------------------ clean up ---
cancel_all
delete_all_resv
log "all jobs cancelled, all reservations deleted; captures in $OUT"
if [ "${RESV_DOWN:-0}" = 1 ]; then "$HERE/down.sh"; fi
exit 0
