"""Read and write access to the cluster's nodes."""
import logging

from kubernetes import client, config

log = logging.getLogger("scale")


class NodeControl:

    def __init__(self):
        config.load_kube_config()
        self.v1 = client.CoreV1Api()

    def nodes(self):
        return self.v1.list_node().items

    def set_unschedulable(self, node_name, value=True):
        """Set the node's spec.unschedulable."""
        log.debug("node %s unschedulable=%r", node_name, value)
        patched = client.V1Node(
            api_version="v1",
            kind="Node",
            metadata=client.V1ObjectMeta(name=node_name),
            spec=client.V1NodeSpec(unschedulable=value),
        )
        self.v1.patch_node(node_name, patched)
