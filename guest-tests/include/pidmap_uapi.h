/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pidmap_uapi.h: the ABI of pidmap(2) and fdmap(2) for programs that must
 * also build against headers without the series: <linux/pidmap.h> when it
 * is there, else the values of docs/ABI.md; and the raw syscall wrappers.
 *
 * Shared by guest-tests/ and bench/pidmap-bench.c (which includes it by
 * relative path so it still builds alone).  With PIDMAP_TEST_EMULATE,
 * pidmap_test.h supplies emulated wrappers instead.
 */
#ifndef PIDMAP_UAPI_H
#define PIDMAP_UAPI_H

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/pidmap.h>)
#include <linux/pidmap.h>
#endif
#endif

/* The same sparse numbers in every table the series wires. */
#ifndef __NR_pidmap
#define __NR_pidmap 1000
#endif
#ifndef __NR_fdmap
#define __NR_fdmap 1001
#endif

#ifndef PIDMAP_PROC
#define PIDMAP_PROC		0x01u
#define PIDMAP_ALL_TASKS	0x02u
#define PIDMAP_TASKS		0x04u
#define PIDMAP_CHILDREN		0x08u
#define PIDMAP_MODE_MASK	0x0fu
#define PIDMAP_IGNORE_KTHREADS	0x100u
#endif

#ifndef PIDMAP_TEST_EMULATE
/* -1 and errno on failure, like every libc syscall wrapper. */
static inline long sys_pidmap(pid_t pid, int *pids, unsigned int count,
			      int start, unsigned int flags)
{
	return syscall(__NR_pidmap, pid, pids, count, start, flags);
}

static inline long sys_fdmap(pid_t pid, int *fds, unsigned int count,
			     int start, unsigned int flags)
{
	return syscall(__NR_fdmap, pid, fds, count, start, flags);
}
#endif

#endif /* PIDMAP_UAPI_H */
