"""Prints the cluster's nodes and whether each takes new pods."""
from kubernetes import client, config


def show_nodes():
    config.load_kube_config()
    v1 = client.CoreV1Api()
    print("node\tschedulable?")
    for node in v1.list_node().items:
        print("%s\t%s" % (node.metadata.name, "no" if node.spec.unschedulable else "yes"))


def count_unschedulable(nodes):
    return sum(1 for n in nodes if n.spec.unschedulable)


if __name__ == "__main__":
    show_nodes()
