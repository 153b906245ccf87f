#!/bin/sh
# demo.sh: the README's main-job command. Installs missing packages, builds, and runs the
# main job. (Interim: the arithmetic benchmark; the daemon demo replaces it.)
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j"$(nproc)" all
build/bin/cuzk-bench arith
