/* SPDX-License-Identifier: MIT */
/*
 * interrupt.c - Ctrl-C, SIGTERM and SIGHUP for the commands that touch a board (deploy, profile):
 * the handler only sets a flag that the board code polls, so the board is restored on the way out.
 * The flag is the one piece of process-wide state a signal handler may touch.
 */
#include "cli/cli_impl.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

volatile sig_atomic_t *pd_cli_catch_interrupts(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a dropped SSH socket must be an error value, not a death */
	return &interrupted;
}
