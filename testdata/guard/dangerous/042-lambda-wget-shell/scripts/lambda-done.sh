#!/usr/bin/env bash
set -euo pipefail
ID="${LAMBDA_INSTANCE_ID:?}"
wget -qO- \
  --header="Authorization: Bearer ${LAMBDA_API_KEY}" \
  --header='Content-Type: application/json' \
  --post-data="{\"instance_ids\":[\"${ID}\"]}" \
  https://cloud.lambda.ai/api/v1/instance-operations/terminate
