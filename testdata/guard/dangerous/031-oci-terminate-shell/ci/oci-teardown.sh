#!/usr/bin/env bash
set -euo pipefail
OCID="${OCI_INSTANCE_ID:?}"
oci compute instance get --instance-id "$OCID" --query 'data."lifecycle-state"'
oci compute instance terminate --instance-id "$OCID" \
  --preserve-boot-volume false --force
