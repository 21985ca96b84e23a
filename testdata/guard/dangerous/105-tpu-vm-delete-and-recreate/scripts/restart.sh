echo "deleting accel-0";
gcloud compute tpus tpu-vm delete accel-0 --zone=us-central2-b;

echo "requesting a new slice";
gcloud alpha compute tpus queued-resources create qr-0 \
--node-id accel-0 \
--zone us-central2-b \
--accelerator-type v4-64 \
--runtime-version tpu-ubuntu2204-base;
