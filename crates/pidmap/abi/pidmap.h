/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PIDMAP_H
#define _UAPI_LINUX_PIDMAP_H

#include <linux/types.h>

/*
 * pidmap(2) modes: exactly one of them in flags.
 *
 * PIDMAP_PROC		thread-group ids: what a readdir of the view's
 *			/proc lists
 * PIDMAP_ALL_TASKS	every task id, threads included, of the groups
 *			whose /proc/PID/task the view lets the caller read
 * PIDMAP_TASKS		thread ids of the target's thread group
 * PIDMAP_CHILDREN	children of the target process
 */
#define PIDMAP_PROC		0x01u
#define PIDMAP_ALL_TASKS	0x02u
#define PIDMAP_TASKS		0x04u
#define PIDMAP_CHILDREN		0x08u
#define PIDMAP_MODE_MASK	0x0fu

/* pidmap(2) modifiers */
#define PIDMAP_IGNORE_KTHREADS	0x100u	/* leave kernel threads out */
#define PIDMAP_TARGET_PIDFD	0x200u	/* req->target is a pidfd */
#define PIDMAP_PROCFS		0x400u	/* req->procfs_fd names a procfs */
#define PIDMAP_INFO		0x800u	/* write struct pidmap_info records */

/*
 * The request of pidmap(2), read like listmount(2)'s struct mnt_id_req:
 * size is sizeof(struct pidmap_req) as the caller was built, so that the
 * struct can grow. Every new field's zero value keeps the old behaviour.
 */
struct pidmap_req {
	__u32 size;		/* sizeof(struct pidmap_req) */
	__s32 start;		/* list the ids >= start; must be >= 0 */
	/*
	 * PIDMAP_TASKS/PIDMAP_CHILDREN: a pid (0: the caller) or, with
	 * PIDMAP_TARGET_PIDFD, a pidfd; PIDMAP_PROC/PIDMAP_ALL_TASKS: 0
	 */
	__s32 target;
	__s32 procfs_fd;	/* with PIDMAP_PROCFS: an fd on procfs; else 0 */
	/*
	 * With PIDMAP_INFO: sizeof(struct pidmap_info) as the caller was
	 * built (>= PIDMAP_INFO_SIZE_VER0, a multiple of 8, <= 4096) and
	 * the PIDMAP_INFO_* fields wanted. Without it: both 0.
	 */
	__u32 info_size;
	__u32 __reserved;	/* must be 0 */
	__u64 info_mask;
};

#define PIDMAP_REQ_SIZE_VER0	16 /* sizeof first published struct */
#define PIDMAP_REQ_SIZE_VER1	32 /* adds info_size, info_mask */

/* struct pidmap_info.mask and pidmap_req.info_mask bits */
#define PIDMAP_INFO_TGID	(1ULL << 0)	/* tgid */
#define PIDMAP_INFO_PPID	(1ULL << 1)	/* ppid */
#define PIDMAP_INFO_STATE	(1ULL << 2)	/* state */
#define PIDMAP_INFO_CPUTIME	(1ULL << 3)	/* utime_ns, stime_ns */
#define PIDMAP_INFO_START_TIME	(1ULL << 4)	/* start_time_ns */
#define PIDMAP_INFO_RSS		(1ULL << 5)	/* rss_pages */
#define PIDMAP_INFO_COMM	(1ULL << 6)	/* comm */
#define PIDMAP_INFO_UID		(1ULL << 7)	/* ruid, euid */
#define PIDMAP_INFO_FLAGS	(1ULL << 8)	/* flags */
#define PIDMAP_INFO_NICE	(1ULL << 9)	/* nice */
#define PIDMAP_INFO_NUM_THREADS	(1ULL << 10)	/* num_threads */

/*
 * A task record of pidmap(2) with PIDMAP_INFO: what ps shows of the task,
 * read from the same counters as /proc/PID/stat, statm and status. Fields
 * whose bit is not in mask are 0; nice is only filled under SCHED_NORMAL
 * and SCHED_BATCH, the policies it applies to.
 *
 * Note 1: in the modes that list processes (PIDMAP_PROC, PIDMAP_CHILDREN)
 * the CPU times are the whole thread group's, exited threads included, as
 * /proc/PID/stat shows them; in the modes that list tasks they are the
 * task's own, as /proc/PID/task/TID/stat shows them.
 */
struct pidmap_info {
	__u64 mask;		/* PIDMAP_INFO_* bits of the fields filled */
	__s32 tid;		/* always filled: the id, the cursor */
	__s32 tgid;		/* status Tgid: */
	__s32 ppid;		/* stat field 4 */
	__u32 ruid;		/* status Uid: 1st, in the caller's user ns */
	__u32 euid;		/* status Uid: 2nd */
	__s32 nice;		/* stat field 19; SCHED_NORMAL/BATCH only */
	__u32 num_threads;	/* stat field 20 */
	__u32 flags;		/* stat field 9: PF_* */
	__u64 utime_ns;		/* stat field 14, in ns (note 1) */
	__u64 stime_ns;		/* stat field 15, in ns (note 1) */
	__u64 start_time_ns;	/* stat field 22, in ns since boot */
	__u64 rss_pages;	/* statm field 2, status VmRSS: exact */
	char comm[16];		/* task->comm, NUL-padded */
	__u8 state;		/* stat field 3: one of "RSDTtXZPI" */
	__u8 __reserved[7];	/* 0 */
};

#define PIDMAP_INFO_SIZE_VER0	96 /* sizeof first published struct */

/* fdmap(2) flags */
#define FDMAP_TARGET_PIDFD	0x01u	/* req->target is a pidfd */

/* The request of fdmap(2), versioned by size like struct pidmap_req. */
struct fdmap_req {
	__u32 size;		/* sizeof(struct fdmap_req) */
	__s32 start;		/* list the fds >= start; must be >= 0 */
	__s32 target;		/* pid (0: the caller), or a pidfd */
	__u32 __reserved;	/* must be 0 */
};

#define FDMAP_REQ_SIZE_VER0	16 /* sizeof first published struct */

#endif /* _UAPI_LINUX_PIDMAP_H */
