#!/bin/sh
# Install the built kernels system-wide.
set -e
su -c 'make -C /opt/kernels install' builder
doas make -C /opt/kernels install-headers
