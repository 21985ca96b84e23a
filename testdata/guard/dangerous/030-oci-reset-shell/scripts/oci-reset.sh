#!/usr/bin/env bash
# Hard-reset the OCI GPU instance when the GPU is lost (Xid 79).
set -euo pipefail
OCID=$(curl -s -H 'Authorization: Bearer Oracle' http://169.254.169.254/opc/v2/instance/id)
if dmesg | grep -q 'Xid.*79'; then
  oci compute instance action --instance-id "$OCID" --action RESET --auth instance_principal
fi
