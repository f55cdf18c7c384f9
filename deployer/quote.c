/* SPDX-License-Identifier: MIT */
/*
 * quote.c - the one audited function that turns an argument into shell text.
 *
 * A remote SSH command is a single string interpreted by the login shell, so every argument of an
 * argv vector is written as one single-quoted word. Inside single quotes a POSIX shell treats every
 * byte literally except the closing quote, so the only byte that needs care is ' itself, written as
 * '\'' (close, escaped quote, reopen). NUL cannot occur (C strings). Nothing else is escaped and
 * nothing else is needed: $, `, \, ", spaces, tabs, newlines and glob characters stay literal.
 */
#include "deployer/pd_deployer.h"

int pd_deploy_shell_quote(pd_buf *out, const char *arg)
{
	if (pd_buf_append(out, "'", 1) < 0)
		return -1;
	for (const char *p = arg; *p; p++) {
		int r = *p == '\'' ? pd_buf_append(out, "'\\''", 4) : pd_buf_append(out, p, 1);
		if (r < 0)
			return -1;
	}
	return pd_buf_append(out, "'", 1);
}

int pd_deploy_shell_quote_argv(pd_buf *out, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i && pd_buf_append(out, " ", 1) < 0)
			return -1;
		if (pd_deploy_shell_quote(out, argv[i]) < 0)
			return -1;
	}
	return 0;
}
