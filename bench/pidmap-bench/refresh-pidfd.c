// SPDX-License-Identifier: MIT OR Apache-2.0
#include "refresh.h"

/* ---- The per-task route of 7.3: pidfd_open + PIDFD_GET_INFO + close ---- */

/*
 * What PIDFD_GET_INFO (Linux 6.13 on; 7.3's include/uapi/linux/pidfd.h)
 * gives for one task: pid, tgid, ppid and the credentials always, the
 * cgroup id when the kernel has cgroups.  It has no comm, state, CPU
 * time, rss or start time: a monitor on this route still reads /proc for
 * those, so this variant is a lower bound of the per-task route's cost.
 * The fallbacks are 7.3's values, for headers older than 6.13; the
 * ioctl's size is part of its number, and the kernel takes any size from
 * PIDFD_INFO_SIZE_VER0 (64) on.
 */
#ifndef PIDFD_GET_INFO
#define PIDFD_INFO_PID		(1UL << 0)
#define PIDFD_INFO_CREDS	(1UL << 1)
#define PIDFD_INFO_CGROUPID	(1UL << 2)
struct pidfd_info {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid;
	__u32 ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__s32 exit_code;
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#endif

/* The fields it has; PID and CREDS come back whether asked or not. */
#define PIDFD_REFRESH_MASK (PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_CGROUPID)
#define PIDFD_REQUIRED (PIDFD_INFO_PID | PIDFD_INFO_CREDS)

bool have_pidfd_info;	/* pidfd_open(PIDFD_THREAD) + PIDFD_GET_INFO work */
int pidfd_info_errno;	/* what the probe got instead, or 0 */
long pidfd_gone;		/* tasks that exited between the listing and the ioctl */
long pidfd_cgroupid;	/* records whose mask has PIDFD_INFO_CGROUPID */

/*
 * One task: pidfd_open(tid, PIDFD_THREAD) (every task, leaders included,
 * so that one flag serves all: a leader's thread pidfd reports the same
 * pid, tgid and ppid), PIDFD_GET_INFO, close.  A task that exited after
 * the listing is skipped and counted: pidfd_open says ESRCH once its pid
 * is freed, EINVAL in the moment its task is detached from a pid not yet
 * freed, and the ioctl ESRCH once the task is gone.
 */
static void pidfd_info_one(struct refresh *rf, int tid)
{
	struct pidfd_info info;
	struct task_rec *r;
	int fd;

	fd = sys_pidfd_open(tid, PIDFD_THREAD);
	if (fd < 0) {
		if (errno == ESRCH || errno == EINVAL) {
			pidfd_gone++;
			return;
		}
		die("%s: pidfd_open(%d, PIDFD_THREAD): %m", rf->name, tid);
	}
	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_REFRESH_MASK;
	if (ioctl(fd, PIDFD_GET_INFO, &info)) {
		if (errno != ESRCH)
			die("%s: ioctl(PIDFD_GET_INFO) on tid %d: %m", rf->name, tid);
		close(fd);
		pidfd_gone++;
		return;
	}
	close(fd);
	rf->stat_reads++;	/* here: tasks asked */
	if ((info.mask & PIDFD_REQUIRED) != PIDFD_REQUIRED)
		rf->missing_fields++;
	if (info.mask & PIDFD_INFO_CGROUPID)
		pidfd_cgroupid++;
	r = rec_push(rf);
	r->tid = (int)info.pid;
	r->tgid = (int)info.tgid;
	r->ppid = (int)info.ppid;
	r->comm[0] = '\0';	/* PIDFD_GET_INFO has none of the rest */
	if ((int)info.pid != tid)
		die("%s: PIDFD_GET_INFO on tid %d's thread pidfd says pid %u",
		    rf->name, tid, info.pid);
	sink = (long)(info.ruid ^ info.euid ^ info.cgroupid);
}

static inline void pidfd_info_task(void *arg, DIR *task_dir, int pid, int tid)
{
	(void)task_dir;
	(void)pid;
	pidfd_info_one(arg, tid);
	errno = 0;	/* readdir's end test */
}

/*
 * The per-task route: the ids from pidmap(PIDMAP_SCOPE_TASKS) (the listing of the
 * "pidmap" variant and of the bulk records), or, on a kernel without
 * pidmap, from the /proc walk's readdirs; the listing is timed with the
 * rest, as it is in every other variant.  Then per task pidfd_open,
 * PIDFD_GET_INFO, close.
 */
long refresh_pidfd_info(void *arg)
{
	struct refresh *rf = arg;
	struct cost c = { 0 };
	long n, i;

	refresh_reset(rf);
	pidfd_gone = pidfd_cgroupid = 0;
	if (!have_pidmap) {
		for_each_proc_task(pidfd_info_task, rf);
		return rf->n;
	}
	n = pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, &c);
	rf->calls = c.syscalls;
	for (i = 0; i < n; i++)
		pidfd_info_one(rf, (int)idbuf[i]);
	return rf->n;
}

/*
 * Probe the route on ourselves: a kernel before 6.9 rejects PIDFD_THREAD
 * (EINVAL), one before 6.13 lacks PIDFD_GET_INFO (ENOTTY); anything else
 * is a broken kernel: stop.
 */
void probe_pidfd_info(void)
{
	struct pidfd_info info;
	int fd;

	fd = (int)sys_pidfd_open((pid_t)syscall(SYS_gettid), PIDFD_THREAD);
	if (fd < 0) {
		if (errno != ENOSYS && errno != EINVAL)
			die("pidfd_open probe: expected a pidfd, ENOSYS or EINVAL: %m");
		pidfd_info_errno = errno;
		return;
	}
	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_REFRESH_MASK;
	if (ioctl(fd, PIDFD_GET_INFO, &info)) {
		if (errno != ENOTTY && errno != EINVAL)
			die("PIDFD_GET_INFO probe: expected 0, ENOTTY or EINVAL: %m");
		pidfd_info_errno = errno;
	} else if ((int)info.tgid != getpid() || (int)info.ppid != getppid()) {
		die("PIDFD_GET_INFO probe: tgid %u ppid %u, expected %d %d",
		    info.tgid, info.ppid, getpid(), getppid());
	} else {
		have_pidfd_info = true;
	}
	close(fd);
}
