#!/bin/sh
# check-env-doc.sh: every environment variable the library reads must be documented.
# Each getenv("NAME") / secure_getenv("NAME") in the C and CUDA sources under src/ must have
# NAME in the table of the section "## Environment variables" of docs/daemon.md (first column,
# in backticks). A getenv whose argument is not a string literal is an error too: its name
# cannot be checked. Prints one line per problem (file:line, the name, a fix) and exits 1 when
# there is any; scripts/test.sh (what CI runs) calls it.
#   scripts/check-env-doc.sh [ROOT]      (ROOT: the repository root; default: this checkout)
set -eu
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT"
DOC=docs/daemon.md
SECTION="## Environment variables"

[ -f "$DOC" ] || { echo "check-env-doc: FAIL: $DOC not found"; exit 1; }
# The names in the section's table: the backticked words of each row's first cell.
# shellcheck disable=SC2016
documented=$(awk -v h="$SECTION" '
  $0 == h { on = 1; next }
  on && /^## / { exit }
  on && /^\|/ { split($0, c, "|"); print c[2] }' "$DOC" |
  grep -o '`[A-Za-z_][A-Za-z0-9_]*`' | tr -d '`' | sort -u)
if ! grep -qx "$SECTION" "$DOC"; then
  echo "check-env-doc: FAIL: $DOC has no section \"$SECTION\" (a table: variable | read by | what it does)"
  exit 1
fi

# Every call, with file and line: "src/x.c:12:<text from the call on>".
calls=$(grep -rnoE '\b(secure_)?getenv[[:space:]]*\([^)]*\)?' src \
          --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
          --include='*.cc' --include='*.cpp' --include='*.hpp' 2>/dev/null | sort -t: -k1,1 -k2,2n || true)

nread=0; nbad=0; names=""
echo "$calls" | { while IFS= read -r line; do
    [ -n "$line" ] || continue
    loc=${line%%:getenv*}; loc=${loc%%:secure_getenv*}
    call=${line#"$loc":}
    name=$(printf '%s\n' "$call" | sed -n 's/^[a-z_]*getenv[[:space:]]*([[:space:]]*"\([A-Za-z_][A-Za-z0-9_]*\)"[[:space:]]*).*/\1/p')
    file=${loc%%:*}
    nread=$((nread + 1))
    if [ -z "$name" ]; then
      nbad=$((nbad + 1))
      echo "$loc: $call: the variable's name is not a string literal, so it cannot be checked"
      echo "    fix: call getenv(\"NAME\") with the literal name and document NAME in $DOC \"$SECTION\""
    elif ! printf '%s\n' "$documented" | grep -qx "$name"; then
      nbad=$((nbad + 1))
      echo "$loc: $name is read here but not documented"
      echo "    fix: add | \`$name\` | \`$file\` | what it does | to the table of $DOC \"$SECTION\", or stop reading it"
    else
      names="$names $name"
    fi
  done
  if [ "$nbad" -gt 0 ]; then
    echo "check-env-doc: FAIL: $nbad of $nread getenv calls in src/ read a variable that is not documented (or not named by a literal)"
    exit 1
  fi
  # shellcheck disable=SC2086
  echo "check-env-doc: OK: $nread getenv calls in src/, all documented in $DOC ($(printf '%s\n' $names | sort -u | tr '\n' ' ' | sed 's/ $//'))"
}
