#!/usr/bin/env bash
set -x

kill_docker() {
    kill $1
    pkill dockerd
    pkill containerd
}

run_docker() {
    ./dockerd &>> output.txt &
    echo $!
}

docker ps -aq | xargs docker rm -f
sudo systemctl start nvidia-container-toolkit-cdi-generator
DOCKERD_PID=$(run_docker)
docker run --name=gpu-test --device=nvidia.com/gpu=all ubuntu:latest nvidia-smi -L
kill_docker $DOCKERD_PID
sudo systemctl stop nvidia-container-toolkit-cdi-generator
