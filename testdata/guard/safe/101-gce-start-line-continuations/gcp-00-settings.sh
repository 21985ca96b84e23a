#!/bin/sh
export GPU_VM_NAME=bench-a100-1
export GPU_VM_ZONE=us-central1-c
