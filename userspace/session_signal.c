// SPDX-License-Identifier: MIT
/*
 * The signals that stop a recording (SIGINT, SIGTERM, SIGHUP): the handler only notes them, and
 * the poll loop decides what they mean for a launched command.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "session_int.h"

static volatile sig_atomic_t stop_signal;    /* the first signal that stopped us */
static volatile sig_atomic_t stop_count;     /* how many arrived: a second one kills the command */
static volatile sig_atomic_t stop_from_user; /* sent with kill(), not by the terminal */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	if (!stop_signal) {
		stop_signal = sig;
		stop_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
	}
	stop_count++;
}

void lss_catch_signals(void)
{
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int lss_stop_signal(void)
{
	return stop_signal;
}

int lss_stop_count(void)
{
	return stop_count;
}

bool lss_stop_from_user(void)
{
	return stop_from_user;
}
