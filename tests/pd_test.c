/* SPDX-License-Identifier: MIT */
#include "pd_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char bufs[8][4096];
static int next_buf;

static char *rot(void)
{
	char *b = bufs[next_buf];
	next_buf = (next_buf + 1) % 8;
	return b;
}

static const char *root(const char *var)
{
	const char *r = getenv(var);
	return r ? r : ".";
}

const char *pd_test_src(const char *rel)
{
	char *b = rot();
	snprintf(b, 4096, "%s/%s", root("PD_SOURCE_DIR"), rel);
	return b;
}

const char *pd_test_bin(const char *rel)
{
	char *b = rot();
	snprintf(b, 4096, "%s/%s", root("PD_BINARY_DIR"), rel);
	return b;
}

const char *pd_test_tmpdir(void)
{
	char *b = rot();
	snprintf(b, 4096, "/tmp/pdtest.XXXXXX");
	if (!mkdtemp(b))
		abort();
	return b;
}

const char *pd_test_write(const char *dir, const char *name, const char *text)
{
	char *b = rot();
	snprintf(b, 4096, "%s/%s", dir, name);
	FILE *f = fopen(b, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	return b;
}

int pd_test_run(char *out, size_t n, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t len = 0;
	char tmp[4096];
	size_t r;
	while ((r = fread(tmp, 1, sizeof(tmp), p)) > 0) {
		if (out && len + 1 < n) {
			size_t c = r < n - 1 - len ? r : n - 1 - len;
			memcpy(out + len, tmp, c);
			len += c;
		}
	}
	if (out && n)
		out[len] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int pd_test_main(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
