#!/bin/sh

main () {
    {
        agent=$(command -v waagent)
        agentDir=${agent%????????}
        echo "cd $agentDir && waagent -force -deprovision+user > /tmp/deprov.log 2>&1 && poweroff" | at now + 1 minute > /dev/null 2>&1
        exit 0
    } || {
        exit 1
    }
}

main "$@"
