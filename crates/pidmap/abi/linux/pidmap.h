/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PIDMAP_H
#define _UAPI_LINUX_PIDMAP_H

#include <linux/types.h>

/* struct pidmap_req.scope: what pidmap(2) lists */
#define PIDMAP_SCOPE_PROCS	0	/* thread-group leaders of the view */
#define PIDMAP_SCOPE_TASKS	1	/* every task of the view, threads too */
#define PIDMAP_SCOPE_THREADS	2	/* the threads of pidfd's group */
#define PIDMAP_SCOPE_CHILDREN	3	/* the children of pidfd's group */

/* struct pidmap_req.filter bits */
#define PIDMAP_FILTER_NO_KTHREADS	(1U << 0) /* leave kernel threads out */

/**
 * struct pidmap_req - the request of pidmap(2)
 * @size: sizeof(struct pidmap_req) as the caller was built
 * @scope: one PIDMAP_SCOPE_*
 * @last_id: the last id returned by the previous call, 0 to start
 * @pidfd: PIDMAP_SCOPE_THREADS and PIDMAP_SCOPE_CHILDREN: a pidfd of the
 *	target (or PIDFD_SELF_THREAD, PIDFD_SELF_THREAD_GROUP); else 0
 * @filter: PIDMAP_FILTER_* bits
 * @info_size: pidmap_info(2): sizeof(struct pidmap_info) as the caller
 *	was built; pidmap(2): 0
 * @__reserved: 0
 * @info_mask: pidmap_info(2): the PIDMAP_INFO_* fields wanted;
 *	pidmap(2): 0
 * @procfs_fd: an fd opened for reading on the root of a procfs mount:
 *	its pid namespace and hidepid=/gid= are the view; 0: none
 * @pidns_fd: an fd of a pid namespace (/proc/PID/ns/pid), the caller's or
 *	a descendant of it: the default view, in that namespace; 0: none
 * @pidns_id: the nsfs id of such a pid namespace (NS_GET_ID, listns(2)),
 *	as listmount(2)'s mnt_ns_id; 0: none. At most one of @pidns_fd and
 *	@pidns_id, and not with @procfs_fd; none: the caller's pid namespace
 */
struct pidmap_req {
	__u32 size;
	__u32 scope;
	__u64 last_id;
	__s32 pidfd;
	__u32 filter;
	__u32 info_size;
	__u32 __reserved;
	__u64 info_mask;
	__u32 procfs_fd;
	__u32 pidns_fd;
	__u64 pidns_id;
};

#define PIDMAP_REQ_SIZE_VER0	56 /* sizeof first published struct */

/* struct pidmap_info.mask and pidmap_req.info_mask bits */
#define PIDMAP_INFO_ID		(1ULL << 0)	/* tid, tgid, pidfs_id: always */
#define PIDMAP_INFO_PPID	(1ULL << 1)	/* ppid */
#define PIDMAP_INFO_CREDS	(1ULL << 2)	/* ruid, euid */
#define PIDMAP_INFO_SCHED	(1ULL << 3)	/* nice, priority, policy */
#define PIDMAP_INFO_NUM_THREADS	(1ULL << 4)	/* num_threads */
#define PIDMAP_INFO_CPUTIME	(1ULL << 5)	/* utime_ns, stime_ns */
#define PIDMAP_INFO_START_TIME	(1ULL << 6)	/* start_time_ns */
#define PIDMAP_INFO_RSS		(1ULL << 7)	/* rss_bytes */
#define PIDMAP_INFO_STATE	(1ULL << 8)	/* state */
#define PIDMAP_INFO_COMM	(1ULL << 9)	/* comm */
#define PIDMAP_INFO_TASK_FLAGS	(1ULL << 10)	/* task_flags */
#define PIDMAP_INFO_FAULTS	(1ULL << 11)	/* min_flt, maj_flt */
#define PIDMAP_INFO_CTXSW	(1ULL << 12)	/* nvcsw, nivcsw */
#define PIDMAP_INFO_SUPPORTED_MASK (1ULL << 63)	/* supported_mask */

/* struct pidmap_info.task_flags bits */
#define PIDMAP_TASK_KTHREAD	(1U << 0)	/* a kernel thread */
#define PIDMAP_TASK_USER_WORKER	(1U << 1)	/* a kernel worker of a user task */
#define PIDMAP_TASK_EXITING	(1U << 2)	/* exiting */
#define PIDMAP_TASK_FORKNOEXEC	(1U << 3)	/* forked but did not exec */

/**
 * struct pidmap_info - a task record of pidmap_info(2)
 *
 * The values /proc/PID/stat (PIDMAP_SCOPE_PROCS, PIDMAP_SCOPE_CHILDREN) or
 * /proc/PID/task/TID/stat (PIDMAP_SCOPE_TASKS, PIDMAP_SCOPE_THREADS) and
 * status show; fields whose bit is not in @mask are 0.
 *
 * @mask: the PIDMAP_INFO_* bits of the fields filled
 * @supported_mask: with PIDMAP_INFO_SUPPORTED_MASK, the bits this kernel
 *	knows
 * @pidfs_id: the pidfs id of @tid's struct pid, never reused: on 64-bit
 *	kernels the inode number of a pidfd of it (pidfd_open(@tid,
 *	PIDFD_THREAD if @tid is not @tgid)), so a pidfd can be checked to
 *	name this task; on 32-bit kernels the inode number is its low half
 *	and the inode generation its high half, and a pidfs file handle
 *	(name_to_handle_at()) carries all of it
 * @tid: the id listed, in the view's pid namespace
 * @tgid: status Tgid:
 * @ppid: stat field 4
 * @ruid: status Uid: 1st, in the caller's user namespace
 * @euid: status Uid: 2nd
 * @nice: stat field 19
 * @priority: stat field 18
 * @policy: stat field 41, SCHED_*: nice applies to SCHED_NORMAL and
 *	SCHED_BATCH (ps shows "-" under the others)
 * @num_threads: stat field 20
 * @task_flags: PIDMAP_TASK_* bits
 * @utime_ns: stat field 14, in nanoseconds: the value stat shows in
 *	clock ticks is @utime_ns / (NSEC_PER_SEC / USER_HZ); the group's,
 *	exited threads included, in the process scopes
 * @stime_ns: stat field 15, likewise
 * @start_time_ns: stat field 22, in nanoseconds since boot
 *	(CLOCK_BOOTTIME) as the caller's time namespace sees it, as stat
 *	shows it to the caller
 * @rss_bytes: status VmRSS and statm field 2, in bytes: exact
 * @state: stat field 3, one of "RSDTtXZPI"
 * @__spare: 0
 * @comm: stat field 2 without the parentheses: a kernel thread's full
 *	name, a workqueue worker's with its "+desc"/"-desc"
 * @min_flt: stat field 10, minor faults: the group's, exited threads
 *	included, in the process scopes; the thread's own in the others
 * @maj_flt: stat field 12, major faults, summed as @min_flt
 * @nvcsw: status voluntary_ctxt_switches: the task's own (a process
 *	record's is its leader's, as /proc/PID/status shows)
 * @nivcsw: status nonvoluntary_ctxt_switches, likewise
 */
struct pidmap_info {
	__u64 mask;
	__u64 supported_mask;
	__u64 pidfs_id;
	__u32 tid;
	__u32 tgid;
	__u32 ppid;
	__u32 ruid;
	__u32 euid;
	__s32 nice;
	__s32 priority;
	__u32 policy;
	__u32 num_threads;
	__u32 task_flags;
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 start_time_ns;
	__u64 rss_bytes;
	__u8 state;
	__u8 __spare[7];
	char comm[64];
	__u64 min_flt;
	__u64 maj_flt;
	__u64 nvcsw;
	__u64 nivcsw;
};

#define PIDMAP_INFO_SIZE_VER0	200 /* sizeof first published struct */

#endif /* _UAPI_LINUX_PIDMAP_H */
