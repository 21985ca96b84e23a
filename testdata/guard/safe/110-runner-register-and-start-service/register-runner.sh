#!/bin/bash

su - runner -c "cd runner && \
                  ./config.sh \
                    --url https://github.com/org/kernels \
                    --name gpu-runner-1 \
                    --token $REG_TOKEN \
                    --labels gpu \
                    --unattended \
                    --ephemeral"

cd ~runner/runner
./svc.sh install runner
./svc.sh start
