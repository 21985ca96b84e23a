#!/bin/sh
# Times the two ways kernel-gate run dumps a binary's SASS (issue 22, pipeline/sassdump.go),
# on the host alone (no GPU is used):
#   whole   cuobjdump --dump-sass BIN
#   cubins  cuobjdump --list-elf BIN; cuobjdump -xelf all BIN in an empty directory;
#           nvdisasm -c -hex of each cubin, at most JOBS at once (default: the cores)
# each for one binary alone and for two at once (base's and head's, as a run with a base
# dumps them: two cuobjdump processes side by side; every cubin of both sharing JOBS).
# Usage: testdata/timing/sass-dump.sh BIN [RUNS]   (RUNS rounds, default 5, the four cases
# interleaved in each). Prints one line per case and round: case, round, wall seconds.
# The tools are the ones on PATH (CUOBJDUMP, NVDISASM override them).
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=${2:-5}
cuobjdump=${CUOBJDUMP:-cuobjdump} nvdisasm=${NVDISASM:-nvdisasm}
jobs=${JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
whole() { "$cuobjdump" --dump-sass "$bin" >"$work/whole.$1.txt"; }
# extract DIR: the listing and the extraction of one binary, as kernel-gate runs them.
extract() {
  rm -rf "$1" && mkdir -p "$1"
  "$cuobjdump" --list-elf "$bin" >"$1.list"
  (cd "$1" && "$cuobjdump" -xelf all "$bin" >/dev/null)
}
# disasm DIR...: every cubin of the DIRs, largest first, at most $jobs at once.
disasm() {
  for d; do ls -S "$d"/*.cubin; done | xargs -P "$jobs" -I{} sh -c '"$0" -c -hex "$1" >"$1.txt"' "$nvdisasm" {}
}
whole_two() { whole a & whole b & wait; }
cubins_one() { extract "$work/a"; disasm "$work/a"; }
cubins_two() { extract "$work/a" & extract "$work/b" & wait; disasm "$work/a" "$work/b"; }
echo "# $(basename "$bin"), $(nproc) cores, jobs $jobs; $("$cuobjdump" --version | tail -n 2 | head -n 1)"
printf 'case\tround\twall_s\n'
for r in $(seq 1 "$runs"); do
  for c in "whole a" whole_two cubins_one cubins_two; do
    set -- $c
    t0=$(now)
    "$@"
    t1=$(now)
    name=$1
    [ "$name" = whole ] && name=whole_one
    printf '%s\t%d\t%.2f\n' "$name" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  done
done
