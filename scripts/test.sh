#!/bin/sh
# test.sh: the README's test command: install missing Debian packages, build, run the CPU suite.
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j"$(nproc)" all
make -j"$(nproc)" test
