// SPDX-License-Identifier: MIT
/*
 * What an open with a target's rights costs (lib/asuser.c), in one run: root's own open (no
 * opener thread: the floor), opens for one user in a row (a job's usual case: the opener keeps
 * the ids it holds) and opens alternating between two users (each takes its ids again). Prints
 * microseconds per open, the median of ROUNDS rounds, and each as a ratio of the floor.
 * Usage: .output/bench/asuser_open [ROUNDS [OPENS]]  (as root)
 */
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "asuser.h"
#include "monoclock.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* us per open of path, n times, with creds[i % ncreds] (NULL: as we are) */
static double opens(const struct ls_creds *const *creds, int ncreds, const char *path, int n)
{
	uint64_t t0 = ls_mono_ns();

	for (int i = 0; i < n; i++) {
		int fd = ls_asuser__open(creds[i % ncreds], AT_FDCWD, path, O_RDONLY, 0,
					 LS_OPEN_REGULAR);

		if (fd < 0) {
			fprintf(stderr, "asuser_open: %s: %s\n", path, strerror(-fd));
			exit(1);
		}
		close(fd);
	}
	return (ls_mono_ns() - t0) / 1e3 / n;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7, n = argc > 2 ? atoi(argv[2]) : 5000;
	struct ls_creds a = {.fsuid = 65534, .fsgid = 65534, .ngroups = 1, .groups = {65534}};
	struct ls_creds b = {.fsuid = 1, .fsgid = 1, .ngroups = 1, .groups = {1}};
	const struct ls_creds *none[] = {NULL}, *one[] = {&a}, *two[] = {&a, &b};
	double floor_us[64], one_us[64], two_us[64];

	if (geteuid() != 0 || rounds < 1 || rounds > 64 || n < 1) {
		fprintf(stderr, "usage (as root): asuser_open [ROUNDS (1-64) [OPENS]]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) { /* interleaved: the machine's noise falls on all three */
		floor_us[r] = opens(none, 1, "/etc/hostname", n);
		one_us[r] = opens(one, 1, "/etc/hostname", n);
		two_us[r] = opens(two, 2, "/etc/hostname", n);
	}
	qsort(floor_us, rounds, sizeof(double), cmp);
	qsort(one_us, rounds, sizeof(double), cmp);
	qsort(two_us, rounds, sizeof(double), cmp);
	printf("%-28s %8s %8s\n", "open of /etc/hostname", "us/open", "x floor");
	printf("%-28s %8.2f %8.2f\n", "as root (no opener)", floor_us[rounds / 2], 1.0);
	printf("%-28s %8.2f %8.2f\n", "one user in a row", one_us[rounds / 2],
	       one_us[rounds / 2] / floor_us[rounds / 2]);
	printf("%-28s %8.2f %8.2f\n", "two users alternating", two_us[rounds / 2],
	       two_us[rounds / 2] / floor_us[rounds / 2]);
	return 0;
}
