#!/bin/bash

UNIT_DIR=/etc/systemd/system

install_auto_poweroff(){
    local unit="gpu-box-poweroff.service"

    echo "installing ${unit}..."
cat > "${UNIT_DIR}/${unit}" <<EOF
[Unit]
Description=Power the box off six hours after boot
After=network.target

[Service]
Type=oneshot
ExecStart=/sbin/shutdown -h +360

[Install]
WantedBy=multi-user.target
EOF

    systemctl daemon-reload
    systemctl enable ${unit}
}

main(){
    install_auto_poweroff
}

main
