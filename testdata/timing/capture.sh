#!/usr/bin/env bash
# Captures testdata/timing/slowdowns-<gpu>.json.gz on a GPU machine (repository root):
#   testdata/timing/capture.sh OUTDIR [ROUNDS] [SAMPLES]
# Records the clocks, temperature and clock-event reasons before and after (read only).
set -euo pipefail
out=${1:?usage: capture.sh OUTDIR [ROUNDS] [SAMPLES]}
mkdir -p "$out"
bin=$(mktemp -d)
nvcc -O3 -arch=native -o "$bin/slowdowns" testdata/timing/slowdowns.cu
q="name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active"
nvidia-smi --query-gpu=$q --format=csv >"$out/smi_before.csv"
"$bin/slowdowns" "${2:-2000}" "${3:-20}" | gzip -9 -n >"$out/slowdowns.json.gz"
nvidia-smi --query-gpu=$q --format=csv,noheader >>"$out/smi_before.csv"
mv "$out/smi_before.csv" "$out/smi.csv"
rm -rf "$bin"
