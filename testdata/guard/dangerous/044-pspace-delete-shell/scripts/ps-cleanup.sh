#!/usr/bin/env bash
# Remove the per-branch Paperspace machine once the branch is merged.
set -euo pipefail
MACHINE="${1:?machine id}"
pspace machine get "$MACHINE"
pspace machine delete "$MACHINE"
