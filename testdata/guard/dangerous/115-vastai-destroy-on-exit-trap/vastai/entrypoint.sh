#! /bin/bash

set -e

pipx install vastai
trap 'vastai destroy instance $CONTAINER_ID' EXIT

export EXTRA_LABELS="vastai"
if [ -n "$CONTAINER_ID" ]; then
  EXTRA_LABELS="${EXTRA_LABELS},${CONTAINER_ID}"
fi

bash ./register.sh
