#!/usr/bin/env bash
set -euo pipefail
curl -fsS -u "${LAMBDA_API_KEY:?}:" https://cloud.lambdalabs.com/api/v1/instances
curl -fsS -u "${LAMBDA_API_KEY}:" https://cloud.lambdalabs.com/api/v1/instance-types
echo "terminate with: POST https://cloud.lambdalabs.com/api/v1/instance-operations/terminate"
