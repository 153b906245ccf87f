#!/bin/sh
# run_all.sh: run every test binary given, then print the wall time and the suite's closing line.
start=$(date +%s)
passed=0; failed=0; skipped=0; failed_bins=""
for t in "$@"; do
  echo "== $t"
  out=$("$t" 2>&1); rc=$?
  echo "$out"
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  s=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')
  [ -n "$line" ] || { p=0; f=1; s=0; }
  [ $rc -ne 0 ] && [ "$f" = 0 ] && f=1
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  [ "$f" != 0 ] && failed_bins="$failed_bins $t"
done
[ -n "$failed_bins" ] && echo "failing:$failed_bins"
echo "suite time: $(( $(date +%s) - start )) s"
echo "suite: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
