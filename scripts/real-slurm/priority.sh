#!/usr/bin/env bash
# scripts/real-slurm/priority.sh - capture, byte for byte, what a real Slurm 26.05 prints for sprio, sshare and
# sacctmgr under priority/multifactor with a known account tree (fixtures for slurmlet's reimplementation).
#
# Usage (as root, after `scripts/real-slurm/up.sh > /tmp/real-slurm.env`):
#   scripts/real-slurm/priority.sh [OUT_DIR]        default OUT_DIR: tests/fixtures/real-slurm-priority
#   PRIORITY_DOWN=1 scripts/real-slurm/priority.sh  ... and run down.sh at the end
#
# What it does (idempotent: safe to run again on the same cluster; a fresh `up.sh` resets everything):
#   1. users bob (2002) and carol (2003) inside the chroot
#   2. a marked block of Priority* settings appended to the chroot's slurm.conf, TRESBillingWeights on the gpu
#      partition line, then `scontrol reconfigure` (a slurmctld restart if that did not take; both checked with
#      `scontrol show config`)
#   3. the account tree (sacctmgr): root -> research (as up.sh made it), physics (share 2; alice, bob),
#      physics -> theory (share 1; bob), chem (share 1; carol); QOS scavenger (Priority=0), high (Priority=100)
#   4. the captures, three times, each with pending jobs of root (4, 2 of them running), alice, bob and carol:
#      fresh/   right after the tree is made (no usage; the decay thread has not seen the new associations yet)
#      settled/ the same after one run of the decay thread (PriorityCalcPeriod=1 minute), still no usage
#      used/    after jobs of alice (2 x 70 s, gpu:1) and carol (70 s) and one more run of the decay thread
#      each output in its own file, stderr in NAME.stderr.txt when non-empty, and INDEX.md with the command
#      line, user, exit status and time of each capture. Takes about 5 minutes.
#   5. cancels all jobs (and runs down.sh with PRIORITY_DOWN=1)
#
# File names: the command's words joined with "_" (e.g. `sshare -l -a` -> sshare_-l_-a.txt); a few with spaces
# or slashes in their arguments have a short name instead (see INDEX.md). `.as-USER` = run as USER, not root.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"
OUT=${1:-$REPO/tests/fixtures/real-slurm-priority}
CLUSTER=ci26

[ "$(id -u)" = 0 ] || die "must run as root"
C scontrol ping >/dev/null 2>&1 || die "the cluster in $R is not up (run scripts/real-slurm/up.sh first)"

# ------------------------------------------------------------------ 1. users ---
for u in bob:2002 carol:2003; do
  name=${u%%:*} uid=${u##*:}
  if ! C id "$name" >/dev/null 2>&1; then
    log "useradd $name (uid $uid) in the chroot"
    C useradd -m -u "$uid" -s /bin/bash "$name" || die "useradd $name"
  fi
done

# ------------------------------------------------------------------ 2. slurm.conf ---
MARK='# --- scripts/real-slurm/priority.sh: multifactor priority ---'
if ! C grep -qxF "$MARK" /etc/slurm/slurm.conf; then
  log "appending the priority block to slurm.conf; TRESBillingWeights on PartitionName=gpu"
  C sh -c 'cat >> /etc/slurm/slurm.conf' <<CONF
$MARK
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=100
PriorityWeightPartition=1000
PriorityWeightQOS=0
PriorityMaxAge=7-0
PriorityDecayHalfLife=7-0
PriorityCalcPeriod=1
PriorityFavorSmall=NO
# --- end of priority.sh block (and TRESBillingWeights added to the PartitionName=gpu line above) ---
CONF
  # A partition can only be defined once, so the option goes onto its existing line.
  C sed -i -E '/^PartitionName=gpu /{/TRESBillingWeights=/!s/$/ TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES\/gpu=10"/}' \
    /etc/slurm/slurm.conf
  RESTART=1
else
  RESTART=0
fi
if [ "$RESTART" = 1 ] || ! C scontrol show config | grep -Eq '^PriorityWeightFairShare += 10000$'; then
  # `scontrol reconfigure` (26.05 re-execs slurmctld) is tried first; a restart when it did not take.
  log "scontrol reconfigure"
  C scontrol reconfigure || true
  for _ in $(seq 50); do C scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  sleep 1
  if ! C scontrol show config | grep -Eq '^PriorityWeightFairShare += 10000$'; then
    log "reconfigure did not pick the weights up: restarting slurmctld"
    p=$(C cat /run/slurmctld.pid); kill -TERM "$p"; for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    C /usr/sbin/slurmctld
    for _ in $(seq 100); do C scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  fi
fi
for kv in 'PriorityType += priority/multifactor' 'PriorityWeightAge += 1000' 'PriorityWeightFairShare += 10000' \
          'PriorityWeightJobSize += 100' 'PriorityWeightPartition += 1000' 'PriorityWeightQOS += 0' \
          'PriorityMaxAge += 7-00:00:00' 'PriorityDecayHalfLife += 7-00:00:00' 'PriorityCalcPeriod += 00:01:00' \
          'PriorityFavorSmall += no'; do
  C scontrol show config | grep -Eq "^$kv\$" || log "WARNING: scontrol show config has no line matching '$kv'"
done
C scontrol show partition gpu | grep -q 'TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=10' ||
  log "WARNING: partition gpu has no TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=10: $(C scontrol show partition gpu | grep -o 'TRESBillingWeights=[^ ]*')"
for _ in $(seq 100); do C sinfo -h -n node1 -o %t | grep -Eq '^(idle|mix|alloc)' && break; sleep 0.2; done

# ------------------------------------------------------------------ 3. accounts, users, QOS ---
sm() { C sacctmgr -i "$@" >/dev/null || log "WARNING: sacctmgr $* -> rc $?"; }
have_acct() { C sacctmgr -n -P list account "$1" format=account | grep -qx "$1"; }
have_assoc() { C sacctmgr -n -P list assoc cluster=$CLUSTER account="$1" user="$2" format=user | grep -qx "$2"; }
have_qos() { C sacctmgr -n -P list qos "$1" format=name | grep -qx "$1"; }
have_acct physics || sm add account physics Cluster=$CLUSTER Parent=root Fairshare=2 Description=physics Organization=physics
have_acct chem    || sm add account chem Cluster=$CLUSTER Parent=root Fairshare=1 Description=chem Organization=chem
have_acct theory  || sm add account theory Cluster=$CLUSTER Parent=physics Fairshare=1 Description=theory Organization=physics
have_assoc physics alice || sm add user alice Account=physics Cluster=$CLUSTER
have_assoc physics bob   || sm add user bob Account=physics DefaultAccount=physics Cluster=$CLUSTER
have_assoc theory bob    || sm add user bob Account=theory Cluster=$CLUSTER
have_assoc chem carol    || sm add user carol Account=chem DefaultAccount=chem Cluster=$CLUSTER
have_qos scavenger || sm add qos scavenger Priority=0
have_qos high      || sm add qos high Priority=100
sleep 1   # slurmdbd -> slurmctld association update

# ------------------------------------------------------------------ helpers for the captures ---
fname() { local IFS=_; echo "$*"; }
cancel_all() {
  local ids; ids=$(C squeue -h -o %i | tr '\n' ' ')
  [ -n "${ids// /}" ] || return 0
  # shellcheck disable=SC2086
  C scancel $ids
  for _ in $(seq 150); do [ -z "$(C squeue -h -t PD,R,CG -o %i)" ] && return 0; sleep 0.2; done
  log "WARNING: jobs still there after scancel: $(C squeue -h -o '%i %T' | tr '\n' ' ')"
}
sub() {  # sub USER ARGS... : sbatch --parsable, prints the job id
  as "$1" sbatch --parsable "${@:2}" | cut -d';' -f1
}
submit_pending() {  # 4 GPU jobs of root hold the node (2 run: 2 CPUs), then the jobs of alice, bob and carol pend
  local i
  for i in 1 2 3 4; do sub root -A research --gres=gpu:1 -J hold$i -o /dev/null --wrap "sleep 600" >/dev/null; done
  for _ in $(seq 50); do [ "$(C squeue -h -t R -o %i | wc -l)" -ge 2 ] && break; sleep 0.2; done
  ALICE_JOB=$(sub alice -A physics --gres=gpu:1 -J a1 -o /dev/null --wrap "sleep 60")
  sub alice -A physics --gres=gpu:1 -J a2 -o /dev/null --wrap "sleep 60" >/dev/null
  sub bob -A theory -J b-theory -o /dev/null --wrap "sleep 60" >/dev/null
  sub bob -A physics -J b-physics -o /dev/null --wrap "sleep 60" >/dev/null
  sub carol -A chem -J c-chem -o /dev/null --wrap "sleep 60" >/dev/null
  sleep 1
}

INDEX=$OUT/INDEX.md
cap_as() {  # cap_as DIR NAME USER CMD... : stdout -> DIR/NAME.txt, stderr -> DIR/NAME.stderr.txt (when non-empty)
  local dir=$1 name=$2 user=$3; shift 3
  local t rc q a
  t=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
  as "$user" "$@" > "$OUT/$dir/$name.txt" 2> "$OUT/$dir/$name.stderr.txt"; rc=$?
  [ -s "$OUT/$dir/$name.stderr.txt" ] || rm -f "$OUT/$dir/$name.stderr.txt"
  q=""; for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_.,=%/:+-]+$ ]]; then q+="$a "; else q+="'$a' "; fi
  done
  q=${q% }
  local err=""; [ -e "$OUT/$dir/$name.stderr.txt" ] && err="\`$name.stderr.txt\`"
  printf '| %s | `%s.txt` | `%s` | %s | %s | %s | %s |\n' "$dir" "$name" "${q//|/\\|}" "$user" "$rc" "$t" "$err" >> "$INDEX"
}
cap() { local dir=$1; shift; cap_as "$dir" "$(fname "$@")" root "$@"; }

capture_all() {  # capture_all DIR
  local d=$1
  mkdir -p "$OUT/$d"; rm -f "$OUT/$d"/*.txt
  log "capturing into $OUT/$d"
  # context first: the jobs that sprio is about
  cap_as "$d" squeue_context root squeue -o '%.6i %.9P %.10j %.8u %.10a %.8T %.10Q %.20S %r'
  # --- sprio (immediately: the age factor grows with time)
  cap "$d" sprio
  cap "$d" sprio -l
  cap "$d" sprio -n
  cap "$d" sprio -w
  cap "$d" sprio -l -n
  cap "$d" sprio -w -n
  cap "$d" sprio -h
  cap "$d" sprio -u alice
  cap "$d" sprio -A physics
  cap_as "$d" sprio_-j_ID root sprio -j "$ALICE_JOB"
  cap "$d" sprio -p gpu
  cap "$d" sprio -p debug
  cap "$d" sprio -S -y
  cap "$d" sprio -S y
  cap_as "$d" sprio_-o_all root sprio -o '%.15i %9r %.8u %.10o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.10N %.20T'
  cap_as "$d" sprio_-o_fairshare root sprio -o '%i|%u|%o|%r|%Y|%y|%F|%f|%A|%a|%J|%j|%P|%p|%Q|%q|%B|%b|%S|%N|%T|%t'
  cap_as "$d" sprio_--format_default_long root sprio --format '%.15i %9r %.8u %.10Y %.10S %.10A %.10F %.10J %.10P %.10Q %.20T'
  cap_as "$d" sprio.as-alice alice sprio
  cap "$d" sprio --help
  cap "$d" sprio --usage
  cap "$d" sprio --helpformat
  # --- sshare
  cap "$d" sshare
  cap "$d" sshare -a
  cap "$d" sshare -l
  cap "$d" sshare -l -a
  cap "$d" sshare -P -a
  cap "$d" sshare -p -a
  cap "$d" sshare -n -a
  cap "$d" sshare -P -l -a
  cap "$d" sshare -A physics
  cap "$d" sshare -A physics -a
  cap "$d" sshare -u bob
  cap "$d" sshare -u bob -a
  cap "$d" sshare -m -a
  cap "$d" sshare -a -o Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,LevelFS
  cap_as "$d" sshare_-U_--format_Account%256_--noheader alice sshare -U --format Account%256 --noheader
  cap_as "$d" sshare.as-alice alice sshare
  cap_as "$d" sshare_-a.as-alice alice sshare -a
  cap_as "$d" sshare_-U.as-alice alice sshare -U
  cap_as "$d" sshare.as-bob bob sshare
  cap "$d" sshare --help
  cap "$d" sshare --helpformat
  # --- sacctmgr
  cap "$d" sacctmgr show assoc
  cap "$d" sacctmgr -P show assoc
  cap "$d" sacctmgr -p show assoc
  cap "$d" sacctmgr -n show assoc
  cap "$d" sacctmgr show assoc tree
  cap "$d" sacctmgr show assoc format=Cluster,Account,User,Partition,Fairshare,ParentName,QOS,DefaultQOS
  cap "$d" sacctmgr show assoc tree format=Account,User,Fairshare,ParentName
  cap "$d" sacctmgr show assoc where user=bob
  cap "$d" sacctmgr -n -s list user alice format=account%256
  cap_as "$d" sacctmgr_-n_-s_list_user_alice_format=account%256.as-alice alice sacctmgr -n -s list user alice format=account%256
  cap "$d" sacctmgr show user
  cap "$d" sacctmgr show user -s
  cap "$d" sacctmgr show user withassoc
  cap "$d" sacctmgr show account
  cap "$d" sacctmgr show account -s
  cap "$d" sacctmgr show account withassoc
  cap "$d" sacctmgr show qos
  cap "$d" sacctmgr show qos format=name,priority
  cap "$d" sacctmgr -P show qos
  cap "$d" sacctmgr show cluster
  cap "$d" sacctmgr show tres
  cap "$d" sacctmgr -i add account x
  cap "$d" sacctmgr -i delete account x
  cap "$d" sacctmgr -i delete account doesnotexist
  # config as the cluster saw it
  cap_as "$d" scontrol_show_config_priority root sh -c 'scontrol show config | grep -E "^Priority|^AccountingStorageTRES"'
  cap "$d" scontrol show partition gpu
}

mkdir -p "$OUT"
{
  echo "# Real Slurm $(C sinfo -V | awk '{print $2}') captures: sprio, sshare, sacctmgr under priority/multifactor"
  echo
  echo "Made by \`scripts/real-slurm/priority.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) (cluster $CLUSTER, node node1, 2 CPUs, gpu:4;"
  echo "see NOTES.md). Every command ran inside the chroot through \`scripts/real-slurm/sl\` as the user shown"
  echo "(\`SL_USER=USER sl CMD...\`). stdout is \`FILE\`, stderr (only when non-empty) the file in the last column."
  echo
  echo "slurm.conf additions:"
  echo
  echo '```'
  C cat /etc/slurm/slurm.conf | awk -v m="$MARK" '$0 == m {on = 1} on' 
  C grep '^PartitionName=gpu' /etc/slurm/slurm.conf
  echo '```'
  echo
  echo "| phase | file | command | user | exit | captured at (UTC) | stderr |"
  echo "|---|---|---|---|---|---|---|"
} > "$INDEX"

if C sshare -n -P -a -o RawUsage | grep -qv '^0$'; then
  log "WARNING: the cluster already has usage: fresh/ will not be fresh (run up.sh first for a clean start)"
fi

# ------------------------------------------------------------------ 4a. fresh: no usage, pending jobs ---
cancel_all
log "fresh: submitting the pending jobs"
submit_pending
echo "| fresh | | _jobs submitted; ALICE_JOB=${ALICE_JOB}_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
capture_all fresh

# ------------------------------------------------------------------ 4b. settled: no usage, one calc period later ---
# New associations have no fair-share values until the decay thread's next run (every PriorityCalcPeriod): in
# fresh/ the new users show FairShare 0.000000, their accounts an empty LevelFS, and their jobs a zero fair-share
# factor. settled/ is the same tree after one run of the decay thread, still without any usage.
log "settled: cancelling, then waiting for the next PriorityCalcPeriod run (fair-share values of the new associations)"
cancel_all
echo "| settled | | _all jobs cancelled_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
fs_of() { C sshare -n -P -a -o Account,User,FairShare | awk -F'|' -v a="$1" -v u="$2" '$1 ~ "^ *"a"$" && $2 == u {print $3}'; }
for _ in $(seq 150); do [ "$(fs_of chem carol)" != 0.000000 ] && break; sleep 1; done
echo "| settled | | _decay thread ran: FairShare of carol/chem is $(fs_of chem carol)_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
submit_pending
echo "| settled | | _jobs submitted; ALICE_JOB=${ALICE_JOB}_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
capture_all settled

# ------------------------------------------------------------------ 4c. used: after jobs of alice and carol ---
# Usage is only added by the decay thread (every PriorityCalcPeriod), for the time a job ran since the previous
# run; what a job runs after the last run before it ends is never counted (checked on this 26.05.5: a 100 s job
# got 18 s + 60 s of usage, the last 22 s were lost; 20 s jobs between two runs got no usage at all). So the
# jobs here run 70 s (> one period) to be sure that each is counted.
log "used: cancelling, then jobs of alice (2 x 70 s, gpu:1, physics) and carol (70 s, chem)"
cancel_all
echo "| used | | _all jobs cancelled_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
sub alice -A physics --gres=gpu:1 -J u-a1 -o /dev/null --wrap "sleep 70" >/dev/null
sub alice -A physics --gres=gpu:1 -J u-a2 -o /dev/null --wrap "sleep 70" >/dev/null
sub carol -A chem -J u-c1 -o /dev/null --wrap "sleep 70" >/dev/null
echo "| used | | _jobs submitted (alice 2 x 70 s gpu:1 physics, carol 70 s chem; 2 CPUs: carol's starts when alice's end)_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
for _ in $(seq 200); do [ -z "$(C squeue -h -t PD,R,CG -o %i)" ] && break; sleep 1; done
END=$(date +%s)
echo "| used | | _jobs ended_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
log "jobs ended; waiting for one more PriorityCalcPeriod run (fair-share values from the final usage)"
usage_of() { C sshare -n -P -a -o Account,User,RawUsage | awk -F'|' -v a="$1" -v u="$2" '$1 ~ "^ *"a"$" && $2 == u {print $3}'; }
for _ in $(seq 180); do
  ua=$(usage_of physics alice); uc=$(usage_of chem carol)
  [ "${ua:-0}" != 0 ] && [ "${uc:-0}" != 0 ] && [ $(( $(date +%s) - END )) -ge 62 ] && break
  sleep 1
done
log "RawUsage alice/physics=${ua:-?} carol/chem=${uc:-?}"
echo "| used | | _usage counted: RawUsage alice/physics=${ua:-?} carol/chem=${uc:-?}_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
log "used: submitting the pending jobs again"
submit_pending
echo "| used | | _jobs submitted; ALICE_JOB=${ALICE_JOB}_ | | | $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) | |" >> "$INDEX"
capture_all used

# ------------------------------------------------------------------ 5. clean up ---
cancel_all
log "all jobs cancelled; captures in $OUT"
if [ "${PRIORITY_DOWN:-0}" = 1 ]; then "$HERE/down.sh"; fi
exit 0
