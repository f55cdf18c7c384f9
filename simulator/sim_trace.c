/* SPDX-License-Identifier: MIT */
/*
 * sim_trace.c - an optional Chrome / Perfetto JSON trace ("traceEvents", complete "X" slices) of a
 * time window: one track per CPU (tasks, background work, fair server) and one per accelerator
 * server (jobs, reconfigurations). Slices are clipped to the window; memory grows with the window,
 * not with the run, and is capped by trace_max_events (the trace is then marked truncated).
 */
#include "simulator/sim_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void sim_trace_seg(struct sim *s, int32_t track, int32_t what, uint64_t seq, int64_t start, int64_t end)
{
	if (start < s->prm.trace_from_ns)
		start = s->prm.trace_from_ns;
	if (end > s->prm.trace_to_ns)
		end = s->prm.trace_to_ns;
	if (end <= start)
		return;
	if (s->n_segs >= s->prm.trace_max_events) {
		s->trace_truncated = true;
		return;
	}
	if (s->n_segs == s->cap_segs) {
		size_t nc = s->cap_segs ? 2 * s->cap_segs : 4096;
		struct sim_seg *n = realloc(s->segs, nc * sizeof(*n));
		if (!n) {
			s->trace_truncated = true;
			return;
		}
		s->segs = n;
		s->cap_segs = nc;
	}
	s->segs[s->n_segs++] = (struct sim_seg){start, end, track, what, seq};
}

static json_t *meta(const char *what, int pid, int tid, const char *name)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", what, "ph", "M", "pid", pid, "tid", tid, "args",
			 "name", name);
}

static void track_names(const struct sim *s, json_t *ev)
{
	json_array_append_new(ev, meta("process_name", 1, 0, "CPUs"));
	json_array_append_new(ev, meta("process_name", 2, 0, "accelerators"));
	for (size_t c = 0; c < s->n_cores; c++) {
		char b[32];
		snprintf(b, sizeof(b), "cpu%d", s->cores[c].cpu);
		json_array_append_new(ev, meta("thread_name", 1, (int)c, b));
	}
	for (size_t v = 0; v < s->n_servers; v++) {
		char b[160];
		const struct sim_server *sv = &s->servers[v];
		if (sv->gpu)
			snprintf(b, sizeof(b), "gpu:%s", sv->st.name);
		else
			snprintf(b, sizeof(b), "fpga:%s/%d", sv->st.name, sv->slot);
		json_array_append_new(ev, meta("thread_name", 2, (int)v, b));
	}
}

static json_t *slice(const struct sim *s, const struct sim_seg *g)
{
	char name[256];
	const char *cat;
	if (g->what >= 0) {
		const struct sim_task *t = &s->tasks[g->what];
		snprintf(name, sizeof(name), "%s/%s #%llu", s->dags[t->dag].name, t->name, (unsigned long long)g->seq);
		cat = t->kind == PD_PLACE_CPU ? "deadline" : "accel";
	} else {
		snprintf(name, sizeof(name), "%s", g->what == -1 ? "background" : g->what == -2 ? "fair server" : "reconfiguration");
		cat = g->what == -3 ? "reconfig" : "fair";
	}
	bool cpu = (size_t)g->track < s->n_cores;
	int tid = cpu ? g->track : g->track - (int)s->n_cores;
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", cat, "ph", "X", "ts",
			 (double)g->start / 1e3, "dur", (double)(g->end - g->start) / 1e3, "pid", cpu ? 1 : 2, "tid", tid);
}

int sim_trace_write(const struct sim *s, const char *path, pd_err *e)
{
	json_t *ev = json_array();
	if (!ev)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	track_names(s, ev);
	for (size_t i = 0; i < s->n_segs; i++)
		json_array_append_new(ev, slice(s, &s->segs[i]));
	json_t *root = json_pack("{s:o, s:s, s:{s:b}}", "traceEvents", ev, "displayTimeUnit", "ms", "otherData",
				 "truncated", s->trace_truncated);
	char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	if (!text)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory while writing the trace");
	int rc = pd_write_file_atomic(path, text, strlen(text), e);
	free(text);
	return rc ? -1 : 0;
}
