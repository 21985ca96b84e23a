#!/usr/bin/env bash
# Install the pinned NVIDIA driver on the CI box.
set -euo pipefail
DRIVER=580.95.05
sudo apt-get update
sudo apt-get install -y "nvidia-driver-580-server=${DRIVER}-0ubuntu1"
echo "driver ${DRIVER} installed, rebooting"
sudo reboot
