/* SPDX-License-Identifier: MIT */
/* Shared helpers for the libcheck tests. */
#ifndef PD_TEST_H
#define PD_TEST_H

#include <check.h>
#include <stddef.h>

/* Absolute path of a file in the source tree (PD_SOURCE_DIR), in a static rotating buffer. */
const char *pd_test_src(const char *rel);
/* Absolute path in the build tree (PD_BINARY_DIR). */
const char *pd_test_bin(const char *rel);
/* A fresh temporary directory (removed by the OS tmp cleaner; tests write nothing elsewhere). */
const char *pd_test_tmpdir(void);
/* Writes text to DIR/name and returns the path (static rotating buffer). */
const char *pd_test_write(const char *dir, const char *name, const char *text);
/* Runs a shell command line built only from test constants; returns the exit status (or -1). Stdout
 * is captured into out (up to n bytes) when out != NULL. */
int pd_test_run(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Runs a suite and returns the process exit code (0 when all pass). */
int pd_test_main(Suite *s);

#endif
