GPU=0000:41:00.0   # PCI address of the card
echo 1 | sudo tee /sys/bus/pci/devices/$GPU/reset 2>/dev/null || {
    echo 1 | sudo tee /sys/bus/pci/devices/$GPU/remove
    sleep 1
    echo 1 | sudo tee /sys/bus/pci/rescan
}
