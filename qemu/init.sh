#!/bin/busybox sh
# /init of the pidmap test guest (PID 1 of a busybox initramfs).
#
# cargo xtask writes /etc/pidmap.env (what this boot is for) and, for
# qemu-run, /etc/pidmap.cmd. The result leaves the guest on two channels
# that need no guessing from text: the exact exit status is written to
# $PIDMAP_STATUS_DEV (x86_64: the second serial port; arm64: a virtio
# console; a file on the host), and guest-exit ends QEMU with 0 for success
# (x86_64: isa-debug-exit; arm64: semihosting SYS_EXIT).

/bin/busybox --install -s /bin
export PATH=/bin
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
. /etc/pidmap.env

# Room for the scale tests: 100k threads need more pids and tasks.
# Upstream's suites run at the usual 32768 (pidfd_test's pid-recycling case
# skips above it).
echo "${PIDMAP_PID_MAX:-4194304}" > /proc/sys/kernel/pid_max
echo 1000000 > /proc/sys/kernel/threads-max
echo 1 > /proc/sys/kernel/panic_on_oops

finish() {
	rc=$1
	echo "$rc" > "$PIDMAP_STATUS_DEV"
	sync
	/bin/guest-exit "$([ "$rc" -eq 0 ] && echo 0 || echo 1)"
	# Only reached if the exit device is missing: power off instead.
	poweroff -f
}

# Runs one test binary with a hard timeout and records the verdict.
# A kselftest skip (exit 4) is a failure here: in this guest the syscalls
# must exist, so a test that cannot run is a broken test.
run_test() {
	name=$1
	shift
	echo "PIDMAP-TEST-START $name"
	start=$(cut -d. -f1 /proc/uptime)
	limit=${PIDMAP_TEST_TIMEOUT:-300}
	# Creating 100k threads alone takes 1.5-4 minutes under TCG.
	[ "$name" = c/scale ] && limit=900
	# 20,000 children and lock_stat phases: minutes on the debug kernel.
	[ "$name" = c/lockstat ] && limit=900
	# 240,000 hostile calls: 160 s on the plain kernel, 234 s on the debug one.
	[ "$name" = c/adversary_fuzz ] && limit=600
	timeout "$limit" "$@"
	rc=$?
	secs=$(( $(cut -d. -f1 /proc/uptime) - start ))
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "PIDMAP-TEST-RESULT $name pass rc=0 seconds=$secs"
	else
		failed=$((failed + 1))
		echo "PIDMAP-TEST-RESULT $name FAIL rc=$rc seconds=$secs"
	fi
}

run_suite() {
	passed=0
	failed=0
	echo "PIDMAP-SUITE kernel=$PIDMAP_KERNEL arch=$PIDMAP_ARCH $(uname -r) cpus=$(nproc)"
	cd /tmp || return 1
	for t in /tests/rust/*; do
		[ -x "$t" ] || continue
		# One thread per test binary keeps fork-heavy tests from racing each other.
		run_test "rust/${t##*/}" "$t" --test-threads=1
	done
	# Upstream's own selftests: /tests/upstream/<suite>/<program>, named
	# <suite>/<program>.
	for t in /tests/c/* /tests/kselftest/* /tests/upstream/*/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		kind=${t%/*}
		run_test "${kind##*/}/${t##*/}" "$t"
	done
	echo "PIDMAP-SUMMARY passed=$passed failed=$failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

case "$PIDMAP_MODE" in
test)
	run_suite
	finish $?
	;;
run)
	cd /tmp || finish 1
	sh /etc/pidmap.cmd
	finish $?
	;;
shell)
	echo "pidmap guest: kernel $PIDMAP_KERNEL $(uname -r); 'exit' or Ctrl-A X to leave"
	setsid cttyhack sh -l
	finish 0
	;;
*)
	echo "pidmap guest: unknown mode '$PIDMAP_MODE'"
	finish 1
	;;
esac
