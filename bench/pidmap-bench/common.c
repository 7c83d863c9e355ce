// SPDX-License-Identifier: MIT OR Apache-2.0
/* pidmap-bench: the options, the probes' answers, the messages, append(). */
#include "common.h"

struct options opt;

bool have_pidmap, have_fdmap;
volatile long sink;

int proc_fd = -1;

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "pidmap-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

bool want_case(const char *name)
{
	int i;

	if (!opt.nonly)
		return true;
	for (i = 0; i < opt.nonly; i++)
		if (!strncmp(name, opt.only[i], strlen(opt.only[i])))
			return true;
	return false;
}

void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len >= size - 1)
		die("append: JSON buffer full");
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}
