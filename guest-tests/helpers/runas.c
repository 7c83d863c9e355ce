// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * runas UID PROGRAM [ARG...]: exec PROGRAM as uid and gid UID, with UID as
 * its only supplementary group.
 * The guest runs the kselftests' uid 65534 cases through it.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	gid_t g;
	int id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID PROGRAM [ARG...]\n");
		return 2;
	}
	id = atoi(argv[1]);
	g = (gid_t)id;
	if (setgroups(1, &g) || setgid(id) || setuid(id)) {
		perror("runas");
		return 1;
	}
	execv(argv[2], argv + 2);
	perror("execv");
	return 1;
}
