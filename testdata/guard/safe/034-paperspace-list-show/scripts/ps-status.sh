#!/usr/bin/env bash
set -euo pipefail
paperspace machines list
paperspace machines show --machineId "${PS_MACHINE_ID:?}"
pspace machine list
pspace machine start "$PS_MACHINE_ID"
