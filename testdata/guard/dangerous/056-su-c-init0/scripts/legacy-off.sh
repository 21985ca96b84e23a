#!/bin/bash
# Old bench box without sudo; the CI user knows the root password via the keyring.
set -e
make -C kernels bench
su -c 'init 0' root
