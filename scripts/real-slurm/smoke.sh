#!/usr/bin/env bash
# scripts/real-slurm/smoke.sh [ENV_FILE] - end-to-end check of the cluster up.sh started, with curl + jq only:
# ping, submit a GPU job (tres_per_node gres/gpu:1), see it RUNNING in GET /slurm/v0.0.43/jobs with a GPU,
# DELETE it, see it CANCELLED, find it in GET /slurmdb/v0.0.43/jobs. Reads the KEY=VALUE lines up.sh printed
# (from ENV_FILE, or from the environment). Exit 0 when all pass; prints one line per step with its time.
set -euo pipefail
if [ $# -ge 1 ]; then set -a; . "$1"; set +a; fi
: "${REAL_SLURM_URL:?run up.sh first}" "${REAL_SLURM_USER:?}" "${REAL_SLURM_TOKEN:?}" "${REAL_SLURM_WORKDIR:?}"
for t in curl jq; do command -v $t >/dev/null || { echo "smoke.sh: needs $t" >&2; exit 1; }; done
V=v0.0.43
AUTH=(-H "X-SLURM-USER-NAME: $REAL_SLURM_USER" -H "X-SLURM-USER-TOKEN: $REAL_SLURM_TOKEN")
now() { echo "${EPOCHREALTIME/[.,]/}"; }
T=$(now)
step() { local t; t=$(now); printf 'ok %-58s %6d ms\n' "$1" $(((t - T) / 1000)); T=$t; }
die() { echo "FAIL: $*" >&2; exit 1; }
api() {  # api METHOD PATH [BODY] -> body on stdout; non-2xx is a failure
  local m=$1 p=$2 out code; shift 2
  out=$(mktemp)
  code=$(curl -sS -o "$out" -w '%{http_code}' -X "$m" "${AUTH[@]}" ${1:+-H 'Content-Type: application/json' --data "$1"} \
    "$REAL_SLURM_URL$p")
  [[ "$code" == 2* ]] || { cat "$out" >&2; rm -f "$out"; die "$m $p -> HTTP $code"; }
  cat "$out"; rm -f "$out"
}
# wait_for_state WANT TRIES CMD... : runs CMD (which prints a state) every 0.2 s until it prints
# WANT, at most TRIES times; the last state seen is left in $state.
wait_for_state() {
  local want=$1 tries=$2 i; shift 2
  for ((i = 0; i < tries; i++)); do state=$("$@"); [ "$state" = "$want" ] && return 0; sleep 0.2; done
  return 1
}
job_state() { api GET /slurm/$V/job/$JOB | jq -r '.jobs[0].job_state | join(",")'; }
db_state() {
  api GET "/slurmdb/$V/jobs?users=$REAL_SLURM_USER" |
    jq -r --argjson j "$JOB" '.jobs[] | select(.job_id == $j) | .state.current | join(",")'
}

api GET /slurm/$V/ping | jq -e '.pings[0].pinged == "UP" and .errors == []' >/dev/null || die "ping not UP"
step "GET /slurm/$V/ping: UP"

body=$(jq -n --arg cwd "$REAL_SLURM_WORKDIR" '{job: {name: "smoke-gpu", partition: "gpu", tres_per_node: "gres/gpu:1",
  time_limit: 5, tasks: 1, current_working_directory: $cwd, standard_output: "smoke-%j.out",
  environment: ["PATH=/usr/bin:/bin"], script: "#!/bin/bash\necho CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\nsleep 300\n"}}')
JOB=$(api POST /slurm/$V/job/submit "$body" | jq -e '.job_id') || die "submit returned no job_id"
step "POST /slurm/$V/job/submit (gres/gpu:1): job $JOB"

wait_for_state RUNNING 100 job_state || die "job $JOB is $state, not RUNNING after 20 s"
step "job $JOB RUNNING"

api GET /slurm/$V/jobs | jq -e --argjson j "$JOB" '.jobs[] | select(.job_id == $j) |
  (.gres_detail[0] | startswith("gpu:1")) and (.tres_per_node == "gres/gpu:1")' >/dev/null ||
  die "GET /slurm/$V/jobs: job $JOB missing or without its GPU"
step "GET /slurm/$V/jobs: job $JOB has gres_detail gpu:1"

if [ -n "${REAL_SLURM_ROOT:-}" ] && [ -r "$REAL_SLURM_ROOT$REAL_SLURM_WORKDIR" ]; then   # (root only: the home is 0700)
  f=$REAL_SLURM_ROOT$REAL_SLURM_WORKDIR/smoke-$JOB.out
  for _ in $(seq 50); do grep -q CUDA_VISIBLE_DEVICES= "$f" 2>/dev/null && break; sleep 0.2; done
  grep -qx 'CUDA_VISIBLE_DEVICES=[0-3]' "$f" || die "job output $f: $(cat "$f" 2>/dev/null)"
  step "job output: $(cat "$f")"
fi

api DELETE /slurm/$V/job/$JOB | jq -e '.status == [] and .errors == []' >/dev/null || die "DELETE job $JOB"
step "DELETE /slurm/$V/job/$JOB"
wait_for_state CANCELLED 100 job_state || die "job $JOB is $state after DELETE"
step "job $JOB CANCELLED"

wait_for_state CANCELLED 150 db_state || die "GET /slurmdb/$V/jobs: job $JOB is '${state:-missing}', not CANCELLED"
step "GET /slurmdb/$V/jobs: job $JOB CANCELLED"
echo "smoke.sh: all passed against $REAL_SLURM_URL"
