#!/bin/bash
# A stand-in for `pharos switch` in `pharos bench datapath --switch-exe`: the AF_XDP
# forwarder (fwd.c, built beside this script) carries d1 -> d2, and a real `pharos
# switch` on three spare veth pairs answers the bench's management socket and takes its
# flows (the forwarder has no table). The bench pins the process in the pidfile (the
# forwarder) to the device's core; the receiving veth's NAPI runs threaded, pinned there
# too, so that the XDP program and its copy run on the device's core, not the sender's.
#
# Env: PHAROS_BIN (default: pharos on PATH), AFXDP_MODE (drv, the default; raw: the
# same without libxdp's program loader; skb: generic XDP). The forwarder's log: fwd.log
# beside the pidfile.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pidfile=""; listen=""; cpu=0
while [ $# -gt 0 ]; do
  case $1 in --pidfile) pidfile=$2; shift;; --listen) listen=$2; shift;; esac; shift
done
for i in 1 2 3; do
  ip link add x$i type veth peer name y$i 2>/dev/null
  ip link set x$i up; ip link set y$i up
done
# Dies with this script, however it ends.
setpriv --pdeathsig KILL "${PHAROS_BIN:-pharos}" switch --dpid 1 --port 1=x1 --port 2=x2 --port 3=x3 --of 1.3 \
  --log-level warn --listen "$listen" --pidfile "$pidfile.real" &
real=$!
"$here/fwd" d1 d2 "${AFXDP_MODE:-drv}" 2>"${pidfile%/*}/fwd.log" &
fwd=$!
sleep 0.5
if [ "${AFXDP_MODE:-drv}" != skb ]; then
  echo 1 > /sys/class/net/d1/threaded
  # The bench pins the forwarder to the device's core; its NAPI thread follows (it may
  # take a moment to appear).
  pinned=0
  for _ in $(seq 100); do
    for p in $(pgrep "^napi/d1-"); do taskset -p -c "$cpu" "$p" >/dev/null && pinned=1; done
    [ $pinned = 1 ] && break
    sleep 0.02
  done
  [ $pinned = 1 ] || echo "stand-in: no NAPI thread for d1 to pin" >&2
fi
while [ ! -e "$pidfile.real" ]; do sleep 0.05; done
echo $fwd > "$pidfile"
# The bench stops the device with SIGTERM to the pid in the pidfile (the forwarder), and
# this script with SIGKILL 2 s later: the switch goes when the forwarder does.
trap 'kill $fwd 2>/dev/null' TERM INT
wait $fwd
kill $real 2>/dev/null
wait $real 2>/dev/null
exit 0
