#!/bin/sh
# The procps and htop bench: each command with pidmap(2)/pidmap_info(2)
# and with LIBPROC_NO_PIDMAP=1 HTOP_NO_PIDMAP=1, alternately, RUNS times
# each, on three workloads:
# about 250 tasks in about 130 processes (what the guest has, topped up
# with park-threads), 100 processes x 100 threads and 1000 x 10.
#
#   bench.sh DIR RUNS COMMAND...
#
# DIR holds the patched tools, workload and park-threads; each COMMAND is
# one string of words whose first is a tool in DIR. htop runs under
# htopscreen on a 50 x 200 terminal with its default settings (written by
# its first run to a file of its own, HTOPRC). Prints one line per
# run: CLIENTS-BENCH WORKLOAD pidmap|proc COMMAND NS, NS from `workload
# time` (CLOCK_MONOTONIC, so instructions on the instruction clock).
set -u
dir=$1
runs=$2
shift 2
# top -b sets up the terminal "dumb": its terminfo entry (no database here)
[ -d "$dir/terminfo" ] && export TERMINFO="$dir/terminfo"
export HTOPRC=/tmp/clients-bench-htoprc
# htopscreen opens a pty: the guest's /dev has no devpts of its own.
if [ ! -e /dev/pts/ptmx ]; then
	mkdir -p /dev/pts
	mount -t devpts devpts /dev/pts || { echo "FAIL: cannot mount devpts"; exit 1; }
fi
cmds=/tmp/clients-bench.cmds
: > "$cmds"
for c in "$@"; do
	echo "$c" >> "$cmds"
done

tasks() { ls -d /proc/[0-9]*/task/[0-9]* | wc -l; }
procs() { ls -d /proc/[0-9]* | wc -l; }

# timed [ENV...] -- PROG ARGS...: the ns of one run of DIR/PROG
timed() {
	envv=""
	while [ "$1" != -- ]; do
		envv="$envv $1"
		shift
	done
	shift
	prog=$1
	shift
	if [ "$prog" = htop ]; then
		set -- "$dir/htopscreen" 50 200 "$dir/htop" "$@"
	else
		set -- "$dir/$prog" "$@"
	fi
	# shellcheck disable=SC2086 # the assignments
	env $envv "$dir/workload" time "$@"
}

measure() {
	work=$1
	echo "CLIENTS-BENCH-WORKLOAD $work: $(procs) processes, $(tasks) tasks"
	while read -r c; do
		# shellcheck disable=SC2086 # the command's words
		set -- $c
		# one untimed run each, so both start with warm caches
		timed -- "$@" > /dev/null || exit 1
		timed LIBPROC_NO_PIDMAP=1 HTOP_NO_PIDMAP=1 -- "$@" > /dev/null || exit 1
		i=0
		while [ "$i" -lt "$runs" ]; do
			a=$(timed -- "$@") || exit 1
			b=$(timed LIBPROC_NO_PIDMAP=1 HTOP_NO_PIDMAP=1 -- "$@") || exit 1
			echo "CLIENTS-BENCH $work pidmap $c $a"
			echo "CLIENTS-BENCH $work proc $c $b"
			i=$((i + 1))
		done
	done < "$cmds"
}

# park P T: P processes of T tasks, parked; waits for "ready".
park() {
	"$dir/park-threads" "$1" "$2" > /tmp/park.out &
	parked=$!
	while ! grep -q ready /tmp/park.out 2>/dev/null; do
		kill -0 "$parked" 2>/dev/null || { echo "park-threads $1 $2 died"; exit 1; }
		sleep 0.2
	done
}

unpark() {
	kill "$parked"
	wait "$parked"
}

# ~250 tasks in ~130 processes, counting what the guest already has
p=$((130 - $(procs)))
[ "$p" -lt 1 ] && p=1
t=$(( (250 - $(tasks)) / p ))
[ "$t" -lt 1 ] && t=1
park "$p" "$t"
measure 250
unpark

park 100 100
measure 100x100
unpark

park 1000 10
measure 1000x10
unpark
echo "CLIENTS-BENCH-DONE"
