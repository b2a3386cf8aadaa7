#!/usr/bin/env bash
# scripts/dist/upgrade.sh OLD_DEB NEW_DEB [SUITE]: an upgrade keeps every job. In a fresh copy
# of the clean chroot (sandbox.sh): OLD_DEB installed and its daemon started as the unit
# starts it; alice and bob submit jobs that complete, fail, are held, run on a GPU, run as an
# array and are requeued; NEW_DEB installed over it with `dpkg -i`, and the daemon restarted
# as systemd restarts it (SIGTERM to the daemon alone, KillMode=process; then ExecStart).
# Checked: squeue and sacct list every job as before the upgrade; the running jobs are taken
# back and end COMPLETED with their whole output; the held job runs once released; the store
# was migrated with its copy beside it; then `dpkg -r` and `dpkg -P` do what they say.
# Exit status 1 with what did not hold; 3 (SKIPPED) where no chroot can be had.
set -euo pipefail
kind=upgrade
usage="usage: upgrade.sh OLD_DEB NEW_DEB [SUITE]"
old_deb="$(realpath "${1:?$usage}")"
new_deb="$(realpath "${2:?$usage}")"
suite="${3:-bookworm}"
source "$(dirname "$0")/sandbox.sh"
sandbox "$suite"
unit=/lib/systemd/system/slurmlet.service
# Long enough to be running through the restart, short enough for a quick check.
run_for=20

# listing: every job's id, user and state as squeue lists it, and as sacct lists it (each array
# task and each run of a requeued job on its own line), sorted.
listing() {
    as bob squeue -a -h -o '%i|%u|%T|%r' | sort
    echo "--- sacct"
    as bob sacct -a -D -n -P -X -o JobID,User,State,ExitCode | sort
}

# wait_running ID…: until squeue lists every one of the jobs as RUNNING (30 s).
wait_running() {
    local ids
    ids="$(echo "$@" | tr ' ' ,)"
    for _ in $(seq 300); do
        [ "$(as bob squeue -h -j "$ids" -o %T | sort -u)" = RUNNING ] && return 0
        sleep 0.1
    done
    fail "jobs $* are not all RUNNING after 30 s: $(as bob squeue -a -h -o '%i %T %r')"
}

# wait_ended ID…: until squeue lists none of the jobs (90 s).
wait_ended() {
    for _ in $(seq 900); do
        [ -z "$(as bob squeue -h -j "$(echo "$@" | tr ' ' ,)" -o %i)" ] && return 0
        sleep 0.1
    done
    fail "jobs $* have not ended after 90 s: $(as bob squeue -a -h -o '%i %T %r')"
}

install_deb "$old_deb"
# Only keys every release knows: an older daemon refuses a key it does not know.
cat >>"$root/etc/slurmlet/slurmlet.toml" <<'CONF'
cpus = 16
memory = 4096
gpus = 2
CONF
C useradd -m -s /bin/sh alice
C useradd -m -s /bin/sh bob
start_daemon "$unit"

step "jobs of alice and bob under the old daemon"
completed="$(as alice sbatch --parsable --wait --wrap 'echo finished')" || fail "alice's first job did not complete"
failed="$(as bob sbatch --parsable --wait --wrap 'exit 3')" && fail "bob's job that exits 3 did not fail"
held="$(as alice sbatch --parsable --hold --wrap 'echo released after the upgrade')"
gpu="$(as bob sbatch --parsable --gres=gpu:1 --wrap "echo started on GPU \$CUDA_VISIBLE_DEVICES; sleep $run_for; echo ran through the upgrade")"
array="$(as alice sbatch --parsable --array=0-3 --wrap "sleep $run_for; echo task \$SLURM_ARRAY_TASK_ID done")"
requeued="$(as bob sbatch --parsable --requeue --open-mode=append --wrap "echo run \$SLURM_RESTART_COUNT; sleep $run_for; echo requeued job done")"
wait_running "$gpu" "$array" "$requeued"
as bob scontrol requeue "$requeued" || fail "bob could not requeue his job $requeued"
wait_running "$requeued"
before="$(listing)"
echo "$before" >&2
for id in "$gpu" "${array}_0" "${array}_3" "$requeued" "$held"; do
    echo "$before" | grep -q "^$id|" || fail "the old daemon's squeue does not list job $id: $before"
done
[ "$(echo "$before" | grep -c "^$requeued|.*|REQUEUED|")" = 1 ] ||
    fail "the old daemon's sacct does not list the requeued run of job $requeued: $before"

step "the new package over it, and the daemon restarted as systemd restarts it"
install_deb "$new_deb"
[ "$(C dpkg-query -W -f '${Version}' slurmlet)" = "$(dpkg-deb -f "$new_deb" Version)" ] ||
    fail "dpkg-query does not give the new package's version"
stop_daemon
start_daemon "$unit"
after="$(listing)"
[ "$after" = "$before" ] || fail "the jobs listed after the upgrade differ from before it:
--- before
$before
--- after
$after"
store=/var/lib/slurmlet/slurmlet.db
[ "$(head -c 15 "$root$store.v1.bak")" = "SQLite format 3" ] ||
    fail "$store.v1.bak, the store's copy before its migration, is missing"
grep -q 'job store migrated' "$work/daemon.log" || fail "the new daemon's log does not say the store was migrated"

step "the running jobs end normally under the new daemon"
as alice scontrol release "$held" || fail "alice could not release her held job $held"
wait_ended "$gpu" "$array" "$requeued" "$held"
ended="$(as bob sacct -a -D -n -P -X -o JobID,User,State,ExitCode | sort)"
echo "$ended" >&2
for id in "$completed" "$gpu" "${array}_0" "${array}_1" "${array}_2" "${array}_3" "$held"; do
    echo "$ended" | grep -q "^$id|[a-z]*|COMPLETED|0:0$" || fail "job $id did not end COMPLETED: $ended"
done
echo "$ended" | grep -qx "$failed|bob|FAILED|3:0" || fail "bob's failed job $failed is not FAILED 3:0: $ended"
[ "$(echo "$ended" | grep -c "^$requeued|bob|")" = 2 ] || fail "job $requeued's two runs are not listed: $ended"
echo "$ended" | grep -qx "$requeued|bob|COMPLETED|0:0" || fail "bob's requeued job did not end COMPLETED: $ended"

output() { cat "$root/home/$1/slurm-$2.out" 2>/dev/null; }
[ "$(output bob "$gpu")" = "started on GPU $(output bob "$gpu" | sed -n '1s/^started on GPU \([01]\)$/\1/p')
ran through the upgrade" ] || fail "bob's GPU job $gpu wrote: $(output bob "$gpu")"
for task in 0 1 2 3; do
    [ "$(output alice "${array}_$task")" = "task $task done" ] ||
        fail "alice's array task ${array}_$task wrote: $(output alice "${array}_$task")"
done
[ "$(output bob "$requeued" | tail -n 2)" = "run 1
requeued job done" ] || fail "bob's requeued job $requeued wrote: $(output bob "$requeued")"
[ "$(output alice "$held")" = "released after the upgrade" ] || fail "alice's released job wrote: $(output alice "$held")"

stop_daemon
remove_and_purge
step "passed"
