#!/usr/bin/env bash
set -euo pipefail
VERSION=${1:?driver version}
sudo sh <<'EOF'
rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia
EOF
sudo sh "./NVIDIA-Linux-x86_64-${VERSION}.run" --silent
