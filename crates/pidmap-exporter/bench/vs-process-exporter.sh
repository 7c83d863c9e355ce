#!/usr/bin/env bash
# Side by side: process-exporter (Debian's prometheus-process-exporter)
# and pidmap-exporter on this machine, the same config, interleaved
# scrapes. For each exporter and each round: the CPU the exporter process
# spent serving the scrapes (utime + stime of its /proc/PID/stat, clock
# ticks, divided by the scrapes in the round), the scrape latency and the
# body size (curl). Two cases: the host's tasks, then the host's tasks
# plus 100 processes x 100 parked threads (bench/park-threads.c).
#
# Both run with the same flags: -threads=true and -gather-smaps=$SMAPS
# (default false; SMAPS=true adds smaps_rollup to both), so every family
# process-exporter serves is served by both.
#
# Usage (from the repository root, as root for the full fd view):
#   [SMAPS=true] bash crates/pidmap-exporter/bench/vs-process-exporter.sh [ROUNDS] [SCRAPES_PER_ROUND]
# Needs: prometheus-process-exporter, curl, gcc, cargo. Prints medians
# with their ranges over the rounds.
set -euo pipefail
cd "$(dirname "$0")/../../.."

rounds=${1:-10}
per_round=${2:-3}
smaps=${SMAPS:-false}
# Room for the kept files (one per task and file); as much as allowed.
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
pe_port=${PE_PORT:-19356}
ours_port=${OURS_PORT:-19357}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

command -v prometheus-process-exporter >/dev/null ||
	{ echo "needs prometheus-process-exporter (apt-get install prometheus-process-exporter)" >&2; exit 1; }
nice -n 10 cargo build --release -q -p pidmap-exporter
target=${CARGO_TARGET_DIR:-target}
ours_bin=$target/release/pidmap-exporter
gcc -O2 -pthread -o "$work/park-threads" bench/park-threads.c

# Every process with a command line, by name: process-exporter's README
# example, and a config that tracks (and reads the threads of) every
# user process.
cat > "$work/config.yml" <<'YAML'
process_names:
  - name: "{{.Comm}}"
    cmdline:
      - '.+'
YAML

# Both with per-thread series on (process-exporter's default) and the
# same -gather-smaps.
prometheus-process-exporter -web.listen-address "127.0.0.1:$pe_port" \
	-config.path "$work/config.yml" -gather-smaps="$smaps" -threads=true \
	>"$work/pe.log" 2>&1 &
pe_pid=$!
pids+=("$pe_pid")
"$ours_bin" --listen "127.0.0.1:$ours_port" --config.path "$work/config.yml" \
	-gather-smaps="$smaps" -threads=true >"$work/ours.log" 2>&1 &
ours_pid=$!
pids+=("$ours_pid")
for port in "$pe_port" "$ours_port"; do
	for _ in $(seq 50); do
		curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.2
	done
done

hz=$(getconf CLK_TCK)
# utime + stime of a process, in ticks.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# One round of one exporter: prints "cpu_seconds latency_seconds bytes"
# per scrape (CPU averaged over the round's scrapes).
round() {
	local name=$1 pid=$2 port=$3 before after lat=() size=0 out
	before=$(cpu_ticks "$pid")
	for _ in $(seq "$per_round"); do
		out=$(curl -fsS -o "$work/body.$name" -w '%{time_total} %{size_download}' "http://127.0.0.1:$port/metrics")
		lat+=("${out% *}")
		size=${out#* }
	done
	after=$(cpu_ticks "$pid")
	for l in "${lat[@]}"; do
		echo "$(awk -v d=$((after - before)) -v n="$per_round" -v hz="$hz" 'BEGIN { printf "%.4f", d / n / hz }') $l $size"
	done
}

# median and range of column $1 of file $2, printed with format $3
stats() {
	sort -g -k"$1","$1" "$2" | awk -v c="$1" -v f="${3:-%.4f}" '{ v[NR] = $c } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf f " (" f "-" f ")", m, v[1], v[NR] }'
}

run_case() {
	local label=$1 tasks
	# (a task may exit while ls lists them: not a failure)
	tasks=$( (ls -d /proc/[0-9]*/task/[0-9]* 2>/dev/null || true) | wc -l)
	: >"$work/pe.txt"
	: >"$work/ours.txt"
	# Warm up: process-exporter names new processes on its first cycles,
	# pidmap-exporter opens the files it keeps.
	round pe "$pe_pid" "$pe_port" >/dev/null
	round ours "$ours_pid" "$ours_port" >/dev/null
	for r in $(seq "$rounds"); do
		if ((r % 2)); then
			round pe "$pe_pid" "$pe_port" >>"$work/pe.txt"
			round ours "$ours_pid" "$ours_port" >>"$work/ours.txt"
		else
			round ours "$ours_pid" "$ours_port" >>"$work/ours.txt"
			round pe "$pe_pid" "$pe_port" >>"$work/pe.txt"
		fi
	done
	local pe_cpu ours_cpu
	pe_cpu=$(sort -g "$work/pe.txt" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	ours_cpu=$(sort -g "$work/ours.txt" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	echo "== $label: $tasks tasks, $rounds rounds x $per_round scrapes each, interleaved (load: $(cut -d' ' -f1-3 /proc/loadavg))"
	printf '%-20s %-30s %-30s %s\n' exporter "CPU s/scrape (stat ticks)" "latency s (curl)" "body bytes"
	printf '%-20s %-30s %-30s %s\n' process-exporter "$(stats 1 "$work/pe.txt")" "$(stats 2 "$work/pe.txt")" "$(stats 3 "$work/pe.txt" %d)"
	printf '%-20s %-30s %-30s %s\n' pidmap-exporter "$(stats 1 "$work/ours.txt")" "$(stats 2 "$work/ours.txt")" "$(stats 3 "$work/ours.txt" %d)"
	awk -v a="$pe_cpu" -v b="$ours_cpu" 'BEGIN { if (b > 0) printf "CPU per scrape, median over median: %.1fx less\n", a / b; else print "pidmap-exporter: below one tick per scrape" }'
	echo
}

echo "both: -threads=true -gather-smaps=$smaps"
echo "pidmap-exporter: $(grep -o 'records from [a-z]*' "$work/ours.log" || echo 'records from ?'); RLIMIT_NOFILE $(ulimit -Sn)/$(ulimit -Hn); clock: utime+stime ticks of /proc/PID/stat (${hz} Hz)"
run_case "host"
"$work/park-threads" 100 100 >"$work/park.out" &
pids+=("$!")
for _ in $(seq 100); do grep -q ready "$work/park.out" 2>/dev/null && break; sleep 0.2; done
grep -q ready "$work/park.out" || { echo "park-threads did not start" >&2; exit 1; }
run_case "host + 100 processes x 100 threads"
