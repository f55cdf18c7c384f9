/* SPDX-License-Identifier: MIT */
/*
 * Deterministic YAML writer over libyaml's emitter. Strings that a YAML reader would take for a
 * number, a boolean or null are double-quoted, so other tools read them back as strings too.
 * Errors are latched: the first failure stops emission and is reported by pd_yemit_finish.
 */
#include "core/pd_core.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct pd_yemit {
	yaml_emitter_t em;
	pd_buf *out;
	int failed;
};

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	pd_buf *b = data;
	return pd_buf_append(b, buffer, size) == 0;
}

static void emit(pd_yemit *y, yaml_event_t *ev)
{
	if (y->failed) {
		yaml_event_delete(ev);
		return;
	}
	if (!yaml_emitter_emit(&y->em, ev))
		y->failed = 1;
}

pd_yemit *pd_yemit_new(pd_buf *out)
{
	pd_yemit *y = calloc(1, sizeof(*y));
	yaml_event_t ev;
	if (!y)
		return NULL;
	y->out = out;
	if (!yaml_emitter_initialize(&y->em)) {
		free(y);
		return NULL;
	}
	yaml_emitter_set_output(&y->em, write_handler, out);
	yaml_emitter_set_unicode(&y->em, 1);
	yaml_emitter_set_width(&y->em, 4096);
	yaml_emitter_set_indent(&y->em, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	emit(y, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	emit(y, &ev);
	return y;
}

int pd_yemit_finish(pd_yemit *y, pd_err *e)
{
	yaml_event_t ev;
	int rc = 0;
	yaml_document_end_event_initialize(&ev, 1);
	emit(y, &ev);
	yaml_stream_end_event_initialize(&ev);
	emit(y, &ev);
	if (y->failed)
		rc = pd_err_set(e, PD_EXIT_ENV, "YAML emitter: %s", y->em.problem ? y->em.problem : "failed");
	yaml_emitter_delete(&y->em);
	free(y);
	return rc;
}

void pd_yemit_map_begin(pd_yemit *y, bool flow)
{
	yaml_event_t ev;
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
	emit(y, &ev);
}

void pd_yemit_map_end(pd_yemit *y)
{
	yaml_event_t ev;
	yaml_mapping_end_event_initialize(&ev);
	emit(y, &ev);
}

void pd_yemit_seq_begin(pd_yemit *y, bool flow)
{
	yaml_event_t ev;
	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
	emit(y, &ev);
}

void pd_yemit_seq_end(pd_yemit *y)
{
	yaml_event_t ev;
	yaml_sequence_end_event_initialize(&ev);
	emit(y, &ev);
}

static void scalar(pd_yemit *y, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style)) {
		y->failed = 1;
		return;
	}
	emit(y, &ev);
}

/* Would a YAML 1.1/1.2 core-schema reader resolve this plain scalar to a non-string? */
static bool looks_typed(const char *s)
{
	static const char *const words[] = {"", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
					    "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
					    "off", "Off", "OFF", "y", "Y", "n", "N", NULL};
	for (const char *const *w = words; *w; w++)
		if (strcmp(s, *w) == 0)
			return true;
	char *end;
	strtod(s, &end);
	return end != s && *end == '\0';
}

void pd_yemit_str(pd_yemit *y, const char *s)
{
	scalar(y, s ? s : "", looks_typed(s ? s : "") ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
}

void pd_yemit_key(pd_yemit *y, const char *k)
{
	pd_yemit_str(y, k);
}

void pd_yemit_int(pd_yemit *y, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%lld", (long long)v);
	scalar(y, b, YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_double(pd_yemit *y, double v)
{
	char b[40];
	scalar(y, pd_fmt_double(v, b, sizeof(b)), YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_bool(pd_yemit *y, bool v)
{
	scalar(y, v ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_duration(pd_yemit *y, int64_t ns)
{
	char b[40];
	scalar(y, pd_fmt_duration(ns, b, sizeof(b)), YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_power(pd_yemit *y, int64_t uw)
{
	char b[40];
	scalar(y, pd_fmt_power(uw, b, sizeof(b)), YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_freq(pd_yemit *y, int64_t khz)
{
	char b[40];
	scalar(y, pd_fmt_freq(khz, b, sizeof(b)), YAML_PLAIN_SCALAR_STYLE);
}

void pd_yemit_kv_str(pd_yemit *y, const char *k, const char *v) { pd_yemit_key(y, k); pd_yemit_str(y, v); }
void pd_yemit_kv_int(pd_yemit *y, const char *k, int64_t v) { pd_yemit_key(y, k); pd_yemit_int(y, v); }
void pd_yemit_kv_double(pd_yemit *y, const char *k, double v) { pd_yemit_key(y, k); pd_yemit_double(y, v); }
void pd_yemit_kv_bool(pd_yemit *y, const char *k, bool v) { pd_yemit_key(y, k); pd_yemit_bool(y, v); }
void pd_yemit_kv_duration(pd_yemit *y, const char *k, int64_t ns) { pd_yemit_key(y, k); pd_yemit_duration(y, ns); }
void pd_yemit_kv_power(pd_yemit *y, const char *k, int64_t uw) { pd_yemit_key(y, k); pd_yemit_power(y, uw); }
void pd_yemit_kv_freq(pd_yemit *y, const char *k, int64_t khz) { pd_yemit_key(y, k); pd_yemit_freq(y, khz); }
