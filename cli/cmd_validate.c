/* SPDX-License-Identifier: MIT */
/*
 * powerdag validate FILE... - validates DAG-set, platform and plan files. The kind of each file comes
 * from its top-level key; every problem of every file is reported as file:line:col: error: ...
 * (stderr), each valid file as "FILE: ok (KIND)" (stdout). Exit 0 when all are valid, 2 otherwise.
 * With --json, one JSON object on stdout instead: {"valid": bool, "files": [{"file", "kind",
 * "valid", "errors": [{"file", "line", "col", "message"}]}]}.
 */
#include "cli/cli_impl.h"
#include "plan/pd_plan.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum pd_file_kind k)
{
	switch (k) {
	case PD_FILE_DAGS:
		return "dags";
	case PD_FILE_PLATFORM:
		return "platform";
	case PD_FILE_PLAN:
		return "plan";
	default:
		return "unknown";
	}
}

/* The model of one kind parsed from the value of its top-level key, then dropped: validation only. */
static void parse_kind(enum pd_file_kind kind, const pd_ynode *node, pd_diags *d)
{
	switch (kind) {
	case PD_FILE_DAGS:
		pd_dags_free(pd_dags_from_node(node, d));
		break;
	case PD_FILE_PLATFORM:
		pd_platform_free(pd_platform_from_node(node, d));
		break;
	case PD_FILE_PLAN:
		pd_plan_free(pd_plan_from_node(node, d));
		break;
	default:
		break;
	}
}

/* Reads path once (so that "-" works), detects its kind and runs the parser of that kind; every
 * problem lands in d, located in path. */
static enum pd_file_kind validate_file(const char *path, pd_diags *d)
{
	pd_ydoc doc = {0};
	pd_err e = {0};
	char *text = NULL;
	size_t len = 0, first = d->n;
	enum pd_file_kind kind = PD_FILE_UNKNOWN;
	if (pd_read_file(path, &text, &len, 0, &e)) {
		/* the message already starts with the path; the location says it once */
		size_t n = strlen(path);
		const char *msg = strncmp(e.msg, path, n) == 0 && strncmp(e.msg + n, ": ", 2) == 0 ? e.msg + n + 2 : e.msg;
		pd_diags_add(d, (struct pd_loc){path, 0, 0}, "%s", msg);
		return kind;
	}
	if (pd_yaml_load(&doc, path, text, len, d) == 0)
		kind = pd_plan_file_kind_of(&doc, d);
	if (kind != PD_FILE_UNKNOWN) {
		const char *key = kind_name(kind);
		const char *const allowed[] = {key, NULL};
		pd_ymap_check_keys(doc.root, allowed, "the top level", d);
		parse_kind(kind, pd_ymap_get(doc.root, key), d);
	}
	/* the document's copy of the name dies with it: point its diagnostics at path */
	for (size_t i = first; i < d->n; i++)
		if (!d->v[i].loc.file || d->v[i].loc.file == doc.file)
			d->v[i].loc.file = path;
	pd_yaml_free(&doc);
	free(text);
	return kind;
}

static json_t *file_json(const char *path, enum pd_file_kind kind, const pd_diags *d)
{
	json_t *errs = json_array();
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(errs, json_pack("{s:s, s:i, s:i, s:s}", "file", d->v[i].loc.file ? d->v[i].loc.file : path,
						      "line", d->v[i].loc.line, "col", d->v[i].loc.col, "message",
						      d->v[i].msg));
	bool ok = d->n == 0 && d->dropped == 0;
	return json_pack("{s:s, s:s, s:b, s:o, s:I}", "file", path, "kind", kind_name(kind), "valid", ok, "errors", errs,
			 "errors_not_shown", (json_int_t)d->dropped);
}

static int run(int argc, char **argv)
{
	bool json = false, opts = true;
	int n_files = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0)
			opts = false;
		else if (opts && strcmp(argv[i], "--json") == 0)
			json = true;
		else if (opts && argv[i][0] == '-' && argv[i][1] != '\0')
			return pd_cli_fail("validate", PD_EXIT_USAGE, "unknown option '%s' (see powerdag validate --help)",
					   argv[i]);
		else
			n_files++;
	}
	if (n_files == 0)
		return pd_cli_fail("validate", PD_EXIT_USAGE, "no FILE given (usage: powerdag validate [--json] FILE...)");
	json_t *files = json ? json_array() : NULL;
	opts = true;
	for (int i = 1; i < argc; i++) {
		if (opts && (strcmp(argv[i], "--") == 0 || strcmp(argv[i], "--json") == 0)) {
			opts = strcmp(argv[i], "--") != 0;
			continue;
		}
		pd_diags d;
		pd_diags_init(&d);
		char name[1024]; /* the file name as typed, terminal-safe */
		enum pd_file_kind kind = validate_file(argv[i], &d);
		bool ok = d.n == 0 && d.dropped == 0;
		bad += !ok;
		if (json)
			json_array_append_new(files, file_json(argv[i], kind, &d));
		else if (ok)
			printf("%s: ok (%s)\n", pd_esc(argv[i], name, sizeof(name)), kind_name(kind));
		else
			pd_diags_print(&d, stderr);
		pd_diags_free(&d);
	}
	if (json) {
		json_t *root = json_pack("{s:b, s:o}", "valid", bad == 0, "files", files);
		char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(root);
	}
	fflush(stdout);
	return bad ? PD_EXIT_USAGE : PD_EXIT_OK;
}

const struct pd_cmd pd_cmd_validate = {
	"validate", run, "validate DAG-set, platform and plan files",
	"validate [--json] FILE...\n\n"
	"Detects the kind of each FILE from its top-level key (dags:, platform:, plan:) and checks it\n"
	"against docs/FORMATS.md. Prints every problem as FILE:LINE:COL: error: MESSAGE on stderr and\n"
	"FILE: ok (KIND) on stdout for each valid file. \"-\" reads standard input.\n\n"
	"options:\n"
	"  --json   one JSON object on stdout: {valid, files: [{file, kind, valid, errors: [...]}]}\n\n"
	"exit status: 0 all files valid, 2 any error (or bad usage)."};
