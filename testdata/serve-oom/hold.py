#!/usr/bin/env python3
"""hold.py MIB CMD...: holds MIB MiB of GPU memory (torch.empty on the current device), then
runs CMD with the same standard input and output and the serve protocol's answer descriptor
(KG_SERVE_FD), and exits with its status. It makes a harness process take MIB more GPU memory
than it does, so that a few of them fill a large GPU as a small one fills: run.sh's stand-in for
an L4. A hold that does not fit fails as PyTorch does (torch.OutOfMemoryError), before CMD runs.
"""

import os
import subprocess
import sys

import torch

mib = int(sys.argv[1])
held = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
fd = os.environ.get("KG_SERVE_FD", "")
sys.exit(subprocess.call(sys.argv[2:], pass_fds=(int(fd),) if fd.isdigit() else ()))
