/* SPDX-License-Identifier: MIT */
/*
 * agent_find.c - choosing the powerdag-agent binary for the board's architecture. The binary runs
 * on the board, so its ELF machine must match `uname -m` there; a wrong one is refused here with the
 * list of places searched rather than failing obscurely on the board.
 */
#include "deployer/pd_deployer.h"

#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* uname -m spellings → the ELF names above */
static const char *norm_arch(const char *uname_m)
{
	if (!strncmp(uname_m, "armv", 4) || !strcmp(uname_m, "arm") || !strcmp(uname_m, "armhf"))
		return "arm";
	if (!strcmp(uname_m, "arm64"))
		return "aarch64";
	if (!strcmp(uname_m, "i686") || !strcmp(uname_m, "i586") || !strcmp(uname_m, "i486"))
		return "i386";
	if (!strcmp(uname_m, "amd64"))
		return "x86_64";
	return uname_m;
}

/* The name scripts/cross-build.sh gives an architecture (build-<name>/, libexec/powerdag/<name>/):
 * Debian's "armhf" for 32-bit Arm (the boards run hard-float userlands), else the ELF name. NULL
 * when the script cannot cross-build for it. */
static const char *cross_name(const char *want)
{
	if (!strcmp(want, "arm"))
		return "armhf";
	if (!strcmp(want, "aarch64"))
		return "aarch64";
	return NULL;
}

/* The directory of the running powerdag: self_exe, else /proc/self/exe. */
static void self_dir(const char *self_exe, char *dir, size_t n)
{
	char self[1024];
	if (!self_exe || !*self_exe) {
		ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[l > 0 ? l : 0] = '\0';
	} else {
		snprintf(self, sizeof(self), "%s", self_exe);
	}
	snprintf(dir, n, "%s", dirname(self));
}

enum { PD_AGENT_CANDS = 10, PD_AGENT_PATH_MAX = 1200 };

/* Where an agent for `want` may be, most specific first. d is powerdag's directory: the top of a
 * build tree (build/powerdag, whose checkout also holds build-<arch>/ from cross-build.sh), or
 * PREFIX/bin of an installation (PREFIX/libexec/powerdag/<arch>/ from cross-build.sh --install). */
static size_t agent_candidates(const char *d, const char *want, char cand[][PD_AGENT_PATH_MAX])
{
	const char *xn = cross_name(want);
	size_t k = 0;
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/powerdag-agent-%s", d, want);
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/powerdag-agent", d);
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../agents/powerdag-agent", d); /* build tree */
	if (xn) {
		snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../build-%s/powerdag-agent", d, xn); /* cross-build.sh */
		snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../libexec/powerdag/%s/powerdag-agent", d, xn);
	}
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../lib/powerdag/%s/powerdag-agent", d, want);
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../libexec/powerdag/powerdag-agent-%s", d, want);
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/../libexec/powerdag/powerdag-agent", d);
	snprintf(cand[k++], PD_AGENT_PATH_MAX, "%s/agents/powerdag-agent", d); /* build tree, powerdag at its top */
	return k;
}

/* The refusal names the command that produces the missing agent first: pd_err holds 512 bytes, so
 * only the tail of the list of places tried may be cut. */
static int no_agent(const char *arch, const char *want, const char *tried, pd_err *e)
{
	const char *xn = cross_name(want);
	if (xn)
		return pd_err_set(e, PD_EXIT_ENV,
				  "no powerdag-agent for the board's architecture %s: build one with "
				  "`scripts/install-cross-deps.sh %s && scripts/cross-build.sh %s` (writes "
				  "build-%s/powerdag-agent, see docs/BOARDS.md) or pass --agent PATH; tried %s",
				  arch, xn, xn, xn, tried);
	return pd_err_set(e, PD_EXIT_ENV,
			  "no powerdag-agent for the board's architecture %s: build the agent for %s (on the board: "
			  "cmake --build BUILD --target powerdag-agent) and pass --agent PATH; tried %s",
			  arch, want, tried);
}

int pd_deploy_find_agent(const char *explicit_path, const char *self_exe, const char *arch, char *out, size_t n,
		  pd_err *e)
{
	const char *want = norm_arch(arch);
	if (explicit_path) {
		const char *got = pd_elf_arch(explicit_path);
		if (!got)
			return pd_err_set(e, PD_EXIT_ENV, "--agent %s: not an executable ELF file", explicit_path);
		if (strcmp(got, want))
			return pd_err_set(e, PD_EXIT_ENV, "--agent %s is built for %s but the board is %s", explicit_path,
					  got, arch);
		snprintf(out, n, "%s", explicit_path);
		return 0;
	}
	char d[1024];
	self_dir(self_exe, d, sizeof(d));
	char cand[PD_AGENT_CANDS][PD_AGENT_PATH_MAX];
	size_t nc = agent_candidates(d, want, cand);
	pd_buf tried;
	pd_buf_init(&tried);
	for (size_t i = 0; i < nc; i++) {
		const char *got = access(cand[i], X_OK) == 0 ? pd_elf_arch(cand[i]) : NULL;
		if (got && !strcmp(got, want)) {
			char *real = realpath(cand[i], NULL);
			snprintf(out, n, "%s", real ? real : cand[i]);
			free(real);
			pd_buf_free(&tried);
			return 0;
		}
		pd_buf_printf(&tried, "%s%s (%s)", i ? ", " : "", cand[i], got ? got : "absent");
	}
	int rc = no_agent(arch, want, tried.data, e);
	pd_buf_free(&tried);
	return rc;
}
