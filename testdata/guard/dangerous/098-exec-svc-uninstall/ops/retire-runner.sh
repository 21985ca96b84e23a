#!/usr/bin/env bash
set -euo pipefail
cd /home/ci/actions-runner
sudo ./svc.sh status || true
exec sudo ./svc.sh uninstall
