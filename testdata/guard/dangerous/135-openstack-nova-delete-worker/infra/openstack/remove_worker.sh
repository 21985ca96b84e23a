#!/bin/bash -eE
set -o pipefail

source "$WORKSPACE/global.env"

if nova show "$instance_id" | grep 'locked' | grep 'False'; then
  nova delete "$instance_id"
fi
