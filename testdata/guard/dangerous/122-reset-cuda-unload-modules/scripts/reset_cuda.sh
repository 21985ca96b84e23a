#!/bin/bash
# Reload the NVIDIA driver without a reboot

echo "unloading"
sudo rmmod nvidia_uvm
sudo rmmod nvidia_drm
sudo rmmod nvidia_modeset
sudo rmmod nvidia

echo "reloading"
sudo modprobe nvidia
sudo modprobe nvidia_uvm

nvidia-smi
python -c "import torch; print(torch.cuda.is_available())"
