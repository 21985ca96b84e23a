#!/bin/bash
GCP_PROJECT=kernels-ci
GCP_ZONE=europe-west4-a
GCP_INSTANCE_NAME=l4-bench
