#!/usr/bin/python
import subprocess

INSTANCE_GROUP = "gke-bench-gpu-pool-grp"


def remove_node(name):
    """Deletes the node's VM from its managed instance group."""
    cmd = ['gcloud', 'compute', 'instance-groups', 'managed', 'delete-instances',
           INSTANCE_GROUP, '--instances=' + name]
    p = subprocess.Popen(' '.join(cmd), stdout=subprocess.PIPE, shell=True)
    out, err = p.communicate()
    return "removed %s" % name if not err else "could not remove %s" % name
