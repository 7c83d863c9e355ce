#!/bin/sh
# The procps and htop identity test: ps, top, pgrep, pidof and htop must
# print exactly the same with pidmap(2)/pidmap_info(2) as without them.
#
#   identity.sh guest DIR
#	DIR holds the patched ps, top, pgrep, pidof and htop, workload,
#	htopscreen, htoprc and terminfo (the patched kernel). Each command
#	runs with the calls and with LIBPROC_NO_PIDMAP=1 HTOP_NO_PIDMAP=1;
#	a seccomp filter that kills on the calls' numbers proves that each
#	tool issues them (and that the variables turn them off), one that
#	fails them with EPERM that the fallback then prints what the
#	disabled run prints.
#   identity.sh host DIR UPSTREAM_DIR
#	a kernel without the calls: the patched builds (DIR) against
#	upstream's own builds of the same releases (UPSTREAM_DIR).
#
# htop has no batch mode: it runs once (-n 1) under htopscreen, a pty of
# 500 x 250 and a text terminal, and its screen is compared from its
# header line down, in three views (htoprc and two made from it): every
# task with the columns the records carry; the same with threads hidden
# (process rows from the process records, the group's times); and with
# PGRP, SESSION, TTY and TPGID, columns the records lack (stat read, the
# listing from records).
#
# Runs as root. Each command runs as root and as uid 65534 (through
# `runas`, found in PATH or in DIR), on /proc as mounted and then on /proc
# remounted hidepid=invisible. In host mode, run it in a pid and mount
# namespace of its own (unshare --pid --fork --mount-proc), so the table
# holds only the workload and the test.
#
# The table is fixed (workload fixed: odd names, threads, a zombie, a
# stopped process, uid 65534), but kernel threads and the test's own shell
# may still change between two runs (a kworker comes or goes, a CPU time
# ticks; see mask_awk for the columns that move on every run). So each
# comparison runs disabled, enabled, disabled (B1, A, B2) and passes when A
# equals B1 or B2: a difference that the calls make shows in every round,
# a change of the table between two runs in only some. Eight rounds, then it
# fails. The line of the command's own process is left out (its pid differs
# on every run); top is compared on its process rows (its summary has the
# time of day, load and memory figures).
set -u

mode=${1:-}
dir=${2:-}
case "$mode" in
guest) updir=$dir ;;
host) updir=${3:-} ;;
*) echo "usage: identity.sh guest DIR | identity.sh host DIR UPSTREAM_DIR" >&2; exit 2 ;;
esac
[ -n "$dir" ] && [ -n "$updir" ] || { echo "identity.sh: missing DIR" >&2; exit 2; }

runas=$(command -v runas || echo "$dir/runas")
work=$(mktemp -d /tmp/identity.XXXXXX) || exit 1
passed=0
failed=0
export LC_ALL=C
# top keeps its settings in $HOME/.config/procps/toprc: a fresh one each run.
export HOME="$work/home"
mkdir -p "$HOME"
# top -b sets up the terminal "dumb": its terminfo entry, where the guest
# has no terminfo database.
[ -d "$dir/terminfo" ] && export TERMINFO="$dir/terminfo"

# A: the build under test with the calls; B: without them. (`env` takes
# assignments either way; LIBPROC_UNUSED means nothing to procps or htop.)
a_env="LIBPROC_UNUSED=1"
if [ "$mode" = guest ]; then
	b_env="LIBPROC_NO_PIDMAP=1 HTOP_NO_PIDMAP=1"
else
	b_env="LIBPROC_UNUSED=1"
fi
# htop's settings: $work/htoprc.VIEW, copied to a file of each run's own
# (htop rewrites its file when it finds reason to); uid 65534 reads them.
chmod 755 "$work"
cp "$dir/htoprc" "$work/htoprc.main"
sed 's/^hide_userland_threads=0$/hide_userland_threads=1/' "$dir/htoprc" > "$work/htoprc.procs"
# (TTY after the columns starred on some lines: its "(no tty)" is two words)
sed -e 's/^screen:Main=PID PPID /screen:Main=PID PPID PGRP SESSION TPGID /' \
	-e 's/^\(screen:Main=.*\) STIME COMM Command$/\1 STIME TTY COMM Command/' \
	"$dir/htoprc" > "$work/htoprc.stat"
if cmp -s "$work/htoprc.main" "$work/htoprc.procs" ||
	! grep -q '^screen:Main=PID PPID PGRP SESSION TPGID .* STIME TTY COMM Command$' "$work/htoprc.stat"; then
	echo "FAIL: the htop views are not made from htoprc"
	exit 1
fi
export HTOPRC="$work/htoprc.run"
# Words put before A's and B's program (a seccomp filter), and the uid to
# run as.
a_wrap=""
b_wrap=""
as=""

ok() {
	passed=$((passed + 1))
	echo "ok: $*"
}

bad() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# run OUT PIDCOL BINDIR ENV WRAP PROG ARGS...: OUT gets the output, without
# the line of the command's own pid (column PIDCOL), and its exit status.
# PROG htop: ARGS is the settings file of the view; htop runs once under
# htopscreen (whose pid is the command's), and its own line, the one whose
# PPID is htopscreen, is left out too.
run() {
	out=$1 col=$2 bindir=$3 envv=$4 wrap=$5 prog=$6
	shift 6
	if [ -n "$as" ]; then
		wrap="$runas $as $wrap"
	fi
	if [ "$prog" = htop ]; then
		cp "$1" "$HTOPRC"
		chmod 644 "$HTOPRC"
		set -- "$dir/htopscreen" 500 250 "$bindir/htop" -n 1
	else
		set -- "$bindir/$prog" "$@"
	fi
	# shellcheck disable=SC2086 # $envv and $wrap are lists of words
	env $envv $wrap "$@" > "$out.raw" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	if [ "$prog" = top ] || [ "$prog" = htop ]; then
		sed -n '/^ *PID/,$p' "$out.raw" > "$out.rows"
		mv "$out.rows" "$out.raw"
	fi
	isps=0
	[ "$prog" = ps ] && isps=1
	ishtop=0
	[ "$prog" = htop ] && ishtop=1
	awk -v p="$pid" -v c="$col" -v keep="$members" -v ps="$isps" -v htop="$ishtop" \
		"$mask_awk" "$out.raw" > "$out"
	echo "exit status $rc" >> "$out"
}

# Leaves out the command's own line (pid P in column C) and stars out the
# columns that move while a process exists, whatever reads them:
# - ps (PS=1) computes %CPU and C as CPU time over elapsed time, which
#   changes on every run for any process that has used a clock tick (most
#   of the workload's members used one to start, under TCG): starred on
#   every line. ps reads both from stat in both runs (it takes nothing
#   from records, see docs/clients.md); their inputs are compared in TIME
#   and START/STIME.
# - ps's STAT on the lines of processes that are not workload members
#   (KEEP): a kernel thread such as rcu_sched is caught running more often
#   while /proc is read with readdir() than with pidmap(2), so its R or I
#   says when ps looked. The members' STAT is compared.
# - top's %CPU (over its interval) and TIME+ (hundredths of a second),
#   htop's TIME+, UTIME+ and STIME+, and pidsdump's TICS, on the lines of
#   processes that are not members (for htop: of tasks that are not, a
#   member's threads included): they move for a task that runs, such as
#   this test's shells and the kernel threads. top's S column, which it
#   takes from the records, is compared on every line.
# - htop's S on the lines of tasks that are not members, as ps's STAT (a
#   kernel thread's R, I or S says when htop looked: htop runs three
#   scans and 75 ms, long enough for one to change in most runs under
#   TCG), and a kworker's +desc/-desc there (the work it did last): the
#   members' states (the zombie, the stopped process...) are compared.
# A starred column's padding changes with the width of what it hid: the
# whitespace on both sides of it is made one space.
mask_awk='
BEGIN { n = split(keep, k, ","); for (i = 1; i <= n; i++) member[k[i]] = 1 }
$c == p { next }
htop && $2 == p { next }
!header && /PID/ {
	header = 1
	for (i = 1; i <= NF; i++) {
		if (ps && ($i == "%CPU" || $i == "C"))
			all[i] = 1
		if (((ps || htop) && ($i == "STAT" || $i == "S")) ||
		    (!ps && ($i == "%CPU" || $i == "TIME+" || $i == "UTIME+" || $i == "STIME+" || $i == "TICS")))
			other[i] = 1
	}
}
header {
	line = $0
	out = ""
	f = 0
	squeeze = 0
	nonmember = !($c in member) && !/PID/
	while (match(line, /[^ ]+/)) {
		f++
		pre = substr(line, 1, RSTART - 1)
		tok = substr(line, RSTART, RLENGTH)
		hide = (f in all) || (nonmember && (f in other))
		if (hide || squeeze)
			pre = (f == 1) ? "" : " "
		if (hide && !/PID/)
			tok = "*"
		squeeze = hide
		out = out pre tok
		line = substr(line, RSTART + RLENGTH)
	}
	# the +desc/-desc of a kworker names the work it did last
	if (htop && nonmember && match(out, /kworker\/u?[0-9]+:[0-9]+H?[-+][^ ]*$/)) {
		w = substr(out, RSTART, RLENGTH)
		sub(/[-+][^ ]*$/, "", w)
		out = substr(out, 1, RSTART - 1) w
	}
	print out line
	next
}
{ print }'


# shows PID FILE: some field of FILE is PID
shows() {
	awk -v p="$1" '{ for (i = 1; i <= NF; i++) if ($i == p) f = 1 } END { exit !f }' "$2"
}

# compare LABEL PIDCOL PROG ARGS...
compare() {
	label="$1 [$view]"
	col=$2
	shift 2
	f="$work/out"
	round=1
	while [ "$round" -le 8 ]; do
		run "$f.b1" "$col" "$updir" "$b_env" "$b_wrap" "$@"
		run "$f.a" "$col" "$dir" "$a_env" "$a_wrap" "$@"
		run "$f.b2" "$col" "$updir" "$b_env" "$b_wrap" "$@"
		if cmp -s "$f.a" "$f.b1" || cmp -s "$f.a" "$f.b2"; then
			break
		fi
		# what moved, for the log
		diff "$f.b1" "$f.a" | grep '^[-+][^-+]' | head -4 | sed "s/^/  round $round: /"
		round=$((round + 1))
	done
	if [ "$round" -gt 8 ]; then
		bad "$label: differs in 8 rounds"
		diff "$f.b2" "$f.a" | head -40
		return
	fi
	# Never a comparison of two empty or failed runs: the command succeeded
	# (pidof and pgrep: found something) and shows the member of uid 65534,
	# which every view shows.
	if ! tail -n 1 "$f.a" | grep -qx 'exit status 0'; then
		bad "$label: $(tail -n 1 "$f.a")"
		head -5 "$f.a"
		return
	fi
	if ! shows "$nobody" "$f.a"; then
		bad "$label: the output lacks the uid 65534 member ($nobody)"
		head -5 "$f.a"
		return
	fi
	ok "$label: $(($(wc -l < "$f.a") - 1)) lines identical (round $round)"
}

commands() {
	compare "ps -e" 1 ps -e
	compare "ps -ef" 2 ps -ef
	compare "ps aux" 2 ps aux
	compare "ps -eLf" 2 ps -eLf
	compare "ps -eo pid,ppid,stat,rss,time,comm" 1 ps -eo pid,ppid,stat,rss,time,comm
	compare "top -b -n 1" 1 top -b -n 1
	compare "pgrep -a ." 1 pgrep -a .
	compare "pidof" 1 pidof plain "two words" "x y (z) w" threaded "nobody proc" workload
	compare "pidsdump (libproc2: stat and status items a record carries)" 1 pidsdump
	compare "htop (every task, columns the records carry)" 1 htop "$work/htoprc.main"
	compare "htop (threads hidden: process records)" 1 htop "$work/htoprc.procs"
	compare "htop (PGRP SESSION TTY TPGID: stat read)" 1 htop "$work/htoprc.stat"
}

# What a command under a seccomp filter does: `sigsys` if the filter killed
# it (so it issued one of the numbers), else its exit status.
under_seccomp() {
	action=$1 nrs=$2 envv=$3
	shift 3
	# shellcheck disable=SC2086 # $envv is a list of assignments
	env $envv "$dir/workload" seccomp "$action" "$nrs" "$@" > "$work/sec.out" 2>&1
	rc=$?
	if [ "$rc" -eq $((128 + 31)) ]; then
		echo sigsys
	else
		echo "$rc"
	fi
}

seccomp_checks() {
	for cmd in "ps -e" "ps -ef" "ps aux" "ps -eLf" "top -b -n 1" "pgrep -a ." "pidof workload" pidsdump; do
		# shellcheck disable=SC2086 # the command's words
		set -- $cmd
		prog=$1
		shift
		got=$(under_seccomp kill 473,474 "$a_env" "$dir/$prog" "$@")
		if [ "$got" = sigsys ]; then
			ok "$cmd issues pidmap(2) or pidmap_info(2) (killed by the filter)"
		else
			bad "$cmd did not issue the calls (status $got under the killing filter)"
		fi
		got=$(under_seccomp kill 473,474 "LIBPROC_NO_PIDMAP=1" "$dir/$prog" "$@")
		if [ "$got" = 0 ]; then
			ok "$cmd with LIBPROC_NO_PIDMAP=1 issues neither call"
		else
			bad "$cmd with LIBPROC_NO_PIDMAP=1: status $got under the killing filter"
		fi
	done
	# pidof asks only for the name and the command line: a record stands in
	# for stat, so it is pidmap_info(2) it calls.
	got=$(under_seccomp kill 474 "$a_env" "$dir/pidof" workload)
	if [ "$got" = sigsys ]; then
		ok "pidof fills from pidmap_info(2) records"
	else
		bad "pidof did not call pidmap_info(2) (status $got)"
	fi
	got=$(under_seccomp kill 474 "$a_env" "$dir/pidsdump")
	if [ "$got" = sigsys ]; then
		ok "pidsdump fills stat and status from pidmap_info(2) records"
	else
		bad "pidsdump did not call pidmap_info(2) (status $got)"
	fi
	# htop lists with pidmap_info(2) (the records for every view), and
	# HTOP_NO_PIDMAP=1 turns it off.
	for hv in main procs stat; do
		cp "$work/htoprc.$hv" "$HTOPRC"
		got=$(under_seccomp kill 474 "$a_env" "$dir/htopscreen" 500 250 "$dir/htop" -n 1)
		if [ "$got" = sigsys ]; then
			ok "htop ($hv view) calls pidmap_info(2) (killed by the filter)"
		else
			bad "htop ($hv view) did not call pidmap_info(2) (status $got under the killing filter)"
		fi
		got=$(under_seccomp kill 473,474 "HTOP_NO_PIDMAP=1" "$dir/htopscreen" 500 250 "$dir/htop" -n 1)
		if [ "$got" = 0 ]; then
			ok "htop ($hv view) with HTOP_NO_PIDMAP=1 makes neither call"
		else
			bad "htop ($hv view) with HTOP_NO_PIDMAP=1: status $got under the killing filter"
			head -5 "$work/sec.out"
		fi
	done
	# Refused with EPERM, as a container's filter would: the fallback
	# prints what the disabled run prints. The disabled run goes through
	# the same filter (it never issues the calls), so that both start the
	# same way: a kernel thread's state or a kworker's description can
	# follow what the filter's setup does.
	view="uid 0, seccomp EPERM on both calls"
	a_wrap="$dir/workload seccomp eperm 473,474"
	b_wrap=$a_wrap
	compare "ps -ef" 2 ps -ef
	compare "ps aux" 2 ps aux
	compare "top -b -n 1" 1 top -b -n 1
	compare "pidof" 1 pidof plain "two words" "x y (z) w" threaded "nobody proc" workload
	compare "htop (every task, columns the records carry)" 1 htop "$work/htoprc.main"
	a_wrap=""
	b_wrap=""
}

# htopscreen opens a pty: the guest's /dev has no devpts of its own.
if [ ! -e /dev/pts/ptmx ]; then
	mkdir -p /dev/pts
	mount -t devpts devpts /dev/pts || { echo "FAIL: cannot mount devpts"; exit 1; }
fi
"$dir/workload" fixed > "$work/ready" &
wpid=$!
i=0
while ! grep -q '^ready' "$work/ready" 2>/dev/null; do
	i=$((i + 1))
	if [ "$i" -gt 600 ] || ! kill -0 "$wpid" 2>/dev/null; then
		echo "FAIL: the workload did not get ready"
		exit 1
	fi
	sleep 0.1
done
nobody=$(awk '{print $2}' "$work/ready")
members=$(awk '{print $3}' "$work/ready")
echo "workload ready: pid $wpid, uid 65534 member $nobody"

# vmstat's per-CPU update runs every second on a kworker, which then shows
# another workqueue in its name: once a minute during the test, so that
# the table moves less between two runs (the guest only; restored below).
interval=$(cat /proc/sys/vm/stat_interval)
[ "$mode" = guest ] && echo 60 > /proc/sys/vm/stat_interval

if [ "$mode" = guest ]; then
	seccomp_checks
fi

for hide in none invisible; do
	if [ "$hide" = invisible ]; then
		mount -o remount,hidepid=invisible /proc || { bad "remount hidepid=invisible"; break; }
	fi
	for as in "" 65534; do
		view="uid ${as:-0}, hidepid=$hide"
		commands
	done
done
mount -o remount,hidepid=off /proc 2>/dev/null || mount -o remount,hidepid=0 /proc

[ "$mode" = guest ] && echo "$interval" > /proc/sys/vm/stat_interval
kill "$wpid"
wait "$wpid"
rm -rf "$work"
echo "identity: passed=$passed failed=$failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
