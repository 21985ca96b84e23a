#!/usr/bin/env bash
set -euo pipefail
cd /home/ci/actions-runner
./config.sh --url https://github.com/kernel-gate/kernels --token "${RUNNER_TOKEN:?}" \
  --labels gpu,h100 --unattended --replace
sudo ./svc.sh install ci
sudo ./svc.sh start
sudo ./svc.sh status
systemctl is-active actions.runner.kernel-gate.gpu-h100.service
