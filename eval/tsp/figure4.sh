#!/usr/bin/env bash
# eval/tsp/figure4.sh - reproduces Figure 4 of the published evaluation on
# this machine: the speedup of a heterogeneous mesh against problem size,
# with the maximum speedup S_H,max, for setups of 2, 3 and 4 worker peers
# whose speeds are emulated with CPU quotas (Linux cgroup CPU controller).
# Writes eval/results/figure4.{csv,md,png} and figure4_runs.csv (every
# measurement). Needs root (cgroups). See eval/tsp/README.md.
#
#   eval/tsp/figure4.sh [--rounds N] [--sizes "GENS..."] [--setups "Q,Q Q,Q,Q ..."]
#                       [--instance FILE] [--islands K] [--epoch-gens G]
#                       [--seed S] [--period-us US] [--rate measured|equal]
#                       [--net none|lan|wan] [--messages relay|direct]
#                       [--bin DIR] [--out DIR] [--force] [--help]
#
#   --rounds N        rounds of every measurement, interleaved (default 3);
#                     the tables show medians
#   --sizes "..."     problem sizes: generations summed over the islands
#                     (default "32000 64000 128000 256000"), rounded up to
#                     whole epochs (islands x epoch-gens)
#   --setups "..."    one setup per word, the CPU quota of each worker in
#                     cores, the fastest first (default
#                     "0.9,0.5 0.9,0.5,0.3 0.6,0.5,0.4,0.3")
#   --instance FILE   TSPLIB instance (default samples/tsp/data/pr1002.tsp)
#   --islands K       islands (default 8)
#   --epoch-gens G    generations per unit of work (default 1000)
#   --seed S          seed of every run (default 1)
#   --period-us US    CFS period of the quotas (default 20000)
#   --rate R          the workers' rate for the delegator: equal (all the
#                     same, default: one VT per worker whatever the quotas)
#                     or measured (each levpeer's own benchmark)
#   --net N           the network between peers: none (loopback, default),
#                     lan (0.2 ms one way, 1 Gbit/s) or wan (20 ms one way,
#                     100 Mbit/s), emulated by a relay (eval/net/lagrelay.c)
#                     in front of each levpeer
#   --messages M      how the VTs' messages travel: relay (through the
#                     client's peer, default) or direct (between executors)
#   --bin DIR         programs already built (a build tree or a directory
#                     holding them); default: build in the eval tree
#   --out DIR         results directory (default eval/results)
#   --force           measure even while a test suite (ctest) runs
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck disable=SC2034 # read by lib.sh
EV_NAME=figure4
. eval/tsp/lib.sh

usage() {
    sed -n '9,40s/^# \{0,1\}//p' "$0"
    exit "${1:-2}"
}

ROUNDS=3
SIZES="32000 64000 128000 256000"
SETUPS="0.9,0.5 0.9,0.5,0.3 0.6,0.5,0.4,0.3"
INSTANCE=samples/tsp/data/pr1002.tsp
ISLANDS=8
EPOCH_GENS=1000
SEED=1
RATE=equal
NET=none
MESSAGES=relay
BIN=
OUT=eval/results
FORCE=0
CMDLINE="eval/tsp/figure4.sh${*:+ $*}"
while (($#)); do
    case $1 in
    --rounds) ROUNDS=${2:?}; shift ;;
    --sizes) SIZES=${2:?}; shift ;;
    --setups) SETUPS=${2:?}; shift ;;
    --instance) INSTANCE=${2:?}; shift ;;
    --islands) ISLANDS=${2:?}; shift ;;
    --epoch-gens) EPOCH_GENS=${2:?}; shift ;;
    --seed) SEED=${2:?}; shift ;;
    --period-us) CG_PERIOD_US=${2:?}; shift ;;
    --rate) RATE=${2:?}; shift ;;
    --net) NET=${2:?}; shift ;;
    --messages) MESSAGES=${2:?}; shift ;;
    --bin) BIN=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    --force) FORCE=1 ;;
    --help | -h) usage 0 ;;
    *) echo "figure4: unknown option $1" >&2; usage ;;
    esac
    shift
done
for v in ROUNDS ISLANDS EPOCH_GENS SEED CG_PERIOD_US; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || ev_die "--${v,,} must be a positive integer, not '${!v}'"
done
for s in $SIZES; do [[ $s =~ ^[0-9]+$ && $s -gt 0 ]] || ev_die "size '$s' is not a positive integer"; done
for s in $SETUPS; do
    [[ $s =~ ^(0?\.[0-9]+|1(\.0*)?)(,(0?\.[0-9]+|1(\.0*)?))+$ ]] ||
        ev_die "setup '$s' is not a list of two or more quotas in cores (0 < q <= 1), e.g. 0.9,0.5"
done
[[ $RATE == measured || $RATE == equal ]] || ev_die "--rate is measured or equal, not '$RATE'"
case $NET in
none) ;;
lan) MESH_NET_DELAY=0.2 MESH_NET_RATE=1000 ;;
wan) MESH_NET_DELAY=20 MESH_NET_RATE=100 ;;
*) ev_die "--net is none, lan or wan, not '$NET'" ;;
esac
[[ $MESSAGES == relay || $MESSAGES == direct ]] ||
    ev_die "--messages is relay or direct, not '$MESSAGES'"
MESH_OPTS+=(--messages "$MESSAGES")
[[ -r $INSTANCE ]] || ev_die "instance $INSTANCE is not readable"

ev_init
ev_packages gnuplot-nox jq
ev_programs "$BIN"
cg_setup
mkdir -p "$OUT"
RUNS=$EV_TMP/runs.csv # round,setup,quotas,size,kind,machine,quota,seconds,best,rc,note
echo "round,setup,quotas,size_gens,kind,machine,quota,seconds,best,rc,note" >"$RUNS"

# The setups' groups: sK-mI for machine I of setup K; the client's peer
# and the client in "client", with no quota.
cg_group client max
k=0
for s in $SETUPS; do
    k=$((k + 1))
    i=0
    for q in ${s//,/ }; do
        i=$((i + 1))
        cg_group "s$k-m$i" "$q"
    done
done
ev_log "cgroup $CG_MODE, groups under $CG_BASE, CFS period $CG_PERIOD_US us"

# size_of BUDGET: the generations a run of BUDGET really does (whole
# epochs of ISLANDS x EPOCH_GENS).
size_of() {
    local u=$((ISLANDS * EPOCH_GENS))
    echo $((($1 + u - 1) / u * u))
}

job_args() { echo "$INSTANCE --seed $SEED --budget $1 --islands $ISLANDS --epoch-gens $EPOCH_GENS --quiet"; }

# seq_side_by_side ROUND K QUOTAS BUDGET: lev-tsp-seq under each quota of
# setup K at once, each timed on its own (the machines of a setup
# measured side by side, as they run in the mesh). A machine whose run has
# ended runs the same job again, untimed, until the last run ends: the
# others keep the company they have in the mesh, where every worker is
# busy to the end (alone, a run on this machine goes up to 20 % faster).
seq_side_by_side() {
    local r=$1 k=$2 qs=$3 b=$4 i=0 n q pids=() sec rc best u0=() u1 got t
    rm -f "$EV_TMP"/seq*.time "$EV_TMP/seq.stop"
    for q in ${qs//,/ }; do
        i=$((i + 1))
        u0+=("$(cg_usage_us "s$k-m$i")")
        (
            # shellcheck disable=SC2046 # job_args is words
            ev_timed "s$k-m$i" "$EV_TMP/seq$i.out" "$EV_TMP/seq$i.err" "$LEVTSPSEQ" $(job_args "$b") \
                --tour-out "$EV_TMP/seq$i.tour" --svg "$EV_TMP/seq$i.svg"
            echo "$EV_RC $EV_SECS $(cg_usage_us "s$k-m$i")" >"$EV_TMP/seq$i.time"
            for ((n = 0; n < 1000; n++)); do
                [[ -e $EV_TMP/seq.stop ]] && break
                # shellcheck disable=SC2046 # job_args is words
                ev_spawn "s$k-m$i" /dev/null /dev/null "$LEVTSPSEQ" $(job_args "$b") \
                    --tour-out "$EV_TMP/fill$i.tour" --svg "$EV_TMP/fill$i.svg"
                wait "$EV_PID" || true
            done
        ) &
        pids+=($!)
        EV_PIDS+=($!)
    done
    # bounded by the runs themselves (each ends) and by 4 hours
    for ((t = 0; t < 72000; t++)); do
        n=0
        for ((i = 1; i <= ${#pids[@]}; i++)); do [[ -s $EV_TMP/seq$i.time ]] && n=$((n + 1)); done
        ((n == ${#pids[@]})) && break
        sleep 0.2
    done
    touch "$EV_TMP/seq.stop"
    for ((i = 1; i <= ${#pids[@]}; i++)); do cg_signal "s$k-m$i" KILL; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    i=0
    for q in ${qs//,/ }; do
        i=$((i + 1))
        read -r rc sec u1 <"$EV_TMP/seq$i.time" || { rc=1 sec=nan u1=-1; }
        best=$(ev_best "$EV_TMP/seq$i.out")
        [[ $rc == 0 && -n $best ]] || {
            ev_log "lev-tsp-seq under quota $q failed (status $rc):"
            tail -n 5 "$EV_TMP/seq$i.err" >&2
        }
        # the share of its quota it got (CPU time / (wall time x quota))
        got=$(awk -v u0="${u0[i - 1]}" -v u1="$u1" -v t="$sec" -v q="$q" \
            'BEGIN {if (u0 < 0) print "?"; else printf "%.0f", 100 * (u1 - u0) / 1e6 / (t * q)}')
        echo "$r,$k,${qs//,//},$(size_of "$b"),seq,$i,$q,$sec,${best:-},$rc,cpu=$got%" >>"$RUNS"
        printf '  seq  M%d q=%-4s %8.2f s  best %s  (cpu %s%% of quota)\n' "$i" "$q" "$sec" "${best:--}" "$got" >&2
    done
}

# placement FILE W: "hosts H of W" — how many workers the VTs are on.
placement() {
    jq -r '[.vcs[].vts[].host] | unique | length' "$1" 2>/dev/null || echo "?"
}

# rates FILE QUOTAS: each worker's rate as it measured it and the VTs the
# delegator put there, in the order of the quotas: "rate:vts/rate:vts..."
rates() {
    local i out=() q
    IFS=, read -ra q <<<"$2"
    for ((i = 0; i < ${#q[@]}; i++)); do
        out+=("$(jq -r --arg ep "${MESH_EPS[i]}" \
            '[.vcs[].placement[]? | select(.worker == $ep) | "\(.rate):\(.vts)"] | first // "?"' \
            "$1" 2>/dev/null || echo "?")")
    done
    (
        IFS=/
        echo "${out[*]}"
    )
}

# mesh_run ROUND K QUOTAS BUDGET: a fresh mesh of one worker per quota of
# setup K (each in its group) and the client's peer; lev-tsp on it, timed.
# Without --vts, lev-tsp waits (at most 3 s) for the W workers to enrol and
# starts one VT per core: W. With --vts W it would start them at once, and
# the deployer, after waiting 1 s for workers still enrolling, would put
# two on one worker of a busy machine.
mesh_run() {
    local r=$1 k=$2 qs=$3 b=$4 w i g pid sec best hosts="?" place="?" note util=() st0=() t0
    local rate=()
    w=$(tr ',' '\n' <<<"$qs" | wc -l)
    if [[ $RATE == equal ]]; then rate=(--rate 100000); fi
    local groups=()
    for ((i = 1; i <= w; i++)); do groups+=("s$k-m$i"); done
    mesh_start client "${groups[@]}" -- "${rate[@]}"
    for g in "${groups[@]}" client; do st0+=("$(cg_usage_us "$g")"); done
    rm -f "$EV_TMP/progress"
    t0=$(ev_now)
    # shellcheck disable=SC2046 # job_args is words
    ev_spawn client "$EV_TMP/mesh.out" "$EV_TMP/mesh.err" env LEV_PEER="$MESH_CLIENT" \
        "$LEVTSP" $(job_args "$b") --workers "$w" --progress-file "$EV_TMP/progress" \
        --tour-out "$EV_TMP/mesh.tour" --svg "$EV_TMP/mesh.svg"
    pid=$EV_PID
    # Once a quarter of the units are done, where the VTs are (bounded by
    # the run itself, and by 2 hours).
    for ((i = 0; i < 72000; i++)); do
        [[ $hosts == "?" ]] || break
        ev_alive "$pid" || break
        local ndone ntotal
        if [[ -s $EV_TMP/progress ]] && read -r ndone ntotal _ 2>/dev/null <"$EV_TMP/progress" && ((ntotal > 0 && ndone * 4 >= ntotal)); then
            if mesh_status "$EV_TMP/status.json"; then
                hosts=$(placement "$EV_TMP/status.json")
                place=$(rates "$EV_TMP/status.json" "$qs")
            fi
        fi
        sleep 0.1
    done
    local rc=0
    wait "$pid" || rc=$?
    sec=$(awk -v a="$t0" -v b="$(ev_now)" 'BEGIN {printf "%.3f", b - a}')
    # how busy each worker was: CPU time / (wall time x quota); and the
    # CPU time of the client and its peer
    local qa ccpu
    IFS=, read -ra qa <<<"$qs"
    for ((i = 0; i < w; i++)); do
        util+=("$(awk -v u0="${st0[i]}" -v u1="$(cg_usage_us "${groups[i]}")" -v t="$sec" -v q="${qa[i]}" \
            'BEGIN {if (u0 < 0) print "?"; else printf "%.0f", 100 * (u1 - u0) / 1e6 / (t * q)}')")
    done
    ccpu=$(awk -v u0="${st0[w]}" -v u1="$(cg_usage_us client)" 'BEGIN {printf "%.2f", (u1 - u0) / 1e6}')
    mesh_stop
    best=$(ev_best "$EV_TMP/mesh.out")
    if [[ $rc != 0 || -z $best ]]; then
        ev_log "lev-tsp on the mesh failed (status $rc):"
        tail -n 5 "$EV_TMP/mesh.err" >&2
    fi
    local resumed backups ahead
    resumed=$({ grep -o '[0-9]* VT(s) resumed' "$EV_TMP/mesh.out" || true; } | tail -n 1 | cut -d' ' -f1)
    # a run that resumed a VT keeps its peers' logs (warnings: a lost
    # worker names why; none means a move, which logs at info)
    if [[ ${resumed:-0} != 0 ]]; then
        local keep
        keep="$OUT/logs/round$r-setup$k-$(size_of "$b")"
        mkdir -p "$keep"
        cp "$EV_TMP"/client.log "$EV_TMP"/worker*.log "$keep/" 2>/dev/null || true
        ev_log "a VT was resumed: the peers' logs are in $keep"
    fi
    # units run twice (backups of the tail): work beyond the sequential run
    backups=$({ grep -o '[0-9]* run twice as backups' "$EV_TMP/mesh.out" || true; } | tail -n 1 | cut -d' ' -f1)
    # migrants read from their global variables (a round trip each; the
    # others came in messages)
    migreads=$({ grep -o '[0-9]* migrants read' "$EV_TMP/mesh.out" || true; } | tail -n 1 | cut -d' ' -f1)
    # units claimed with the one before at the same lock (no round trip)
    ahead=$({ grep -o '[0-9]* units claimed ahead' "$EV_TMP/mesh.out" || true; } | tail -n 1 | cut -d' ' -f1)
    note="hosts=$hosts/$w rate:vts=$place util=$(
        IFS=/
        echo "${util[*]}"
    )% client_cpu=${ccpu}s resumed=${resumed:-0} backups=${backups:-?} migreads=${migreads:-?} ahead=${ahead:-?}"
    echo "$r,$k,${qs//,//},$(size_of "$b"),mesh,0,,$sec,${best:-},$rc,$note" >>"$RUNS"
    printf '  mesh %-18s %8.2f s  best %s  (%s)\n' "$qs" "$sec" "${best:--}" "$note" >&2
    [[ $hosts == "$w" || $hosts == "?" ]] ||
        ev_log "warning: the $w VTs ran on $hosts of the $w workers (see --rate)"
}

{
    echo "== figure4: $CMDLINE"
    ev_machine
    echo "instance: $INSTANCE, islands $ISLANDS, $EPOCH_GENS generations per unit, seed $SEED"
    echo "sizes (generations): $(for s in $SIZES; do printf '%s ' "$(size_of "$s")"; done)"
    echo "setups (CPU quotas, cores): $SETUPS; rounds: $ROUNDS; worker rates: $RATE; network: $NET"
} >&2
MACHINE=$(ev_machine)

for ((r = 1; r <= ROUNDS; r++)); do
    for b in $SIZES; do
        k=0
        for s in $SETUPS; do
            k=$((k + 1))
            ((FORCE)) || ev_wait_quiet 3600
            echo "round $r/$ROUNDS, size $(size_of "$b"), setup $k ($s), load $(cut -d' ' -f1 /proc/loadavg)" >&2
            seq_side_by_side "$r" "$k" "$s" "$b"
            mesh_run "$r" "$k" "$s" "$b"
        done
    done
done
cp "$RUNS" "$OUT/figure4_runs.csv"

# ---------------------------------------------------------------------
# Figures: medians over the rounds, then R, S_H, S_H,max, eta_H
# ---------------------------------------------------------------------
CSV=$OUT/figure4.csv
awk -F, -v rounds="$ROUNDS" '
function median(key,   n, i, j, t, v) {
    n = cnt[key]
    for (i = 1; i <= n; i++) v[i] = val[key, i]
    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    if (n == 0) return "nan"
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
NR == 1 { next }
{
    key = $2 SUBSEP $4 SUBSEP $5 SUBSEP $6
    if ($10 == 0 && $8 != "nan") val[key, ++cnt[key]] = $8
    else failed[$2 SUBSEP $4] = 1
    quotas[$2] = $3; sizes[$4] = 1; setups[$2] = 1
    if ($5 == "seq") { nm[$2] = ($6 > nm[$2] ? $6 : nm[$2]); if ($9 != "") seqbest[$2 SUBSEP $4, $9] = 1 }
    if ($5 == "mesh") {
        if ($9 != "") meshbest[$2 SUBSEP $4, $9] = 1
        # per-round mesh time, to pair with the same round seq times
        mt[$2 SUBSEP $4 SUBSEP $1] = $8; mok[$2 SUBSEP $4 SUBSEP $1] = ($10 == 0)
    }
    if ($5 == "seq") { st[$2 SUBSEP $4 SUBSEP $1 SUBSEP $6] = $8 }
}
END {
    printf "setup,workers,quotas,size_gens,rounds,t_M1,t_M2,t_M3,t_M4,t_H,R_M1,R_M2,R_M3,R_M4,R_H,S_H,S_H_max,eta_H,eta_H_min,eta_H_max,best_seq,best_mesh,match\n"
    for (k = 1; k in setups; k++) {
        ns = 0
        for (s in sizes) sz[++ns] = s + 0
        for (i = 2; i <= ns; i++) { t = sz[i]; for (j = i - 1; j >= 1 && sz[j] > t; j--) sz[j + 1] = sz[j]; sz[j + 1] = t }
        for (z = 1; z <= ns; z++) {
            s = sz[z]; sumr = 0
            line = k "," nm[k] "," quotas[k] "," s "," rounds
            for (i = 1; i <= 4; i++) {
                if (i <= nm[k]) { tm[i] = median(k SUBSEP s SUBSEP "seq" SUBSEP i); line = line "," tm[i] }
                else line = line ","
            }
            th = median(k SUBSEP s SUBSEP "mesh" SUBSEP 0)
            line = line "," th
            for (i = 1; i <= 4; i++) {
                if (i <= nm[k]) { rm[i] = s / tm[i]; sumr += rm[i]; line = line sprintf(",%.1f", rm[i]) }
                else line = line ","
            }
            rh = s / th; sh = rh / rm[1]; shmax = sumr / rm[1]
            # eta of each round (its own seq and mesh times): the spread
            emin = ""; emax = ""
            for (r = 1; r <= rounds; r++) {
                if (!((k SUBSEP s SUBSEP r) in mt) || !mok[k SUBSEP s SUBSEP r]) continue
                sr = 0
                for (i = 1; i <= nm[k]; i++) sr += s / st[k SUBSEP s SUBSEP r SUBSEP i]
                e = (s / mt[k SUBSEP s SUBSEP r]) / sr
                if (emin == "" || e < emin) emin = e
                if (emax == "" || e > emax) emax = e
            }
            bs = ""; bm = ""
            for (x in seqbest) { split(x, p, SUBSEP); if (p[1] == k && p[2] == s) bs = bs (bs == "" ? "" : "/") p[3] }
            for (x in meshbest) { split(x, p, SUBSEP); if (p[1] == k && p[2] == s) bm = bm (bm == "" ? "" : "/") p[3] }
            match_ = (bs != "" && bs == bm && index(bs, "/") == 0 && !((k SUBSEP s) in failed)) ? "yes" : "NO"
            line = line sprintf(",%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%s,%s", rh, sh, shmax, sh / shmax, emin, emax, bs, bm, match_)
            print line
        }
    }
}' "$RUNS" >"$CSV"

# Markdown
MD=$OUT/figure4.md
{
    echo "# Figure 4 on this machine: speedup of a heterogeneous mesh"
    echo
    echo "Command: \`$CMDLINE\`"
    echo
    echo '```'
    echo "$MACHINE"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo '```'
    echo
    echo "Job: \`lev-tsp $(basename "$INSTANCE") --seed $SEED --islands $ISLANDS --epoch-gens $EPOCH_GENS --budget SIZE\`;"
    echo "problem size = generations summed over the islands (units of $EPOCH_GENS generations)."
    echo "Quotas: cgroup $CG_MODE CPU controller, CFS period $CG_PERIOD_US µs; each worker levpeer"
    echo "(\`--cores 1\`, executors at normal priority) in its group; the client and its peer"
    echo "(\`--cores -1\`) in a group with no quota. Worker rates: $RATE. Network between peers: $NET. Medians of $ROUNDS"
    echo "rounds; each round runs every size and setup in turn, the sequential runs of a setup's"
    echo "machines side by side, then its mesh run."
    echo
    echo "| setup | quotas (cores) | size (gens) | t_Mi (s) | t_H (s) | R_H (gens/s) | S_H | S_H,max | η_H | η_H per round | best seq / mesh |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    tail -n +2 "$CSV" | awk -F, '{
        tm = $6; for (i = 7; i <= 5 + $2; i++) tm = tm " / " $i
        printf "| %d peers | %s | %d | %s | %s | %s | %.3f | %.3f | **%.1f %%** | %.1f–%.1f %% | %s / %s %s |\n",
            $2, $3, $4, tm, $10, $15, $16, $17, 100 * $18, 100 * $19, 100 * $20, $21, $22, ($23 == "yes" ? "(same)" : "(**MISMATCH**)")
    }'
    echo
    echo "Target: η_H ≥ 97 % at the largest size for every setup (published: 95.7 %, 94.2 %, 93.0 %)."
    echo
    echo "Mesh runs at the largest size, each round: wall time; workers the VTs ran on; each"
    echo "worker's CPU time over (wall time x its quota); CPU time of the client and its peer;"
    echo "VTs resumed (a resume means a worker was suspected)."
    echo
    echo "| setup | round | t_H (s) | diagnostics |"
    echo "| --- | --- | --- | --- |"
    awk -F, -v big="$(tail -n +2 "$CSV" | cut -d, -f4 | sort -n | tail -n 1)" \
        'NR > 1 && $5 == "mesh" && $4 == big { printf "| %s | %s | %s | %s |\n", $3, $1, $8, $11 }' "$RUNS"
    echo
    echo "Sequential runs (CPU time over wall time x quota: how much of its quota each got) are in"
    echo "[figure4_runs.csv](figure4_runs.csv) with every other measurement."
    echo
    echo '![speedup against problem size](figure4.png)'
} >"$MD"

# Plot: one solid line per setup, its S_H,max dashed in the same colour.
DAT=$EV_TMP/figure4.dat
tail -n +2 "$CSV" | awk -F, '$1 != prev { if (NR > 1) printf "\n\n"; prev = $1 } { print $4, $16, $17 }' >"$DAT"
plots=() i=0
while IFS=, read -r w qs; do
    plots+=("\"$DAT\" index $i using 1:2 with linespoints lt $((i + 1)) lw 2 pt 7 title \"$w peers ($qs)\"")
    plots+=("\"$DAT\" index $i using 1:3 with lines lt $((i + 1)) lw 2 dt 2 title \"S_{H,max}, $w peers\"")
    i=$((i + 1))
done < <(tail -n +2 "$CSV" | awk -F, '!seen[$1]++ { print $2 "," $3 }')
gnuplot <<EOF
set terminal pngcairo size 900,600 font ",11"
set output "$OUT/figure4.png"
set title "Speedup of a heterogeneous mesh against problem size (TSP GA, $(basename "$INSTANCE" .tsp))"
set xlabel "problem size (generations)"
set ylabel "speedup S_H = R_H / R_{M1}"
set key below
set grid
set yrange [0:*]
set logscale x 2
set offsets graph 0.04, graph 0.04, 0, 0
set xtics ($(tail -n +2 "$CSV" | cut -d, -f4 | sort -nu | awk '{printf "%s\"%d\" %d", (NR > 1 ? ", " : ""), $1, $1}'))
plot $(IFS=,; echo "${plots[*]}")
EOF

echo "== results: $CSV, $MD, $OUT/figure4.png" >&2
column -s, -t "$CSV" >&2 || cat "$CSV" >&2
busy=$(awk -F, 'NR > 1 && $5 == "seq" && $11 ~ /^cpu=[0-9]+%$/ { c = $11; gsub(/[^0-9]/, "", c); if (c + 0 < 90) n++ }
    END {print n + 0}' "$RUNS")
if ((busy)); then
    echo "WARNING: $busy sequential run(s) got under 90 % of their quota (the machine was busy with other work): their figures are not to be trusted (figure4_runs.csv, column note)" |
        tee -a "$MD" >&2
fi
largest=$(tail -n +2 "$CSV" | cut -d, -f4 | sort -n | tail -n 1)
status=0
while IFS=, read -r k w qs size _ _ _ _ _ _ _ _ _ _ _ _ _ eta _ _ _ _ match; do
    [[ $size == "$largest" ]] || { [[ $match == yes ]] || status=1; continue; }
    verdict=$(awk -v e="$eta" 'BEGIN {print (e >= 0.97 ? "met" : "missed")}')
    printf 'TARGET eta_H at %s generations, %s peers (%s): %.1f %% (>= 97 %%): %s; same best length: %s\n' \
        "$size" "$w" "$qs" "$(awk -v e="$eta" 'BEGIN {print 100 * e}')" "$verdict" "$match"
    [[ $match == yes ]] || status=1
done < <(tail -n +2 "$CSV")
exit $status
