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

const char *pd_elf_arch(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 20 || memcmp(h, "\177ELF", 4) != 0)
		return NULL;
	unsigned machine = h[5] == 2 ? (unsigned)(h[18] << 8 | h[19]) : (unsigned)(h[19] << 8 | h[18]);
	switch (machine) {
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 40: return "arm";
	case 3: return "i386";
	case 243: return "riscv64";
	default: return "unknown";
	}
}

/* uname -m spellings → the ELF names above */
static const char *norm_arch(const char *uname_m)
{
	if (!strncmp(uname_m, "armv", 4) || !strcmp(uname_m, "arm"))
		return "arm";
	if (!strcmp(uname_m, "arm64"))
		return "aarch64";
	if (!strcmp(uname_m, "i686") || !strcmp(uname_m, "i586") || !strcmp(uname_m, "i486"))
		return "i386";
	if (!strcmp(uname_m, "amd64"))
		return "x86_64";
	return uname_m;
}

int pd_find_agent(const char *explicit_path, const char *self_exe, const char *arch, char *out, size_t n,
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
	char self[1024];
	if (!self_exe || !*self_exe) {
		ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[l > 0 ? l : 0] = '\0';
	} else {
		snprintf(self, sizeof(self), "%s", self_exe);
	}
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", self);
	char *d = dirname(dir);
	char cand[7][1200];
	snprintf(cand[0], sizeof(cand[0]), "%s/powerdag-agent-%s", d, want);
	snprintf(cand[1], sizeof(cand[1]), "%s/powerdag-agent", d);
	snprintf(cand[2], sizeof(cand[2]), "%s/../agents/powerdag-agent", d); /* build tree */
	snprintf(cand[3], sizeof(cand[3]), "%s/../lib/powerdag/%s/powerdag-agent", d, want);
	snprintf(cand[4], sizeof(cand[4]), "%s/../libexec/powerdag/powerdag-agent-%s", d, want);
	snprintf(cand[5], sizeof(cand[5]), "%s/../libexec/powerdag/powerdag-agent", d);
	snprintf(cand[6], sizeof(cand[6]), "%s/agents/powerdag-agent", d); /* build tree, powerdag at its top */
	pd_buf tried;
	pd_buf_init(&tried);
	for (size_t i = 0; i < 7; i++) {
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
	int rc = pd_err_set(e, PD_EXIT_ENV,
			    "no powerdag-agent for the board's architecture %s; tried %s. Build one for %s "
			    "(cross-compile) and pass --agent PATH", arch, tried.data, want);
	pd_buf_free(&tried);
	return rc;
}
