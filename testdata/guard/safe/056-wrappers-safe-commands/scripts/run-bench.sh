#!/usr/bin/env bash
set -euo pipefail
env CUDA_VISIBLE_DEVICES=0 ./build/bench --warmup 10
timeout 600 nice -n 5 ./build/bench --iters 100
nohup ./build/bench --soak > soak.log 2>&1 &
time make -j8
setsid ./tools/metrics-exporter &
sudo -n true && echo "sudo ok"
docker ps -q | xargs -r docker stop
