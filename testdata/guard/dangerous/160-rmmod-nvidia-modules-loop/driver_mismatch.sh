#!/bin/bash
# fixes "Failed to initialize NVML: Driver/library version mismatch"

echo "loaded nvidia modules:"
lsmod | grep ^nvidia | awk '{print $1}'

for mod in nvidia_uvm nvidia_drm nvidia_modeset nvidia; do echo "$mod"; rmmod $mod; done

if lsmod | grep -q ^nvidia; then
  echo "some modules are still loaded:"
  lsmod | grep ^nvidia
  exit 1
fi
nvidia-smi
