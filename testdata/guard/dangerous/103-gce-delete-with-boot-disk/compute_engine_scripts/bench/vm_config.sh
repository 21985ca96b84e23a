PROJECT_ID=kernels-ci
ZONE=us-east1-b
INSTANCE_NAME=h100-bench-2
