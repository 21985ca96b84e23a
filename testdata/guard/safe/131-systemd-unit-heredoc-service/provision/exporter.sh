#!/bin/bash

UNIT_DIR=/etc/systemd/system

install_exporter(){
    local unit="gpu-exporter.service"
cat > "${UNIT_DIR}/${unit}" <<EOF
[Unit]
Description=GPU metrics exporter
After=network.target

[Service]
ExecStart=/usr/local/bin/nvidia_gpu_exporter --web.listen-address=:9835
Restart=always

[Install]
WantedBy=multi-user.target
EOF

    systemctl daemon-reload
    systemctl enable --now ${unit}
}

install_exporter
