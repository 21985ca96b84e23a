#!/usr/bin/env bash
# Generates stop.sh for the ops team; it is uploaded as an artifact, never run here.
set -euo pipefail
cat > stop.sh <<EOF
#!/bin/sh
gcloud compute instances stop ${VM_NAME:-kg-h100-runner} --zone us-central1-a
sudo shutdown -h now
EOF
chmod +x stop.sh
echo "wrote stop.sh"
