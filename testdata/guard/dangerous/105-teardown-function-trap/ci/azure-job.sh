#!/usr/bin/env bash
# Runs on the Azure GPU VM; always deallocates it when the job ends.
set -euo pipefail
teardown() {
  az vm deallocate -g kg-gpu -n "$(hostname)" --no-wait
}
trap teardown EXIT
make -C kernels test
