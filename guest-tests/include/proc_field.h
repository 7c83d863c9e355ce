/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc_field.h: small /proc files: a whole file into a buffer, and one
 * number from a "Key: value" file such as MemAvailable in /proc/meminfo
 * or Tgid in /proc/PID/status.
 *
 * Shared by guest-tests/ and bench/pidmap-bench.c (which includes it by
 * relative path so it still builds alone).
 */
#ifndef PROC_FIELD_H
#define PROC_FIELD_H

#include <fcntl.h>
#include <stdio.h>
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

/* Thread-group id of task @tid, or -1 once it is gone. */
static inline int proc_tgid_of(int tid)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return (int)proc_field(path, "Tgid");
}

#endif /* PROC_FIELD_H */
