#!/bin/bash

if [ "$1" == "on" ]; then
    sudo nvidia-smi -pm 1
    sudo nvidia-smi -lgc 1200,1980
    sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm
elif [ "$1" == "off" ]; then
    sudo nvidia-smi -pm 0
    sudo nvidia-smi -rgc
    sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm
else
    echo "Usage: $0 {on|off}"
    exit 1
fi
