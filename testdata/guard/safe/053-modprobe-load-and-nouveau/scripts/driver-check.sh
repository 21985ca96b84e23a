#!/usr/bin/env bash
# Make sure the NVIDIA modules are loaded and nouveau is not.
set -u
lsmod | grep -E '^nvidia' || sudo modprobe nvidia
sudo modprobe nvidia_uvm
sudo rmmod nouveau 2>/dev/null || true
modinfo nvidia | grep -i '^version'
