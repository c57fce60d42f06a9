#!/usr/bin/env bash
# eval/chaos/run.sh - a soak under faults: the TSP job (lev-tsp) and token
# rings of VTs (chaos_ring) run one job after another on a mesh with keys
# (every connection CurveZMQ) while worker peers are killed (SIGKILL),
# paused (SIGSTOP, then SIGCONT), restarted on their endpoint and cut off
# from the network (a partition that heals), by a schedule drawn from a
# seed. Every job's result is checked exactly: the tour against the one
# lev-tsp-seq finds for the same options, each ring against the values
# its VTs must return and the reports they must send once each. Prints
# each job and fault as it goes, then a summary: faults by kind, jobs,
# results checked, anything lost or duplicated. Needs root (network
# namespaces, cgroups). See "Chaos: a soak under faults" in eval/README.md.
#
#   eval/chaos/run.sh [SECONDS] [--seed S] [--workers W] [--kinds LIST]
#                     [--max-faults N] [--messages relay|direct|both]
#                     [--insecure] [--budget GENS] [--rounds R]
#                     [--suspect-ms MS] [--checkpoint-ms MS]
#                     [--job-timeout S] [--out FILE] [--keep DIR] [--help]
#
#   SECONDS            faults are injected and jobs started for SECONDS
#                      (default 180); jobs running then end without faults
#   --seed S           the schedule's seed (default $CHAOS_SEED, else drawn
#                      and printed): the same seed and options give the
#                      same schedule (times, kinds, victims, lengths)
#   --workers W        worker peers (default 5, at least 3)
#   --kinds LIST       comma list of kill, pause, restart, partition
#                      (default all four)
#   --max-faults N     workers under a fault at once, 1 or 2 (default 2)
#   --messages M       how the VTs' messages go: relay (through the
#                      deployer), direct (between executors) or both (two
#                      deployers, the jobs taking them in turn; default)
#   --insecure         a mesh without keys (LEV_INSECURE=1)
#   --budget GENS      generations of a TSP job (default 128000; pr1002,
#                      8 islands, 1000 generations an epoch, 3 VTs)
#   --rounds R         rounds of a ring of 6 VTs (default 5000)
#   --suspect-ms MS    every levpeer's --suspect-ms (default 3500)
#   --checkpoint-ms MS the jobs' checkpoint interval (default 2000)
#   --job-timeout S    a job not over after S s fails as lost (default 150)
#   --out FILE         also write the summary (markdown) to FILE
#   --keep DIR         keep the peers' logs, the schedule and the jobs'
#                      outputs in DIR
#
# The fault model it stays inside (peercontroller/README.md, "Recovery
# and fencing"; docs/ARCHITECTURE.md, "How recovery is proven"): with 2
# replicas, any two faults of peers other than the client's within one
# checkpoint interval leave every VT's state, on a mesh of at least 4
# peers; the faults are crashes, restarts on the same endpoint, pauses of
# up to 5 s and partitions that heal. So the schedule's rules are:
#   - the client's peers (the deployers) are never touched; only workers;
#   - at most --max-faults (2) workers are under a fault at once, and a
#     worker counts as under a fault from its start until HEAL + 2
#     checkpoint intervals after its end, HEAL being suspect-ms + 2 s: the
#     time for the mesh to see it back, then for every VT to have its
#     images held again. So at least W - 2 workers are always sound;
#   - a pause lasts 0.5-5 s; a kill leaves the peer down 1-6 s, then a new
#     levpeer starts on its endpoint; a restart starts it at once; a
#     partition (its link down) lasts 0.5-8 s, far below the 30 s after
#     which membership forgets a dead peer;
#   - faults start 0.5-6 s apart (two may fall in one checkpoint
#     interval), the first 3-6 s in, none in the last 2 s;
#   - the rules hold on the times as they come: a fault whose worker, or
#     two workers, are still under a fault waits, and every later fault
#     waits as long (the lag, printed at the end).
# HEAL after a fault ends the script checks that the relaying deployer sees
# the worker in the mesh again (alive or suspect). A worker that is not
# back is restarted (counted as "not back, restarted") so that the soak
# stays inside the model; that is a finding, not a pass.
#
# Timing: each fault runs in a process of its own, and the injector in a
# cgroup weighted ten times a peer's, at nice -10, so that a fault lasts as
# drawn on a machine the mesh keeps busy.
#
# Partitions: every peer runs in a network namespace of its own, linked to
# a bridge in another namespace by a veth pair; a partition sets the
# worker's link down on the bridge's side (its packets are dropped, as on a
# cut cable: no refusal, no reset) and heals by setting it up. Pauses and
# kills signal every process of the worker's cgroup (its levpeer and its
# executors), as eval/tsp/faults.sh does.
#
# Environment: LEV_EVAL_BUILD (build tree, default build-eval/), CHAOS_SEED.
set -euo pipefail
# shellcheck disable=SC2317 # (in braces, the handlers of traps look unreachable to it)
{ # the whole script is read before it runs: editing it does not change a run


cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck disable=SC2034 # read by lib.sh
EV_NAME=chaos
. eval/tsp/lib.sh
unset LEV_INSECURE # lib.sh's meshes run without keys; this one has them

usage() {
    sed -n '14,41s/^# \{0,1\}//p' "$0"
    exit "${1:-2}"
}

DURATION=180 SEED=${CHAOS_SEED:-} WORKERS=5 KINDS=kill,pause,restart,partition MAXF=2
MESSAGES=both INSECURE=0 BUDGET=128000 ROUNDS=5000 SUSPECT_MS=3500 CHECKPOINT_MS=2000
JOB_TIMEOUT=150 OUTFILE="" KEEP=""
INSTANCE=samples/tsp/data/pr1002.tsp ISLANDS=8 EPOCH_GENS=1000 TSP_VTS=3 RING_VTS=6
CMDLINE="eval/chaos/run.sh${*:+ $*}"
while (($#)); do
    case $1 in
    --seed) SEED=${2:?}; shift ;;
    --workers) WORKERS=${2:?}; shift ;;
    --kinds) KINDS=${2:?}; shift ;;
    --max-faults) MAXF=${2:?}; shift ;;
    --messages) MESSAGES=${2:?}; shift ;;
    --insecure) INSECURE=1 ;;
    --budget) BUDGET=${2:?}; shift ;;
    --rounds) ROUNDS=${2:?}; shift ;;
    --suspect-ms) SUSPECT_MS=${2:?}; shift ;;
    --checkpoint-ms) CHECKPOINT_MS=${2:?}; shift ;;
    --job-timeout) JOB_TIMEOUT=${2:?}; shift ;;
    --out) OUTFILE=${2:?}; shift ;;
    --keep) KEEP=${2:?}; shift ;;
    --help | -h) usage 0 ;;
    -*) echo "chaos: unknown option $1" >&2; usage ;;
    *) DURATION=$1 ;;
    esac
    shift
done
[[ -n $SEED ]] || SEED=$((RANDOM * 32768 + RANDOM))
for v in DURATION SEED WORKERS MAXF BUDGET ROUNDS SUSPECT_MS CHECKPOINT_MS JOB_TIMEOUT; do
    [[ ${!v} =~ ^[0-9]{1,15}$ && ${!v} -gt 0 ]] || ev_die "${v,,} must be a positive integer, not '${!v}'"
done
((WORKERS >= 3 && WORKERS <= 32)) || ev_die "--workers must be 3 to 32 (the fault model needs 4 peers)"
((MAXF <= 2)) || ev_die "--max-faults above 2 leaves the fault model (2 replicas)"
((WORKERS - MAXF >= 1)) || ev_die "--workers must exceed --max-faults"
[[ $MESSAGES == relay || $MESSAGES == direct || $MESSAGES == both ]] ||
    ev_die "--messages must be relay, direct or both"
KIND_LIST=()
for k in ${KINDS//,/ }; do
    [[ $k == kill || $k == pause || $k == restart || $k == partition ]] || ev_die "--kinds: unknown kind '$k'"
    KIND_LIST+=("$k")
done
((${#KIND_LIST[@]})) || ev_die "--kinds names no kind"
((EUID == 0)) || ev_die "needs root (network namespaces and cgroups)"
command -v ip >/dev/null || ev_die "needs ip (iproute2) for the network namespaces"

HEAL_MS=$((SUSPECT_MS + 2000))
SETTLE_MS=$((HEAL_MS + 2 * CHECKPOINT_MS))
DUR_MS=$((DURATION * 1000))

ev_init
trap chaos_cleanup EXIT
ev_packages jq
ev_programs ""
. eval/build.sh
eval_build chaos_ring >&2
CHAOSRING=$BUILD/eval/chaos_ring
cg_setup
# cgroups here only group a peer's processes (to signal them together):
# the run takes the default CPU weight (lib.sh raises it for the quotas
# of faults.sh), and the injector, this shell and the faults' processes,
# sits in a group of its own weighted ten times a peer's, so that it runs
# at its times however busy the mesh keeps the machine.
cg_group injector max
if [[ $CG_MODE == v1 ]]; then
    echo 1024 >"$CG_BASE/cpu.shares" && echo 10240 >"$CG_BASE/injector/cpu.shares"
else
    echo 100 >"$CG_BASE/cpu.weight" && echo 1000 >"$CG_BASE/injector/cpu.weight"
fi
echo $$ >"$CG_BASE/injector/cgroup.procs"

# ---------------------------------------------------------------------
# Network: a namespace per peer, all on one bridge
# ---------------------------------------------------------------------

TAG=lc$$        # names of this run's namespaces and links
NET=10.213.0    # the bridge's subnet (private to these namespaces)
NS_ALL=()

# ns_reap_stale: removes the namespaces of runs of this script whose
# process is gone (a run killed with SIGKILL cannot clean up), after
# killing what still runs in them.
ns_reap_stale() {
    local ns pid p
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^lc[0-9]+-' || true); do
        pid=${ns%%-*}
        pid=${pid#lc}
        ! kill -0 "$pid" 2>/dev/null || continue
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null && ev_log "removed the stale namespace $ns"
    done
    return 0
}

# ns_add NAME ADDR: a namespace TAG-NAME whose interface has NET.ADDR/24,
# linked by a veth pair to the bridge (the bridge's end: TAG-NAME's link
# "${TAG}NAME" in the hub namespace).
ns_add() {
    local ns=$TAG-$1 hub=$TAG-hub a=${TAG}$1 b=${TAG}$1p
    ip netns add "$ns" && NS_ALL+=("$ns")
    ip link add "$a" type veth peer name "$b"
    ip link set "$a" netns "$hub"
    ip link set "$b" netns "$ns"
    ip -n "$hub" link set "$a" master br0 up
    ip -n "$ns" addr add "$NET.$2/24" dev "$b"
    ip -n "$ns" link set "$b" up
    ip -n "$ns" link set lo up
}

# link_set NAME up|down: the bridge's end of namespace TAG-NAME's link.
link_set() { ip -n "$TAG-hub" link set "${TAG}$1" "$2"; }

ns_teardown() {
    local ns p
    for ns in "${NS_ALL[@]}"; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            kill -CONT "$p" 2>/dev/null || true
            kill -KILL "$p" 2>/dev/null || true
        done
    done
    for ns in "${NS_ALL[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    NS_ALL=()
}

chaos_cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    # the faults' processes first, so that none acts on what goes next
    for p in "${FPIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    # this shell out of the injector's group, which goes with the others
    if [[ -n $CG_BASE ]]; then echo $$ >"${CG_BASE%/*}/cgroup.procs" 2>/dev/null || true; fi
    ev_kill_all
    cg_teardown
    ns_teardown
    if [[ -n $KEEP && -n $EV_TMP && -d $EV_TMP ]]; then
        rm -f "$EV_TMP"/mesh.key "$EV_TMP"/mesh.pub
        mkdir -p "$KEEP" && cp -r "$EV_TMP"/. "$KEEP"/ && ev_log "logs kept in $KEEP"
    fi
    if [[ -n $EV_TMP ]]; then rm -rf "$EV_TMP"; fi
    exit "$rc"
}

ns_reap_stale
ip netns add "$TAG-hub" && NS_ALL+=("$TAG-hub")
ip -n "$TAG-hub" link add br0 type bridge
ip -n "$TAG-hub" link set br0 up
ns_add c 1
for ((i = 1; i <= WORKERS; i++)); do ns_add "w$i" $((10 + i)); done

# ---------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------

KEY_ENV=()
PEER_OPTS=(--log-level info --suspect-ms "$SUSPECT_MS")
if ((INSECURE)); then
    KEY_ENV=(LEV_INSECURE=1)
else
    "$LEVCTL" keygen "$EV_TMP/mesh" >/dev/null
    KEY_ENV=(LEV_MESH_KEY="$EV_TMP/mesh.key")
    PEER_OPTS+=(--key "$EV_TMP/mesh.key")
fi
RELAY=tcp://$NET.1:7000 DIRECT=tcp://$NET.1:7001
DEPLOYERS=()
case $MESSAGES in
relay) DEPLOYERS=("$RELAY") ;;
direct) DEPLOYERS=("$DIRECT") ;;
both) DEPLOYERS=("$RELAY" "$DIRECT") ;;
esac
W_EP=() FPIDS=()

# peer_spawn NAME NS GROUP ENDPOINT ARGS...: starts a levpeer in namespace
# NS and cgroup GROUP on ENDPOINT, without waiting; sets EV_PID. Its log
# (NAME.log) gathers every life of the endpoint.
peer_spawn() {
    local name=$1 ns=$2 g=$3 ep=$4
    shift 4
    echo "=== $(date -u +%FT%T.%3NZ) levpeer starts on $ep" >>"$EV_TMP/$name.log"
    # shellcheck disable=SC2016 # $0, $@ and $LOG are the inner shell's
    ev_spawn "$g" "$EV_TMP/$name.out" "$EV_TMP/$name.err" nice -n $((-$(nice))) ip netns exec "$ns" \
        env "${KEY_ENV[@]}" LOG="$EV_TMP/$name.log" sh -c 'exec "$0" "$@" 2>>"$LOG"' \
        "$LEVPEER" --listen "$ep" "${PEER_OPTS[@]}" "$@"
    disown "$EV_PID"
}

# peer_start NAME NS GROUP ENDPOINT ARGS...: peer_spawn, then waits
# (bounded) until it printed its endpoint.
peer_start() {
    local name=$1 ep=$4 got
    peer_spawn "$@"
    got=$(ev_first_line "$EV_TMP/$name.out" "$EV_PID")
    [[ $got == "$ep" ]] || {
        tail -n 20 "$EV_TMP/$name.log" "$EV_TMP/$name.err" >&2
        ev_die "levpeer $name did not start on $ep"
    }
}

# in_client CMD...: CMD in the client's namespace, with the mesh's keys.
in_client() { ip netns exec "$TAG-c" env "${KEY_ENV[@]}" "$@"; }

# status EP: the status document of the peer at EP (JSON), or nothing.
status() { in_client "$LEVCTL" status --peer "$1" --json --timeout 1500 2>/dev/null || true; }

# state_of EP: the state of worker EP as the relaying deployer sees it
# ("alive", "suspect", "dead", "left", or "absent").
state_of() {
    local s
    s=$(status "$RELAY" | jq -r --arg e "$1" '[.peers[] | select(.endpoint == $e) | .state] | last // "absent"' 2>/dev/null) || true
    echo "${s:-absent}"
}

cg_group client max
peer_start relay "$TAG-c" client "$RELAY" --cores -1 --messages relay
DEPLOYER_PIDS=("$EV_PID")
peer_start direct "$TAG-c" client "$DIRECT" --cores -1 --messages direct --join "$RELAY"
DEPLOYER_PIDS+=("$EV_PID")
for ((i = 1; i <= WORKERS; i++)); do
    cg_group "w$i" max
    W_EP[i]=tcp://$NET.$((10 + i)):7000
    peer_start "w$i" "$TAG-w$i" "w$i" "${W_EP[i]}" --cores 1 --join "$RELAY"
done
for ((i = 0; i < 150; i++)); do
    n=$(status "$RELAY" | jq '[.peers[] | select(.state == "alive")] | length' 2>/dev/null) || n=0
    ((${n:-0} >= WORKERS + 2)) && break
    ev_sleep 0.2
done
((${n:-0} >= WORKERS + 2)) || ev_die "the mesh did not form: ${n:-0} of $((WORKERS + 2)) peers alive after 30 s"
MACHINE=$(ev_machine)

# ---------------------------------------------------------------------
# The schedule: drawn from the seed alone (Park-Miller's generator, exact
# in bash's integers), before anything runs
# ---------------------------------------------------------------------

RNG=$((10#$SEED % 2147483646 + 1))
# draw LO HI: sets R to a number from LO to HI.
draw() {
    RNG=$((RNG * 16807 % 2147483647))
    R=$(($1 + RNG % ($2 - $1 + 1)))
}
PLAN=$EV_TMP/schedule.txt
: >"$PLAN"
declare -a BUSY FK FV FD FT
for ((i = 1; i <= WORKERS; i++)); do BUSY[i]=0; done
draw 3000 6000
t=$R nf=0
while ((t < DUR_MS - 2000)); do
    free=() active=0 next=$DUR_MS
    for ((i = 1; i <= WORKERS; i++)); do
        if ((BUSY[i] > t)); then
            active=$((active + 1))
            ((BUSY[i] < next)) && next=${BUSY[i]}
        else
            free+=("$i")
        fi
    done
    if ((active >= MAXF || ${#free[@]} == 0)); then
        t=$next
        continue
    fi
    draw 0 $((${#KIND_LIST[@]} - 1))
    kind=${KIND_LIST[R]}
    draw 0 $((${#free[@]} - 1))
    v=${free[R]}
    case $kind in
    pause) draw 500 5000 ;;
    kill) draw 1000 6000 ;;
    restart) R=0 ;;
    partition) draw 500 8000 ;;
    esac
    d=$R nf=$((nf + 1))
    FK[nf]=$kind FV[nf]=$v FD[nf]=$d FT[nf]=$t
    BUSY[v]=$((t + d + SETTLE_MS))
    printf '%d %d.%03d s: %s w%d%s\n' "$nf" $((t / 1000)) $((t % 1000)) "$kind" "$v" \
        "$( ((d)) && printf ' for %d.%03d s' $((d / 1000)) $((d % 1000)))" >>"$PLAN"
    draw 500 6000
    t=$((t + R))
done

# ---------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------

declare -A INJECTED BACK REPAIRED
for k in kill pause restart partition; do INJECTED[$k]=0 BACK[$k]=0 REPAIRED[$k]=0; done
FAULTLOG=$EV_TMP/faults.log
: >"$FAULTLOG"
mkdir "$EV_TMP/results"
T0=
# now: sets NOW to the milliseconds since the run started (no process).
now() { NOW=$((${EPOCHREALTIME/./} / 1000 - T0)); }
say() {
    local NOW
    now
    printf '%d.%03d s  %s\n' $((NOW / 1000)) $((NOW % 1000)) "$*" >>"$FAULTLOG"
    printf '%d.%03d s  %s\n' $((NOW / 1000)) $((NOW % 1000)) "$*" >&2
}

# alive PID: the process runs (a zombie counts as gone); no process started.
alive() {
    local _p _c st
    read -r _p _c st _ 2>/dev/null <"/proc/$1/stat" || return 1
    [[ $st != Z && $st != X ]]
}

# w_kill I: SIGKILL to every process of worker I (stopped first, so that
# none starts another meanwhile), bounded until all are gone.
w_kill() {
    local g=w$1 j
    cg_signal "$g" STOP
    for ((j = 0; j < 100; j++)); do
        cg_signal "$g" KILL
        [[ -n $(cg_pids "$g") ]] || break
        sleep 0.05
    done
    [[ -z $(cg_pids "$g") ]] || say "worker $1's processes do not die"
}

# w_start I: a new levpeer on worker I's endpoint (not waited for: the
# fault's check finds out whether it came back).
w_start() { peer_spawn "w$1" "$TAG-w$1" "w$1" "${W_EP[$1]}" --cores 1 --join "$RELAY"; }

# fault_run ID: one fault, in a process of its own, so that its length
# holds however late the others or the machine are: the fault, its
# length, its end, then HEAL later the check that the relaying deployer
# sees the worker in the mesh again (alive, or suspect: it answers
# again); a worker that is not is restarted. The outcome goes to
# results/ID ("back STATE" or "restarted STATE"). SIGTERM (the time is
# up) ends the fault at once, without the check.
fault_run() {
    local f=$1 v=${FV[$1]} k=${FK[$1]} d=${FD[$1]} st ended=0
    set +e # (a subshell: a failed step is said, and the fault still ends)
    fault_end() {
        ((ended)) && return 0
        ended=1
        case $k in
        pause) cg_signal "w$v" CONT && say "fault $f: w$v goes on (SIGCONT)" ;;
        kill) w_start "$v" && say "fault $f: w$v starts again on ${W_EP[v]}" ;;
        partition) link_set "w$v" up && say "fault $f: w$v's link up" ;;
        esac
        now
        echo "$NOW" >"$EV_TMP/results/$f.ended"
    }
    trap 'fault_end; exit 0' TERM
    case $k in
    pause)
        cg_signal "w$v" STOP
        say "fault $f: pause w$v (SIGSTOP to its levpeer and executors) for $d ms"
        ;;
    kill)
        w_kill "$v"
        say "fault $f: kill w$v (SIGKILL to its levpeer and executors), down for $d ms"
        ;;
    restart)
        w_kill "$v"
        w_start "$v"
        say "fault $f: restart w$v (SIGKILL, then a new levpeer on ${W_EP[v]})"
        fault_end
        ;;
    partition)
        link_set "w$v" down
        say "fault $f: partition w$v (its link down) for $d ms"
        ;;
    esac
    ev_sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
    fault_end
    ev_sleep "$((HEAL_MS / 1000)).$(printf %03d $((HEAL_MS % 1000)))"
    trap - TERM
    st=$(state_of "${W_EP[v]}")
    if [[ $st == alive || $st == suspect ]]; then
        say "fault $f: w$v is back in the mesh ($st)"
        echo "back $st" >"$EV_TMP/results/$f"
    else
        say "fault $f: w$v NOT back in the mesh $((HEAL_MS / 1000)).$((HEAL_MS % 1000 / 100)) s after its fault ended (the relaying deployer holds it $st): restarted"
        w_kill "$v"
        w_start "$v"
        echo "restarted $st" >"$EV_TMP/results/$f"
        now # the worker is under a fault again: counted from now as from an end
        echo "$((NOW - HEAL_MS))" >"$EV_TMP/results/$f.ended"
    fi
}

# deployers_alive: both deployers run; if one does not (nothing here
# stops them), the run is void: says so and sets INTERFERENCE.
INTERFERENCE=
deployers_alive() {
    local p
    for p in "${DEPLOYER_PIDS[@]}"; do
        alive "$p" && continue
        [[ -n $INTERFERENCE ]] || say "a deployer (process $p) ended, which nothing in this run does: $(grep -h 'SIGTERM\|ERROR' "$EV_TMP/relay.log" "$EV_TMP/direct.log" | tail -n 2 | tr '\n' ' ')"
        INTERFERENCE=1
        return 1
    done
}

# vc_poller: every 2 s, a line per VC of each deployer into vcs.txt (VC
# id, then those counts and the workers it lost), until killed; the last
# status of each deployer stays in status-N.json (kept by --keep).
vc_poller() {
    local i n
    for ((i = 0; i < 100000; i++)); do
        for ((n = 0; n < ${#DEPLOYERS[@]}; n++)); do
            status "${DEPLOYERS[n]}" >"$EV_TMP/status-$n.tmp"
            [[ -s $EV_TMP/status-$n.tmp ]] || continue
            mv "$EV_TMP/status-$n.tmp" "$EV_TMP/status-$n.json"
            jq -r '.vcs[]? | [.id, .determinants.contradicting // 0,
                .recovery.fix_errors // 0, .recovery.conflicts // 0, .messages.duplicates // 0,
                .recovery.orphan_images // 0, .lost_workers // 0] | map(tostring) | join(" ")' \
                "$EV_TMP/status-$n.json" 2>/dev/null >>"$EV_TMP/vcs.txt" || true
        done
        sleep 2
    done
}

# ---------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------

EPOCHS=$(((BUDGET + ISLANDS * EPOCH_GENS - 1) / (ISLANDS * EPOCH_GENS)))
UNITS=$((ISLANDS * EPOCHS))
TSP_OPTS=(--seed "$SEED" --budget "$BUDGET" --islands "$ISLANDS" --epoch-gens "$EPOCH_GENS")
{
    echo "== chaos: $CMDLINE"
    echo "seed $SEED; $WORKERS workers, at most $MAXF under a fault at once; kinds: ${KIND_LIST[*]}"
    echo "mesh: $( ((INSECURE)) && echo "without keys" || echo "with keys (CurveZMQ)"), messages $MESSAGES, suspect $SUSPECT_MS ms, checkpoints every $CHECKPOINT_MS ms"
    echo "schedule ($nf faults over $DURATION s):"
    sed 's/^/  /' "$PLAN"
    echo "reference: lev-tsp-seq $(basename "$INSTANCE") ${TSP_OPTS[*]}"
} >&2
t=$EPOCHREALTIME
WANT=$("$LEVTSPSEQ" "$INSTANCE" "${TSP_OPTS[@]}" --quiet --tour-out "$EV_TMP/seq.tour" --svg "$EV_TMP/seq.svg" |
    awk '$1 == "best" {print $2}')
[[ $WANT =~ ^[0-9]+$ ]] || ev_die "lev-tsp-seq gave no best length"
echo "reference: best $WANT ($(awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s)" >&2

T0=$((${EPOCHREALTIME/./} / 1000))
DEADLINE_MS=$DUR_MS

# tsp_loop: lev-tsp jobs one after another until the time is up, each
# checked against WANT; a line per job in tsp.log.
tsp_loop() {
    local j=0 ep pid rc i best len units lost resumed ok why t1 secs
    while now && ((j < 1000 && NOW < DEADLINE_MS)); do
        j=$((j + 1))
        ep=${DEPLOYERS[(j - 1) % ${#DEPLOYERS[@]}]}
        rm -f "$EV_TMP/tsp.tour"
        now
        t1=$NOW
        ev_spawn client "$EV_TMP/tsp.out" "$EV_TMP/tsp.err" ip netns exec "$TAG-c" env "${KEY_ENV[@]}" \
            LEV_PEER="$ep" "$LEVTSP" "$INSTANCE" "${TSP_OPTS[@]}" --vts "$TSP_VTS" --workers "$TSP_VTS" \
            --checkpoint-ms "$CHECKPOINT_MS" --quiet --tour-out "$EV_TMP/tsp.tour" --svg "$EV_TMP/tsp.svg"
        pid=$EV_PID rc=0
        for ((i = 0; i < JOB_TIMEOUT * 10; i++)); do
            ev_alive "$pid" || break
            sleep 0.1
        done
        if ev_alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
        wait "$pid" || rc=$?
        now
        secs=$((NOW - t1))
        best=$(ev_best "$EV_TMP/tsp.out")
        len=$(ev_tour_length "$INSTANCE" "$EV_TMP/tsp.tour" 2>/dev/null || echo invalid)
        units=$(grep -o '^units [0-9]*' "$EV_TMP/tsp.out" | awk '{print $2}' || true)
        read -r lost resumed < <({ grep -o '[0-9]* peer(s) lost so far; [0-9]* VT(s) resumed' "$EV_TMP/tsp.out" || true; } |
            tail -n 1 | awk '{print $1, $6}') || true
        ok=1 why=
        if ((rc)); then ok=0 why="status $rc: $(tail -n 2 "$EV_TMP/tsp.err" | tr '\n' ' ')"; fi
        if [[ $best != "$WANT" ]]; then ok=0 why+=" best ${best:-none}, not $WANT;"; fi
        if [[ $len != "$WANT" ]]; then ok=0 why+=" tour file ${len}, not $WANT;"; fi
        if [[ ${units:-} != "$UNITS" ]]; then ok=0 why+=" units ${units:-none} committed, not $UNITS;"; fi
        if grep -q 'failed' "$EV_TMP/tsp.err"; then ok=0 why+=" $(grep -m1 failed "$EV_TMP/tsp.err");"; fi
        printf 'tsp job %d on %s: %s: best %s, tour %s, units %s/%d; %s peers lost, %s VTs resumed; %d.%d s%s\n' \
            "$j" "$ep" "$( ((ok)) && echo ok || echo FAILED)" "${best:--}" "$len" "${units:--}" "$UNITS" \
            "${lost:-0}" "${resumed:-0}" $((secs / 1000)) $((secs % 1000 / 100)) "${why:+:$why}" | tee -a "$EV_TMP/tsp.log" >&2
        cat "$EV_TMP/tsp.out" "$EV_TMP/tsp.err" >>"$EV_TMP/tsp.outputs"
    done
}
: >"$EV_TMP/tsp.log"
tsp_loop &
TSP_LOOP=$!
EV_PIDS+=("$TSP_LOOP")
# a ring client per deployer: a ring that hangs on one path stops no other
RING_ARGS=(--seconds "$DURATION" --vts "$RING_VTS" --rounds "$ROUNDS" --workers 3
    --checkpoint-ms "$CHECKPOINT_MS" --job-timeout "$JOB_TIMEOUT")
RINGS=()
for ((n = 0; n < ${#DEPLOYERS[@]}; n++)); do
    ev_spawn client "$EV_TMP/ring-$n.log" "$EV_TMP/ring-$n.err" ip netns exec "$TAG-c" env "${KEY_ENV[@]}" \
        "$CHAOSRING" "${RING_ARGS[@]}" --peer "${DEPLOYERS[n]}"
    RINGS+=("$EV_PID")
    tail -n +1 -f "$EV_TMP/ring-$n.log" --pid "$EV_PID" >&2 &
    EV_PIDS+=("$!")
done
: >"$EV_TMP/vcs.txt"
vc_poller &
POLLER=$!
EV_PIDS+=("$POLLER")
# The injector and the faults' processes also run before the rest of their
# group (nice -10); the levpeers they start again run at nice 0 as the
# others (peer_spawn).
renice -n -10 -p $$ >/dev/null || ev_log "cannot raise the injector's priority: faults may last longer than drawn"

# ---------------------------------------------------------------------
# The run: each action at its time
# ---------------------------------------------------------------------

# Each fault starts at its time; one that starts L ms late delays every
# later one by L too (the lag), so that the gaps between faults stay as
# drawn. The rules hold on the times as they come, not only as drawn (a
# busy machine may stretch a fault): a fault waits while its worker, or
# --max-faults workers, are under a fault that has not ended, or ended
# less than SETTLE ago (results/ID.ended holds when each ended).
# sound_now F: fault F may start now.
sound_now() {
    local g e
    local -A busy=()
    for ((g = 1; g < $1; g++)); do
        if [[ -r $EV_TMP/results/$g.ended ]]; then
            read -r e <"$EV_TMP/results/$g.ended"
            ((e + SETTLE_MS > NOW)) || continue
        fi
        busy[${FV[g]}]=1
    done
    ((${#busy[@]} < MAXF)) && [[ -z ${busy[${FV[$1]}]:-} ]]
}
LAG=0 FPIDS=() HELD=0 STARTED=()
exec {NAPFD}<> <(:) # nap: a 20 ms wait that starts no process
nap() {
    local prev=$NOW
    read -rt 0.02 -u "$NAPFD" _ || true
    now
    ((NOW - prev <= HELD)) || HELD=$((NOW - prev))
}
for ((f = 1; f <= nf; f++)); do
    for ((i = 0; i < 10000000; i++)); do
        now
        ((NOW < DEADLINE_MS)) || break
        if ((NOW >= FT[f] + LAG)) && sound_now "$f"; then break; fi
        deployers_alive || break
        nap
    done
    if ((NOW >= DEADLINE_MS)) || [[ -n $INTERFERENCE ]]; then break; fi
    late=$((NOW - FT[f] - LAG))
    ((late <= 100)) || LAG=$((LAG + late))
    INJECTED[${FK[f]}]=$((INJECTED[${FK[f]}] + 1))
    STARTED[f]=$NOW
    fault_run "$f" &
    FPIDS[f]=$!
done
for ((i = 0; i < 10000000; i++)); do
    now
    ((NOW < DEADLINE_MS)) || break
    deployers_alive || break
    nap
done
((LAG == 0)) || say "the schedule ran $LAG ms behind its times by the end (the injector was held up $HELD ms at most between two looks at the clock)"
say "time is up: the faults in progress end; the jobs running finish"
for p in "${FPIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${FPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
for r in "$EV_TMP"/results/*; do
    f=${r##*/}
    [[ -f $r && $f =~ ^[0-9]+$ ]] || continue # (not ID.ended)
    read -r outcome _ <"$r"
    if [[ $outcome == back ]]; then
        BACK[${FK[f]}]=$((BACK[${FK[f]}] + 1))
    else
        REPAIRED[${FK[f]}]=$((REPAIRED[${FK[f]}] + 1))
    fi
done
# Every worker back in the mesh (bounded), so that the last jobs run on a
# sound mesh; one that is not is restarted.
for ((i = 1; i <= WORKERS; i++)); do
    now
    t=$NOW
    while st=$(state_of "${W_EP[i]}") && [[ $st != alive && $st != suspect ]]; do
        now
        ((NOW - t < HEAL_MS)) || break
        sleep 0.2
    done
    if [[ $st != alive && $st != suspect ]]; then
        REPAIRED[end]=$((${REPAIRED[end]:-0} + 1))
        say "end: w$i NOT back in the mesh (held $st): restarted"
        w_kill "$i"
        w_start "$i"
    fi
done
# The jobs started before the end finish (bounded by their timeout).
for ((i = 0; i < (JOB_TIMEOUT + 30) * 10; i++)); do
    left=0
    for p in "$TSP_LOOP" "${RINGS[@]}"; do if alive "$p"; then left=1; fi; done
    ((left)) || break
    deployers_alive || break
    sleep 0.1
done
for p in "$TSP_LOOP" "${RINGS[@]}"; do
    if alive "$p"; then
        [[ -n $INTERFERENCE ]] || ev_log "a job loop still runs $((JOB_TIMEOUT + 30)) s after the end: stopped"
        kill -KILL "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
done
kill "$POLLER" 2>/dev/null || true
wait "$POLLER" 2>/dev/null || true
now
END_MS=$NOW

# ---------------------------------------------------------------------
# Deaths the relaying deployer declared that no fault explains (a peer
# too slow to answer its probes on a loaded machine)
# ---------------------------------------------------------------------

unexplained=0 deaths=0
while read -r ts ep; do
    ms=$(($(date -u -d "$ts" +%s%3N) - T0))
    deaths=$((deaths + 1))
    known=0
    for f in "${!STARTED[@]}"; do # the faults as they came
        [[ ${W_EP[FV[f]]} == "$ep" ]] || continue
        e=$END_MS
        if [[ -r $EV_TMP/results/$f.ended ]]; then read -r e <"$EV_TMP/results/$f.ended"; fi
        ((ms >= STARTED[f] && ms <= e + SETTLE_MS)) && known=1
    done
    if ((!known)); then
        unexplained=$((unexplained + 1))
        echo "unexplained death: $ep at $((ms / 1000)).$((ms % 1000 / 100)) s" >>"$FAULTLOG"
    fi
done < <(awk '/ peer tcp:.* -> dead/ { ep = $0; sub(/.* peer /, "", ep); sub(/:[ a-z]* -> dead.*/, "", ep); print $1, ep }' \
    "$EV_TMP/relay.log")

# ---------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------

tsp_jobs=$(grep -c '^tsp job' "$EV_TMP/tsp.log" || true)
tsp_ok=$(grep -c '^tsp job [0-9]* on [^ ]*: ok' "$EV_TMP/tsp.log" || true)
# the rings, from their job lines (a ring client stopped prints no summary)
cat "$EV_TMP"/ring-*.log | grep '^ring job' >"$EV_TMP/rings.log" || true
read -r ring_jobs ring_ok ring_tok ring_dup ring_lost rep_dup rep_lost < <(awk '
    { jobs++; if ($0 ~ /: ok: /) ok++
      match($0, /tokens [0-9]+\/[0-9]+/); split(substr($0, RSTART + 7, RLENGTH - 7), t, "/"); tok += t[1]; lost += t[2] - t[1]
      match($0, /duplicated [0-9]+, skipped/); dup += substr($0, RSTART + 11, RLENGTH - 20)
      match($0, /reports [0-9]+\/[0-9]+, duplicated [0-9]+, missing [0-9]+/); split(substr($0, RSTART, RLENGTH), r, /[ ,\/]+/)
      rdup += r[5]; rlost += r[7] }
    END { printf "%d %d %d %d %d %d %d\n", jobs, ok, tok, dup, lost, rdup, rlost }' "$EV_TMP/rings.log")
# the last line of each VC, summed over the VCs
read -r nvcs contra fixerr confl dupdrop orphans vclost < <(awk '{last[$1] = $0}
    END {for (v in last) {n++; split(last[v], f, " "); for (i = 1; i <= 6; i++) s[i] += f[i + 1]}
         printf "%d %d %d %d %d %d %d\n", n, s[1], s[2], s[3], s[4], s[5], s[6]}' "$EV_TMP/vcs.txt")
injected=0 back=0 repaired=0
for k in kill pause restart partition; do
    injected=$((injected + INJECTED[$k]))
    back=$((back + BACK[$k]))
    repaired=$((repaired + REPAIRED[$k]))
done
failed=$((tsp_jobs - tsp_ok + ring_jobs - ring_ok))
# nothing here sends SIGTERM before the summary: a levpeer that left on one
# was stopped from outside this run
outside=$(cat "$EV_TMP"/relay.log "$EV_TMP"/direct.log "$EV_TMP"/w*.log | grep -c 'SIGTERM: leaving' || true)
broken=$((failed + ring_lost + ring_dup + rep_lost + rep_dup + contra + fixerr + confl))
SUMMARY=$EV_TMP/summary.md
{
    echo "# Chaos: TSP and token rings under faults"
    echo
    echo "Command: \`$CMDLINE\` (seed $SEED: \`--seed $SEED\` replays the schedule)"
    echo
    echo '```'
    echo "$MACHINE"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo '```'
    echo
    echo "Mesh: two deployers (the client's peers, never faulted; messages relayed by one, direct by the"
    echo "other) and $WORKERS workers of one core, each peer in a network namespace of its own on one bridge,"
    echo "$( ((INSECURE)) && echo "without keys" || echo "with keys (every connection CurveZMQ)"); suspect $SUSPECT_MS ms, checkpoints every $CHECKPOINT_MS ms, 2 replicas."
    echo "Faults for $DURATION s, at most $MAXF workers under a fault at once (each until $((SETTLE_MS / 1000)).$((SETTLE_MS % 1000 / 100)) s after"
    echo "its end); the run took $((END_MS / 1000)) s with the jobs' fault-free ends."
    echo
    echo "| fault | injected | back in the mesh by itself | not back, restarted | not checked (time up) |"
    echo "|---|---|---|---|---|"
    for k in kill pause restart partition; do
        echo "| $k | ${INJECTED[$k]} | ${BACK[$k]} | ${REPAIRED[$k]} | $((INJECTED[$k] - BACK[$k] - REPAIRED[$k])) |"
    done
    echo "| all | $injected | $back | $repaired | $((injected - back - repaired)) |"
    echo
    echo "Faults still in progress when the time was up ended then; the workers not back in the mesh"
    echo "$((HEAL_MS / 1000)).$((HEAL_MS % 1000 / 100)) s later were restarted: ${REPAIRED[end]:-0}."
    echo
    echo "| jobs | run | exact | failed | lost | duplicated |"
    echo "|---|---|---|---|---|---|"
    echo "| lev-tsp $(basename "$INSTANCE" .tsp), $BUDGET generations, $TSP_VTS VTs (best $WANT, as lev-tsp-seq) | $tsp_jobs | $tsp_ok | $((tsp_jobs - tsp_ok)) | - | - |"
    echo "| token ring, $RING_VTS VTs x $ROUNDS rounds: tokens ($ring_tok passed) | $ring_jobs | $ring_ok | $((ring_jobs - ring_ok)) | $ring_lost | $ring_dup |"
    echo "| token ring: reports (each once) | | | | $rep_lost | $rep_dup |"
    echo
    echo "Deployers' counts over the $nvcs VCs seen ($vclost workers lost by them): determinants contradicting the log $contra, fixes that failed"
    echo "$fixerr, conflicts $confl (0 unless the protocol is broken); outputs sent again after a rollback"
    echo "and dropped as duplicates $dupdrop; orphan images dropped $orphans. Deaths the relaying deployer"
    echo "declared: $deaths, of which $unexplained no fault explains (a worker too slow to answer in time)."
    echo
    if [[ -n $INTERFERENCE ]] || ((outside)); then
        echo "**Void run:** $outside levpeers were stopped by a SIGTERM that did not come from this run"
        echo "(another program on the machine), a deployer among them: $( [[ -n $INTERFERENCE ]] && echo yes || echo no)."
        echo
    fi
    echo "Schedule and faults as injected:"
    echo
    echo '```'
    cat "$PLAN"
    echo "--"
    cat "$FAULTLOG"
    echo '```'
    echo
    echo "Jobs:"
    echo
    echo '```'
    cat "$EV_TMP/tsp.log"
    cat "$EV_TMP/rings.log"
    echo '```'
} >"$SUMMARY"
cat "$SUMMARY"
[[ -z $OUTFILE ]] || cp "$SUMMARY" "$OUTFILE"
((repaired + ${REPAIRED[end]:-0} == 0)) ||
    ev_log "FINDING: $((repaired + ${REPAIRED[end]:-0})) workers were not back in the mesh after their fault and were restarted"
((unexplained == 0)) || ev_log "FINDING: $unexplained deaths no fault explains (see the faults' log)"
if [[ -n $INTERFERENCE ]] || ((outside)); then
    ev_log "VOID: levpeers were stopped from outside this run"
    exit 1
fi
((broken == 0 && ring_jobs + tsp_jobs > 0)) || { ev_log "FAILED: a job failed, or something was lost, duplicated or contradicted"; exit 1; }
exit 0
}
