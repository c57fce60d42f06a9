# shellcheck shell=bash
# eval/tsp/lib.sh - sourced by eval/tsp/figure4.sh and eval/tsp/faults.sh:
# the programs they drive, CPU quotas through the Linux cgroup CPU
# controller (v1 or v2), a loopback mesh of levpeers, wall-clock timing,
# an independent check of a TOUR file, the machine's description, and the
# cleanup on exit (every process started, every group made).
#
# The caller has cd'ed to the top of the source tree and set EV_NAME (the
# script's name, e.g. figure4), then calls ev_init.

EV_PIDS=()    # every background process started (killed on exit)
EV_TMP=       # scratch directory (removed on exit)
CG_MODE=      # v1 or v2 once cg_setup has run
CG_BASE=      # our parent group: $CG_BASE/GROUP/ are the groups we make
CG_GROUPS=()  # groups made under CG_BASE, in order
CG_ACCT=      # v1 with cpuacct mounted apart: our parent group there
CG_PERIOD_US=${CG_PERIOD_US:-20000}

ev_die() {
    echo "$EV_NAME: $*" >&2
    exit 1
}

ev_log() { echo "$EV_NAME: $*" >&2; }

# ev_init: scratch directory, traps (INT, TERM and HUP end the script
# through EXIT, whose handler kills and removes what it made).
ev_init() {
    EV_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lev-eval-$EV_NAME.XXXXXX")
    trap ev_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
}

ev_cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    ev_kill_all
    cg_teardown
    if [[ -n $EV_TMP ]]; then rm -rf "$EV_TMP"; fi
    exit "$rc"
}

# ev_now: seconds since the epoch, microsecond resolution.
ev_now() { echo "$EPOCHREALTIME"; }

# ev_sleep SECONDS: a sleep that a trap can interrupt.
ev_sleep() { sleep "$1" & wait $! 2>/dev/null || true; }

# ev_alive PID: true while PID runs (a zombie counts as gone).
ev_alive() {
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && $st != Z && $st != X ]]
}

# ev_stop_pids SECONDS PID...: SIGCONT (a stopped process cannot die of
# SIGTERM) and SIGTERM to each, then SIGKILL to those still running
# after SECONDS (bounded wait).
ev_stop_pids() {
    local grace=$1 pid i left
    shift
    (($#)) || return 0
    for pid in "$@"; do
        kill -CONT "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    for ((i = 0; i < grace * 20; i++)); do
        left=0
        for pid in "$@"; do if ev_alive "$pid"; then left=1; fi; done
        ((left)) || break
        sleep 0.05
    done
    for pid in "$@"; do
        if ev_alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

# ev_kill_all: stops every process this script started, then whatever is
# left in its groups (executors, which levpeers start).
ev_kill_all() {
    local pids=() pid
    for pid in "${EV_PIDS[@]}"; do if ev_alive "$pid"; then pids+=("$pid"); fi; done
    ev_stop_pids 5 "${pids[@]}"
    EV_PIDS=()
    cg_kill_all
}

# ---------------------------------------------------------------------
# Packages and programs
# ---------------------------------------------------------------------

# ev_packages PKG...: installs whichever of the Debian packages are
# missing (as run.sh does); silent when none is.
ev_packages() {
    local missing=() pkg
    for pkg in "$@"; do
        [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) == "install ok installed" ]] ||
            missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    ((EUID == 0)) || ev_die "missing Debian packages: ${missing[*]} (not root: install them and run again)"
    ev_log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" </dev/null >&2
}

# ev_programs BIN_DIR: sets LEVPEER, LEVCTL, LEVTSP, LEVTSPSEQ, LAGRELAY. An empty
# BIN_DIR builds them in the eval build tree (eval/build.sh: Release,
# -O2); otherwise BIN_DIR holds a build tree's programs (BIN_DIR/
# peercontroller/levpeer...) or the programs side by side.
ev_programs() {
    local bin=$1 p
    if [[ -z $bin ]]; then
        . eval/build.sh # BUILD, eval_build
        ev_log "building lev-tsp, lev-tsp-seq, levpeer and levctl in $BUILD (Release)"
        eval_build lev-tsp lev-tsp-seq levpeer levctl lagrelay
        bin=$BUILD
    fi
    if [[ -x $bin/peercontroller/levpeer ]]; then
        LEVPEER=$bin/peercontroller/levpeer
        LEVCTL=$bin/peercontroller/levctl
        LEVTSP=$bin/samples/tsp/lev-tsp
        LEVTSPSEQ=$bin/samples/tsp/lev-tsp-seq
        LAGRELAY=$bin/eval/lagrelay
    else
        LEVPEER=$bin/levpeer LEVCTL=$bin/levctl LEVTSP=$bin/lev-tsp LEVTSPSEQ=$bin/lev-tsp-seq
        LAGRELAY=$bin/lagrelay
    fi
    [[ -z $MESH_NET_DELAY || -x $LAGRELAY ]] || ev_die "$LAGRELAY is missing (needed by --net)"
    for p in "$LEVPEER" "$LEVCTL" "$LEVTSP" "$LEVTSPSEQ"; do
        [[ -x $p ]] || ev_die "$p is missing or not executable"
    done
}

# ev_machine: the machine's description, one "key: value" line each.
ev_machine() {
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "cores (nproc): $(nproc)"
    awk '/MemTotal/ {printf "memory: %.1f GiB\n", $2 / 1048576}' /proc/meminfo
    echo "kernel: $(uname -sr)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# ev_busy: true (and says so) while the machine runs a test suite.
ev_busy() {
    local p
    p=$(pgrep -x ctest || true)
    [[ -z $p ]] && return 1
    ev_log "a test suite is running (ctest, pid $(echo "$p" | tr '\n' ' '))"
    return 0
}

# ev_wait_quiet SECONDS: waits (bounded) until no test suite runs; fails
# with a message if one still runs after SECONDS.
ev_wait_quiet() {
    local i
    for ((i = 0; i < $1; i += 10)); do
        ev_busy || return 0
        ev_sleep 10
    done
    ev_die "a test suite still runs after $1 s; measure later (or --force)"
}

# ---------------------------------------------------------------------
# CPU quotas: cgroup v1 (cpu controller) or v2 (cpu.max)
# ---------------------------------------------------------------------

# cg_setup: makes our parent group, named after the script and its pid,
# in the v1 cpu hierarchy if one is mounted and writable, else in the v2
# unified hierarchy (enabling +cpu for its children). Its weight is raised
# (cpu.shares / cpu.weight) so that the quotas of its children behave as
# dedicated machines when others load this one; the quotas bound what it
# takes. Removes the groups of earlier runs whose script is gone. Fails
# with a message if neither hierarchy is writable.
cg_setup() {
    local name=lev-eval-$EV_NAME-$$ mnt root
    mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ {print $2; exit}' /proc/mounts)
    if [[ -n $mnt && -f $mnt/cpu.cfs_quota_us ]] && mkdir "$mnt/$name" 2>/dev/null; then
        CG_MODE=v1 CG_BASE=$mnt/$name
        echo 10240 >"$CG_BASE/cpu.shares" 2>/dev/null || true
        cg_reap_stale "$mnt"
        # CPU time per group: cpuacct, with cpu or in a hierarchy of its own
        local acct
        acct=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuacct(,|$)/ {print $2; exit}' /proc/mounts)
        if [[ -n $acct && $acct != "$mnt" && -f $acct/cpuacct.usage ]]; then
            cg_reap_stale "$acct"
            mkdir "$acct/$name" 2>/dev/null && CG_ACCT=$acct/$name
        fi
        return 0
    fi
    for root in $(awk '$3 == "cgroup2" {print $2}' /proc/mounts); do
        [[ -f $root/cgroup.controllers ]] && grep -qw cpu "$root/cgroup.controllers" || continue
        if ! grep -qw cpu "$root/cgroup.subtree_control"; then
            echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null || continue
        fi
        mkdir "$root/$name" 2>/dev/null || continue
        if ! echo +cpu >"$root/$name/cgroup.subtree_control" 2>/dev/null; then
            rmdir "$root/$name"
            continue
        fi
        CG_MODE=v2 CG_BASE=$root/$name
        echo 1000 >"$CG_BASE/cpu.weight" 2>/dev/null || true
        cg_reap_stale "$root"
        return 0
    done
    ev_die "cannot make a CPU-controller cgroup: neither cgroup v1's cpu hierarchy" \
        "(cpu.cfs_quota_us) nor a cgroup v2 hierarchy with the cpu controller" \
        "(cpu.max) is writable here; run as root on Linux with the CPU controller enabled"
}

# cg_reap_stale MOUNT: removes empty groups left by runs of this script
# whose process is gone (a SIGKILL'ed run cannot clean up).
cg_reap_stale() {
    local d pid sub
    for d in "$1"/lev-eval-"$EV_NAME"-*; do
        [[ -d $d ]] || continue
        pid=${d##*-}
        [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null || continue
        for sub in "$d"/*/; do
            if [[ -f $sub/cgroup.procs && ! -s $sub/cgroup.procs ]]; then rmdir "$sub" 2>/dev/null || true; fi
        done
        if rmdir "$d" 2>/dev/null; then ev_log "removed the stale group $d"; fi
    done
    return 0
}

# cg_group GROUP QUOTA: makes the group GROUP under ours with a CPU quota
# of QUOTA cores (e.g. 0.5; "max" for no limit). A group that exists gets
# the new quota.
cg_group() {
    local g=$CG_BASE/$1 q=$2 us
    [[ -n $CG_MODE ]] || ev_die "cg_group before cg_setup"
    if [[ ! -d $g ]]; then
        mkdir "$g" || ev_die "cannot make the group $g"
        CG_GROUPS+=("$1")
        if [[ -n $CG_ACCT ]]; then mkdir "$CG_ACCT/$1" || ev_die "cannot make the group $CG_ACCT/$1"; fi
    fi
    if [[ $q == max ]]; then
        us=-1
    else
        us=$(awk -v q="$q" -v p="$CG_PERIOD_US" 'BEGIN {printf "%d", q * p + 0.5}')
        ((us >= 1000)) || ev_die "quota $q of a $CG_PERIOD_US us period is under 1 ms"
    fi
    if [[ $CG_MODE == v1 ]]; then
        echo -1 >"$g/cpu.cfs_quota_us" && echo "$CG_PERIOD_US" >"$g/cpu.cfs_period_us" &&
            echo "$us" >"$g/cpu.cfs_quota_us" || ev_die "cannot set the quota of $g"
    else
        if [[ $us == -1 ]]; then us=max; fi
        echo "$us $CG_PERIOD_US" >"$g/cpu.max" || ev_die "cannot set the quota of $g"
    fi
}

# cg_quota_of GROUP: the quota in force, in cores ("max" if none).
cg_quota_of() {
    local g=$CG_BASE/$1
    if [[ $CG_MODE == v1 ]]; then
        awk -v p="$(cat "$g/cpu.cfs_period_us")" '{ if ($1 < 0) print "max"; else printf "%.3f\n", $1 / p }' \
            "$g/cpu.cfs_quota_us"
    else
        awk '{ if ($1 == "max") print "max"; else printf "%.3f\n", $1 / $2 }' "$g/cpu.max"
    fi
}

# cg_pids GROUP: the processes in GROUP, one a line.
cg_pids() { cat "$CG_BASE/$1/cgroup.procs" 2>/dev/null || true; }

# cg_signal GROUP SIG: sends SIG to every process in GROUP (a machine
# that stops or dies: the levpeer and its executors together).
cg_signal() {
    local pid
    for pid in $(cg_pids "$1"); do kill "-$2" "$pid" 2>/dev/null || true; done
}

# cg_usage_us GROUP: the CPU time GROUP's processes used so far, in
# microseconds (-1 when this machine does not count it per group).
cg_usage_us() {
    if [[ $CG_MODE == v2 ]]; then
        awk '$1 == "usage_usec" {print $2}' "$CG_BASE/$1/cpu.stat"
    elif [[ -n $CG_ACCT && -f $CG_ACCT/$1/cpuacct.usage ]]; then
        echo $(($(cat "$CG_ACCT/$1/cpuacct.usage") / 1000))
    elif [[ -f $CG_BASE/$1/cpuacct.usage ]]; then
        echo $(($(cat "$CG_BASE/$1/cpuacct.usage") / 1000))
    else
        echo -1
    fi
}

# cg_stat GROUP: "PERIODS THROTTLED": the group's CFS periods with
# runnable work so far, and how many of them ended throttled (the group
# used its whole quota).
cg_stat() {
    awk '$1 == "nr_periods" {p = $2} $1 == "nr_throttled" {t = $2} END {printf "%d %d\n", p, t}' \
        "$CG_BASE/$1/cpu.stat"
}

# cg_kill_all: SIGKILL to every process left in our groups (bounded).
cg_kill_all() {
    [[ -n $CG_BASE && -d $CG_BASE ]] || return 0
    local g i left
    for ((i = 0; i < 50; i++)); do
        left=0
        for g in "${CG_GROUPS[@]}"; do
            [[ -n $(cg_pids "$g") ]] || continue
            left=1
            cg_signal "$g" CONT
            cg_signal "$g" KILL
        done
        ((left)) || return 0
        sleep 0.1
    done
}

# cg_teardown: removes our groups (their processes killed first).
cg_teardown() {
    [[ -n $CG_BASE && -d $CG_BASE ]] || return 0
    local g i
    cg_kill_all
    for g in "${CG_GROUPS[@]}"; do
        for ((i = 0; i < 50; i++)); do
            rmdir "$CG_BASE/$g" 2>/dev/null && break
            [[ -d $CG_BASE/$g ]] || break
            sleep 0.1
        done
    done
    rmdir "$CG_BASE" 2>/dev/null || ev_log "could not remove the group $CG_BASE"
    if [[ -n $CG_ACCT ]]; then
        for g in "${CG_GROUPS[@]}"; do rmdir "$CG_ACCT/$g" 2>/dev/null || true; done
        rmdir "$CG_ACCT" 2>/dev/null || ev_log "could not remove the group $CG_ACCT"
    fi
    CG_BASE= CG_ACCT=
}

# ev_spawn GROUP OUT ERR CMD...: starts CMD in the background inside
# GROUP ("" for none) with its standard output and error to OUT and ERR;
# sets EV_PID. The process joins the group before it execs CMD, so all it
# starts (a levpeer's executors) is in the group too.
ev_spawn() {
    local g=$1 out=$2 err=$3
    shift 3
    if [[ -n $g ]]; then
        # shellcheck disable=SC2016 # $$, $1 and "$@" are the inner shell's
        sh -c 'echo $$ >"$0" || exit 126; if [ -n "$1" ]; then echo $$ >"$1" || exit 126; fi
               shift; exec "$@"' "$CG_BASE/$g/cgroup.procs" "${CG_ACCT:+$CG_ACCT/$g/cgroup.procs}" "$@" \
            </dev/null >"$out" 2>"$err" &
    else
        "$@" </dev/null >"$out" 2>"$err" &
    fi
    EV_PID=$!
    EV_PIDS+=("$EV_PID")
}

# ev_timed GROUP OUT ERR CMD...: runs CMD in GROUP (in the foreground) and
# sets EV_SECS to its wall-clock time and EV_RC to its exit status.
ev_timed() {
    local t0 t1
    t0=$(ev_now)
    ev_spawn "$@"
    EV_RC=0
    wait "$EV_PID" || EV_RC=$?
    t1=$(ev_now)
    EV_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
}

# ev_best FILE: the length on the last line `best LENGTH gap PCT% tour
# FILE` of a run's output, or nothing.
ev_best() { tail -n 1 "$1" 2>/dev/null | awk '$1 == "best" {print $2}'; }

# ev_median NUMBER...: the median (mean of the middle two when even).
ev_median() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
        if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
        else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---------------------------------------------------------------------
# A loopback mesh of levpeers
# ---------------------------------------------------------------------

# The evaluation's meshes run without keys (levpeer refuses to unless told,
# and CurveZMQ's own cost is measured apart): LEV_INSECURE=1 for each.
export LEV_INSECURE=1
MESH_OPTS=()     # extra options for every levpeer
MESH_NET_DELAY=  # one-way delay between peers in ms (a lagrelay in front of each); empty: none
MESH_NET_RATE=0  # Mbit/s of each direction of a connection between peers (0: unpaced)
MESH_RELAYS=()   # lagrelay pids
MESH_CLIENT=     # the client's peer's endpoint
MESH_PIDS=()     # levpeer pids: the client's peer first
MESH_EPS=()      # worker endpoints, in the order of their groups
MESH_GROUPS=()   # worker groups, same order

# ev_first_line FILE PID: the first line of FILE once it is an endpoint
# (tcp://...), waiting while PID lives (bounded: 20 s); empty if none.
ev_first_line() {
    local i ep=
    for ((i = 0; i < 400; i++)); do
        ep=$(head -n 1 "$1" 2>/dev/null || true)
        [[ $ep == tcp://* ]] && break
        ev_alive "$2" || break
        sleep 0.05
    done
    [[ $ep == tcp://* ]] && echo "$ep"
}

# ev_listen_port PID: the TCP port process PID listens on (from /proc).
ev_listen_port() {
    local inodes hex
    inodes=" $(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null |
        sed 's/socket:\[\([0-9]*\)\]/\1/' | tr '\n' ' ')"
    hex=$(awk -v ino="$inodes" '$4 == "0A" && index(ino, " " $10 " ") {
        split($2, a, ":"); print a[2]; exit }' /proc/net/tcp)
    [[ -n $hex ]] && echo $((16#$hex))
}

# mesh_peer NAME GROUP ARGS...: starts a levpeer on a free loopback port in
# GROUP; sets EV_EP to the endpoint other peers reach it at, and
# EV_EP_DIRECT to the one a client on its machine uses (the same, unless
# MESH_NET_DELAY puts a lagrelay in front of it, in the client's group), once
# it is ready (bounded wait).
mesh_peer() {
    local name=$1 g=$2 ep= relay= adv=() port
    shift 2
    if [[ -n $MESH_NET_DELAY ]]; then
        rm -f "$EV_TMP/$name.target"
        ev_spawn "${MESH_CG:-client}" "$EV_TMP/$name.relay" "$EV_TMP/$name.relay.err" "$LAGRELAY" \
            --listen 127.0.0.1:0 --to-file "$EV_TMP/$name.target" \
            --delay-ms "$MESH_NET_DELAY" --rate-mbit "$MESH_NET_RATE"
        disown "$EV_PID"
        MESH_RELAYS+=("$EV_PID")
        relay=$(ev_first_line "$EV_TMP/$name.relay" "$EV_PID")
        [[ -n $relay ]] || ev_die "lagrelay for $name did not start: $(cat "$EV_TMP/$name.relay.err")"
        adv=(--advertise "$relay")
    fi
    ev_spawn "$g" "$EV_TMP/$name.out" "$EV_TMP/$name.log" env LEV_EXEC_NICE=0 \
        "$LEVPEER" --listen tcp://127.0.0.1:0 --log-level warn "${adv[@]}" "${MESH_OPTS[@]}" "$@"
    # out of the job table: a peer killed on purpose is not reported
    disown "$EV_PID"
    ep=$(ev_first_line "$EV_TMP/$name.out" "$EV_PID")
    if [[ -z $ep ]]; then
        cat "$EV_TMP/$name.log" >&2
        ev_die "levpeer $name did not start"
    fi
    EV_EP=$ep EV_EP_DIRECT=$ep
    if [[ -n $relay ]]; then
        port=$(ev_listen_port "$EV_PID")
        [[ -n $port ]] || ev_die "cannot find the port levpeer $name listens on"
        EV_EP_DIRECT=tcp://127.0.0.1:$port
        echo "$EV_EP_DIRECT" >"$EV_TMP/$name.target"
    fi
}

# mesh_alive: how many peers the client's peer sees alive.
mesh_alive() {
    local n
    n=$("$LEVCTL" status --peer "$MESH_CLIENT" --json --timeout 2000 2>/dev/null |
        jq '[.peers[] | select(.state == "alive")] | length' 2>/dev/null) || true
    [[ $n =~ ^[0-9]+$ ]] || n=0
    echo "$n"
}

# mesh_start CLIENT_GROUP WORKER_GROUP... [-- WORKER_ARGS...]: the client's
# peer (--cores -1: it deploys, runs no VT) in CLIENT_GROUP, and one
# worker of one core in each WORKER_GROUP joining it; waits (bounded)
# until the client's peer sees all of them alive.
mesh_start() {
    local cg=$1 g n=0 i args=()
    MESH_CG=$cg
    shift
    MESH_GROUPS=()
    while (($#)) && [[ $1 != -- ]]; do
        MESH_GROUPS+=("$1")
        shift
    done
    if (($#)); then
        shift
        args=("$@")
    fi
    MESH_PIDS=() MESH_EPS=()
    mesh_peer client "$cg" --cores -1
    MESH_CLIENT=$EV_EP_DIRECT # the client and its peer share a machine
    local seed=$EV_EP
    MESH_PIDS+=("$EV_PID")
    for g in "${MESH_GROUPS[@]}"; do
        n=$((n + 1))
        mesh_peer "worker$n" "$g" --cores 1 --join "$seed" "${args[@]}"
        MESH_PIDS+=("$EV_PID")
        MESH_EPS+=("$EV_EP")
    done
    local deadline=$((SECONDS + 30)) seen=0
    for ((i = 0; i < 300 && SECONDS < deadline; i++)); do
        seen=$(mesh_alive)
        ((seen >= n + 1)) && return 0
        ev_sleep 0.2
    done
    "$LEVCTL" status --peer "$MESH_CLIENT" --timeout 2000 >&2 || true
    for ((i = 0; i <= n; i++)); do
        [[ -s $EV_TMP/worker$i.log ]] && { echo "worker$i:"; tail -n 5 "$EV_TMP/worker$i.log"; } >&2
    done
    tail -n 5 "$EV_TMP/client.log" >&2
    ev_die "the mesh did not form: $seen of $((n + 1)) peers alive after 30 s"
}

# mesh_stop: SIGTERM to the mesh's levpeers (graceful), SIGKILL after 5 s,
# and whatever is left in the worker groups.
mesh_stop() {
    local g
    ev_stop_pids 5 "${MESH_PIDS[@]}"
    for g in "${MESH_GROUPS[@]}"; do
        cg_signal "$g" CONT
        cg_signal "$g" KILL
    done
    ((${#MESH_RELAYS[@]} == 0)) || kill "${MESH_RELAYS[@]}" 2>/dev/null || true
    MESH_PIDS=() MESH_EPS=() MESH_RELAYS=()
}

# mesh_status FILE: saves the mesh's status (JSON) in FILE; 0 if it came.
mesh_status() {
    "$LEVCTL" status --peer "$MESH_CLIENT" --json --timeout 2000 >"$1" 2>/dev/null
}

# ---------------------------------------------------------------------
# Tours
# ---------------------------------------------------------------------

# ev_tour_length TSP TOUR: recomputes, independently of the programs, the
# length of the TSPLIB TOUR file on the instance (EUC_2D, CEIL_2D or ATT
# distances) after checking that it lists each city once; prints it, or
# an error on standard error and fails.
ev_tour_length() {
    awk -v tourfile="$2" '
    function fail(m) { print "tour check: " m > "/dev/stderr"; bad = 1; exit 1 }
    FNR == 1 { file++ }
    file == 1 {
        line = $0; sub(/^[ \t]+/, "", line)
        if (line ~ /^EDGE_WEIGHT_TYPE/) { t = line; sub(/.*:[ \t]*/, "", t); sub(/[ \t]+$/, "", t); type = t }
        if (line ~ /^NODE_COORD_SECTION/) { incoord = 1; next }
        if (line ~ /^EOF/) incoord = 0
        if (incoord && NF >= 3 && $1 ~ /^[0-9]+$/) { x[$1] = $2; y[$1] = $3; n++ }
        next
    }
    file == 2 {
        line = $0; sub(/^[ \t]+/, "", line)
        if (line ~ /^TOUR_SECTION/) { intour = 1; next }
        if (!intour) next
        for (i = 1; i <= NF; i++) {
            if ($i == "-1" || $i == "EOF") { intour = 0; break }
            c = $i + 0
            if (!(c in x)) fail("city " $i " is not in the instance")
            if (c in seen) fail("city " c " appears twice")
            seen[c] = 1; tour[++m] = c
        }
    }
    END {
        if (bad) exit 1
        if (type != "EUC_2D" && type != "CEIL_2D" && type != "ATT")
            fail("distance " type " is not checked here")
        if (m != n) fail("the tour has " m " cities, the instance " n)
        len = 0
        for (i = 1; i <= m; i++) {
            a = tour[i]; b = tour[i % m + 1]
            dx = x[a] - x[b]; dy = y[a] - y[b]
            if (type == "EUC_2D") d = int(sqrt(dx * dx + dy * dy) + 0.5)
            else if (type == "CEIL_2D") { d = sqrt(dx * dx + dy * dy); d = (d == int(d)) ? d : int(d) + 1 }
            else { r = sqrt((dx * dx + dy * dy) / 10.0); d = int(r + 0.5); if (d < r) d++ }
            len += d
        }
        printf "%d\n", len
    }' "$1" "$2"
}
