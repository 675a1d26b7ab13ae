// SPDX-License-Identifier: MIT
/* A process's rank in a distributed job, from its environment (jobenv.h). */
#include <string.h>
#include "jobenv.h"

/* a plain decimal number in [min, LS_JOBENV_MAX_RANK), or -1 */
static int number(const char *s, size_t n, int min)
{
	long v = 0;

	if (!n || n > 8)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= min && v < LS_JOBENV_MAX_RANK ? (int)v : -1;
}

int ls_jobenv__parse(const char *env, size_t len, struct ls_jobenv *out)
{
	static const struct {
		const char *name;
		int min;
	} keys[] = {{"RANK=", 0}, {"LOCAL_RANK=", 0}, {"WORLD_SIZE=", 1}};
	int *field[] = {&out->rank, &out->local_rank, &out->world_size};
	const char *p = env, *end = env + len;

	out->rank = out->local_rank = out->world_size = -1;
	out->master_addr[0] = 0;
	while (p < end) {
		const char *e = memchr(p, 0, end - p);
		size_t n = e ? (size_t)(e - p) : (size_t)(end - p);

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t kl = strlen(keys[k].name);

			if (n >= kl && !memcmp(p, keys[k].name, kl))
				*field[k] = number(p + kl, n - kl, keys[k].min);
		}
		if (n > 12 && !memcmp(p, "MASTER_ADDR=", 12)) {
			size_t vl = n - 12 < sizeof(out->master_addr) - 1
					    ? n - 12
					    : sizeof(out->master_addr) - 1;

			memcpy(out->master_addr, p + 12, vl);
			out->master_addr[vl] = 0;
		}
		p += n + 1;
	}
	/* a rank at or past the job's size is not one of its ranks */
	if (out->world_size >= 0 && out->rank >= out->world_size)
		out->rank = -1;
	return out->rank >= 0 || out->local_rank >= 0 || out->world_size >= 0 ||
	       out->master_addr[0];
}
