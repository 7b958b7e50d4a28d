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
"${PHAROS_BIN:-pharos}" switch --dpid 1 --port 1=x1 --port 2=x2 --port 3=x3 --of 1.3 \
  --log-level warn --listen "$listen" --pidfile "$pidfile.real" &
real=$!
"$here/fwd" d1 d2 "${AFXDP_MODE:-drv}" 2>"${pidfile%/*}/fwd.log" &
fwd=$!
sleep 0.5
if [ "${AFXDP_MODE:-drv}" != skb ]; then
  echo 1 > /sys/class/net/d1/threaded
  sleep 0.2
  # The bench pins the forwarder to the device's core; its NAPI thread follows.
  for p in $(pgrep "^napi/d1-"); do taskset -p -c "$cpu" "$p" >/dev/null; done
fi
while [ ! -e "$pidfile.real" ]; do sleep 0.05; done
echo $fwd > "$pidfile"
trap 'kill $fwd $real; wait; exit 0' TERM INT
wait
