#!/usr/bin/env bash
# Intact: a single-node Slurm cluster on this machine, for tests and for trying the job scripts.
#
#   bash slurm/test_cluster.sh start STATE_DIR   # install slurm-wlm + munge if missing, start
#                                                 # munged, slurmctld, slurmd; wait until idle
#   export SLURM_CONF=STATE_DIR/slurm.conf        # then sbatch, squeue, sacct -c ... talk to it
#   bash slurm/test_cluster.sh status STATE_DIR  # sinfo, or exit 1 if it is not running
#   bash slurm/test_cluster.sh stop STATE_DIR    # stop the three daemons, remove the runtime dir
#
# Everything lives in STATE_DIR (slurm.conf, munge key, logs, job completion log jobcomp.txt) plus
# a short runtime directory under /tmp for sockets, pid files and spool (Unix socket paths are
# limited to 108 bytes); /etc is not touched. The cluster has one node, this host, with 2 CPUs
# (INTACT_TEST_CPUS), no cgroups, no GPUs. Its ports are picked free at start, so two clusters
# (two build trees) can run side by side. There is no slurmdbd: jobs are recorded by
# jobcomp/filetxt, so query them with `sacct -c` (--completion).
#
# Needs root: the daemons run as root (SlurmUser=root) and apt-get installs the packages. Without
# root, `start` exits with status 77 and says why, which the tests report as skipped.
#
# Variables (all optional):
#   INTACT_TEST_CPUS     CPUs of the node, whatever the machine has            (default: 2)
#   INTACT_MPI_DEFAULT   Slurm's MpiDefault: how srun wires MPI ranks together (default: pmix,
#                        what Debian's Open MPI needs; none when Slurm lacks the plugin)
#   INTACT_START_TIMEOUT seconds to wait for the node to come up                (default: 60)
set -euo pipefail

say() { printf '[intact test-cluster] %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

usage() {
  say "usage: bash slurm/test_cluster.sh start|stop|status STATE_DIR"
  exit 2
}

(($# == 2)) || usage
action=$1
state=$2

# install_missing: Debian's slurm-wlm (slurmctld, slurmd, client commands) and munge.
install_missing() {
  local packages=(slurm-wlm munge) missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || die "${missing[*]} missing and no apt-get to install them"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# free_ports N: N TCP ports free on this machine right now.
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# pid_alive FILE: the process named in a pid file is running.
pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

runtime_dir() { cat "$state/runtime_dir" 2>/dev/null || true; }

show_logs() {
  local f
  for f in "$state"/log/*.log; do
    [[ -f $f ]] || continue
    say "---- last lines of $f"
    tail -n 30 "$f" >&2
  done
}

start() {
  if [[ $(id -u) != 0 ]]; then
    say "skipped: the test cluster needs root (apt-get, and slurmd runs jobs as any user)"
    exit 77
  fi
  command -v python3 >/dev/null || die "python3 is needed to pick free ports"
  install_missing
  local b
  for b in munged mungekey slurmctld slurmd sbatch sacct; do
    command -v "$b" >/dev/null || die "$b not found after installing slurm-wlm and munge"
  done
  if [[ -f $state/runtime_dir ]]; then
    say "a test cluster was left in $state (an interrupted run?); stopping it first"
    stop
  fi

  mkdir -p "$state/log"
  state=$(cd "$state" && pwd)
  local run
  run=$(mktemp -d /tmp/intact-slurm.XXXXXX)
  chmod 755 "$run"
  mkdir -p "$run/spool/ctld" "$run/spool/d"
  printf '%s\n' "$run" >"$state/runtime_dir"
  : >"$state/jobcomp.txt"

  # munge: a private key and socket, so a system munged (if any) is left alone.
  local key=$state/munge.key
  [[ -f $key ]] || mungekey --create --keyfile="$key"
  chmod 600 "$key"
  munged --force --socket="$run/munge.socket" --key-file="$key" --pid-file="$run/munged.pid" \
    --log-file="$state/log/munged.log" --seed-file="$run/munged.seed" ||
    {
      show_logs
      die "munged did not start"
    }

  local node cpus ctld_port slurmd_port mpi
  node=$(hostname -s)
  cpus=${INTACT_TEST_CPUS:-2}
  [[ $cpus =~ ^[1-9][0-9]*$ ]] || die "INTACT_TEST_CPUS=$cpus is not a positive integer"
  read -r ctld_port slurmd_port <<<"$(free_ports 2)"
  mpi=${INTACT_MPI_DEFAULT:-pmix}
  if [[ $mpi != none ]] && ! compgen -G "/usr/lib/*/slurm-wlm/mpi_${mpi}.so" >/dev/null &&
    ! compgen -G "/usr/lib/slurm/mpi_${mpi}.so" >/dev/null; then
    say "Slurm has no mpi/$mpi plugin here; MpiDefault=none"
    mpi=none
  fi
  cat >"$state/slurm.conf" <<EOF
# Written by slurm/test_cluster.sh: a one-node test cluster on $node.
ClusterName=intact-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$run/munge.socket
CredType=cred/munge
StateSaveLocation=$run/spool/ctld
SlurmdSpoolDir=$run/spool/d
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (containers, CI machines): processes tracked through /proc. Tasks are bound to their
# CPUs with sched_setaffinity, as on a real cluster; without it every rank would see all CPUs and
# OpenMP binding would put the ranks' threads on the same core.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
TaskPluginParam=Cores
# srun wires MPI ranks together through PMIx, as Debian's Open MPI expects.
MpiDefault=$mpi
SchedulerType=sched/backfill
# A requeued job becomes eligible a few seconds after its requeue, but only a scheduling pass starts it:
# with the defaults (main loop every 60 s, backfill every 30 s) the restart test's requeued jobs waited
# 11-41 s each for one. Passes every 2 s cost nothing on a one-node cluster.
SchedulerParameters=sched_interval=2,bf_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# No slurmdbd: finished jobs go to a text file that \`sacct -c\` reads.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$state/jobcomp.txt
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
# The node claims $cpus CPUs whatever the machine has (config_overrides), so tests see the same
# cluster everywhere.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$state/slurm.conf

  slurmctld -f "$SLURM_CONF" -i || {
    show_logs
    stop_daemons
    die "slurmctld did not start"
  }
  slurmd -f "$SLURM_CONF" -N "$node" || {
    show_logs
    stop_daemons
    die "slurmd did not start"
  }

  local timeout=${INTACT_START_TIMEOUT:-60} waited=0 node_state=""
  while ((waited < timeout)); do
    node_state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
    [[ $node_state == idle ]] && break
    sleep 1
    waited=$((waited + 1))
  done
  if [[ $node_state != idle ]]; then
    show_logs
    stop_daemons
    die "node $node is '${node_state:-unreachable}' after ${timeout} s, not idle"
  fi
  say "running: node $node, $cpus CPUs, partition test, controller port $ctld_port, MpiDefault=$mpi (up in ${waited} s)"
  say "use it with: export SLURM_CONF=$SLURM_CONF"
  sinfo >&2
}

# stop_daemons: slurmd, slurmctld, munged, each by its pid file; waits until they are gone.
stop_daemons() {
  local run d pid i
  run=$(runtime_dir)
  [[ -n $run && -d $run ]] || return 0
  for d in slurmd slurmctld munged; do
    pid_alive "$run/$d.pid" || continue
    pid=$(cat "$run/$d.pid")
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "$d (pid $pid) ignores SIGTERM; sending SIGKILL"
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}

stop() {
  if [[ ! -f $state/runtime_dir ]]; then
    say "no test cluster state in $state; nothing to stop"
    return 0
  fi
  local run
  run=$(runtime_dir)
  stop_daemons
  # Job steps still running would keep the spool busy; they belong to the stopped slurmd.
  [[ $run == /tmp/intact-slurm.* ]] && rm -rf "$run"
  rm -f "$state/runtime_dir"
  say "stopped (logs and job records stay in $state)"
}

status() {
  local run
  run=$(runtime_dir)
  if [[ -z $run ]] || ! pid_alive "$run/slurmctld.pid" || ! pid_alive "$run/slurmd.pid" ||
    ! pid_alive "$run/munged.pid"; then
    say "not running (state dir $state)"
    exit 1
  fi
  SLURM_CONF=$state/slurm.conf sinfo
}

case $action in
start) start ;;
stop) stop ;;
status) status ;;
*) usage ;;
esac
