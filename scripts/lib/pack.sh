# shellcheck shell=bash disable=SC2034
# (SC2034: the PACK_* variables are for the scripts that source this file)
# pack.sh: how the GPU scripts (daemon-gpu-check.sh, nvml-check.sh, c2-32g-bench.sh,
# deadline-bench.sh) make and run a pack. Sourced, bash only.
#
# A pack lets the CUDA daemon run on a GPU machine that lacks its Debian libraries (gRPC,
# protobuf-c, microhttpd, jansson, systemd), such as the device machine, whose image has only
# the CUDA toolkit and the driver: DIR/bin holds stripped programs, DIR every shared library
# they load (glibc included) and the dynamic loader DIR/ld-linux-x86-64.so.2, so nothing of the
# target's userland is used. A program runs as
#     DIR/ld-linux-x86-64.so.2 --library-path DIR:<driver dirs> DIR/bin/PROG ARGS...
# where the driver dirs are the target's own: those ldconfig lists for the driver libraries
# (libcuda.so.1, which the static CUDA runtime loads; libnvidia-ml.so.1 for telemetry), then
# /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu and /usr/lib64 where they exist.
#
#   pack_make DIR BUILD PROG...   (here) copy BUILD/bin/PROG..., stripped, into DIR/bin and
#                                 their libraries and the loader into DIR; prints DIR's size
#   pack_init DIR [LIBS]          (there) DIR a pack: PACK=1, PACK_BIN=DIR/bin, PACK_LP the
#                                 library path, PACK_RUN=(loader --library-path PACK_LP).
#                                 LIBS: an extended regex of the driver libraries whose
#                                 directories join the path (default: libcuda\.so\.1).
#                                 DIR not a pack: PACK=0, PACK_BIN=$BIN (the bin directory of
#                                 a plain build), PACK_RUN=() (programs run directly);
#                                 without BIN it says so and returns 1.
#   pack_run PROG ARGS...         run PROG through PACK_RUN in the foreground
#   pack_bg PROG ARGS...          start it in the background; afterwards $! is the program
#                                 itself (the loader runs it in its own process, and a function
#                                 runs in the caller's shell), so it can be waited for and
#                                 signalled. Redirect the call, not a subshell:
#                                 `pack_bg "$PACK_BIN/cuzk-daemon-gpu" -l ADDR > out 2> log; PID=$!`
#   ${PACK_RUN[@]+"${PACK_RUN[@]}"}  the prefix itself, for wrappers such as timeout(1)

PACK_LOADER=ld-linux-x86-64.so.2

pack_make() {
    local dir=${1:?pack_make DIR BUILD PROG...} build=${2:?pack_make DIR BUILD PROG...} p
    shift 2
    mkdir -p "$dir/bin" || return 1
    for p in "$@"; do
        cp "$build/bin/$p" "$dir/bin/$p" && strip "$dir/bin/$p" || return 1
        # "libx.so.N => /path (0x...)" and the loader line "/lib64/ld-linux-x86-64.so.2 (0x...)"
        ldd "$build/bin/$p" |
            awk -v ld="$PACK_LOADER" '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $1 ~ /^\// { print ld, $1 }' |
            while read -r name path; do cp -L "$path" "$dir/$name" || exit 1; done || return 1
    done
    du -sh "$dir"
}

pack_init() {
    local dir=${1:?pack_init DIR [LIBS]} libs=${2:-'libcuda\.so\.1'} d
    if [ -x "$dir/$PACK_LOADER" ]; then
        PACK=1
        PACK_BIN="$dir/bin"
        PACK_LP="$dir"
        # ENVIRON, not -v: awk would take the regex's backslashes for escape sequences
        for d in $(ldconfig -p 2>/dev/null | RE="$libs" awk '$0 ~ ENVIRON["RE"] { print $NF }' | xargs -r -n1 dirname) \
                 /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
            [ -d "$d" ] && PACK_LP="$PACK_LP:$d"
        done
        PACK_RUN=("$dir/$PACK_LOADER" --library-path "$PACK_LP")
    else
        PACK=0
        PACK_LP=
        PACK_RUN=()
        if [ -z "${BIN:-}" ]; then
            echo "pack: $dir has no $PACK_LOADER (not made by scripts/daemon-gpu-check.sh --pack);" \
                 "set BIN to the bin directory of a build to run that build's programs directly"
            return 1
        fi
        PACK_BIN=$BIN
    fi
}

pack_run() { ${PACK_RUN[@]+"${PACK_RUN[@]}"} "$@"; }

pack_bg() { ${PACK_RUN[@]+"${PACK_RUN[@]}"} "$@" & }
