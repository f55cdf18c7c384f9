/* SPDX-License-Identifier: MIT */
/*
 * pd_deploy_find_agent: the agent for the board's `uname -m` is found where scripts/cross-build.sh puts it
 * (build-<arch>/ next to the build tree, PREFIX/libexec/powerdag/<arch>/ with --install), an agent
 * of the wrong machine is never chosen, and a missing one is refused with the command that builds it.
 * The "agents" are ELF headers with the right e_machine: pd_deploy_find_agent reads nothing else.
 */
#include "deployer/pd_deployer.h"
#include "pd_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes a 64-byte ELF header for machine (EM_*), 64- or 32-bit little-endian, mode 0755. */
static void fake_elf(const char *path, unsigned machine, int is64)
{
	unsigned char h[64] = {0x7f, 'E', 'L', 'F', (unsigned char)(is64 ? 2 : 1), 1, 1};
	h[16] = 2; /* ET_EXEC */
	h[18] = (unsigned char)(machine & 0xff);
	h[19] = (unsigned char)(machine >> 8);
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
	close(fd);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

static char *path_in(const char *dir, const char *rel)
{
	static char buf[4][1200];
	static int i;
	char *p = buf[i++ % 4];
	snprintf(p, sizeof(buf[0]), "%s/%s", dir, rel);
	return p;
}

START_TEST(cross_build_tree_found)
{
	/* checkout/build/powerdag (host build) + checkout/build-aarch64/powerdag-agent (cross-build.sh) */
	char d[512]; /* pd_test_tmpdir's buffer is reused by later pd_test_* calls */
	snprintf(d, sizeof(d), "%s", pd_test_tmpdir());
	fake_elf(path_in(d, "build-aarch64/powerdag-agent"), 183, 1);
	fake_elf(path_in(d, "build-armhf/powerdag-agent"), 40, 0);
	fake_elf(path_in(d, "build/agents/powerdag-agent"), 62, 1); /* the host's own agent */
	char out[2048], want[1200];
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "aarch64", out, sizeof(out), &e), 0);
	char *real = realpath(path_in(d, "build-aarch64/powerdag-agent"), NULL);
	snprintf(want, sizeof(want), "%s", real);
	free(real);
	ck_assert_str_eq(out, want);
	/* ODROID-XU4 reports armv7l: the armhf build */
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "armv7l", out, sizeof(out), &e), 0);
	ck_assert_ptr_nonnull(strstr(out, "/build-armhf/powerdag-agent"));
	/* the twin (x86_64) still gets the host agent of the build tree */
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "x86_64", out, sizeof(out), &e), 0);
	ck_assert_ptr_nonnull(strstr(out, "/build/agents/powerdag-agent"));
}
END_TEST

START_TEST(install_prefix_found)
{
	/* cross-build.sh aarch64 --install PREFIX; powerdag installed as PREFIX/bin/powerdag */
	char d[512]; /* pd_test_tmpdir's buffer is reused by later pd_test_* calls */
	snprintf(d, sizeof(d), "%s", pd_test_tmpdir());
	fake_elf(path_in(d, "bin/powerdag"), 62, 1);
	fake_elf(path_in(d, "libexec/powerdag/aarch64/powerdag-agent"), 183, 1);
	fake_elf(path_in(d, "libexec/powerdag/armhf/powerdag-agent"), 40, 0);
	char out[2048];
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "bin/powerdag"), "arm64", out, sizeof(out), &e), 0);
	ck_assert_ptr_nonnull(strstr(out, "/libexec/powerdag/aarch64/powerdag-agent"));
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "bin/powerdag"), "armv7l", out, sizeof(out), &e), 0);
	ck_assert_ptr_nonnull(strstr(out, "/libexec/powerdag/armhf/powerdag-agent"));
}
END_TEST

START_TEST(wrong_machine_never_chosen)
{
	/* an x86-64 binary where the aarch64 agent belongs (e.g. a host build in build-aarch64/) */
	char d[512]; /* pd_test_tmpdir's buffer is reused by later pd_test_* calls */
	snprintf(d, sizeof(d), "%s", pd_test_tmpdir());
	fake_elf(path_in(d, "build/powerdag"), 62, 1);
	fake_elf(path_in(d, "build-aarch64/powerdag-agent"), 62, 1);
	char out[2048];
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "aarch64", out, sizeof(out), &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "build-aarch64/powerdag-agent (x86_64)") != NULL, "%s", e.msg);
	/* and an explicit --agent of the wrong machine is refused naming both */
	ck_assert_int_eq(pd_deploy_find_agent(path_in(d, "build-aarch64/powerdag-agent"), NULL, "armv7l", out, sizeof(out), &e),
			 PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "built for x86_64 but the board is armv7l") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(missing_agent_names_build_command)
{
	char d[512]; /* pd_test_tmpdir's buffer is reused by later pd_test_* calls */
	snprintf(d, sizeof(d), "%s", pd_test_tmpdir());
	char out[2048];
	pd_err e = {0};
	fake_elf(path_in(d, "build/powerdag"), 62, 1);
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "armv7l", out, sizeof(out), &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "scripts/cross-build.sh armhf") != NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "scripts/install-cross-deps.sh armhf") != NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "build/powerdag-agent-arm (absent)") != NULL, "%s", e.msg);
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "aarch64", out, sizeof(out), &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "scripts/cross-build.sh aarch64") != NULL, "%s", e.msg);
	/* no cross build exists for riscv64: only --agent */
	ck_assert_int_eq(pd_deploy_find_agent(NULL, path_in(d, "build/powerdag"), "riscv64", out, sizeof(out), &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "cross-build.sh") == NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "--agent PATH") != NULL, "%s", e.msg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent_find");
	TCase *tc = tcase_create("find");
	tcase_add_test(tc, cross_build_tree_found);
	tcase_add_test(tc, install_prefix_found);
	tcase_add_test(tc, wrong_machine_never_chosen);
	tcase_add_test(tc, missing_agent_names_build_command);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
