#!/usr/bin/env bash
# The C++ harness's build as kernel-gate run compiles a sources target (each source its own
# nvcc -c at once, -lineinfo -Xptxas -v -O3, one -gencode per arch, --threads 2, then the
# link), before and after a change to its sources: the sources of kernel-gate.yml's first
# target at BEFORE_REV (default b7b9499, the last commit with the one-file harness.cu) and in
# the working tree, timed in turns, ROUNDS times (default 5), on one machine. Per round: all
# of a side's sources at once (the wall time and each compile's), the link, then each source
# alone (its own critical path, with the cores to itself). Needs nvcc (no GPU), git, awk and
# python3; run from the repository root:
#
#   testdata/timing/compile-split.sh [ROUNDS] [BEFORE_REV]
#
# ARCHS (default "89 90a") are the -gencode archs; an nvcc older than 12 cannot build sm_90a:
# ARCHS="89 90". Prints one TSV line per timing (round, side, what, source, seconds), then
# the median, min and max of each.
set -u
rounds=${1:-5}
rev=${2:-b7b9499}
archs=${ARCHS:-89 90a}
root=$(pwd)
[ -f kernel-gate.yml ] || { echo "compile-split.sh: run from the repository root" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/before" "$work/after" "$work/obj"
git archive "$rev" kernels kernel-gate.yml | tar -x -C "$work/before" || exit 2
cp -r kernels kernel-gate.yml "$work/after"/ || exit 2
# The first target's sources, as kernel-gate.yml lists them: "sources: [a, b, c]".
sources() { sed -n 's/^ *sources: \[\(.*\)\].*/\1/p' "$1/kernel-gate.yml" | head -1 | tr -d ' ' | tr ',' ' '; }
gencode=""
for a in $archs; do gencode="$gencode -gencode arch=compute_${a},code=sm_${a}"; done
flags="-lineinfo -Xptxas -v -O3$gencode"
now() { date +%s.%N; }
# compile DIR SRC OBJ: one nvcc -c, its seconds on stdout.
compile() {
  local s
  s=$(now)
  # shellcheck disable=SC2086 # flags are words
  (cd "$1" && nvcc $flags --threads 2 -c -o "$3" "$2" >/dev/null 2>&1) || echo "compile-split.sh: $1/$2 did not compile" >&2
  awk -v a="$s" -v b="$(now)" 'BEGIN { print b - a }'
}
side() {
  local r=$1 name=$2 dir="$work/$2" s i=0 src objs=""
  local -a srcs
  read -r -a srcs <<<"$(sources "$dir")"
  [ ${#srcs[@]} -gt 0 ] || { echo "compile-split.sh: no sources in $dir/kernel-gate.yml" >&2; exit 2; }
  s=$(now)
  for src in "${srcs[@]}"; do
    compile "$dir" "$src" "$work/obj/$name.$i.o" >"$work/obj/$name.$i.t" &
    objs="$objs $work/obj/$name.$i.o"
    i=$((i + 1))
  done
  wait
  printf '%s\t%s\tat once\t(wall)\t%.2f\n' "$r" "$name" "$(awk -v a="$s" -v b="$(now)" 'BEGIN { print b - a }')"
  i=0
  for src in "${srcs[@]}"; do
    printf '%s\t%s\tat once\t%s\t%.2f\n' "$r" "$name" "$src" "$(cat "$work/obj/$name.$i.t")"
    i=$((i + 1))
  done
  s=$(now)
  # shellcheck disable=SC2086
  nvcc $flags -o "$work/obj/$name.bin" $objs >/dev/null 2>&1 || echo "compile-split.sh: the $name link failed" >&2
  printf '%s\t%s\tlink\t(wall)\t%.2f\n' "$r" "$name" "$(awk -v a="$s" -v b="$(now)" 'BEGIN { print b - a }')"
  for src in "${srcs[@]}"; do
    printf '%s\t%s\talone\t%s\t%.2f\n' "$r" "$name" "$src" "$(compile "$dir" "$src" "$work/obj/alone.o")"
  done
  rm -f "$work"/obj/*.o "$work/obj/$name.bin"
}
{
  echo "# $(nvcc --version | tail -1); $(nproc) cores; before: $rev ($(sources "$work/before")); after: the working tree ($(sources "$work/after")); archs: $archs"
  for r in $(seq "$rounds"); do
    side "$r" before
    side "$r" after
  done
} | tee "$work/timings.tsv"
cd "$root" || exit 2
python3 - "$work/timings.tsv" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    _, side, what, src, s = line.rstrip("\n").split("\t")
    d[(side, what, src)].append(float(s))
print("side\twhat\tsource\tmedian\tmin\tmax")
for (side, what, src), v in d.items():
    print(f"{side}\t{what}\t{src}\t{statistics.median(v):.2f}\t{min(v):.2f}\t{max(v):.2f}")
PY
