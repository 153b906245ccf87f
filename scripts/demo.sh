#!/bin/sh
# demo.sh: the README's main job. Installs missing Debian packages, builds everything, and proves
# a real PoRep C2 (commit phase 2 of a 2 KiB sector, StackedDrg2KiBV1_1) through cuzk-daemon:
#   1. local 2 KiB parameters, made once (cuzk-params setup, 1-2 minutes; NOT for production:
#      the toxic waste was known to the process that made them) and kept in
#      $XDG_CACHE_HOME/cuzk/params-2KiB (default ~/.cache/cuzk/params-2KiB) for later runs;
#   2. a C1 output (the vanilla proofs Curio sends) generated for a synthetic sector;
#   3. cuzk-daemon on a temporary config ([srs] param_cache = that directory, validation =
#      "curve") on a unix socket in a temporary directory;
#   4. the proof through `cuzk-bench single -t porep --c1 FILE` (the daemon verifies every
#      partition's proof before it answers COMPLETED), then the daemon's status;
#   5. SIGTERM to the daemon, which must exit 0.
# Exit 0 when all of that worked, non-zero with a message naming the step that failed.
#
#   scripts/demo.sh                           the 2 KiB PoRep C2 (above)
#   scripts/demo.sh --synthetic [CONSTRAINTS] quick: a synthetic circuit (default 4096
#                                             constraints) on the daemon's embedded defaults
# Environment: CUZK_DEMO_PARAMS=DIR overrides the parameter cache directory.
set -eu
cd "$(dirname "$0")/.."

MODE=porep
N=4096
case "${1:-}" in
  "") ;;
  --synthetic) MODE=synthetic; N=${2:-4096} ;;
  -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: scripts/demo.sh [--synthetic [CONSTRAINTS]]" >&2; exit 2 ;;
esac
case "$N" in ''|*[!0-9]*) echo "demo: CONSTRAINTS must be a number, not '$N'" >&2; exit 2 ;; esac

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }
T_ALL=$(now_ms)

DIR=""
PID=""
cleanup() {
  rc=$?
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
  fi
  [ -n "$DIR" ] && rm -rf "$DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
die() {
  echo "demo: FAILED: $*" >&2
  if [ -n "$DIR" ] && [ -s "$DIR/daemon.log" ]; then
    echo "demo: last lines of the daemon's log:" >&2
    tail -n 20 "$DIR/daemon.log" >&2
  fi
  exit 1
}

./scripts/install-deps.sh || die "installing the Debian packages (scripts/install-deps.sh)"
echo "== building (make all)"
t=$(now_ms)
make -j"$(nproc)" all >/dev/null || die "the build (make all) failed: see the compiler output above"
[ -x build/bin/cuzk-daemon ] || die "build/bin/cuzk-daemon was not built (gRPC/protobuf-c/microhttpd/jansson/systemd development packages missing?)"
echo "   built in $(secs $(( $(now_ms) - t )))"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-demo-XXXXXX") || die "cannot create a temporary directory"
ADDR="unix://$DIR/cuzk.sock"

if [ "$MODE" = porep ]; then
  PARAMS=${CUZK_DEMO_PARAMS:-${XDG_CACHE_HOME:-$HOME/.cache}/cuzk/params-2KiB}
  if [ -f "$PARAMS/.complete" ]; then
    echo "== 2 KiB parameters: cached in $PARAMS (made $(cat "$PARAMS/.complete"))"
  else
    # Made in a scratch directory next to the cache and renamed into place when complete, so
    # an interrupted run never leaves a half-written cache behind.
    [ ! -e "$PARAMS" ] || die "$PARAMS exists but is not a complete cache made by this script (no .complete): remove it, or set CUZK_DEMO_PARAMS to another directory"
    mkdir -p "$(dirname "$PARAMS")" || die "cannot create $(dirname "$PARAMS")"
    WORK=$(mktemp -d "$PARAMS.tmp-XXXXXX") || die "cannot create a directory next to $PARAMS"
    echo "== making local 2 KiB PoRep parameters in $PARAMS (once; takes 1-2 minutes, about 2 GB of memory)"
    t=$(now_ms)
    build/bin/cuzk-params setup --kind porep --sector-size 2KiB --out "$WORK" >"$DIR/setup.log" 2>&1 ||
      { cat "$DIR/setup.log" >&2; rm -rf "$WORK"; die "cuzk-params setup --kind porep --sector-size 2KiB failed"; }
    echo "   made in $(secs $(( $(now_ms) - t ))) ($(du -sh "$WORK" | cut -f1): .params, .vk, .shape)"
    date -u '+%Y-%m-%d %H:%M UTC' >"$WORK/.complete"
    mv "$WORK" "$PARAMS" || { rm -rf "$WORK"; die "cannot move the parameters into $PARAMS"; }
  fi

  echo "== generating a C1 output (vanilla proofs) for a synthetic 2 KiB sector"
  C1="$DIR/c1.json"
  GEN=$(build/bin/cuzk-bench gen-vanilla porep --sector-size 2KiB -o "$C1") ||
    die "cuzk-bench gen-vanilla porep --sector-size 2KiB failed"
  echo "   $GEN"
  # What the daemon will read: the registered proof inside the C1 (Phase1Out is base64 JSON
  # that starts with {"registered_proof":"..."}); the partition count from gen-vanilla's line
  # "FILE: StackedDrg2KiBV1_1, 1 partitions x 2 challenges, N bytes (...)".
  REG=$(sed -n 's/.*"Phase1Out":"\([^"]*\)".*/\1/p' "$C1" | base64 -d 2>/dev/null | head -c 200 |
        sed -n 's/^{"registered_proof":"\([A-Za-z0-9_]*\)".*/\1/p')
  PARTS=$(echo "$GEN" | sed -n 's/.*, \([0-9][0-9]*\) partitions x.*/\1/p')
  [ -n "$REG" ] || die "cannot read registered_proof from the C1 output $C1"
  [ -n "$PARTS" ] || die "cannot read the partition count from: $GEN"
  case "$REG" in   # Filecoin's RegisteredSealProof numbers of the 2 KiB proofs
    StackedDrg2KiBV1) REG="$REG (RegisteredSealProof 0)" ;;
    StackedDrg2KiBV1_1) REG="$REG (RegisteredSealProof 5)" ;;
    StackedDrg2KiBV1_1_Feat_SyntheticPoRep) REG="$REG (RegisteredSealProof 10)" ;;
    StackedDrg2KiBV1_2_Feat_NonInteractivePoRep) REG="$REG (RegisteredSealProof 15)" ;;
  esac
  # validation = "curve": the daemon checks that every point of the parameters is on its curve
  # (about 10 s for the 1.1 GB file here) but skips the subgroup checks, which take many minutes
  # on 2 cores the first time (the default, "full", then writes a digest cache that makes later
  # loads skip them): this script made these parameters itself. Downloaded parameters: "full".
  printf '# cuzk-daemon configuration written by scripts/demo.sh\n[srs]\nparam_cache = "%s"\nvalidation = "curve"\n' \
    "$PARAMS" >"$DIR/cuzk.toml"
  DAEMON_ARGS="-c $DIR/cuzk.toml"
else
  PARAMS=""
  DAEMON_ARGS=""   # no -c and no /data/zk/cuzk.toml: the embedded defaults, only -l overridden
fi

echo "== starting cuzk-daemon on $ADDR"
t=$(now_ms)
# shellcheck disable=SC2086
build/bin/cuzk-daemon $DAEMON_ARGS -l "$ADDR" >"$DIR/daemon.out" 2>"$DIR/daemon.log" &
PID=$!
i=0
until grep -q "cuzk-daemon ready" "$DIR/daemon.out" 2>/dev/null; do
  kill -0 "$PID" 2>/dev/null || { wait "$PID" || true; PID=""; die "cuzk-daemon exited during startup"; }
  i=$((i + 1)); [ $i -lt 600 ] || die "cuzk-daemon not ready after 60 s"
  sleep 0.1
done
echo "   $(cat "$DIR/daemon.out") ($(secs $(( $(now_ms) - t ))))"

if [ "$MODE" = porep ]; then
  echo "== proving: cuzk-bench single -t porep --c1 c1.json (the daemon loads the SRS on first use)"
  set -- -t porep --c1 "$C1"
else
  echo "== proving: cuzk-bench single -t synthetic --constraints $N"
  set -- -t synthetic --constraints "$N"
fi
t=$(now_ms)
build/bin/cuzk-bench -a "$ADDR" single "$@" >"$DIR/result.txt" 2>&1 || { cat "$DIR/result.txt"; die "the proof did not complete${PARAMS:+ (if the parameters in $PARAMS are damaged, remove that directory: the next run makes them again)}"; }
T_PROVE=$(( $(now_ms) - t ))
cat "$DIR/result.txt"
grep -q '^status: *COMPLETED' "$DIR/result.txt" || die "the daemon did not answer COMPLETED"
grep -q '^verified: *yes' "$DIR/result.txt" || die "the daemon did not report the proof as verified"
BYTES=$(sed -n 's/^proof: *\([0-9][0-9]*\) bytes.*/\1/p' "$DIR/result.txt")
TIMINGS=$(sed -n 's/^timings: *//p' "$DIR/result.txt")

echo "== daemon status"
build/bin/cuzk-bench -a "$ADDR" status >"$DIR/status.txt" 2>&1 || { cat "$DIR/status.txt"; die "cuzk-bench status failed"; }
cat "$DIR/status.txt"
if grep -q 'none: proving on the CPU' "$DIR/status.txt"; then
  PROVER="the CPU (no GPU in this build or machine; \"gpu=\" above is the prover's time)"
else
  PROVER="the GPU(s) listed in the status"
fi

echo "== stopping cuzk-daemon (SIGTERM)"
kill -TERM "$PID"
st=0
wait "$PID" || st=$?
PID=""
[ "$st" = 0 ] || die "cuzk-daemon exited with status $st after SIGTERM"

echo
echo "=== Proved ==="
if [ "$MODE" = porep ]; then
  [ "$BYTES" = $((PARTS * 192)) ] ||
    die "$BYTES proof bytes for $PARTS partition(s): expected $((PARTS * 192)) (192 per partition)"
  echo "what:        PoRep C2 (SealCommit phase 2) of a 2 KiB sector, through cuzk-daemon"
  echo "registered:  $REG, read from the C1"
  echo "partitions:  $PARTS"
  echo "proof:       $BYTES bytes ($PARTS x 192-byte Groth16 proof over BLS12-381)"
  echo "parameters:  $PARAMS (local setup: NOT for production)"
else
  echo "what:        SYNTHETIC circuit of $N constraints, through cuzk-daemon"
  echo "proof:       $BYTES bytes (Groth16 over BLS12-381)"
fi
echo "verified:    yes: the daemon verified every partition's proof before answering COMPLETED"
echo "proved on:   $PROVER"
echo "timings:     $TIMINGS; request round trip $(secs "$T_PROVE")"
echo "daemon:      stopped by SIGTERM, exit 0"
echo "demo:        OK in $(secs $(( $(now_ms) - T_ALL )))"
