#!/usr/bin/env bash
# scripts/real-slurm/up.sh - bring up a real, unmodified Slurm 26.05 (Debian forky packages) for the
# remote-mode tests: slurmctld + slurmd + slurmdbd (MariaDB) + slurmrestd, one node with 4 fake GPUs,
# all chrooted into a debootstrap chroot that is built once and cached (see README.md in this folder).
#
# Usage:  sudo scripts/real-slurm/up.sh [--keep-state] [--rebuild]
#   (default)     stop whatever this chroot still runs, wipe slurm + database state, start fresh (job ids from 1)
#   --keep-state  keep slurmctld state and the accounting database; reuse daemons that are already running
#   --rebuild     throw the cached chroot away and build it again (debootstrap + apt, needs the network)
#
# stdout: only KEY=VALUE lines (safe for `eval "$(up.sh)"` or `up.sh > env`), everything else goes to stderr:
#   REAL_SLURM_URL=http://127.0.0.1:10820    slurmrestd (rest_auth/jwt, data_parser v0.0.42 .. v0.0.45)
#   REAL_SLURM_URL_V42=http://127.0.0.1:10821 .. REAL_SLURM_URL_V45=…:10824   one data_parser each
#   REAL_SLURM_USER=alice                    test user (uid 2001 inside the chroot)
#   REAL_SLURM_TOKEN=<jwt>                   for X-SLURM-USER-NAME/X-SLURM-USER-TOKEN (or Authorization: Bearer)
#   REAL_SLURM_TOKEN_LIFESPAN=14400          seconds
#   REAL_SLURM_WORKDIR=/home/alice           an existing directory of that user inside the chroot (job cwd)
#   REAL_SLURM_CLUSTER=ci26  REAL_SLURM_NODE=node1  REAL_SLURM_VERSION=26.05.x
#   REAL_SLURM_ROOT=<chroot>  REAL_SLURM_SL=<path of ./sl>   (run the cluster's own squeue/sacct: $REAL_SLURM_SL squeue)
#
# Exit status: 0 up; 3 = UNAVAILABLE, the chroot cannot be built or used here (not root, no debootstrap, no
# network for the first build, no disk space, chroot/mount not permitted) -> callers print a loud SKIPPED
# notice; the last stderr line is "real-slurm: UNAVAILABLE: <reason>". 1 = anything else (a real failure:
# the chroot exists but the cluster did not come up; logs under $REAL_SLURM_ROOT/var/log/slurm/).
#
# Environment (all optional):
#   REAL_SLURM_CACHE=/var/cache/slurmlet-real-slurm   cache dir; the chroot is $REAL_SLURM_CACHE/forky
#   REAL_SLURM_MIRROR=http://deb.debian.org/debian     REAL_SLURM_SUITE=forky
#   REAL_SLURM_REST_PORT=10820 REAL_SLURM_CTLD_PORT=10817 REAL_SLURM_SLURMD_PORT=10818 REAL_SLURM_DBD_PORT=10819
#   REAL_SLURM_USER=alice  REAL_SLURM_TOKEN_LIFESPAN=14400
#   REAL_SLURM_NO_APT=1   do not apt-get install debootstrap on the host when it is missing (-> exit 3 instead)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
T0=${EPOCHREALTIME/[.,]/}
log() { local d=$(( (${EPOCHREALTIME/[.,]/} - T0) / 100000 )); printf '[real-slurm/up.sh %4d.%ds] %s\n' $((d / 10)) $((d % 10)) "$*" >&2; }
unavailable() { echo "real-slurm: UNAVAILABLE: $*" >&2; exit 3; }
fail() { echo "real-slurm: FAILED: $*" >&2; exit 1; }

KEEP=0; REBUILD=0
for a in "$@"; do
  case "$a" in
    --keep-state) KEEP=1 ;;
    --rebuild) REBUILD=1 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "up.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

CACHE=${REAL_SLURM_CACHE:-/var/cache/slurmlet-real-slurm}
R=$CACHE/forky
MIRROR=${REAL_SLURM_MIRROR:-http://deb.debian.org/debian}
SUITE=${REAL_SLURM_SUITE:-forky}
CTLD_PORT=${REAL_SLURM_CTLD_PORT:-10817}; SLURMD_PORT=${REAL_SLURM_SLURMD_PORT:-10818}
DBD_PORT=${REAL_SLURM_DBD_PORT:-10819};   REST_PORT=${REAL_SLURM_REST_PORT:-10820}
TUSER=${REAL_SLURM_USER:-alice}
LIFESPAN=${REAL_SLURM_TOKEN_LIFESPAN:-14400}
CLUSTER=ci26
NODE=node1
DB_PASS=slurmlet-ci-local-only   # throwaway password of a socket-only test database inside the chroot
JWT_KEY=/var/spool/slurmctld/jwt_hs256.key
PKGS="munge slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin slurm-wlm-basic-plugins
      slurm-wlm-mysql-plugin slurmdbd mariadb-server curl procps"
# Bump when the build recipe changes: a chroot with another stamp is rebuilt.
RECIPE="1 $SUITE $(echo $PKGS)"
STAMP=.slurmlet-real-slurm-recipe

# ------------------------------------------------------------ prerequisites ---
[ "$(uname -s)" = Linux ] || unavailable "not Linux"
[ "$(id -u)" = 0 ] || unavailable "must run as root (debootstrap, chroot, mount)"
for t in chroot mount umount mknod flock setpriv; do
  command -v $t >/dev/null 2>&1 || unavailable "host tool '$t' missing"
done
mkdir -p "$CACHE" || unavailable "cannot create cache dir $CACHE"
exec 9>"$CACHE/lock"
flock -w 900 9 || unavailable "another up.sh/down.sh holds $CACHE/lock for more than 15 minutes"
export REAL_SLURM_LOCKED=1   # down.sh, called from here, must not wait for our own lock

C() { chroot "$R" "$@" 9>&-; }   # 9 = the lock: daemons must not inherit it
# Paths inside the chroot are looked at and written from inside it: a package may make any of them an
# absolute symlink (forky's slurm daemons are alternatives, /usr/sbin/slurmctld -> /etc/alternatives/…),
# which the host would resolve against its own root.
W() { C sh -c 'cat > "$1"' W "$1"; }   # W PATH < CONTENT : write a file inside the chroot
alive() { p=$(C cat "$1" 2>/dev/null) && [[ "$p" =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null; }
# The programs the cluster is started from, as the packages install them. When one is not there, say what
# the package put in its place (a rolling suite moves things), rather than fail on the guess.
DAEMONS="/usr/sbin/munged /usr/sbin/mariadbd /usr/sbin/slurmdbd /usr/sbin/slurmctld /usr/sbin/slurmd
         /usr/sbin/slurmstepd /usr/sbin/slurmrestd /usr/bin/scontrol /usr/bin/sacctmgr"
require_daemons() {
  local b missing=() found
  for b in $DAEMONS; do C test -x "$b" || missing+=("$b"); done
  [ ${#missing[@]} = 0 ] && return 0
  for b in "${missing[@]}"; do
    echo "real-slurm: $b is not an executable inside the chroot: $(C ls -ld "$b" 2>&1 | sed 's/^ls: //')" >&2
    echo "real-slurm:   it resolves to: $(C readlink -m "$b" 2>&1)" >&2
    found=$(C sh -c 'dpkg -S "$(basename "$1")" 2>/dev/null; command -v "$(basename "$1")"' F "$b" | tr '\n' ' ') || true
    echo "real-slurm:   what the packages install under that name: ${found:-nothing}" >&2
  done
  fail "$(echo "${missing[@]}") missing inside $R (the package layout of $SUITE changed?); rebuild with --rebuild or adjust DAEMONS in up.sh"
}
wait_for() {  # wait_for SECONDS DESCRIPTION CMD...
  local t=$1 what=$2 i; shift 2
  for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "timed out after ${t}s waiting for: $what (logs: $R/var/log/slurm/)"
}
umount_all() {  # umount_all ROOT : everything mounted at or below ROOT/{dev,sys,proc}, deepest first
  local root=$1 m
  for m in $(awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
}
mount_all() {  # proc, a read-only /sys, and a private /dev (never the host's: no fake GPUs on the host)
  local root=$1 i
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || return 1
  if ! mountpoint -q "$root/sys"; then
    mount --bind /sys "$root/sys" || return 1
    mount -o remount,bind,ro "$root/sys" 2>/dev/null || true
  fi
  if ! mountpoint -q "$root/dev"; then
    mount -t tmpfs -o mode=0755,nosuid,size=1m devtmp "$root/dev" || return 1
    { mknod -m 666 "$root/dev/null" c 1 3 && mknod -m 666 "$root/dev/zero" c 1 5 && mknod -m 666 "$root/dev/full" c 1 7 &&
      mknod -m 666 "$root/dev/random" c 1 8 && mknod -m 666 "$root/dev/urandom" c 1 9 && mknod -m 666 "$root/dev/tty" c 5 0; } ||
      return 1
    # 4 fake GPUs for gres.conf (NVIDIA's major 195); only inside the chroot
    for i in 0 1 2 3; do mknod -m 666 "$root/dev/nvidia$i" c 195 $i || return 1; done
    ln -s /proc/self/fd "$root/dev/fd"; ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"; ln -s /proc/self/fd/2 "$root/dev/stderr"
    mkdir -m 755 "$root/dev/pts"; mkdir -m 1777 "$root/dev/shm"
    { mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts" && ln -s pts/ptmx "$root/dev/ptmx"; } || return 1
    mount -t tmpfs -o mode=1777,nosuid,nodev,size=256m shm "$root/dev/shm" || return 1
  fi
}

# ------------------------------------------------------------ chroot: build once, then reuse ---
if [ "$REBUILD" = 1 ] || [ "$(cat "$R/$STAMP" 2>/dev/null)" != "$RECIPE" ]; then
  if [ -d "$R" ]; then
    log "cached chroot $R is missing, incomplete or from another recipe: removing it"
    "$HERE/down.sh" >&2 || true
    umount_all "$R"
    grep -q " $R/" /proc/self/mounts && fail "something is still mounted below $R; not removing it"
    rm -rf --one-file-system "$R"
  fi
  B=$CACHE/forky.building
  umount_all "$B"; rm -rf --one-file-system "$B"
  avail=$(df -Pk "$CACHE" | awk 'NR == 2 {print $4}')
  [ "${avail:-0}" -ge $((2 * 1024 * 1024)) ] || unavailable "less than 2 GiB free in $CACHE for the chroot (~1.2 GB)"
  if ! command -v debootstrap >/dev/null 2>&1; then
    [ "${REAL_SLURM_NO_APT:-0}" = 1 ] && unavailable "debootstrap not installed (apt-get install debootstrap)"
    command -v apt-get >/dev/null 2>&1 || unavailable "debootstrap not installed and no apt-get to install it"
    log "installing debootstrap on the host"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap debian-archive-keyring; } >&2 ||
      unavailable "debootstrap not installed and apt-get install debootstrap failed"
  fi
  DS_SCRIPT=/usr/share/debootstrap/scripts/$SUITE
  [ -e "$DS_SCRIPT" ] || DS_SCRIPT=/usr/share/debootstrap/scripts/sid   # bookworm's debootstrap knows no forky
  [ -e "$DS_SCRIPT" ] || unavailable "debootstrap has neither a $SUITE nor a sid script"
  KEYRING=(); [ -s /usr/share/keyrings/debian-archive-keyring.gpg ] && KEYRING=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 20 -o /dev/null "$MIRROR/dists/$SUITE/Release" 2>/dev/null ||
      unavailable "cannot reach $MIRROR/dists/$SUITE/Release (no network?) to build the chroot"
  fi
  log "debootstrap $SUITE into $B (first build; cached afterwards)"
  debootstrap --variant=minbase "${KEYRING[@]}" --include=ca-certificates "$SUITE" "$B" "$MIRROR" "$DS_SCRIPT" \
    > "$CACHE/debootstrap.log" 2>&1 || { tail -5 "$CACHE/debootstrap.log" >&2; umount_all "$B";
      unavailable "debootstrap $SUITE failed (log: $CACHE/debootstrap.log)"; }
  log "debootstrap done"
  printf '#!/bin/sh\nexit 101\n' > "$B/usr/sbin/policy-rc.d"; chmod +x "$B/usr/sbin/policy-rc.d"  # no service starts from dpkg
  echo 'Acquire::Check-Valid-Until "false";' > "$B/etc/apt/apt.conf.d/99no-valid-until"   # a testing Release may expire
  echo 'Acquire::Retries "3";' > "$B/etc/apt/apt.conf.d/99retries"
  cp /etc/resolv.conf "$B/etc/resolv.conf" 2>/dev/null || true
  mount_all "$B" || { umount_all "$B"; unavailable "cannot mount proc/sys/dev into $B (no CAP_SYS_ADMIN?)"; }
  log "apt-get install in the chroot: $(echo $PKGS)"
  # shellcheck disable=SC2086
  if ! { chroot "$B" apt-get update -q && chroot "$B" env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -q --no-install-recommends $PKGS; } > "$CACHE/apt.log" 2>&1; then
    tail -5 "$CACHE/apt.log" >&2; umount_all "$B"
    unavailable "apt-get install in the $SUITE chroot failed (log: $CACHE/apt.log)"
  fi
  chroot "$B" apt-get clean
  log "apt done"
  chroot "$B" useradd -m -u 2001 -s /bin/bash "$TUSER"
  chroot "$B" useradd -r -M -s /usr/sbin/nologin slurmrest
  umount_all "$B"
  echo "$RECIPE" > "$B/$STAMP"
  mv "$B" "$R"
  log "chroot cached at $R ($(du -sh --one-file-system "$R" | cut -f1))"
else
  log "reusing cached chroot $R"
fi
require_daemons
C id "$TUSER" >/dev/null 2>&1 || C useradd -m -s /bin/bash "$TUSER"

# ------------------------------------------------------------ fresh start unless --keep-state ---
if [ "$KEEP" = 0 ]; then
  "$HERE/down.sh" --quiet >&2 || true
fi
mount_all "$R" || { umount_all "$R"; unavailable "cannot mount proc/sys/dev into $R (no CAP_SYS_ADMIN?)"; }
C true || unavailable "cannot chroot into $R"
NODE_HOST=$(hostname -s 2>/dev/null || cat /proc/sys/kernel/hostname)
printf '127.0.0.1 localhost %s\n::1 localhost ip6-localhost\n' "$NODE_HOST" | W /etc/hosts

C install -d -o munge -g munge -m 0755 /run/munge
C install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
C install -d -o mysql -g mysql -m 0755 /run/mysqld
C install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld /var/log/slurm
C install -d -m 0755 /var/spool/slurmd /etc/slurm
if [ "$KEEP" = 0 ]; then
  log "wiping slurm state, logs and the accounting database"
  C sh -c 'rm -rf /var/spool/slurmctld/* /var/spool/slurmd/* /var/log/slurm/* /var/lib/mysql'
  C install -d -o mysql -g mysql -m 0755 /var/lib/mysql
fi
C test -s $JWT_KEY || head -c 32 /dev/urandom | W $JWT_KEY
C chown slurm:slurm $JWT_KEY; C chmod 0600 $JWT_KEY

# ------------------------------------------------------------ configuration ---
REAL_MEM=$(( $(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo) - 1024 ))
[ "$REAL_MEM" -gt 8000 ] && REAL_MEM=8000   # the same on every CI machine; config_overrides allows more than exists
W /etc/slurm/slurm.conf <<CONF
# Generated by scripts/real-slurm/up.sh (slurmlet CI: Slurm 26.05 in a cached debootstrap chroot)
ClusterName=$CLUSTER
SlurmctldHost=$NODE_HOST(127.0.0.1)
SlurmUser=slurm
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
CredType=cred/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# the node is declared, not probed: the same cluster on any machine
SlurmdParameters=config_overrides
# no cgroups inside the chroot -> /proc walk process tracking, no task containment
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
MaxJobCount=20000
MinJobAge=300
KillWait=5
InactiveLimit=0
Waittime=0
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_script,job_env
JobCompType=jobcomp/none
NodeName=$NODE NodeHostname=$NODE_HOST NodeAddr=127.0.0.1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=$REAL_MEM Gres=gpu:4 State=UNKNOWN
PartitionName=gpu   Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=ALL Default=NO  MaxTime=00:30:00 State=UP
CONF
W /etc/slurm/gres.conf <<CONF
# 4 fake GPUs (character devices 195:0..3 made with mknod in the chroot's private /dev)
AutoDetect=off
NodeName=$NODE Name=gpu File=/dev/nvidia[0-3]
CONF
echo "CgroupPlugin=disabled" | W /etc/slurm/cgroup.conf
W /etc/slurm/slurmdbd.conf <<CONF
# Generated by scripts/real-slurm/up.sh
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=slurm
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
CONF
C chmod 0644 /etc/slurm/slurm.conf /etc/slurm/gres.conf /etc/slurm/cgroup.conf
C chown slurm:slurm /etc/slurm/slurmdbd.conf; C chmod 0600 /etc/slurm/slurmdbd.conf

# ------------------------------------------------------------ munge ---
C test -s /etc/munge/munge.key || { C mungekey -c -f >/dev/null 2>&1 || C create-munge-key -f; C chown munge:munge /etc/munge/munge.key; }
if alive /run/munge/munged.pid; then log "munged already running"; else
  log "starting munged"; C rm -f /run/munge/munged.pid
  C runuser -u munge -- /usr/sbin/munged
  wait_for 10 munged chroot "$R" sh -c 'munge -n | unmunge'
fi

# ------------------------------------------------------------ mariadb + slurmdbd ---
if ! C test -d /var/lib/mysql/mysql; then
  log "initialising the mariadb data dir"
  C mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db --auth-root-authentication-method=socket >/dev/null 2>&1 ||
    fail "mariadb-install-db failed"
fi
if alive /run/mysqld/mysqld.pid; then log "mariadbd already running"; else
  log "starting mariadbd (unix socket only)"
  C rm -f /run/mysqld/mysqld.sock
  nohup chroot "$R" /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --skip-networking \
    --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/mysqld.pid \
    --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900 --innodb-snapshot-isolation=OFF \
    --log-error=/var/log/slurm/mariadb.log 9>&- >/dev/null 2>&1 &
  wait_for 60 mariadb chroot "$R" mariadb-admin --protocol=socket ping
fi
C mariadb --protocol=socket -u root <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
if alive /run/slurmdbd.pid; then log "slurmdbd already running"; else
  log "starting slurmdbd"; C /usr/sbin/slurmdbd
  wait_for 90 slurmdbd chroot "$R" sacctmgr -n list cluster
fi
C sacctmgr -n -P list cluster format=cluster | grep -qx $CLUSTER || C sacctmgr -i add cluster $CLUSTER >/dev/null
C sacctmgr -n -P list account format=account | grep -qx research ||
  C sacctmgr -i add account research Cluster=$CLUSTER Description=ci Organization=ci >/dev/null
for u in root "$TUSER"; do
  C sacctmgr -n -P list assoc cluster=$CLUSTER user="$u" account=research format=user | grep -qx "$u" ||
    C sacctmgr -i add user "$u" Account=research DefaultAccount=research Cluster=$CLUSTER >/dev/null
done

# ------------------------------------------------------------ slurmctld, slurmd ---
if alive /run/slurmctld.pid; then log "slurmctld already running; scontrol reconfigure"; C scontrol reconfigure || true
else log "starting slurmctld"; C /usr/sbin/slurmctld; fi
wait_for 60 slurmctld chroot "$R" scontrol ping
if alive /run/slurmd.pid; then log "slurmd already running"; else log "starting slurmd"; C /usr/sbin/slurmd -N $NODE; fi
node_ready() { chroot "$R" sinfo -h -n $NODE -o '%t' | grep -Eq '^(idle|mix|alloc)'; }
if ! (wait_for 60 "node $NODE idle" node_ready) 2>/dev/null; then
  C scontrol update NodeName=$NODE State=RESUME || true
  wait_for 30 "node $NODE idle after resume" node_ready
fi

# ------------------------------------------------------------ slurmrestd ---
# The cluster's slurmrestd serves every data_parser (v0.0.42 .. v0.0.45). Beside it, one more
# per version that serves only that one (ports REST_PORT+1 .. +4), for the tests of what the
# commands do with a cluster that does not speak v0.0.43.
start_rest() {  # start_rest NAME PORT [SLURMRESTD OPTIONS...]
  local name=$1 port=$2; shift 2
  if alive /run/$name.pid; then log "$name already running"; return; fi
  log "starting $name on 127.0.0.1:$port (rest_auth/jwt${*:+, $*})"
  C touch /var/log/slurm/$name.log; C chown slurmrest /var/log/slurm/$name.log
  local log; log=$(C readlink -f /var/log/slurm/$name.log)
  # chroot and setpriv exec in place, so $! is slurmrestd itself (a host pid); it refuses to run as root/SlurmUser
  SLURM_JWT=daemon nohup chroot "$R" setpriv --reuid=slurmrest --regid=slurmrest --init-groups -- \
    /usr/sbin/slurmrestd -a rest_auth/jwt "$@" 127.0.0.1:$port 9>&- >>"$R$log" 2>&1 &
  echo $! | W /run/$name.pid
}
start_rest slurmrestd "$REST_PORT"
for v in 42 43 44 45; do start_rest slurmrestd-v$v $((REST_PORT + v - 41)) -d data_parser/v0.0.$v; done
for port in "$REST_PORT" $((REST_PORT + 1)) $((REST_PORT + 2)) $((REST_PORT + 3)) $((REST_PORT + 4)); do
  wait_for 20 "slurmrestd on $port" chroot "$R" curl -s -o /dev/null 127.0.0.1:$port/openapi/v3
done

TOKEN=$(C scontrol token username="$TUSER" lifespan="$LIFESPAN" | sed -n 's/^SLURM_JWT=//p')
[ -n "$TOKEN" ] || fail "scontrol token username=$TUSER returned no token"
code=$(C curl -s -o /dev/null -w '%{http_code}' -H "X-SLURM-USER-NAME: $TUSER" -H "X-SLURM-USER-TOKEN: $TOKEN" \
  http://127.0.0.1:$REST_PORT/slurmdb/v0.0.43/jobs) || true
[ "$code" = 200 ] || fail "GET /slurmdb/v0.0.43/jobs with the new token gave HTTP $code (logs: $R/var/log/slurm/)"
VERSION=$(C sinfo -V | awk '{print $2}')
log "cluster $CLUSTER up: slurm $VERSION, slurmrestd http://127.0.0.1:$REST_PORT, user $TUSER"
cat <<OUT
REAL_SLURM_URL=http://127.0.0.1:$REST_PORT
REAL_SLURM_URL_V42=http://127.0.0.1:$((REST_PORT + 1))
REAL_SLURM_URL_V43=http://127.0.0.1:$((REST_PORT + 2))
REAL_SLURM_URL_V44=http://127.0.0.1:$((REST_PORT + 3))
REAL_SLURM_URL_V45=http://127.0.0.1:$((REST_PORT + 4))
REAL_SLURM_USER=$TUSER
REAL_SLURM_TOKEN=$TOKEN
REAL_SLURM_TOKEN_LIFESPAN=$LIFESPAN
REAL_SLURM_WORKDIR=$(C getent passwd "$TUSER" | cut -d: -f6)
REAL_SLURM_CLUSTER=$CLUSTER
REAL_SLURM_NODE=$NODE
REAL_SLURM_VERSION=$VERSION
REAL_SLURM_ROOT=$R
REAL_SLURM_SL=$HERE/sl
OUT
