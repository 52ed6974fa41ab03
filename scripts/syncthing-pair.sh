#!/usr/bin/env bash
# scripts/syncthing-pair.sh: two real Syncthing instances on 127.0.0.1, sharing one folder,
# for the synced key-value stores' end-to-end test and benchmark.
#
#   syncthing-pair.sh start DIR    make DIR/a and DIR/b (each its own Syncthing home and sync
#                                  folder DIR/{a,b}/folder), start both, introduce them, share
#                                  the folder, wait until they are connected; writes DIR/pair.env
#   syncthing-pair.sh stop DIR     end both instances (by their pids, from DIR/pair.env)
#   syncthing-pair.sh scan DIR a|b         rescan that side's folder now
#   syncthing-pair.sh pause DIR a|b        that side stops talking to the other device
#   syncthing-pair.sh resume DIR a|b       ... and starts again
#   syncthing-pair.sh wait-connected DIR   until both see each other (30 s at most)
#
# Every address is on 127.0.0.1 (free ports, chosen at start); global and local discovery,
# relays, NAT traversal and usage reporting are off; the file watcher is on with a 1 s delay
# and the periodic rescan is hourly (scans are asked for through the REST API).
set -euo pipefail

die() { printf 'syncthing-pair.sh: %s\n' "$*" >&2; exit 1; }
[[ $# -ge 2 ]] || die "usage: syncthing-pair.sh start|stop|scan|pause|resume|wait-connected DIR [a|b]"
cmd=$1 dir=$2 side=${3:-}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# rest SIDE METHOD PATH [JSON]
rest() {
    local s=$1 method=$2 path=$3 body=${4:-}
    local port_var=${s^^}_GUI
    local args=(-fsS --max-time 30 -X "$method" -H "X-API-Key: $KEY" "http://127.0.0.1:${!port_var}$path")
    [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data "$body")
    curl "${args[@]}"
}

load() { [[ -f $dir/pair.env ]] || die "no pair in $dir (run start first)"; source "$dir/pair.env"; }
other() { [[ $1 == a ]] && echo b || echo a; }

wait_connected() {
    for _ in $(seq 1 300); do
        if rest a GET /rest/system/connections | grep -q '"connected": *true' \
           && rest b GET /rest/system/connections | grep -q '"connected": *true'; then return 0; fi
        sleep 0.1
    done
    die "the two instances did not connect within 30 s"
}

case $cmd in
start)
    command -v syncthing >/dev/null || die "syncthing is not installed (Debian package syncthing)"
    mkdir -p "$dir"
    KEY=apphome-test-$RANDOM$RANDOM
    for s in a b; do
        home=$dir/$s/home
        mkdir -p "$home" "$dir/$s/folder"
        syncthing generate --home="$home" --skip-port-probing --no-default-folder >/dev/null 2>&1 \
            || die "syncthing generate failed in $home"
        listen=$(free_port) gui=$(free_port)
        # Loopback only, nothing announced, no relays, no NAT, no reporting, no browser.
        sed -i \
            -e "s|<listenAddress>default</listenAddress>|<listenAddress>tcp://127.0.0.1:$listen</listenAddress>|" \
            -e 's|<globalAnnounceEnabled>true<|<globalAnnounceEnabled>false<|' \
            -e 's|<localAnnounceEnabled>true<|<localAnnounceEnabled>false<|' \
            -e 's|<relaysEnabled>true<|<relaysEnabled>false<|' \
            -e 's|<natEnabled>true<|<natEnabled>false<|' \
            -e 's|<startBrowser>true<|<startBrowser>false<|' \
            -e 's|<urAccepted>0<|<urAccepted>-1<|' \
            -e 's|<crashReportingEnabled>true<|<crashReportingEnabled>false<|' \
            -e 's|<autoUpgradeIntervalH>12<|<autoUpgradeIntervalH>0<|' \
            "$home/config.xml"
        id=$(syncthing serve --home="$home" --device-id)
        # Started with no descriptor but 0-2 open: a caller that waits for EOF on a pipe it
        # handed down (Foundation's Process does) must not wait for Syncthing too.
        (
            for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [[ $fd -gt 2 ]] && eval "exec $fd>&-"; done
            STNODEFAULTFOLDER=1 STNOUPGRADE=1 exec syncthing serve --home="$home" --no-browser --no-restart \
                --gui-address="127.0.0.1:$gui" --gui-apikey="$KEY" --logfile="$dir/$s/syncthing.log" </dev/null >/dev/null 2>&1
        ) &
        printf '%s_PID=%s\n%s_GUI=%s\n%s_LISTEN=%s\n%s_ID=%s\n' "${s^^}" $! "${s^^}" "$gui" "${s^^}" "$listen" "${s^^}" "$id" >> "$dir/pair.env"
    done
    printf 'KEY=%s\nFOLDER_ID=apphome-kv\n' "$KEY" >> "$dir/pair.env"
    load
    for s in a b; do
        for _ in $(seq 1 300); do rest "$s" GET /rest/system/ping >/dev/null 2>&1 && break; sleep 0.1; done
        rest "$s" GET /rest/system/ping >/dev/null || die "syncthing $s did not answer on 127.0.0.1:$(eval echo \$${s^^}_GUI)"
    done
    for s in a b; do
        o=$(other $s); oid_var=${o^^}_ID; olisten_var=${o^^}_LISTEN; sid_var=${s^^}_ID
        rest "$s" POST /rest/config/devices "{\"deviceID\": \"${!oid_var}\", \"name\": \"$o\", \"addresses\": [\"tcp://127.0.0.1:${!olisten_var}\"]}" >/dev/null
        rest "$s" POST /rest/config/folders "{\"id\": \"$FOLDER_ID\", \"label\": \"AppHome\", \"path\": \"$dir/$s/folder\", \"type\": \"sendreceive\",
            \"rescanIntervalS\": 3600, \"fsWatcherEnabled\": true, \"fsWatcherDelayS\": 1,
            \"devices\": [{\"deviceID\": \"${!sid_var}\"}, {\"deviceID\": \"${!oid_var}\"}]}" >/dev/null
    done
    wait_connected
    ;;
stop)
    load
    for pid in "$A_PID" "$B_PID"; do kill "$pid" 2>/dev/null || true; done
    for pid in "$A_PID" "$B_PID"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    ;;
scan)
    load; rest "$side" POST "/rest/db/scan?folder=$FOLDER_ID" >/dev/null ;;
pause|resume)
    load; o=$(other "$side"); oid_var=${o^^}_ID
    rest "$side" POST "/rest/system/$cmd?device=${!oid_var}" >/dev/null ;;
wait-connected)
    load; wait_connected ;;
*) die "unknown command $cmd" ;;
esac
