#!/usr/bin/env bash
print_stop_help() {
  echo "To park the box:"
  echo "  sudo systemctl suspend"
  echo "  az vm deallocate -g kg-gpu -n kg-nd-h100"
}

print_stop_help
