#!/bin/bash
# run once on a fresh instance: sudo bash auto-off.sh
# the instance powers itself off 3 hours after each boot
sudo printf '%s\n' '#!/bin/bash' 'sleep 10800' 'sudo shutdown now' > /usr/local/bin/auto-off.sh
sudo chmod +x /usr/local/bin/auto-off.sh
sudo printf '%s\n' '[Unit]' 'Description=power off after three hours' '' '[Service]' 'ExecStart=/usr/local/bin/auto-off.sh' '' '[Install]' 'WantedBy=multi-user.target' > /etc/systemd/system/auto-off.service
sudo systemctl daemon-reload
sudo systemctl enable auto-off.service
sudo systemctl start auto-off.service
