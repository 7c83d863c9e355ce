// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * htopscreen: runs a curses program (htop) on a pseudo-terminal of a fixed
 * size and prints the screen it leaves, one line per row, trailing spaces
 * and trailing empty rows left out. htop has no batch mode; this is its
 * screen as text, for the identity tests (identity.sh).
 *
 *   htopscreen ROWS COLS PROGRAM [ARG...]
 *
 * The program runs in a session of its own with the pty's slave as its
 * controlling terminal and stdin/stdout/stderr, TERM=pidmap-screen (its
 * terminfo entry, made by cargo xtask clients, has only clear, cup and cr,
 * so that the output is text and cursor addressing) and LINES/COLUMNS
 * unset. The output is interpreted as such a terminal would: printable
 * bytes at the cursor, ESC [ r ; c H, ESC [ J, ESC [ K, CR, LF, BS, BEL,
 * TAB. Anything else is an error (exit status 3): the screen would not be
 * what a terminal shows. Exits with the program's status, or 128 + the
 * signal that killed it (so a seccomp kill shows as 159, as from a shell).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define MAX_ROWS 2000
#define MAX_COLS 1000

static int rows, cols;
static unsigned char *grid;
static int row, col;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void unhandled(const char *what, int c)
{
	fprintf(stderr, "htopscreen: unhandled %s 0x%02x at row %d col %d\n", what, c, row, col);
	exit(3);
}

static void clear_from(int r, int c)
{
	memset(grid + (size_t)r * cols + c, ' ', (size_t)(rows - r) * cols - c);
}

static void put(unsigned char ch)
{
	grid[(size_t)row * cols + col] = ch;
	if (col < cols - 1)
		col++;
}

/* A CSI sequence: its parameters and its final byte. */
static void csi(const int *param, int nparam, int final)
{
	switch (final) {
	case 'H': {
		int r = nparam > 0 && param[0] > 0 ? param[0] : 1;
		int c = nparam > 1 && param[1] > 0 ? param[1] : 1;

		row = r > rows ? rows - 1 : r - 1;
		col = c > cols ? cols - 1 : c - 1;
		break;
	}
	case 'J':
		if (nparam > 0 && param[0] != 0)
			unhandled("ESC [ J parameter", param[0]);
		clear_from(row, col);
		break;
	case 'K':
		if (nparam > 0 && param[0] != 0)
			unhandled("ESC [ K parameter", param[0]);
		memset(grid + (size_t)row * cols + col, ' ', cols - col);
		break;
	default:
		unhandled("CSI final byte", final);
	}
}

static void feed(const unsigned char *buf, size_t n)
{
	static enum { TEXT, ESC, CSI } state = TEXT;
	static int param[8], nparam;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = buf[i];

		switch (state) {
		case TEXT:
			if (c == 0x1b) {
				state = ESC;
			} else if (c == '\r') {
				col = 0;
			} else if (c == '\n') {
				if (row < rows - 1)
					row++;
			} else if (c == '\b') {
				if (col > 0)
					col--;
			} else if (c == '\a') {
				/* nothing to show */
			} else if (c == '\t') {
				col = (col / 8 + 1) * 8;
				if (col > cols - 1)
					col = cols - 1;
			} else if (c < 0x20 || c == 0x7f) {
				unhandled("control byte", c);
			} else {
				put(c);
			}
			break;
		case ESC:
			if (c != '[')
				unhandled("escape sequence", c);
			state = CSI;
			nparam = 0;
			memset(param, 0, sizeof(param));
			break;
		case CSI:
			if (c >= '0' && c <= '9') {
				if (nparam == 0)
					nparam = 1;
				param[nparam - 1] = param[nparam - 1] * 10 + (c - '0');
			} else if (c == ';') {
				if (nparam == 0)
					nparam = 1;
				if (nparam == 8)
					unhandled("CSI with parameters past", nparam);
				nparam++;
			} else if (c >= 0x40 && c <= 0x7e) {
				csi(param, nparam, c);
				state = TEXT;
			} else {
				unhandled("CSI byte", c);
			}
			break;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: htopscreen ROWS COLS PROGRAM [ARG...]\n");
		return 2;
	}
	rows = atoi(argv[1]);
	cols = atoi(argv[2]);
	if (rows < 1 || rows > MAX_ROWS || cols < 1 || cols > MAX_COLS) {
		fprintf(stderr, "htopscreen: bad size %sx%s\n", argv[1], argv[2]);
		return 2;
	}
	grid = malloc((size_t)rows * cols);
	if (!grid)
		die("malloc");
	memset(grid, ' ', (size_t)rows * cols);

	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master))
		die("posix_openpt");
	const char *slave_name = ptsname(master);
	if (!slave_name)
		die("ptsname");
	struct winsize ws = { .ws_row = rows, .ws_col = cols };
	if (ioctl(master, TIOCSWINSZ, &ws))
		die("TIOCSWINSZ");

	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (setsid() < 0)
			die("setsid");
		int slave = open(slave_name, O_RDWR);
		if (slave < 0)
			die(slave_name);
		if (ioctl(slave, TIOCSCTTY, 0))
			die("TIOCSCTTY");
		if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
			die("dup2");
		if (slave > 2)
			close(slave);
		setenv("TERM", "pidmap-screen", 1);
		unsetenv("LINES");
		unsetenv("COLUMNS");
		execvp(argv[3], argv + 3);
		die(argv[3]);
	}

	unsigned char buf[65536];
	for (;;) {
		ssize_t n = read(master, buf, sizeof(buf));
		if (n > 0) {
			feed(buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* EIO: every slave fd is closed, the program is gone */
		if (n < 0 && errno != EIO)
			die("read");
		break;
	}

	int status;
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");

	int last = rows - 1;
	while (last >= 0) {
		const unsigned char *r = grid + (size_t)last * cols;
		int c = 0;
		while (c < cols && r[c] == ' ')
			c++;
		if (c < cols)
			break;
		last--;
	}
	for (int r = 0; r <= last; r++) {
		const unsigned char *line = grid + (size_t)r * cols;
		int len = cols;
		while (len > 0 && line[len - 1] == ' ')
			len--;
		fwrite(line, 1, len, stdout);
		putchar('\n');
	}
	if (fflush(stdout))
		die("stdout");

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
