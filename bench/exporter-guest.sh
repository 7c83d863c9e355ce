#!/bin/sh
# In the patched guest (busybox sh): process-exporter and pidmap-exporter
# side by side, the same config, interleaved scrapes over loopback, at the
# guest's own tasks plus 100 processes x 100 parked threads. The CPU of
# each exporter is utime + stime of its /proc/PID/stat (all its threads, in
# USER_HZ ticks), divided by the scrapes of the round. On the instruction
# clock (`qemu-run --instructions`) one guest second is 10^9 instructions,
# so a tick is 10 M instructions: each round scrapes often enough to be
# many ticks long.
#
# Run from the host with bench/exporter-guest-run.sh, which builds what it
# needs into one directory and boots the guest with it at /add/exbench.
set -eu
D=${EXBENCH_DIR:-/add/exbench}
ROUNDS=${ROUNDS:-3}
PE_SCRAPES=${PE_SCRAPES:-2}
OURS_SCRAPES=${OURS_SCRAPES:-10}

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up

# utime + stime of a process (every thread, exited ones included), ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

scrape() { wget -q -O /tmp/body."$1" "http://127.0.0.1:$2/metrics"; }

"$D/ld-linux-x86-64.so.2" --library-path "$D" "$D/prometheus-process-exporter" \
	-web.listen-address 127.0.0.1:19356 -config.path "$D/config.yml" \
	-gather-smaps=false -threads=true >/tmp/pe.log 2>&1 &
PE=$!
"$D/pidmap-exporter" --listen 127.0.0.1:19357 --config.path "$D/config.yml" \
	-gather-smaps=false -threads=true >/tmp/ours.log 2>&1 &
OURS=$!
for port in 19356 19357; do
	i=0
	until wget -q -O /dev/null "http://127.0.0.1:$port/metrics"; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || { echo "exporter on $port did not start"; cat /tmp/pe.log /tmp/ours.log; exit 1; }
		sleep 1
	done
done

# One round: prints "NAME TICKS_PER_SCRAPE BYTES".
round() {
	name=$1 pid=$2 port=$3 n=$4
	before=$(cpu_ticks "$pid")
	i=0
	while [ "$i" -lt "$n" ]; do
		scrape "$name" "$port"
		i=$((i + 1))
	done
	after=$(cpu_ticks "$pid")
	echo "$name $(awk -v d=$((after - before)) -v n="$n" 'BEGIN { printf "%.2f", d / n }') $(wc -c </tmp/body."$name")"
}

run_case() {
	tasks=$(ls -d /proc/[0-9]*/task/[0-9]* 2>/dev/null | wc -l)
	echo "== $1: $tasks tasks, $ROUNDS rounds ($PE_SCRAPES scrapes of process-exporter, $OURS_SCRAPES of pidmap-exporter per round), interleaved"
	round pe "$PE" 19356 1 >/dev/null
	round ours "$OURS" 19357 1 >/dev/null
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		if [ $((r % 2)) -eq 1 ]; then
			round process-exporter "$PE" 19356 "$PE_SCRAPES"
			round pidmap-exporter "$OURS" 19357 "$OURS_SCRAPES"
		else
			round pidmap-exporter "$OURS" 19357 "$OURS_SCRAPES"
			round process-exporter "$PE" 19356 "$PE_SCRAPES"
		fi
		r=$((r + 1))
	done | tee /tmp/rounds
	for who in process-exporter pidmap-exporter; do
		grep "^$who " /tmp/rounds | sort -g -k2 | awk -v w="$who" '{ v[NR] = $2; b = $3 } END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "EXPORTER-GUEST: %s ticks/scrape median %.2f (%.2f-%.2f) = %.1f M instructions, body %d bytes\n", w, m, v[1], v[NR], m * 10, b }'
	done
}

echo "pidmap-exporter: $(grep -o 'records from [a-z]*' /tmp/ours.log || echo 'records from ?')"
run_case "guest"
"$D/park-threads" 100 100 >/tmp/park.out &
i=0
until grep -q ready /tmp/park.out 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || { echo "park-threads did not start"; exit 1; }
	sleep 1
done
run_case "guest + 100 processes x 100 threads"
kill "$PE" "$OURS" 2>/dev/null || true
