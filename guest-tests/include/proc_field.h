/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc_field.h: small /proc files: a whole file into a buffer, and one
 * number from a "Key: value" file such as MemAvailable in /proc/meminfo
 * or Tgid in /proc/PID/status.
 *
 * Shared by guest-tests/ and bench/pidmap-bench/ (which includes it by
 * relative path so it still builds alone).
 */
#ifndef PROC_FIELD_H
#define PROC_FIELD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Read @path (at most @size - 1 bytes: these files fit in one read) into
 * @buf and terminate it.  Returns the length, or -1 if it cannot be read
 * or is empty.
 */
static inline ssize_t proc_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

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

/* The number after "@key:" in @path, or -1 if the file or the key is missing. */
static inline long proc_field(const char *path, const char *key)
{
	size_t len = strlen(key);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * Field 41 (policy: SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3, IDLE 5,
 * DEADLINE 6, EXT 7) of the stat text @buf; the fields resume after the
 * last ')' (comm may hold both), field 3 first.  -1 if it has none.
 */
static inline int proc_stat_buf_policy(const char *buf)
{
	const char *p = strrchr(buf, ')');
	int field = 3;

	if (!p)
		return -1;
	for (p++; *p; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -1;
		if (field == 41)
			return *p >= '0' && *p <= '9' ? atoi(p) : -1;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	return -1;
}

/* The policy in the stat file @rel (at @dirfd, or AT_FDCWD), or -1. */
static inline int proc_stat_policy_at(int dirfd, const char *rel)
{
	char buf[1024];
	ssize_t n;
	int fd;

	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return proc_stat_buf_policy(buf);
}

/* SCHED_NORMAL and SCHED_BATCH: the policies ps shows a nice value for. */
static inline int proc_policy_has_nice(int policy)
{
	return policy == 0 || policy == 3;
}

/* Thread-group id of task @tid, or -1 once it is gone. */
static inline int proc_tgid_of(int tid)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return (int)proc_field(path, "Tgid");
}

#endif /* PROC_FIELD_H */
