#!/bin/bash
set -e
runpodctl config --apiKey="$RUNPOD_API_KEY"
runpodctl get pod
runpodctl get pod "$POD_ID"
runpodctl start pod "$POD_ID" --bid=0.3
