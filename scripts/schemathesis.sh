#!/usr/bin/env bash
# Runs schemathesis (property-based API testing) against a daemon of its own, with the
# OpenAPI document the daemon serves at /openapi/v3. Not part of CI: it takes minutes.
#
#   scripts/schemathesis.sh [EXAMPLES] [SECONDS] [-- MORE ST ARGUMENTS]
#
# EXAMPLES is the most test cases per operation and phase (default 300); SECONDS bounds the
# whole run (default 1200). What it does:
#
# * builds slurmlet (debug; CARGO_TARGET_DIR is honoured) and copies the binary into a
#   temporary directory, which also holds the daemon's configuration (8 CPUs, 16 GB, 4 fake
#   GPUs, two partitions), state, socket and working directory;
# * starts the daemon there and, since it serves only a Unix socket, a socat bridge from
#   127.0.0.1:PORT to it; run as root, both run as `nobody`, so that the jobs the generated
#   requests submit (random scripts, output paths, working directories) run with no rights;
# * installs schemathesis into a virtual environment ($ST_VENV, default
#   ~/.cache/slurmlet/venv-st) unless one is there;
# * runs `st run` with every check (scripts/schemathesis.toml says which statuses count as
#   accepted and rejected, and why), all phases, a report under target/schemathesis/;
# * checks that the daemon still answers a ping afterwards, and stops it.
#
# The exit status is schemathesis's, or 3 if the daemon stopped answering.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

examples=${1:-300}
seconds=${2:-1200}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
port=${ST_PORT:-18643}
venv=${ST_VENV:-$HOME/.cache/slurmlet/venv-st}
target=${CARGO_TARGET_DIR:-$repo/target}

for tool in socat python3 curl; do
    command -v "$tool" >/dev/null || { echo "schemathesis.sh: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done

if [ ! -x "$venv/bin/st" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet schemathesis
fi

cargo build --bin slurmlet

work=$(mktemp -d /tmp/slurmlet-st.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/work" "$work/state" "$work/run"
cp "$target/debug/slurmlet" "$work/bin/slurmlet"
ln -s slurmlet "$work/bin/slurmletd"
cat >"$work/slurmlet.toml" <<EOF
cluster_name = "stcluster"
node_name = "stnode"
cpus = 8
memory = 16000
gpus = 4
kill_wait = 2
min_job_age = 30
state_dir = "$work/state"
socket = "$work/run/slurmlet.sock"

[[partitions]]
name = "gpu"
default = true

[[partitions]]
name = "short"
max_time = "30:00"
EOF

as_user=()
if [ "$(id -u)" -eq 0 ]; then
    chown -R nobody:nogroup "$work"
    chmod 755 "$work"
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env)
fi

(cd "$work/work" && exec "${as_user[@]}" env HOME="$work/work" "$work/bin/slurmletd" --config "$work/slurmlet.toml" \
    >"$work/daemon.log" 2>&1) &
pids+=($!)
for _ in $(seq 200); do [ -S "$work/run/slurmlet.sock" ] && break; sleep 0.05; done
"${as_user[@]}" socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$work/run/slurmlet.sock" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/slurm/v0.0.43/ping" >/dev/null && break; sleep 0.05; done

report=$target/schemathesis
mkdir -p "$report"
status=0
"$venv/bin/st" --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/openapi/v3" \
    --max-examples "$examples" --max-time "$seconds" --report junit,ndjson --report-dir "$report" "$@" || status=$?

if ! curl -sf "http://127.0.0.1:$port/slurm/v0.0.43/ping" >/dev/null; then
    echo "schemathesis.sh: the daemon no longer answers; its log:" >&2
    tail -n 50 "$work/daemon.log" >&2
    exit 3
fi
if grep -E "panicked|ERROR" "$work/daemon.log" >&2; then
    echo "schemathesis.sh: the daemon logged the errors above" >&2
    status=${status:-0}
    [ "$status" -eq 0 ] && status=4
fi
echo "schemathesis.sh: the daemon still answers; report in $report"
exit "$status"
