// SPDX-License-Identifier: MIT
/*
 * A CUDA application on the fake driver (tests/gpu/fake): the injection library's failure paths
 * and per-process behaviour are checked by running it. Modes:
 *   run    kernels, a graph, a copy, a set, an allocation and a synchronisation; exit 0
 *   twice  the same after initialising three times (driver twice, the application once itself)
 *   fork   run, then fork a child that launches too (the child must report as itself)
 *   many   4000 launches of 100 us kernels (for sampled launches: LINESCOPE_GPU_SAMPLE)
 * Prints one line "fake_app: <mode> ok init=<InitializeInjection result> callbacks=<n>".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakecuda.h"

static void work(const char *tag)
{
	uint64_t addr = 0;
	char name[64];
	int i;

	snprintf(name, sizeof(name), "%s_kernel", tag);
	for (i = 0; i < 10; i++)
		fakecuda_launch(strdup(name), 1000000, 0, i % 2 ? FAKECUDA_RT : FAKECUDA_DRV_EX);
	fakecuda_graph_launch(5, 3, "graph_node_kernel", 200000);
	fakecuda_malloc(64 << 20, &addr);
	fakecuda_memcpy(64 << 20, 1, 300000);
	fakecuda_memset(1 << 20, 10000);
	fakecuda_synchronize(1000000);
	fakecuda_free(addr);
	fakecuda_flush();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "run";
	int init = fakecuda_init(), status = 0;
	pid_t child;

	if (!strcmp(mode, "twice")) {
		const char *path = getenv("CUDA_INJECTION64_PATH");
		int (*again)(void) = NULL;
		void *dl = path ? dlopen(path, RTLD_NOW) : NULL;

		fakecuda_init();
		if (dl)
			*(void **)&again = dlsym(dl, "InitializeInjection");
		if (again && again() != 1) {
			fprintf(stderr, "fake_app: InitializeInjection did not return 1 again\n");
			return 1;
		}
	} else if (!strcmp(mode, "many")) {
		for (int i = 0; i < 4000; i++)
			fakecuda_launch("many_kernel", 100000, 0, FAKECUDA_RT);
		fakecuda_flush();
		printf("fake_app: %s ok init=%d\n", mode, init);
		return 0;
	} else if (strcmp(mode, "run") && strcmp(mode, "fork")) {
		fprintf(stderr, "usage: fake_app [run|twice|fork|many]\n");
		return 2;
	}
	work("parent");
	if (!strcmp(mode, "fork")) {
		child = fork();
		if (child == 0) {
			work("child");
			exit(0); /* atexit handlers run: the library flushes in the child too */
		}
		if (child < 0 || waitpid(child, &status, 0) != child || status) {
			fprintf(stderr, "fake_app: child failed\n");
			return 1;
		}
	}
	printf("fake_app: %s ok init=%d callbacks=%llu\n", mode, init,
	       (unsigned long long)fakecuda_stat(FAKECUDA_ST_CALLBACKS));
	return 0;
}
