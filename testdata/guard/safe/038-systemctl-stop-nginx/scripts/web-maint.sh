#!/usr/bin/env bash
# The results dashboard runs on the bench box; restart its web stack.
set -euo pipefail
stop_web() {
  sudo systemctl stop nginx
}
stop_web
sudo systemctl restart docker
sudo systemctl start nginx
systemctl status nginx --no-pager
