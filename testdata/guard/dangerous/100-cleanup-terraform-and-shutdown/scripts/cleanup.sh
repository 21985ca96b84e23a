#!/usr/bin/env bash
# End-of-run cleanup: drop the scratch infra, then turn the box off.
set -euo pipefail
pushd infra/scratch >/dev/null
terraform destroy -auto-approve
popd >/dev/null
sudo shutdown -h +1
