#!/bin/bash

cd /opt/actions-runner

./config.sh --url ${REPO_URL} --token ${RUNNER_TOKEN} --unattended --replace

cleanup() {
    echo "deregistering"
    ./config.sh remove --token ${RUNNER_TOKEN}
}

trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

./run.sh & wait $!
