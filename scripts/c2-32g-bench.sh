#!/usr/bin/env bash
# c2-32g-bench.sh: PoRep C2 (KIND=porep, the default) or a SnapDeals update (KIND=snap) end to
# end through the CUDA daemon on one GPU, in one run: a local key made on the GPU
# (`cuzk-params-gpu setup --kind KIND --gpu`, NOT FOR PRODUCTION), a generated C1 output
# (porep) or vanilla update proof with its commitments (snap: `gen-vanilla snap` writes
# FILE.commitments.json), the daemon on a config pointing at the key (first load with full
# validation: curve checks on the CPU, subgroup checks on the GPU), then `cuzk-bench batch -c
# COUNT -j 2` and `-c 1`; every proof is verified by the daemon and one of them again apart from
# it (`cuzk-bench verify --kind KIND` against the .vk, inputs recomputed from the C1 / the
# commitments). Prints seconds per proof (per update for snap: 16 partitions at 32 GiB), the
# timeline of each batch, the host memory peak, and the PoRep-shaped ceiling of the same GPU.
#
#   scripts/daemon-gpu-check.sh --pack DIR BUILD     (here: packs the daemon, cuzk-bench and
#                                                     cuzk-params-gpu with their libraries)
#   scripts/c2-32g-bench.sh DIR [OUT]                (on the GPU machine)
#   KIND=porep|snap (porep)  SIZE=32GiB (default) COUNT=5 (batch size) PARAMS=dir (reuse a key
#   made earlier there: v28-stacked-proof-of-replication-* / v28-empty-sector-update-*; the
#   script removes its digest cache so that the first load validates in full, and the daemon
#   writes it again)
#   GPU_MEMORY_LIMIT=48GiB ([gpus] memory_limit), SINGLE_BATCH= (empty: skip the -c 1 batch),
#   CEILING=0 (skip the gpu-prove ceiling), CAPS="24GiB 48GiB" (then a daemon per memory_limit,
#   CAP_COUNT=2 proofs at -j 2 each, s/proof per cap), MAIN=0 (only the caps and the ceiling)
#   GPU_TRACE=1 ([gpus] trace: each MSM plan and device allocation in daemon.log)
#   REQUIRE_GPU=0 with a CPU build (BIN=build/bin, no loader) for a dry run at SIZE=2KiB.
set -u
DIR=${1:?DIR (made by daemon-gpu-check.sh --pack) or a build dir with BIN set}
OUT=${2:-c2-bench-out}
SIZE=${SIZE:-32GiB}
COUNT=${COUNT:-5}
KIND=${KIND:-porep}
case "$KIND" in
    porep) STEM=v28-stacked-proof-of-replication ;;
    snap) STEM=v28-empty-sector-update ;;     # e.g. ...-merkletree-poseidon_hasher-8-8-0-<hash> at 32 GiB
    *) echo "c2-32g-bench: KIND=$KIND: porep or snap"; exit 2 ;;
esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=lib/pack.sh
. "$(dirname "$0")/lib/pack.sh"
pack_init "$DIR" || exit 1
run() { pack_run "$@"; }
B=$PACK_BIN
if [ "$PACK" = 1 ]; then
    DAEMON="$B/cuzk-daemon-gpu"
    PARAMS_BIN="$B/cuzk-params-gpu"
    GPU_FLAG=--gpu
else
    DAEMON="$B/cuzk-daemon"
    PARAMS_BIN="$B/cuzk-params"
    GPU_FLAG=
fi
T=$(mktemp -d /tmp/cuzk-c2-XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "c2-32g-bench: FAIL: $*"; [ -f "$OUT/daemon.log" ] && tail -20 "$OUT/daemon.log"; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# 1. the key
P=${PARAMS:-$T/params}
if ! ls "$P"/$STEM-*.params > /dev/null 2>&1; then
    t0=$(now)
    run "$PARAMS_BIN" setup --kind "$KIND" --sector-size "$SIZE" --out "$P" --seed 1 $GPU_FLAG \
        > "$OUT/setup.txt" 2>&1 || { cat "$OUT/setup.txt"; fail "setup"; }
    cat "$OUT/setup.txt"
    echo "setup ($SIZE, ${GPU_FLAG:-cpu}): $(secs "$t0" "$(now)") s, $(du -sh "$P" | cut -f1)"
fi
VK=$(ls "$P"/$STEM-*.vk | head -1)

# 2. a C1 output (porep) or a vanilla update proof (snap); REQ: the request's flags for single
# and batch, VERIFY: those of `cuzk-bench verify` (with --vk and --proof added below)
t0=$(now)
if [ "$KIND" = porep ]; then
    run "$B/cuzk-bench" gen-vanilla porep --sector-size "$SIZE" -o "$T/c1.json" > "$OUT/gen.txt" 2>&1 ||
        { cat "$OUT/gen.txt"; fail "gen-vanilla"; }
    REQ=(-t porep --c1 "$T/c1.json")
    VERIFY=(--kind porep --c1 "$T/c1.json")
else
    run "$B/cuzk-bench" gen-vanilla snap --sector-size "$SIZE" -o "$T/snap.json" > "$OUT/gen.txt" 2>&1 ||
        { cat "$OUT/gen.txt"; fail "gen-vanilla"; }
    # the commitments and the registered update proof (0-4: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB) as
    # gen-vanilla wrote them beside the vanilla file
    CJ="$T/snap.json.commitments.json"
    field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([0-9a-f]*\).*/\1/p" "$CJ"; }
    REG=$(field registered_proof)
    [ -n "$REG" ] && [ -n "$(field comm_r_old)" ] && [ -n "$(field comm_r_new)" ] && [ -n "$(field comm_d_new)" ] ||
        { cat "$OUT/gen.txt" "$CJ"; fail "no commitments in $CJ"; }
    REQ=(-t snap --registered-proof "$REG" --vanilla "$T/snap.json" --comm-r-old "$(field comm_r_old)"
         --comm-r-new "$(field comm_r_new)" --comm-d-new "$(field comm_d_new)")
    # verify reads the commitments from $CJ itself: the check does not depend on this script's
    # parse
    VERIFY=(--kind snap --vanilla "$T/snap.json" --registered-proof "$REG")
    head -1 "$OUT/gen.txt"
fi
echo "gen-vanilla: $(secs "$t0" "$(now)") s"

# 3. the daemon, full validation on first load (daemon_up CAP LOGDIR: the daemon on a config
# pointing at the key, with [gpus] memory_limit = CAP unless CAP is empty, logs in LOGDIR)
daemon_up() {
    printf '[srs]\nparam_cache = "%s"\nvalidation = "full"\n' "$P" > "$T/cuzk.toml"
    [ -n "$1" ] || [ "${GPU_TRACE:-0}" = 1 ] && printf '[gpus]\n' >> "$T/cuzk.toml"
    if [ -n "$1" ]; then   # e.g. 48GiB: the daemon uses the card as if it were that small
        printf 'memory_limit = "%s"\n' "$1" >> "$T/cuzk.toml"
        echo "[gpus] memory_limit = $1"
    fi
    [ "${GPU_TRACE:-0}" = 1 ] && printf 'trace = true\n' >> "$T/cuzk.toml"   # MSM plans on stderr
    rm -f "$T/cuzk.sock"
    pack_bg "$DAEMON" -c "$T/cuzk.toml" -l "$ADDR" > "$2/daemon.out" 2> "$2/daemon.log"
    PID=$!
    i=0
    until grep -q "cuzk-daemon ready" "$2/daemon.out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 600 ] || fail "not ready after 60 s"
        kill -0 $PID 2>/dev/null || fail "daemon exited before ready"
        sleep 0.1
    done
    [ "${REQUIRE_GPU:-1}" = 0 ] || grep -q "GPU 0:" "$2/daemon.log" || fail "the daemon found no GPU"
}
daemon_down() {
    kill -TERM "$PID"
    wait "$PID" || fail "daemon exit status $?"
    PID=
}
ADDR="unix://$T/cuzk.sock"
ID=$KIND-$(echo "$SIZE" | tr "A-Z" "a-z" | sed "s/ib$//")   # porep-32g, snap-32g
if [ "${MAIN:-1}" = 1 ]; then
    # the setup wrote the key's digest cache; the first load measured here validates in full
    # (and writes the cache again for the caps below)
    rm -f "$P"/$STEM-*.params.validated
    daemon_up "${GPU_MEMORY_LIMIT:-}" "$OUT"
    t0=$(now)
    run "$B/cuzk-bench" -a "$ADDR" preload -c "$ID" > "$OUT/preload.txt" 2>&1 || { cat "$OUT/preload.txt"; fail "preload $ID"; }
    echo "first load of the key (full validation): $(secs "$t0" "$(now)") s"
    grep "SRS read" "$OUT/daemon.log" | tail -1

    # 4. proofs: one apart from the daemon, then the batches
    run "$B/cuzk-bench" -a "$ADDR" single "${REQ[@]}" --proof-out "$T/proof.bin" > "$OUT/single.txt" 2>&1 ||
        { cat "$OUT/single.txt"; fail "single"; }
    run "$B/cuzk-bench" verify "${VERIFY[@]}" --vk "$VK" --proof "$T/proof.bin" > "$OUT/verify.txt" 2>&1 ||
        { cat "$OUT/verify.txt"; fail "the returned proof does not verify apart from the daemon"; }
    tail -1 "$OUT/verify.txt"
    specs=("$COUNT 2")
    [ -n "${SINGLE_BATCH-1 1}" ] && specs+=("${SINGLE_BATCH-1 1}")
    for spec in "${specs[@]}"; do
        set -- $spec
        from=$(($(wc -l < "$OUT/daemon.log") + 1))
        run "$B/cuzk-bench" -a "$ADDR" batch "${REQ[@]}" -c "$1" -j "$2" > "$OUT/batch-c$1-j$2.txt" 2>&1 ||
            { cat "$OUT/batch-c$1-j$2.txt"; fail "batch -c $1 -j $2"; }
        cat "$OUT/batch-c$1-j$2.txt"
        "$(dirname "$0")/timeline-report.sh" "$OUT/daemon.log" "$from" || true
    done
    grep -E "VmHWM|VmRSS" "/proc/$PID/status" 2>/dev/null
    grep -iE "pinned|host copy|streamed|resident|out of memory" "$OUT/daemon.log" | head -8
    daemon_down
    grep "page-locked host memory" "$OUT/daemon.log" | tail -1   # logged at exit: the peak
fi

# 4b. memory caps (CAPS="24GiB 48GiB"): the same key (its digest cache makes the load a read)
# on a daemon that uses the card as if it were that small, CAP_COUNT proofs at -j 2 each; a
# cap no plan fits is reported with the daemon's reason, and the run goes on
for cap in ${CAPS:-}; do
    mkdir -p "$OUT/cap-$cap"
    daemon_up "$cap" "$OUT/cap-$cap"
    run "$B/cuzk-bench" -a "$ADDR" preload -c "$ID" > "$OUT/cap-$cap/preload.txt" 2>&1 ||
        { cat "$OUT/cap-$cap/preload.txt"; fail "preload $ID (memory_limit $cap)"; }
    n=${CAP_COUNT:-2}
    if run "$B/cuzk-bench" -a "$ADDR" batch "${REQ[@]}" -c "$n" -j 2 > "$OUT/cap-$cap/batch.txt" 2>&1; then
        echo "memory_limit $cap: $(grep "throughput:" "$OUT/cap-$cap/batch.txt" | sed 's/^throughput: *//')"
        "$(dirname "$0")/timeline-report.sh" "$OUT/cap-$cap/daemon.log" 1 | grep -E "GPU \(device|phase" || true
    else
        echo "memory_limit $cap: FAILED: $(grep -iE "too small|error|failed" "$OUT/cap-$cap/batch.txt" | head -1)"
    fi
    echo "  out-of-memory log lines: $(grep -ciE "out of memory" "$OUT/cap-$cap/daemon.log")"
    daemon_down
    grep "page-locked host memory" "$OUT/cap-$cap/daemon.log" | tail -1
done

# 5. the ceiling: the same GPU proving partitions of the same size back to back with no
# daemon (random key and witness, two provers with witness prefetch); PoRep-shaped for either
# KIND, so a snap run has the PoRep figure of the same card beside its own
if [ -x "$B/cuzk-bench-gpu" ] && [ "$SIZE" = 32GiB ] && [ "${CEILING:-1}" = 1 ]; then
    LG=${CEILING_LG:-27}    # 2^27: the NTT domain of a 32 GiB partition
    # a diagnostic: its failure is reported, the proofs above stand
    if timeout "${CEILING_TIMEOUT:-300}" ${PACK_RUN[@]+"${PACK_RUN[@]}"} "$B/cuzk-bench-gpu" \
        gpu-prove --porep-like "$LG" --pipeline 6 > "$OUT/ceiling.txt" 2>&1; then
        grep -E "pipeline|porep-like" "$OUT/ceiling.txt"
    else
        echo "c2-32g-bench: the gpu-prove ceiling failed:"; tail -2 "$OUT/ceiling.txt"
    fi
fi
echo "c2-32g-bench: PASS"
