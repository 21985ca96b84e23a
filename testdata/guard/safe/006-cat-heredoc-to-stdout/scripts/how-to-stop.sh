#!/usr/bin/env bash
cat <<'EOF'
How to stop the GPU VM when you are done (do it by hand, never from CI):

  gcloud compute instances stop kg-h100-runner --zone us-central1-a
  aws ec2 stop-instances --instance-ids i-0123456789abcdef0
  sudo shutdown -h now
EOF
