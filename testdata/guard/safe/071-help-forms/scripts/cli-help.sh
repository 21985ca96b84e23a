#!/usr/bin/env bash
# Collect the help text of every CLI the runbook mentions.
{
  shutdown --help
  kubectl delete --help
  terraform destroy --help
  paperspace machines stop --help
} > cli-help.txt 2>&1 || true
