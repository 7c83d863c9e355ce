#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int id = atoi(argv[1]);
	gid_t g = id;

	if (setgroups(1, &g) || setgid(id) || setuid(id)) {
		perror("runas");
		return 1;
	}
	execv(argv[2], argv + 2);
	perror("execv");
	return 1;
}
