#!/bin/sh
# check-doc-idents.sh: the code names the documentation cites must exist.
# Every inline code span of README.md and docs/*.md (docs/archive/ is history and exempt) that
# looks like one of our names -- a C identifier with an underscore (engine_submit, msm_plan,
# cuzk_queue_depth), a path into the tree (src/engine/queue.c, scripts/x.sh, tests/...) or a
# bare source file name (kind_porep.c) -- must be found in the tree: identifiers as whole words
# in src/ include/ cmd/ tests/ scripts/ fuzz/ proto/ deploy/ .ci/ Makefile, paths as tracked
# files. Config keys (section.key), flags, commands with spaces, numbers and Rust/Go paths
# (upstream code) are not checked; scripts/doc-idents.allow lists the upstream names that would
# otherwise look like ours, each with its reason. Prints "file:line: `name`: what is missing"
# per stale name and exits 1 when there is any; scripts/test.sh (what CI runs) calls it.
#   scripts/check-doc-idents.sh [ROOT [DOC.md...]]
#     ROOT: the repository whose code is searched (default: this checkout);
#     DOC.md: the files to check (default: ROOT's README.md and docs/*.md)
set -eu
ROOT=${1:-$(dirname "$0")/..}
[ $# -gt 0 ] && shift
if [ $# -eq 0 ]; then
  set -- "$ROOT"/README.md "$ROOT"/docs/*.md
fi
exec python3 "$(dirname "$0")/lib/doc_idents.py" "$ROOT" "$@"
