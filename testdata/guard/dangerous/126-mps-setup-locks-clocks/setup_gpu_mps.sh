#!/bin/bash
export CUDA_VISIBLE_DEVICES=0
nvidia-smi -i 0 -pm 1
sudo nvidia-smi -lgc 1755,1755
sudo nvidia-smi -lmc 8001,8001

nvidia-smi -i 0 -c 3
nvidia-cuda-mps-control -d
