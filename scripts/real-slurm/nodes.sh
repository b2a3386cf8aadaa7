#!/usr/bin/env bash
# scripts/real-slurm/nodes.sh - a real, unmodified Slurm 26.05 (Debian forky packages) as a multi-host cluster
# on one machine: a controller host and one host per compute node, each in its own network + UTS + mount
# namespace, all running from one debootstrap chroot (see README.md in this folder, "Several nodes").
#
# Usage (root):
#   nodes.sh up CONF_DIR NODE...   start a cluster from CONF_DIR (slurm.conf, gres.conf, cgroup.conf, optional
#                                  munge.key): the controller host (SlurmctldHost=, e.g. "ctl") runs munged +
#                                  slurmctld, each NODE runs munged + a configless slurmd (--conf-server); every
#                                  File= of gres.conf becomes a stand-in device file. Stops what an earlier `up`
#                                  left first, unless `hosts` made just these hosts. stdout: KEY=VALUE lines only.
#   nodes.sh hosts [--ctl HOST] NODE[:DEVICE,...]...
#                                  only the hosts, as machines before Slurm is set up on them: the controller host
#                                  (default "ctl") and each NODE, with namespaces, /etc/hosts, /home, a
#                                  /sys/fs/cgroup of its own and the stand-in device files listed after its name
#                                  (n1:/dev/nvidia[0-1]); no daemon. A later `up` naming the same hosts starts
#                                  Slurm in them (so that a planner can probe them first, through `exec`).
#   nodes.sh down                  stop everything, delete namespaces, links and mounts (idempotent, also after a
#                                  crash); keeps the chroot and the hosts' logs
#   nodes.sh exec HOST CMD...      run CMD in HOST's namespaces inside the chroot (as $NODES_USER, default root,
#                                  in that user's home): nodes.sh exec ctl sinfo ; NODES_USER=alice nodes.sh exec ctl sbatch …
#   nodes.sh smoke [CONF_DIR]      up with CONF_DIR (default: nodes-example/ beside this script) and nodes n1 n2,
#                                  check sinfo / srun -N2 / sbatch -N2 / a GPU job by type, then down
#   nodes.sh status                what is up (hosts, addresses, daemons)
#   nodes.sh env                   the KEY=VALUE lines of the cluster that is up
#
# Environment (all optional):
#   NODES_CACHE=/var/cache/slurmlet-nodes      holds the chroot (forky/), the hosts' state (hosts/) and `lock`
#   NODES_ROOT=$NODES_CACHE/forky              the chroot; when missing it is copied from REAL_SLURM_CACHE's forky/
#                                              (built by up.sh when that is missing too)
#   REAL_SLURM_CACHE=/var/cache/slurmlet-real-slurm
#   NODES_PREFIX=sln                           names: netns sln-HOST, bridge sln-br, veth slnvN
#   NODES_NET=10.77.0                          /24: bridge .1, controller .10, nodes .11, .12, …
#   NODES_USER=root                            user of `exec`
#
# Exit status: 0 ok; 3 UNAVAILABLE (not root, no namespaces/veth/bridge, no chroot can be had; the last stderr
# line is "nodes: UNAVAILABLE: <reason>"); 1 a real failure (logs under $NODES_CACHE/hosts/HOST/log/); 2 usage.
set -Eeuo pipefail
trap 'rc=$?; echo "nodes.sh: FAILED at line $LINENO: $BASH_COMMAND (exit $rc)" >&2' ERR
HERE="$(cd "$(dirname "$0")" && pwd)"
T0=${EPOCHREALTIME/[.,]/}
log() { local d=$(( (${EPOCHREALTIME/[.,]/} - T0) / 100000 )); printf '[real-slurm/nodes.sh %4d.%ds] %s\n' $((d / 10)) $((d % 10)) "$*" >&2; }
unavailable() { echo "nodes: UNAVAILABLE: $*" >&2; exit 3; }
fail() { echo "nodes: FAILED: $*" >&2; exit 1; }
usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" >&2; exit 2; }

CACHE=${NODES_CACHE:-/var/cache/slurmlet-nodes}
R=${NODES_ROOT:-$CACHE/forky}
SRC_CACHE=${REAL_SLURM_CACHE:-/var/cache/slurmlet-real-slurm}
P=${NODES_PREFIX:-sln}
NET=${NODES_NET:-10.77.0}
BR=$P-br
RUN=/run/slurmlet-nodes-$P          # namespace files (mnt, uts) + the cluster's description; host side only
HOSTS=$CACHE/hosts                  # per host: log/ run/ spool/ lib/ etc-slurm/ … bound into its mount namespace

[ "$(uname -s)" = Linux ] || unavailable "not Linux"
[ "$(id -u)" = 0 ] || unavailable "must run as root (namespaces, mounts, chroot)"
for t in ip unshare nsenter chroot mount umount mknod flock; do
  command -v $t >/dev/null 2>&1 || unavailable "host tool '$t' missing"
done

# ------------------------------------------------------------ helpers ---
# X HOST CMD... : CMD inside HOST's network, UTS and mount namespaces, chrooted (no lock fd leaks into daemons)
X() {
  local h=$1; shift
  ( in_host "$h" chroot "$R" "$@" ) 9>&-
}
# in_host HOST CMD... : exec CMD (a host path) in HOST's namespaces; a node with a cgroup namespace (cgroup
# plugins in use) is entered after moving this process into the node's cgroups, the namespace's root
in_host() {
  local h=$1; shift
  local ns=(--net=/run/netns/$P-$h --uts=$RUN/$h.uts --mount=$RUN/$h.mnt)
  if [ -e $RUN/$h.cg ]; then cg_join "$h"; ns+=(--cgroup=$RUN/$h.cg); fi
  exec nsenter "${ns[@]}" "$@"
}
# ---- cgroups: each node gets its own cgroup namespace rooted at a cgroup of its own ("slurmlet-$P-HOST",
# made below this process's cgroup in each hierarchy), with the hierarchies mounted again inside its mount
# namespace at $R/sys/fs/cgroup, so that every slurmd sees a /sys/fs/cgroup of its own, like a real machine.
# Slurm's controllers on cgroup v1: freezer (proctrack), cpuset + memory + devices (task), cpuacct (jobacct).
CG_V1="freezer cpuset memory devices cpuacct"
cg_mode() {  # v1 when the machine has cgroup v1 hierarchies (legacy or hybrid), else v2
  if grep -q '^[0-9]*:[^:]' /proc/self/cgroup; then echo v1; else echo v2; fi
}
cg_mnt() {  # cg_mnt CONTROLLER : "MOUNTPOINT OPTIONS-LIST" of the host's v1 hierarchy holding it
  awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ","); l = "";
      for (i = 1; i <= n; i++) if (o[i] !~ /^(rw|ro|relatime|nosuid|nodev|noexec|clone_children)$/ && o[i] !~ /^(release_agent|xattr)/) l = l (l ? "," : "") o[i];
      for (i = 1; i <= n; i++) if (o[i] == c) { print $2, l; exit } }' /proc/self/mounts
}
cg_dirs() {  # cg_dirs HOST : the host's cgroup directories (one per hierarchy), as seen from the machine
  local h=$1 c mp opts cur
  if [ "$(cg_mode)" = v1 ]; then
    for c in $CG_V1; do
      read -r mp opts <<<"$(cg_mnt $c)" || true; [ -n "$mp" ] || continue
      cur=$(awk -F: -v c="$c" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
      echo "$mp${cur%/}/slurmlet-$P-$h"
    done
  else
    cur=$(sed -n 's/^0:://p' /proc/self/cgroup); echo "/sys/fs/cgroup${cur%/}/slurmlet-$P-$h"
  fi
}
cg_join() {  # cg_join HOST : move this (sub)shell into HOST's cgroups, making them on first use
  local d
  for d in $(cg_dirs "$1"); do
    if [ ! -d "$d" ]; then
      mkdir -p "$d"
      if [ -e "$d/cpuset.cpus" ]; then cat "$(dirname "$d")/cpuset.cpus" > "$d/cpuset.cpus"; cat "$(dirname "$d")/cpuset.mems" > "$d/cpuset.mems"; fi
    fi
    echo $BASHPID > "$d/cgroup.procs"
  done
}
cg_mounts() {  # what SETUP mounts at $R/sys/fs/cgroup: "v1 OPTS..." (one per hierarchy) or "v2"
  local c mp opts out=""
  if [ "$(cg_mode)" = v1 ]; then
    for c in $CG_V1; do read -r mp opts <<<"$(cg_mnt $c)" || true; [ -n "$mp" ] && out+=" $opts"; done
    echo "v1$(echo $out | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/^/ /;s/ $//')"
  else echo v2; fi
}
cg_cleanup() {  # remove every cgroup directory of ours (after all their processes are gone)
  local mp
  for mp in $(awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts | grep -v "^$R/"); do
    find "$mp" -depth -type d -path "*/slurmlet-$P-*" -exec rmdir {} \; 2>/dev/null || true
  done
}
hosts_up() { [ -s $RUN/hosts ] && cut -d' ' -f1 $RUN/hosts; }
ctl_host() { [ -s $RUN/hosts ] && awk '$3 == "ctl" {print $1; exit}' $RUN/hosts; }
wait_for() {  # wait_for SECONDS DESCRIPTION CMD...
  local t=$1 what=$2 i; shift 2
  for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "timed out after ${t}s waiting for: $what (logs: $HOSTS/*/log/)"
}
conf_get() {  # conf_get FILE KEY : the value of KEY= in a slurm.conf-style file (case-insensitive key)
  awk -v k="$(echo "$2" | tr 'A-Z' 'a-z')" '
    { sub(/#.*/, "") } NF == 0 { next }
    { for (i = 1; i <= NF; i++) { n = index($i, "="); if (n && tolower(substr($i, 1, n - 1)) == k) { print substr($i, n + 1); exit } } }' "$1"
}
expand() {  # expand WORD : /dev/nvidia[0-1,3] -> /dev/nvidia0 /dev/nvidia1 /dev/nvidia3 (one bracket group)
  local w=$1 pre post body part a b i
  if [[ "$w" =~ ^([^[]*)\[([^]]*)\](.*)$ ]]; then
    pre=${BASH_REMATCH[1]}; body=${BASH_REMATCH[2]}; post=${BASH_REMATCH[3]}
    for part in ${body//,/ }; do
      if [[ "$part" == *-* ]]; then a=${part%-*}; b=${part#*-}; for ((i = 10#$a; i <= 10#$b; i++)); do echo "$pre$i$post"; done
      else echo "$pre$part$post"; fi
    done
  else echo "$w"; fi
}
ns_inodes() {  # the mount-namespace inodes of our hosts (to find their processes)
  local f
  for f in $RUN/*.mnt; do [ -e "$f" ] && mountpoint -q "$f" && stat -L -c %i "$f"; done 2>/dev/null || true
}
our_pids() {  # host pids of every process in one of our hosts' mount namespaces
  local inos d ns
  inos=" $(ns_inodes | tr '\n' ' ') "
  [ "$inos" = "  " ] && return 0
  for d in /proc/[0-9]*; do
    ns=$(readlink "$d/ns/mnt" 2>/dev/null) || continue
    ns=${ns#mnt:[}; ns=${ns%]}
    if [[ "$inos" == *" $ns "* ]]; then echo "${d#/proc/}"; fi
  done
}

host_pids() {  # host_pids HOST [COMM] : pids in HOST's mount namespace (named COMM, or COMM-wlm)
  local ino d c
  ino=$(stat -L -c %i $RUN/$1.mnt 2>/dev/null) || return 0
  for d in /proc/[0-9]*; do
    [ "$(readlink $d/ns/mnt 2>/dev/null)" = "mnt:[$ino]" ] || continue
    c=$(cat $d/comm 2>/dev/null) || continue
    if [ -z "${2:-}" ] || [ "$c" = "$2" ] || [ "$c" = "$2-wlm" ]; then echo "${d#/proc/}"; fi
  done
}

# ------------------------------------------------------------ down ---
do_down() {
  local h pids i m l c round
  if [ -d $RUN ]; then
    h=$(ctl_host || true)
    if [ -n "$h" ] && [ -e $RUN/$h.mnt ] && mountpoint -q $RUN/$h.mnt; then
      if X "$h" timeout 5 scontrol ping >/dev/null 2>&1; then
        local ids; ids=$(X "$h" timeout 5 squeue -h -o %i 2>/dev/null | tr '\n' ' ') || true
        if [ -n "${ids// /}" ]; then
          log "cancelling $(echo $ids | wc -w) job(s)"
          # shellcheck disable=SC2086
          X "$h" scancel $ids 2>/dev/null || true
          for _ in $(seq 50); do [ -z "$(X "$h" squeue -h -t R,CG -o %i 2>/dev/null)" ] && break; sleep 0.2; done
        fi
      fi
    fi
    # the Slurm daemons of all hosts at once (the jobs are gone), then what they talk to (mariadbd, munged) and
    # anything else left; SIGKILL what is still there after 10 s
    for round in slurm rest; do
      pids=""
      for i in $(our_pids); do
        c=$(cat /proc/$i/comm 2>/dev/null) || continue
        if [ $round = rest ] || [[ "$c" != mariadbd && "$c" != munged ]]; then pids+="$i "; fi
      done
      [ -z "${pids// /}" ] && continue
      log "SIGTERM $(for i in $pids; do printf '%s(%s) ' "$(cat /proc/$i/comm 2>/dev/null)" $i; done)"
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
      for _ in $(seq 100); do
        l=0; for i in $pids; do if kill -0 $i 2>/dev/null; then l=1; fi; done; [ $l = 0 ] && break; sleep 0.1
      done
      for i in $pids; do
        if kill -0 $i 2>/dev/null; then log "pid $i still alive after 10 s: SIGKILL"; kill -KILL $i 2>/dev/null || true; fi
      done
    done
    pids=$(our_pids | tr '\n' ' ')
    # shellcheck disable=SC2086
    [ -n "${pids// /}" ] && { log "SIGKILL $pids"; kill -KILL $pids 2>/dev/null || true; sleep 0.3; }
    # a namespace lives on while its file is bind-mounted or a process is in it: unmount the files
    for m in $(awk -v r="$RUN/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    mountpoint -q $RUN && { umount $RUN 2>/dev/null || umount -l $RUN; }
    rm -rf $RUN
  fi
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${P}v[0-9]+$" || true); do
    ip link del "$l" 2>/dev/null || true
  done
  ip link show $BR >/dev/null 2>&1 && { ip link del $BR || true; }
  for l in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-" || true); do
    ip netns del "$l" 2>/dev/null || true
  done
  # mounts that a crashed `up` may have left in the host's own namespace (it never mounts there on purpose)
  for m in $(awk -v r="$R/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  cg_cleanup
  [ -z "$(our_pids)" ] || fail "processes still running in the cluster's namespaces: $(our_pids | tr '\n' ' ')"
}

# ------------------------------------------------------------ chroot ---
ensure_root() {
  [ -x "$R/usr/sbin/slurmd-wlm" ] && [ -x "$R/usr/sbin/slurmctld-wlm" ] && return 0
  local src=$SRC_CACHE/forky
  if [ ! -d "$src" ] || [ ! -s "$src/.slurmlet-real-slurm-recipe" ]; then
    log "no chroot at $src either: building it with up.sh (then stopping that one-node cluster)"
    "$HERE/up.sh" >/dev/null || { rc=$?; [ $rc = 3 ] && unavailable "up.sh cannot build the chroot (see above)"; fail "up.sh failed ($rc)"; }
    "$HERE/down.sh" --quiet || true
  fi
  if [ -e "$R" ]; then log "incomplete chroot at $R: removing it"; rm -rf --one-file-system "$R"; fi
  log "copying the chroot $src -> $R (files only, not what is mounted in it)"
  mkdir -p "$(dirname "$R")"
  cp -a -x --reflink=auto "$src" "$R.copying" || fail "cp -a $src $R.copying failed"
  mv "$R.copying" "$R"
}

# ------------------------------------------------------------ up ---
# Runs inside a fresh mount + UTS namespace (unshare), before anything is started there: hostname, and the
# chroot's per-host view. Everything is mounted at $R/... in this namespace only; the chroot's files are never
# written: /etc/hosts, /etc/slurm, /etc/munge/munge.key, /run, /var/log, /var/spool, /var/lib/{slurm,munge},
# the controller's /etc/mysql and /var/lib/{mysql,mariadb},
# /tmp and /dev are this host's own, /home is shared by all hosts (like an NFS home), the rest is the chroot's.
# shellcheck disable=SC2016
SETUP='set -eu
R=$1 H=$2 HD=$3 S=$4 CGM=$5
hostname "$H"
mount -t proc proc "$R/proc"
mount --bind /sys "$R/sys"; mount -o remount,bind,ro "$R/sys" 2>/dev/null || true
mount -t tmpfs -o mode=0755,nosuid,size=1m dev "$R/dev"
D=$R/dev
mknod -m 666 $D/null c 1 3; mknod -m 666 $D/zero c 1 5; mknod -m 666 $D/full c 1 7
mknod -m 666 $D/random c 1 8; mknod -m 666 $D/urandom c 1 9; mknod -m 666 $D/tty c 5 0
ln -s /proc/self/fd $D/fd; ln -s /proc/self/fd/0 $D/stdin; ln -s /proc/self/fd/1 $D/stdout; ln -s /proc/self/fd/2 $D/stderr
mkdir -m 755 $D/pts; mkdir -m 1777 $D/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts $D/pts; ln -s pts/ptmx $D/ptmx
mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m shm $D/shm
mount -t tmpfs -o mode=0755,nosuid,nodev,size=64m run "$R/run"
mount -t tmpfs -o mode=1777,nosuid,nodev,size=1g tmp "$R/tmp"
mount --bind "$HD/log" "$R/var/log"
mount --bind "$HD/spool" "$R/var/spool"
mount --bind "$HD/lib-slurm" "$R/var/lib/slurm"
mount --bind "$HD/lib-munge" "$R/var/lib/munge"
mount --bind "$HD/etc-slurm" "$R/etc/slurm"
mount --bind "$S/hosts" "$R/etc/hosts"
mount --bind "$S/munge.key" "$R/etc/munge/munge.key"
mount --bind "$S/home" "$R/home"
if [ -d "$HD/lib-mysql" ]; then mount --bind "$HD/lib-mysql" "$R/var/lib/mysql"; fi
if [ -d "$HD/lib-mariadb" ] && [ -d "$R/var/lib/mariadb" ]; then mount --bind "$HD/lib-mariadb" "$R/var/lib/mariadb"; fi
if [ -d "$HD/etc-mysql" ]; then mount --bind "$HD/etc-mysql" "$R/etc/mysql"; fi
case $CGM in   # only for a node in a cgroup namespace of its own: its cgroups, as the root of /sys/fs/cgroup
  v2) mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup" ;;
  v1*) mount -t tmpfs -o mode=0755,nosuid,nodev,noexec,size=64k cgroup "$R/sys/fs/cgroup"
       for o in ${CGM#v1}; do
         mkdir "$R/sys/fs/cgroup/$o"; mount -t cgroup -o "$o" cgroup "$R/sys/fs/cgroup/$o"
         case $o in *,*) for c in ${o//,/ }; do ln -s "$o" "$R/sys/fs/cgroup/$c"; done ;; esac
       done ;;
esac
'

# parse_devs WORD... : the device files of File=-style words (/dev/nvidia[0-1],/dev/nvidia3), one a line
parse_devs() {
  local w d
  for w in "$@"; do for d in ${w//,/ }; do expand "$d"; done; done
}
# add_devs HOST DEVICE... : stand-in GPUs in HOST's own /dev (a tmpfs): character devices with the real major
# and minor numbers, made where missing
add_devs() {
  local h=$1; shift
  [ $# -gt 0 ] || return 0
  # shellcheck disable=SC2016
  ( in_host "$h" bash -c 'R=$1; shift; for d in "$@"; do
      [ -e "$R$d" ] && continue; mkdir -p "$(dirname "$R$d")"; n=${d##*[!0-9]}
      case $d in /dev/dri/*) maj=226 ;; *) maj=195 ;; esac
      mknod -m 666 "$R$d" c $maj "${n:-0}"; done' mkdevs "$R" "$@" ) 9>&- || fail "cannot make the device files of $h"
}
check_names() {  # check_names HOST... : host names nodes.sh can use, none twice
  local h
  for h in "$@"; do
    [[ "$h" =~ ^[a-z][a-z0-9-]{0,20}$ ]] || { echo "nodes.sh: bad host name '$h' (a-z0-9-, at most 21)" >&2; exit 2; }
  done
  [ "$(printf '%s\n' "$@" | sort | uniq -d)" = "" ] || { echo "nodes.sh: a host name is given twice" >&2; exit 2; }
}

# make_hosts CGROUPS CTL NODE[:DEVICE,...]... : the hosts, no daemon yet (after do_down). CGROUPS=1 gives each
# node a cgroup namespace with the hierarchies mounted at its /sys/fs/cgroup. A random munge key until install_conf.
make_hosts() {
  local cgroups=$1 ctl=$2; shift 2
  local all=("$ctl") devs=() h i role arg
  for arg in "$@"; do all+=("${arg%%:*}"); done
  devs[0]=""; i=1; for arg in "$@"; do devs[i]=""; [[ "$arg" == *:* ]] && devs[i]=${arg#*:}; i=$((i + 1)); done
  ip link add $BR type bridge 2>/dev/null || unavailable "cannot create a bridge (ip link add $BR type bridge)"
  ip addr add $NET.1/24 dev $BR; ip link set $BR up
  # shared, host-side: the description, /etc/hosts, the munge key, /home
  mkdir -p $RUN && mount --bind $RUN $RUN && mount --make-private $RUN ||
    unavailable "cannot make $RUN a private mount (for the namespace files)"
  rm -rf "$HOSTS"; mkdir -p "$HOSTS/shared/home"
  local S=$HOSTS/shared
  { echo "127.0.0.1 localhost"; echo "::1 localhost ip6-localhost"
    i=10; for h in "${all[@]}"; do echo "$NET.$i $h"; i=$((i + 1)); done; } > $S/hosts
  head -c 1024 /dev/urandom > $S/munge.key
  chown "$(chroot "$R" id -u munge):$(chroot "$R" id -g munge)" $S/munge.key; chmod 0600 $S/munge.key
  local uid; for u in $(chroot "$R" sh -c 'ls /home'); do
    uid=$(chroot "$R" id -u "$u" 2>/dev/null) || continue
    install -d -o "$uid" -g "$(chroot "$R" id -g "$u")" -m 0755 "$S/home/$u"
  done
  local slurm_uid slurm_gid munge_uid munge_gid
  slurm_uid=$(chroot "$R" id -u slurm); slurm_gid=$(chroot "$R" id -g slurm)
  munge_uid=$(chroot "$R" id -u munge); munge_gid=$(chroot "$R" id -g munge)
  i=10
  : > $RUN/hosts.new
  for h in "${all[@]}"; do
    local HD=$HOSTS/$h
    role=node; [ "$h" = "$ctl" ] && role=ctl
    mkdir -p $HD/log/slurm $HD/log/munge $HD/spool/slurmd $HD/spool/slurmctld $HD/lib-slurm/slurmd $HD/lib-slurm/slurmctld $HD/lib-munge $HD/etc-slurm
    chown $slurm_uid:$slurm_gid $HD/log/slurm $HD/spool/slurmctld $HD/lib-slurm $HD/lib-slurm/slurmctld
    chown $munge_uid:$munge_gid $HD/log/munge $HD/lib-munge; chmod 0700 $HD/log/munge $HD/lib-munge
    if [ $role = ctl ]; then   # MariaDB's files, used when a slurmdbd.conf comes
      # (Debian 13's MariaDB keeps its data in /var/lib/mysql, 14's in /var/lib/mariadb: each is the host's own)
      mkdir -p $HD/lib-mysql $HD/lib-mariadb
      chown "$(chroot "$R" id -u mysql):$(chroot "$R" id -g mysql)" $HD/lib-mysql $HD/lib-mariadb
      cp -a "$R/etc/mysql" $HD/etc-mysql   # its own, as `cluster apply` writes a drop-in there
    fi
    # network: netns $P-$h, eth0 = one end of a veth pair whose other end (${P}vN) is in the bridge
    ip netns add $P-$h || unavailable "cannot create a network namespace (ip netns add $P-$h)"
    ip link add ${P}v$i type veth peer name eth0 netns $P-$h || unavailable "cannot create a veth pair"
    ip link set ${P}v$i master $BR; ip link set ${P}v$i up
    ip -n $P-$h addr add $NET.$i/24 dev eth0; ip -n $P-$h link set eth0 up; ip -n $P-$h link set lo up
    # mount + UTS namespaces, kept by bind-mounting them on files in $RUN (private mount)
    touch $RUN/$h.mnt $RUN/$h.uts
    local cgm="" cgns=()
    if [ "$role" = node ] && [ "$cgroups" = 1 ]; then cgm=$(cg_mounts); touch $RUN/$h.cg; cgns=(--cgroup=$RUN/$h.cg); fi
    ( if [ -n "$cgm" ]; then cg_join "$h"; fi
      exec unshare --mount=$RUN/$h.mnt --uts=$RUN/$h.uts "${cgns[@]}" --propagation private \
        bash -c "$SETUP" setup "$R" "$h" "$HD" "$S" "$cgm" ) 9>&- ||
      fail "setting up the namespaces of $h failed"
    # shellcheck disable=SC2046
    add_devs "$h" $(parse_devs ${devs[$((i - 10))]})
    echo "$h $NET.$i $role" >> $RUN/hosts.new
    i=$((i + 1))
  done
  mv $RUN/hosts.new $RUN/hosts
}

# do_hosts [--ctl HOST] NODE[:DEVICE,...]... : the hosts a later `up` starts Slurm in. Every node has cgroups of
# its own, as a machine has, so that what probes it sees them (and a plan made from that uses them).
do_hosts() {
  local ctl=ctl arg names=()
  if [ "${1:-}" = --ctl ]; then ctl=${2:-}; shift 2 || usage; fi
  [ $# -ge 1 ] || usage
  for arg in "$@"; do names+=("${arg%%:*}"); done
  check_names "$ctl" "${names[@]}"
  ensure_root
  do_down
  make_hosts 1 "$ctl" "$@"
  touch $RUN/unstarted
  log "hosts up: $ctl (controller), ${names[*]} (no daemon yet)"
  print_env
}

# reusable CTL NODE... : whether `hosts` made just these hosts (CTL the controller) and nothing was started there
reusable() {
  [ -e $RUN/unstarted ] && [ -s $RUN/hosts ] || return 1
  [ "$(ctl_host)" = "$1" ] || return 1
  [ "$(hosts_up | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ] || return 1
  [ -z "$(our_pids)" ]
}

do_up() {
  local conf=$1; shift
  local nodes=("$@") h ctl ctld_port all
  [ -d "$conf" ] || { echo "nodes.sh up: $conf is not a directory" >&2; exit 2; }
  conf=$(cd "$conf" && pwd)
  [ -s "$conf/slurm.conf" ] || { echo "nodes.sh up: $conf/slurm.conf missing" >&2; exit 2; }
  [ ${#nodes[@]} -ge 1 ] || { echo "nodes.sh up: name at least one node" >&2; exit 2; }
  # SlurmctldHost=ctl, or ctl(10.77.0.10): the host's name
  ctl=$(conf_get "$conf/slurm.conf" SlurmctldHost); ctl=${ctl%%(*}; ctl=${ctl:-ctl}
  ctld_port=$(conf_get "$conf/slurm.conf" SlurmctldPort); ctld_port=${ctld_port:-6817}
  all=("$ctl" "${nodes[@]}")
  check_names "${all[@]}"
  ensure_root
  [ -x "$R/usr/sbin/slurmd-wlm" ] || fail "no slurmd in $R"
  if reusable "${all[@]}"; then
    log "starting Slurm in the hosts that \`hosts\` made"
  else
    # cgroup plugins (proctrack/cgroup, task/cgroup, jobacct_gather/cgroup) -> a cgroup namespace per node
    local cgroups=0
    if grep -Eiq '^[[:space:]]*(ProctrackType|TaskPlugin|JobAcctGatherType)[[:space:]]*=.*cgroup' "$conf/slurm.conf"; then
      cgroups=1; log "cgroup plugins in slurm.conf: each node gets a cgroup namespace ($(cg_mode) hierarchies: $(cg_mounts))"
    fi
    log "stopping what an earlier up left"
    do_down
    make_hosts $cgroups "$ctl" "${nodes[@]}"
  fi
  rm -f $RUN/unstarted
  install_conf "$conf" "$ctl"

  for h in "${all[@]}"; do
    X "$h" install -d -o munge -g munge -m 0755 /run/munge
    X "$h" runuser -u munge -- /usr/sbin/munged || fail "munged did not start on $h (log: $HOSTS/$h/log/munge/)"
  done
  for h in "${all[@]}"; do wait_for 10 "munged on $h" X "$h" sh -c 'munge -n | unmunge'; done
  log "munged running on ${all[*]}"

  if [ -s "$conf/slurmdbd.conf" ]; then start_dbd "$ctl" "$conf"; fi
  X "$ctl" /usr/sbin/slurmctld -L /var/log/slurm/slurmctld.log ||
    fail "slurmctld did not start (log: $HOSTS/$ctl/log/slurm/slurmctld.log)"
  wait_for 60 "slurmctld on $ctl" X "$ctl" scontrol ping
  log "slurmctld up on $ctl ($NET.10:$ctld_port)"
  for h in "${nodes[@]}"; do
    X "$h" /usr/sbin/slurmd --conf-server "$ctl:$ctld_port" -L /var/log/slurm/slurmd.log ||
      fail "slurmd did not start on $h (log: $HOSTS/$h/log/slurm/slurmd.log)"
  done
  node_ready() {  # fails the whole `up` at once when the node's slurmd is gone (a fatal error in its log)
    local s; s=$(X "$ctl" sinfo -h -N -n "$1" -o '%T' 2>/dev/null) && [[ "$s" =~ ^(idle|mixed|allocated) ]] && return 0
    if [ -z "$(host_pids "$1" slurmd)" ]; then
      tail -5 "$HOSTS/$1/log/slurm/slurmd.log" >&2 2>/dev/null || true
      fail "slurmd on $1 exited (log: $HOSTS/$1/log/slurm/slurmd.log)"
    fi
    return 1
  }
  for h in "${nodes[@]}"; do
    for ((t = 0; t < 300; t++)); do node_ready "$h" && break; sleep 0.2; done
    [ $t -lt 300 ] || fail "timed out after 60s waiting for node $h to be idle (logs: $HOSTS/$h/log/slurm/)"
  done
  log "cluster up: controller $ctl, nodes ${nodes[*]}"
  print_env
}

# install_conf CONF_DIR CTL : CONF_DIR's files into the hosts as they are: its munge key (written into the shared
# key file, which every host has bound), its JWT key in CTL's /var/spool/slurmctld, its *.conf in CTL's /etc/slurm (a compute node's stays empty: configless,
# it gets its configuration from slurmctld), and a stand-in device file for every File= of gres.conf on every
# host (each host's gres.conf lines pick its own)
install_conf() {
  local conf=$1 ctl=$2 HD=$HOSTS/$2 h
  if [ -s "$conf/munge.key" ]; then cat "$conf/munge.key" > "$HOSTS/shared/munge.key"; fi
  if [ -s "$conf/jwt_hs256.key" ]; then   # slurmctld's and slurmdbd's, where slurm.conf's AuthAltParameters says
    install -m 0600 -o "$(chroot "$R" id -u slurm)" -g "$(chroot "$R" id -g slurm)" "$conf/jwt_hs256.key" $HD/spool/slurmctld/
  fi
  for f in "$conf"/*.conf; do cp "$f" $HD/etc-slurm/; done
  chmod 0644 $HD/etc-slurm/*.conf
  if [ -e $HD/etc-slurm/slurmdbd.conf ]; then
    chown "$(chroot "$R" id -u slurm):$(chroot "$R" id -g slurm)" $HD/etc-slurm/slurmdbd.conf; chmod 0600 $HD/etc-slurm/slurmdbd.conf
  fi
  local devs=()
  if [ -s "$conf/gres.conf" ]; then
    # shellcheck disable=SC2046
    mapfile -t devs < <(parse_devs $(sed 's/#.*//' "$conf/gres.conf" | tr ' \t' '\n\n' | sed -n 's/^[Ff][Ii][Ll][Ee]=//p') | sort -u)
  fi
  for h in $(hosts_up); do add_devs "$h" "${devs[@]}"; done
}

# start_dbd HOST CONF_DIR : MariaDB (unix socket only, data in the host's own /var/lib/mysql) + slurmdbd on the
# controller host, the database user of slurmdbd.conf, and the cluster with account "research" (root, alice)
start_dbd() {
  local h=$1 conf=$2 user pass loc cluster
  user=$(conf_get "$conf/slurmdbd.conf" StorageUser); pass=$(conf_get "$conf/slurmdbd.conf" StoragePass)
  loc=$(conf_get "$conf/slurmdbd.conf" StorageLoc); loc=${loc:-slurm_acct_db}
  cluster=$(conf_get "$conf/slurm.conf" ClusterName)
  X "$h" install -d -o mysql -g mysql -m 0755 /run/mysqld
  X "$h" install -d -o mysql -g adm -m 0750 /var/log/mysql
  X "$h" mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db --auth-root-authentication-method=socket \
    >/dev/null 2>&1 || fail "mariadb-install-db failed on $h"
  ( in_host "$h" chroot "$R" /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --skip-networking \
      --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/mysqld.pid --innodb-buffer-pool-size=128M \
      --innodb-lock-wait-timeout=900 --innodb-snapshot-isolation=OFF --log-error=/var/log/mysql/mariadb.log \
      >/dev/null 2>&1 & ) 9>&-
  wait_for 60 "mariadb on $h" X "$h" mariadb-admin --protocol=socket ping
  X "$h" mariadb --protocol=socket -u root <<SQL
CREATE DATABASE IF NOT EXISTS $loc;
CREATE USER IF NOT EXISTS '${user:-slurm}'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL ON $loc.* TO '${user:-slurm}'@'localhost';
FLUSH PRIVILEGES;
SQL
  X "$h" install -d -o slurm -g slurm -m 0755 /run/slurmdbd   # as systemd's RuntimeDirectory= makes it
  X "$h" /usr/sbin/slurmdbd || fail "slurmdbd did not start on $h (log: $HOSTS/$h/log/slurm/)"
  wait_for 90 "slurmdbd on $h" X "$h" sacctmgr -n list cluster
  X "$h" sacctmgr -i add cluster "$cluster" >/dev/null
  X "$h" sacctmgr -i add account research Cluster="$cluster" Description=ci Organization=ci >/dev/null
  X "$h" sacctmgr -i add user root,alice Account=research DefaultAccount=research Cluster="$cluster" >/dev/null
  log "mariadb + slurmdbd up on $h (cluster $cluster, account research: root, alice)"
}

print_env() {
  local h a r nodes="" addrs=""
  while read -r h a r; do [ "$r" = node ] && nodes+="${nodes:+,}$h"; addrs+="${addrs:+,}$h=$a"; done < $RUN/hosts
  cat <<OUT
NODES_CTL=$(ctl_host)
NODES_NODES=$nodes
NODES_ADDRS=$addrs
NODES_CTL_ADDR=$(awk '$3 == "ctl" {print $2; exit}' $RUN/hosts)
NODES_CTLD_PORT=$([ -z "$(host_pids "$(ctl_host)" slurmctld)" ] || X "$(ctl_host)" scontrol show config 2>/dev/null | awk '$1 == "SlurmctldPort" {print $3}')
NODES_NETNS_PREFIX=$P-
NODES_NS_DIR=$RUN
NODES_BRIDGE=$BR
NODES_ROOT=$R
NODES_LOGS=$HOSTS
NODES_VERSION=$(X "$(ctl_host)" slurmctld -V | awk '{print $2}')
NODES_EXEC=$HERE/nodes.sh exec
OUT
}

# ------------------------------------------------------------ smoke ---
do_smoke() {
  local conf=${1:-$HERE/nodes-example} out t0 t1 id=""
  t0=${EPOCHREALTIME/[.,]/}
  do_up "$conf" n1 n2 > /dev/null
  t1=${EPOCHREALTIME/[.,]/}
  log "up took $(( (t1 - t0) / 1000 )) ms"
  local ok=0 bad=0
  check() {  # check DESCRIPTION OUTPUT REGEX
    if [[ "$2" =~ $3 ]]; then echo "ok   $1" >&2; ok=$((ok + 1)); else echo "FAIL $1: got: $2" >&2; bad=$((bad + 1)); fi
  }
  A() { NODES_USER=alice "$HERE/nodes.sh" exec ctl "$@"; }
  out=$(A sinfo -h -o '%P %a %D %t %N %G' 2>&1 | sort | tr '\n' ';') || true
  check "sinfo: partitions per GPU type, both nodes idle, gres" "$out" \
    '^a100 up 1 idle n2 gpu:a100:2;all\* up 1 idle n1 gpu:v100:2;all\* up 1 idle n2 gpu:a100:2;v100 up 1 idle n1 gpu:v100:2;$'
  out=$(A timeout 60 srun -N2 -n2 hostname 2>&1 | sort | tr '\n' ' ') || true
  check "srun -N2 -n2 hostname" "$out" '^n1 n2 $'
  id=$(A sbatch --parsable -N2 -o nodes-%j.out --wrap 'scontrol show hostnames $SLURM_JOB_NODELIST' 2>&1) || true
  check "sbatch -N2 --wrap" "$id" '^[0-9]+$'
  for _ in $(seq 100); do [ -z "$(A squeue -h -j "$id" 2>/dev/null)" ] && break; sleep 0.2; done
  out=$(tr '\n' ' ' < "$HOSTS/shared/home/alice/nodes-$id.out" 2>&1) || true
  check "sbatch -N2 job output lists both nodes" "$out" '^n1 n2 $'
  out=$(A timeout 60 srun -p all --gres=gpu:a100:1 bash -c 'echo $(hostname) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES' 2>&1) || true
  check "--gres=gpu:a100:1 runs on the a100 node with CUDA_VISIBLE_DEVICES" "$out" '^n2 CUDA_VISIBLE_DEVICES=0$'
  out=$(A timeout 60 srun -p v100 --gres=gpu:2 bash -c 'echo $(hostname) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES' 2>&1) || true
  check "-p v100 --gres=gpu:2 on n1" "$out" '^n1 CUDA_VISIBLE_DEVICES=0,1$'
  if [ -e $RUN/n2.cg ]; then   # cgroup plugins: the step is in the node's own slurm_n2 tree, its other GPU is denied
    out=$(A timeout 60 srun -p a100 --gres=gpu:1 bash -c 'grep -o "freezer:.*" /proc/self/cgroup; head -c1 /dev/nvidia1' 2>&1 | tr '\n' ' ') || true
    check "cgroups: step in freezer:/slurm_n2/…, the GPU not allocated denied" "$out" \
      '^freezer:/slurm_n2/uid_[0-9]+/job_[0-9]+/step_0 head: cannot open .?/dev/nvidia1.? for reading: Operation not permitted'
  fi
  if [ -s "$conf/slurmdbd.conf" ]; then   # accounting: slurmdbd has the sbatch -N2 job, on both nodes
    for _ in $(seq 50); do
      out=$(A sacct -X -n -P -j "$id" -o jobid,account,nodelist,state 2>&1) || true
      [[ "$out" == *COMPLETED* ]] && break; sleep 0.2
    done
    check "sacct: the sbatch -N2 job, account research, on n[1-2], COMPLETED" "$out" "^$id\|research\|n\[1-2\]\|COMPLETED$"
  fi
  t0=${EPOCHREALTIME/[.,]/}
  do_down
  t1=${EPOCHREALTIME/[.,]/}
  log "down took $(( (t1 - t0) / 1000 )) ms"
  [ $bad = 0 ] || fail "smoke: $bad check(s) failed, $ok passed (logs: $HOSTS/*/log/)"
  echo "nodes.sh smoke: all $ok checks passed" >&2
}

do_status() {
  [ -s $RUN/hosts ] || { echo "nodes.sh: no cluster up" >&2; return 1; }
  local h a r ino
  while read -r h a r; do
    ino=$(stat -L -c %i $RUN/$h.mnt 2>/dev/null) || ino=none
    printf '%-8s %-14s %-4s %s\n' "$h" "$a" "$r" "$(for d in /proc/[0-9]*; do
      [ "$(readlink $d/ns/mnt 2>/dev/null)" = "mnt:[$ino]" ] && echo "$(cat $d/comm 2>/dev/null)(${d#/proc/})"; done | tr '\n' ' ' || true)"
  done < $RUN/hosts
}

cmd=${1:-}; [ $# -gt 0 ] && shift
mkdir -p "$CACHE"
case "$cmd" in
  up)   [ $# -ge 2 ] || usage; exec 9>"$CACHE/lock"; flock -w 300 9 || fail "$CACHE/lock busy"; do_up "$@" ;;
  hosts) [ $# -ge 1 ] || usage; exec 9>"$CACHE/lock"; flock -w 300 9 || fail "$CACHE/lock busy"; do_hosts "$@" ;;
  down) exec 9>"$CACHE/lock"; flock -w 300 9 || fail "$CACHE/lock busy"; T0=${EPOCHREALTIME/[.,]/}; do_down; log "down" ;;
  smoke) exec 9>"$CACHE/lock"; flock -w 300 9 || fail "$CACHE/lock busy"; do_smoke "$@" ;;
  exec)
    [ $# -ge 2 ] || usage
    h=$1; shift
    [ -e $RUN/$h.mnt ] || { echo "nodes.sh exec: no host $h is up" >&2; exit 1; }
    U=${NODES_USER:-root}
    HM=$(chroot "$R" getent passwd "$U" | cut -d: -f6)
    UG="$(chroot "$R" id -u "$U"):$(chroot "$R" id -g "$U")" || { echo "nodes.sh exec: no user $U in the hosts" >&2; exit 1; }
    in_host "$h" chroot --userspec="$UG" "$R" env -i HOME="$HM" USER="$U" LOGNAME="$U" PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM="${TERM:-dumb}" \
      bash -c 'cd "$HOME" 2>/dev/null; exec "$@"' "$h" "$@" ;;
  status) do_status ;;
  env) print_env ;;
  *) usage ;;
esac
