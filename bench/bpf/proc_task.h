/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc_task.h: what /proc shows of one task, as a struct task_record:
 * /proc/PID/task/TID/stat and status, the files ps(1) reads, and the pidfs
 * id from fstat() of a pidfd. The independent reference the BPF records
 * (and pidmap_info(2)'s) are checked against.
 */
#ifndef PROC_TASK_H
#define PROC_TASK_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/types.h>

#include "task_record.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL */
#endif

/* stat's PF_* flags (field 9) as the uapi's PIDMAP_TASK_* bits. */
static inline __u32 proc_task_flags(unsigned long pf)
{
	__u32 flags = 0;

	if (pf & 0x00200000) /* PF_KTHREAD */
		flags |= 1U << 0;
	if (pf & 0x00004000) /* PF_USER_WORKER */
		flags |= 1U << 1;
	if (pf & 0x00000004) /* PF_EXITING */
		flags |= 1U << 2;
	if (pf & 0x00000040) /* PF_FORKNOEXEC */
		flags |= 1U << 3;
	return flags;
}

static inline ssize_t proc_task_file(int pid, int tid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * Task @tid of process @pid as /proc shows it: 0, or -1 with errno (ENOENT:
 * the task is gone), its times in nanoseconds (stat's ticks times
 * NSEC_PER_USER_TICK) and its VmRSS in bytes, as pidmap_info(2) gives
 * them; @page_kib is unused (VmRSS is in KiB). pidfs_id is 0 when
 * no pidfd can be opened (no pidfs, or the task exited meanwhile).
 * *@stat_rss (if not NULL) gets stat's field 24, the approximate rss.
 */
static inline int proc_task_read(int pid, int tid, long page_kib, struct task_record *r,
				 unsigned long long *stat_rss)
{
	char buf[4096], *open_paren, *close_paren, *p, *line;
	unsigned long long v[42] = { 0 };
	unsigned long ruid, euid;
	long rss_kib = -1;
	struct stat st;
	int field, pidfd;
	size_t len;

	memset(r, 0, sizeof(*r));
	if (proc_task_file(pid, tid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren) {
		errno = EINVAL;
		return -1;
	}
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= sizeof(r->comm))
		len = sizeof(r->comm) - 1;
	memcpy(r->comm, open_paren + 1, len);
	p = close_paren + 2;
	r->state = (__u8)*p;
	p++;
	for (field = 4; field <= 41 && *p; field++) {
		while (*p == ' ')
			p++;
		v[field] = (unsigned long long)strtoll(p, &p, 10);
	}
	r->tid = tid;
	r->ppid = (__s32)v[4];
	r->task_flags = proc_task_flags((unsigned long)v[9]);
	r->min_flt = v[10];
	r->maj_flt = v[12];
	r->utime_ns = v[14] * NSEC_PER_USER_TICK;
	r->stime_ns = v[15] * NSEC_PER_USER_TICK;
	r->priority = (__s32)(long long)v[18];
	r->nice = (__s32)(long long)v[19];
	r->num_threads = (__u32)v[20];
	r->start_time_ns = v[22] * NSEC_PER_USER_TICK;
	r->policy = (__u32)v[41];
	if (stat_rss)
		*stat_rss = v[24];

	if (proc_task_file(pid, tid, "status", buf, sizeof(buf)) < 0)
		return -1;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (sscanf(line, "Tgid: %d", &r->tgid) == 1)
			continue;
		if (sscanf(line, "Uid: %lu %lu", &ruid, &euid) == 2) {
			r->ruid = (__u32)ruid;
			r->euid = (__u32)euid;
			continue;
		}
		if (sscanf(line, "VmRSS: %ld", &rss_kib) == 1)
			continue;
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &r->nvcsw) == 1)
			continue;
		if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &r->nivcsw) == 1)
			continue;
	}
	(void)page_kib;
	r->rss_bytes = rss_kib > 0 ? (__u64)rss_kib << 10 : 0;
	r->mask = TASK_RECORD_MASK;

	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd >= 0) {
		if (fstat(pidfd, &st) == 0)
			r->pidfs_id = st.st_ino;
		close(pidfd);
	}
	return 0;
}

#endif /* PROC_TASK_H */
