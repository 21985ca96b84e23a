import logging
import subprocess


def cordon_node(node_name, dry_run=True):
    args = ['kubectl', 'cordon', node_name]

    if dry_run:
        args.append('--dry-run')

    try:
        output = subprocess.check_output(args, stderr=subprocess.STDOUT)
        logging.info(output.decode())
        return output.decode()
    except subprocess.CalledProcessError as e:
        logging.exception(f'could not cordon {node_name}')
        return e.output.decode()


def is_node_cordoned(node_info, node_name):
    for node in node_info.items:
        if node.metadata.name == node_name:
            return node.spec.unschedulable
    return None
