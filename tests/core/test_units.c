/* SPDX-License-Identifier: MIT */
/* Units (docs/FORMATS.md section 1.1) and the YAML tree: exact parsing, canonical writing, hostile input. */
#include "core/pd_core.h"
#include "pd_test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(durations_parse_exactly)
{
	int64_t v;
	const char *why;
	ck_assert_int_eq(pd_parse_duration_ns("2.5ms", &v, &why), 0);
	ck_assert_int_eq(v, 2500000);
	ck_assert_int_eq(pd_parse_duration_ns("250us", &v, &why), 0);
	ck_assert_int_eq(v, 250000);
	ck_assert_int_eq(pd_parse_duration_ns("1s", &v, &why), 0);
	ck_assert_int_eq(v, 1000000000);
	ck_assert_int_eq(pd_parse_duration_ns("100ns", &v, &why), 0);
	ck_assert_int_eq(v, 100);
	ck_assert_int_eq(pd_parse_duration_ns("0.000000001s", &v, &why), 0);
	ck_assert_int_eq(v, 1);
}
END_TEST

START_TEST(durations_reject_bad)
{
	int64_t v;
	const char *why;
	ck_assert_int_eq(pd_parse_duration_ns("40", &v, &why), -1);
	ck_assert_str_eq(why, "missing unit");
	ck_assert_int_eq(pd_parse_duration_ns("-1ms", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("0.5ns", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("10parsecs", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("99999999999s", &v, &why), -1); /* > int64 ns */
	ck_assert_int_eq(pd_parse_duration_ns("9223372036854775808ns", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("ms", &v, &why), -1);
	ck_assert_int_eq(pd_parse_duration_ns("1.2.3ms", &v, &why), -1);
}
END_TEST

START_TEST(power_and_freq)
{
	int64_t v;
	const char *why;
	ck_assert_int_eq(pd_parse_power_uw("350mW", &v, &why), 0);
	ck_assert_int_eq(v, 350000);
	ck_assert_int_eq(pd_parse_power_uw("1.2W", &v, &why), 0);
	ck_assert_int_eq(v, 1200000);
	ck_assert_int_eq(pd_parse_freq_khz("1400MHz", &v, &why), 0);
	ck_assert_int_eq(v, 1400000);
	ck_assert_int_eq(pd_parse_freq_khz("1.4GHz", &v, &why), 0);
	ck_assert_int_eq(v, 1400000);
	ck_assert_int_eq(pd_parse_freq_khz("200000kHz", &v, &why), 0);
	ck_assert_int_eq(v, 200000);
	ck_assert_int_eq(pd_parse_freq_khz("114750000Hz", &v, &why), 0);
	ck_assert_int_eq(v, 114750);
	ck_assert_int_eq(pd_parse_freq_khz("1Hz", &v, &why), -1);
	ck_assert_int_eq(pd_parse_power_uw("3", &v, &why), -1);
}
END_TEST

START_TEST(canonical_forms_round_trip)
{
	char b[64];
	ck_assert_str_eq(pd_fmt_duration(2500000, b, sizeof b), "2.5ms");
	ck_assert_str_eq(pd_fmt_duration(40000000, b, sizeof b), "40ms");
	ck_assert_str_eq(pd_fmt_duration(999, b, sizeof b), "999ns");
	ck_assert_str_eq(pd_fmt_duration(1000000001, b, sizeof b), "1000000.001us");
	ck_assert_str_eq(pd_fmt_power(107000, b, sizeof b), "107mW");
	ck_assert_str_eq(pd_fmt_power(1982000, b, sizeof b), "1.982W");
	ck_assert_str_eq(pd_fmt_freq(1199999, b, sizeof b), "1199.999MHz");
	ck_assert_str_eq(pd_fmt_freq(114750, b, sizeof b), "114.75MHz");
	/* every canonical form reads back to the same value */
	const int64_t vals[] = {1, 7, 999, 1000, 1024, 1500, 123456789, 1000000001, PD_MAX_POWER_UW, PD_MAX_POWER_UW + 1,
				INT64_MAX / 3};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		int64_t v;
		const char *why;
		ck_assert_int_eq(pd_parse_duration_ns(pd_fmt_duration(vals[i], b, sizeof b), &v, &why), 0);
		ck_assert_int_eq(v, vals[i]);
		ck_assert_int_eq(pd_parse_freq_khz(pd_fmt_freq(vals[i], b, sizeof b), &v, &why), 0);
		ck_assert_int_eq(v, vals[i]);
		if (vals[i] > PD_MAX_POWER_UW) { /* above 1 MW: refused (issue 13 item 5), never wrapped */
			ck_assert_int_eq(pd_parse_power_uw(pd_fmt_power(vals[i], b, sizeof b), &v, &why), -1);
			ck_assert_str_eq(why, "more than 1000000W, the limit of every power value");
		} else {
			ck_assert_int_eq(pd_parse_power_uw(pd_fmt_power(vals[i], b, sizeof b), &v, &why), 0);
			ck_assert_int_eq(v, vals[i]);
		}
	}
	/* run lengths: checked, > 0, at most 30 days; bare seconds where allowed */
	int64_t ns;
	const char *why;
	ck_assert_int_eq(pd_parse_run_ns("2.5", true, &ns, &why), 0);
	ck_assert_int_eq(ns, 2500000000);
	ck_assert_int_eq(pd_parse_run_ns("2592000", true, &ns, &why), 0);
	ck_assert_int_eq(ns, PD_MAX_RUN_NS);
	ck_assert_int_eq(pd_parse_run_ns("2.5", false, &ns, &why), -1);
	ck_assert_int_eq(pd_parse_run_ns("18446744074", true, &ns, &why), -1);
	ck_assert_int_eq(pd_parse_run_ns("2592000.000000001s", true, &ns, &why), -1);
	ck_assert_str_eq(why, "longer than 2592000s (30 days), the longest run");
	ck_assert_int_eq(pd_parse_run_ns("0", true, &ns, &why), -1);
	ck_assert_str_eq(pd_fmt_double(0.3, b, sizeof b), "0.3");
}
END_TEST

static int load(const char *text, pd_diags *d, pd_ydoc *doc)
{
	pd_diags_init(d);
	return pd_yaml_load(doc, "t.yaml", text, strlen(text), d);
}

START_TEST(yaml_tree_positions)
{
	pd_diags d;
	pd_ydoc doc;
	ck_assert_int_eq(load("a: 1\nb:\n  - x\n  - {c: 2ms}\n", &d, &doc), 0);
	const pd_ynode *b = pd_ymap_get(doc.root, "b");
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(b->kind, PD_Y_SEQ);
	ck_assert_int_eq(b->n, 2);
	ck_assert_int_eq(b->items[1]->loc.line, 4);
	int64_t ns = 0;
	ck_assert_int_eq(pd_yget_duration(b->items[1], "c", true, false, &ns, &d), 1);
	ck_assert_int_eq(ns, 2000000);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
}
END_TEST

START_TEST(yaml_hostile_input)
{
	static const char *const bad[] = {
		"a: [1, 2\n",             /* truncated */
		"a: 1\na: 2\n",           /* duplicate key */
		"a: &x 1\nb: *x\n",       /* anchors/aliases */
		"a: !!binary aGk=\n",     /* tags */
		"\x01\x02\xff\xfe garbage", /* binary */
		"",                       /* empty */
		"a: 1\n---\nb: 2\n",      /* two documents */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pd_diags d;
		pd_ydoc doc;
		ck_assert_int_eq(load(bad[i], &d, &doc), -1);
		ck_assert_uint_ge(d.n, 1);
		ck_assert_ptr_eq(doc.root, NULL);
		pd_yaml_free(&doc);
		pd_diags_free(&d);
	}
	/* 100 levels of nesting are refused, not recursed into */
	char deep[512] = "";
	for (int i = 0; i < 100; i++)
		strcat(deep, "[");
	pd_diags d;
	pd_ydoc doc;
	ck_assert_int_eq(load(deep, &d, &doc), -1);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
}
END_TEST

/* n distinct keys "kI: I" in one mapping, then the line extra (or nothing). */
static char *many_keys(size_t n, const char *extra)
{
	pd_buf b;
	pd_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		pd_buf_printf(&b, "k%zu: %zu\n", i, i);
	pd_buf_printf(&b, "%s", extra);
	return b.data;
}

/* Issue 13 item 4: a mapping of 50 000 distinct keys took 8-18 s (pairwise duplicate check). Now keys
 * are bounded per mapping and checked with a hash: the limit itself parses, one more is refused with a
 * message, and a duplicate is still found (with its first line) among 10 000 keys, first or last.
 * Timing is the bench's (bench/yaml/run.sh), not this test's. */
START_TEST(yaml_many_keys)
{
	pd_diags d;
	pd_ydoc doc;
	char *text = many_keys(50000, "");
	ck_assert_int_eq(load(text, &d, &doc), -1);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_msg(strstr(d.v[0].msg, "more than 10000 keys in one mapping"), "%s", d.v[0].msg);
	ck_assert_int_eq(d.v[0].loc.line, PD_YAML_MAX_KEYS + 1);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	free(text);

	text = many_keys(PD_YAML_MAX_KEYS, "");
	ck_assert_int_eq(load(text, &d, &doc), 0);
	ck_assert_uint_eq(doc.root->n, PD_YAML_MAX_KEYS);
	ck_assert_str_eq(pd_ymap_get(doc.root, "k9999")->str, "9999");
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	free(text);

	static const char *const dups[] = {"k0: again\n", "k9998: again\n", "k4711: again\n"};
	static const int first_line[] = {1, 9999, 4712};
	for (size_t i = 0; i < 3; i++) {
		text = many_keys(PD_YAML_MAX_KEYS - 1, dups[i]);
		ck_assert_int_eq(load(text, &d, &doc), -1);
		ck_assert_uint_eq(d.n, 1);
		char want[64];
		snprintf(want, sizeof(want), "(first at line %d)", first_line[i]);
		ck_assert_msg(strstr(d.v[0].msg, "duplicate key") && strstr(d.v[0].msg, want), "%s", d.v[0].msg);
		pd_yaml_free(&doc);
		pd_diags_free(&d);
		free(text);
	}
}
END_TEST

START_TEST(yaml_emit_quotes_typed_strings)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", "true");
	pd_yemit_kv_str(y, "id", "123");
	pd_yemit_kv_duration(y, "period", 40000000);
	pd_yemit_map_end(y);
	pd_err e = {0};
	ck_assert_int_eq(pd_yemit_finish(y, &e), 0);
	ck_assert_str_eq(b.data, "name: \"true\"\nid: \"123\"\nperiod: 40ms\n");
	pd_buf_free(&b);
}
END_TEST

START_TEST(atomic_write_leaves_no_partial)
{
	const char *dir = pd_test_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/out.txt", dir);
	pd_err e = {0};
	ck_assert_int_eq(pd_write_file_atomic(path, "hello", 5, &e), 0);
	char *txt;
	size_t len;
	ck_assert_int_eq(pd_read_file(path, &txt, &len, 0, &e), 0);
	ck_assert_str_eq(txt, "hello");
	free(txt);
	snprintf(path, sizeof path, "%s/nodir/out.txt", dir);
	ck_assert_int_ne(pd_write_file_atomic(path, "x", 1, &e), 0);
	/* -o /dev/null: written into, never replaced by a regular file (the rename once did that) */
	struct stat st;
	ck_assert_int_eq(pd_write_file_atomic("/dev/null", "plan", 4, &e), 0);
	ck_assert_int_eq(lstat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	/* a named pipe: the reader gets the bytes, the pipe stays a pipe */
	snprintf(path, sizeof path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	int rd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_eq(pd_write_file_atomic(path, "abc", 3, &e), 0);
	char got[8] = {0};
	ck_assert_int_eq(read(rd, got, sizeof(got)), 3);
	ck_assert_str_eq(got, "abc");
	close(rd);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	/* a directory, or a link to a device: refused as usage, nothing replaced */
	e = (pd_err){0};
	ck_assert_int_eq(pd_write_file_atomic(dir, "x", 1, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "a directory"), "%s", e.msg);
	snprintf(path, sizeof path, "%s/null-link", dir);
	ck_assert_int_eq(symlink("/dev/null", path), 0);
	e = (pd_err){0};
	ck_assert_int_eq(pd_write_file_atomic(path, "x", 1, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "\"-\""), "%s", e.msg);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	/* a link to a file is replaced by the file, never written through */
	char target[512];
	snprintf(target, sizeof target, "%s/target.txt", dir);
	ck_assert_int_eq(pd_write_file_atomic(target, "keep", 4, &e), 0);
	snprintf(path, sizeof path, "%s/file-link", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(pd_write_file_atomic(path, "new", 3, &e), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(pd_read_file(target, &txt, &len, 0, &e), 0);
	ck_assert_str_eq(txt, "keep");
	free(txt);
}
END_TEST

START_TEST(cpulists_and_names)
{
	unsigned char set[8];
	ck_assert_int_eq(pd_parse_cpulist("0-2,5\n", set, sizeof(set)), 0);
	ck_assert(set[0] && set[1] && set[2] && !set[3] && !set[4] && set[5] && !set[6]);
	ck_assert_int_eq(pd_parse_cpulist("", set, sizeof(set)), 0);
	ck_assert(!memchr(set, 1, sizeof(set)));
	ck_assert_int_eq(pd_parse_cpulist("7", set, sizeof(set)), 0);
	ck_assert(set[7]);
	static const char *const bad[] = {"8", "3-1", "1,", "1,,2", "a", "-1", "1-", "1-x", "1;2", "0-99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(pd_parse_cpulist(bad[i], set, sizeof(set)) == -1, "'%s' accepted", bad[i]);
	ck_assert(pd_name_chars_ok("powerdag-pd_ns.1", false));
	ck_assert(!pd_name_chars_ok("", false));
	ck_assert(!pd_name_chars_ok("a/b", false));
	ck_assert(pd_name_chars_ok("/run/a-b", true));
	ck_assert(!pd_name_chars_ok("a b", true));
	ck_assert(!pd_name_chars_ok("x'y", false));
}
END_TEST

/* A loaded document's diagnostics outlive it: pd_diags_rebase repoints those from index `from` that
 * name the document's copy of the file at the caller's string, and nothing else (earlier ones,
 * other files, file-less ones; a NULL old name changes nothing). */
START_TEST(diags_rebase_only_the_documents)
{
	pd_diags d;
	pd_diags_init(&d);
	char doc_copy[] = "a.yaml", other[] = "b.yaml";
	const char *keep = "a.yaml (caller)";
	pd_diags_add(&d, (struct pd_loc){.file = doc_copy, .line = 1}, "before");
	size_t from = d.n;
	pd_diags_add(&d, (struct pd_loc){.file = doc_copy, .line = 2}, "mine");
	pd_diags_add(&d, (struct pd_loc){.file = other, .line = 3}, "other file");
	pd_diags_add(&d, (struct pd_loc){0}, "no file");
	pd_diags_rebase(&d, from, NULL, keep);
	ck_assert_ptr_eq(d.v[1].loc.file, doc_copy);
	ck_assert_ptr_null(d.v[3].loc.file);
	pd_diags_rebase(&d, from, doc_copy, keep);
	ck_assert_ptr_eq(d.v[0].loc.file, doc_copy);
	ck_assert_ptr_eq(d.v[1].loc.file, keep);
	ck_assert_ptr_eq(d.v[2].loc.file, other);
	ck_assert_ptr_null(d.v[3].loc.file);
	pd_diags_free(&d);
}
END_TEST

/* `deploy --cpu-map`: the order written is kept, ranges expand in it, nothing twice */
START_TEST(cpu_sequences_keep_their_order)
{
	int v[8];
	size_t n = 0;
	const char *why = "";
	ck_assert_int_eq(pd_parse_cpuseq("4-7,0-3", v, 8, &n, &why), 0);
	ck_assert_uint_eq(n, 8);
	static const int want[8] = {4, 5, 6, 7, 0, 1, 2, 3};
	for (size_t i = 0; i < 8; i++)
		ck_assert_int_eq(v[i], want[i]);
	ck_assert_int_eq(pd_parse_cpuseq("4095", v, 8, &n, &why), 0);
	ck_assert(n == 1 && v[0] == 4095);
	ck_assert_int_eq(pd_parse_cpuseq("2,1", v, 8, &n, &why), 0);
	ck_assert(n == 2 && v[0] == 2 && v[1] == 1);
	static const struct {
		const char *s, *why;
	} bad[] = {{"", "comma-separated"}, {"4096", "0-4095"},   {"1,1", "twice"},   {"0-3,2", "twice"},
		   {"3-1", "backwards"},    {"0-8", "too many"},       {"1,", "comma"},    {"1 ", "comma"},
		   {"-1", "comma"},         {"1;2", "comma"},          {"a", "comma"},     {"1-", "comma"},
		   {"99999999999999999999", "0-4095"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(pd_parse_cpuseq(bad[i].s, v, 8, &n, &why) == -1, "'%s' accepted", bad[i].s);
		ck_assert_msg(strstr(why, bad[i].why), "'%s': reason '%s'", bad[i].s, why);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("units");
	tcase_add_test(tc, durations_parse_exactly);
	tcase_add_test(tc, durations_reject_bad);
	tcase_add_test(tc, power_and_freq);
	tcase_add_test(tc, canonical_forms_round_trip);
	tcase_add_test(tc, yaml_tree_positions);
	tcase_add_test(tc, yaml_hostile_input);
	tcase_add_test(tc, yaml_many_keys);
	tcase_add_test(tc, yaml_emit_quotes_typed_strings);
	tcase_add_test(tc, atomic_write_leaves_no_partial);
	tcase_add_test(tc, cpulists_and_names);
	tcase_add_test(tc, cpu_sequences_keep_their_order);
	tcase_add_test(tc, diags_rebase_only_the_documents);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
