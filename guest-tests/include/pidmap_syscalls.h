/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pidmap_syscalls.h: the raw calls pidmap(2), pidmap_info(2) and fdmap(2),
 * and helpers that fill their request structs, for the guest tests and the
 * bench (64-bit, and the i686 compat test).
 *
 * The ABI itself is the series' uapi headers, <linux/pidmap.h> and
 * <linux/fdmap.h>, from crates/pidmap/abi/ (`cargo xtask abi` writes them
 * from kernel-patches/; every compiler call of xtask puts that folder on
 * the include path), so these programs build against any kernel's headers
 * and always see the series' definitions.
 *
 * In short: one struct pidmap_req for both pidmap(2) (u32 ids) and
 * pidmap_info(2) (records of info_size bytes, 200 in VER0:
 * times in nanoseconds, the resident set in bytes); a scope
 * (PROCS, TASKS, THREADS, CHILDREN) instead of mode flags; an exclusive
 * cursor (last_id: the last id the previous call returned, 0 to start);
 * a target only for THREADS and CHILDREN, and only as a pidfd (or
 * PIDFD_SELF_THREAD / PIDFD_SELF_THREAD_GROUP); the view named by the
 * one non-zero field of procfs_fd (an fd opened for reading on a procfs
 * root), pidns_fd or pidns_id (a pid namespace), as listmount(2) names its
 * namespace. fdmap takes a struct fdmap_req: a pidfd, an inclusive
 * first_fd, and the same three view fields. Every call takes size_t nr (at most 1,000,000, else EOVERFLOW) and
 * flags that must be 0.
 */
#ifndef PIDMAP_SYSCALLS_H
#define PIDMAP_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/fdmap.h>
#include <linux/pidmap.h>
#include <linux/types.h>

/*
 * The next free numbers of Linux 7.3, the same in every table the series
 * wires but alpha's and MIPS's; the guests are x86_64, i386 and arm64.
 * (A kernel's <asm/unistd.h> has them only with the series.)
 */
#ifndef __NR_pidmap
#define __NR_pidmap 473
#endif
#ifndef __NR_pidmap_info
#define __NR_pidmap_info 474
#endif
#ifndef __NR_fdmap
#define __NR_fdmap 475
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

/* nsfs: a namespace's id, as listns(2) lists it (Linux 6.18's <linux/nsfs.h>) */
#ifndef NS_GET_ID
#define NS_GET_ID _IOR(0xb7, 13, __u64)
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL on x86 and arm64 */
#endif
#ifndef PIDFD_SELF_THREAD
#define PIDFD_SELF_THREAD		-10000
#define PIDFD_SELF_THREAD_GROUP		-10001
#endif

/* Every field of a record (everything but SUPPORTED_MASK). */
#define PIDMAP_INFO_ALL_FIELDS	((PIDMAP_INFO_CTXSW << 1) - 1)

/* The most ids or records one call may ask for; nr above it is EOVERFLOW. */
#define PIDMAP_MAX_NR 1000000u

/*
 * The same layout for 64-bit and i386 callers, as the header's sizes say:
 * no compat entry exists.
 */
_Static_assert(sizeof(struct pidmap_req) == PIDMAP_REQ_SIZE_VER0, "pidmap_req layout");
_Static_assert(sizeof(struct pidmap_info) == PIDMAP_INFO_SIZE_VER0, "pidmap_info layout");
_Static_assert(sizeof(struct fdmap_req) == FDMAP_REQ_SIZE_VER0, "fdmap_req layout");
_Static_assert(offsetof(struct pidmap_req, info_mask) == 32, "pidmap_req info_mask offset");
_Static_assert(offsetof(struct pidmap_req, pidns_id) == 48, "pidmap_req pidns_id offset");
_Static_assert(offsetof(struct fdmap_req, pidns_id) == 24, "fdmap_req pidns_id offset");
_Static_assert(offsetof(struct pidmap_info, utime_ns) == 64, "pidmap_info utime_ns offset");
_Static_assert(offsetof(struct pidmap_info, rss_bytes) == 88, "pidmap_info rss_bytes offset");
_Static_assert(offsetof(struct pidmap_info, comm) == 104, "pidmap_info comm offset");
_Static_assert(offsetof(struct pidmap_info, min_flt) == 168, "pidmap_info min_flt offset");
_Static_assert(offsetof(struct pidmap_info, nivcsw) == 192, "pidmap_info nivcsw offset");

/*
 * A record's nanoseconds in stat's clock ticks and its bytes in pages,
 * divided as /proc divides them (nsec_to_clock_t(), USER_HZ dividing a
 * second on every architecture the guests run), so that they compare
 * with stat and statm exactly.
 */
static inline unsigned long long pidmap_ticks(__u64 ns)
{
	return ns / (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static inline unsigned long long pidmap_pages(__u64 bytes)
{
	return bytes / (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* Raw calls: -1 and errno on failure, like every libc syscall wrapper. */
static inline long sys_pidmap(const void *req, __u32 *ids, size_t nr, unsigned int flags)
{
	return syscall(__NR_pidmap, req, ids, nr, flags);
}

static inline long sys_pidmap_info(const void *req, void *buf, size_t nr, unsigned int flags)
{
	return syscall(__NR_pidmap_info, req, buf, nr, flags);
}

static inline long sys_fdmap(const void *req, int *fds, size_t nr, unsigned int flags)
{
	return syscall(__NR_fdmap, req, fds, nr, flags);
}

static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

/*
 * A pidmap request: @scope, the ids after @last_id, of @pidfd's group
 * (THREADS and CHILDREN; 0 for PROCS and TASKS), through the procfs
 * mount of @view_fd (an fd opened for reading on its root) when
 * @view_fd > 0 (its procfs_fd), else the default view; @filter:
 * PIDMAP_FILTER_* bits.
 */
static inline void pidmap_req_init(struct pidmap_req *req, __u32 scope, int pidfd, int view_fd,
				   __u32 filter, __u64 last_id)
{
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->scope = scope;
	req->last_id = last_id;
	req->pidfd = pidfd;
	if (view_fd > 0)
		req->procfs_fd = view_fd;
	req->filter = filter;
}

/* pidmap(2) of a request built by pidmap_req_init(). */
static inline long pidmap_list(__u32 scope, int pidfd, int view_fd, __u32 filter, __u64 last_id,
			       __u32 *ids, size_t nr)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, view_fd, filter, last_id);
	return sys_pidmap(&req, ids, nr, 0);
}

/* pidmap_info(2): records of @info_size bytes with the fields of @mask. */
static inline long pidmap_info_list(__u32 scope, int pidfd, int view_fd, __u32 filter,
				    __u64 last_id, void *recs, size_t nr, __u32 info_size,
				    __u64 mask)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, view_fd, filter, last_id);
	req.info_size = info_size;
	req.info_mask = mask;
	return sys_pidmap_info(&req, recs, nr, 0);
}

/* fdmap(2) of @pidfd, the fds >= @first_fd, through @view_fd as above. */
static inline long fdmap_list(int pidfd, int view_fd, __u32 first_fd, int *fds, size_t nr)
{
	struct fdmap_req req;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.pidfd = pidfd;
	req.first_fd = first_fd;
	if (view_fd > 0)
		req.procfs_fd = view_fd;
	return sys_fdmap(&req, fds, nr, 0);
}

#endif /* PIDMAP_SYSCALLS_H */
