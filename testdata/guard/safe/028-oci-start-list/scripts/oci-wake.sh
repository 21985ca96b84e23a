#!/usr/bin/env bash
set -euo pipefail
oci compute instance list --compartment-id "$OCI_COMPARTMENT" --lifecycle-state STOPPED
oci compute instance action --instance-id "$OCI_INSTANCE_ID" --action START
oci compute instance get --instance-id "$OCI_INSTANCE_ID"
