#!/bin/sh
# test.sh: the README's test command: install missing Debian packages, build, compile-check
# the CUDA backend when nvcc is present (one architecture: nothing can run without a GPU),
# build the libFuzzer targets (docs/fuzzing.md; not run),
# then check that every environment variable src/ reads is documented (scripts/check-env-doc.sh)
# and that every code name the docs cite exists (scripts/check-doc-idents.sh), and run the CPU
# suite. Its last line is "suite: N passed, N failed, N skipped", followed by a line naming
# each documentation check that failed; the exit status is non-zero if either
# failed. As root it also tests the Debian package (scripts/test-deb.sh: installs and removes
# it on this machine).
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j"$(nproc)" all
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$NVCC" ] && [ "${CUZK_SKIP_GPU_BUILD:-0}" != 1 ]; then
  echo "== compile check of the CUDA backend (sm_90 only; run it with make test-gpu on a GPU)"
  make -j"$(nproc)" BUILD=build-gpu NVCC="$NVCC" \
       GPU_ARCHS="-gencode arch=compute_90,code=sm_90" gpu >/dev/null
  echo "== device field multiplication, emulated on the host, against GMP"
  make -s BUILD=build-gpu NVCC="$NVCC" gpu-field-check
fi
echo "== the libFuzzer targets build (clang, ASan + UBSan; run them with make fuzz-run: docs/fuzzing.md)"
make -j"$(nproc)" fuzz >/dev/null
echo "== every environment variable read in src/ is documented in docs/daemon.md"
doc_ok=1
./scripts/check-env-doc.sh || doc_ok=0
echo "== every code name README.md and docs/*.md cite in backticks exists in the tree"
ident_ok=1
./scripts/check-doc-idents.sh || ident_ok=0
echo "== the Debian package: lintian, dpkg -i, a job through the installed daemon, dpkg -r (as root)"
deb_ok=1
./scripts/test-deb.sh || deb_ok=0
make -j"$(nproc)" test
[ "$deb_ok" = 1 ] || { echo "test.sh: FAILED: scripts/test-deb.sh (the Debian package, above the suite)"; exit 1; }
[ "$doc_ok" = 1 ] || echo "test.sh: FAILED: scripts/check-env-doc.sh (undocumented environment variables, listed above the suite)"
[ "$ident_ok" = 1 ] || echo "test.sh: FAILED: scripts/check-doc-idents.sh (stale code names in the docs, listed above the suite)"
[ "$doc_ok" = 1 ] && [ "$ident_ok" = 1 ]
