#!/usr/bin/env bash
# Put the GPU back the way the bench found it.
set -u
sudo nvidia-smi --reset-gpu-clocks
sudo nvidia-smi --reset-memory-clocks
sudo nvidia-smi -pm 0
