/* SPDX-License-Identifier: MIT */
/*
 * Run-log reader: header line (jansson) + framed records. Decoding stops at the first incomplete or
 * corrupt frame: everything before it is kept, the rest is counted as dropped bytes. This is what
 * makes a log cut by kill -9 or a full disk still useful.
 *
 * A log is input like any other (it comes from a board, and a CRC only proves the bytes were not
 * damaged, not that the writer was honest): a record whose CRC is good but whose index lies outside
 * the header's arrays, whose times lie outside +-PD_RUNLOG_MAX_ABS_NS or whose power values outside
 * +-PD_RUNLOG_MAX_ABS_UW is not kept, and counted (pd_runlog_invalid_records). Invariant kept by
 * decode() and relied upon by every reader (dump.c, reports/): every index in a kept record is in range
 * and any difference or sum of two kept times fits in int64_t.
 */
#include "runlog/pd_runlog.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define VEC(T)          \
	struct {        \
		T *v;   \
		size_t n, cap; \
	}

struct pd_runlog {
	char *header;
	json_t *hj;
	int version;
	uint64_t plan_hash;
	int64_t sample_hz;
	int64_t steal_period_ns, busy_period_ns, foreign_period_ns;
	int *busy_cpus; /* header busy_cpus: the CPUs whose busy time was sampled; NULL when absent */
	size_t n_busy_cpus;
	struct pd_runlog_task_info *tasks;
	size_t n_tasks;
	struct pd_runlog_dag_info *dags;
	size_t n_dags;
	struct pd_runlog_rail_info *rails;
	size_t n_rails;
	VEC(struct pd_runlog_instance_rec) inst;
	VEC(struct pd_runlog_job_rec) jobs;
	VEC(int64_t) pt;     /* power sample times */
	VEC(int64_t) pv;     /* n_rails per sample */
	VEC(struct pd_runlog_gap_rec) gaps;
	VEC(struct pd_runlog_opp_rec) opps;
	VEC(struct pd_runlog_starve_rec) starve;
	VEC(struct pd_runlog_steal_rec) steal;
	VEC(struct pd_runlog_busy_rec) busy;
	VEC(struct pd_runlog_foreign_rec) foreign;
	struct pd_runlog_end_rec end;
	bool has_end;
	uint64_t ring_drops;
	size_t records, dropped_bytes, unknown, invalid;
};

static int vec_grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, nc * sz);
	if (!p)
		return -1;
	*v = p;
	*cap = nc;
	return 0;
}
#define PUSH(vec, val)                                                                   \
	(vec_grow((void **)&(vec).v, &(vec).cap, (vec).n, sizeof(*(vec).v)) ? -1           \
									    : ((vec).v[(vec).n++] = (val), 0))

/* CRC-32 (reflected, polynomial 0xEDB88320), table-driven: the 256 entries are constant expressions
 * (8 shift/xor steps per entry, evaluated by the compiler), so there is no run-time initialisation. */
#define CRC_B(c) (((c) >> 1) ^ (0xEDB88320u & (0u - ((c) & 1u))))
#define CRC_8(c) CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(CRC_B(c))))))))
#define CRC_R4(i) CRC_8((uint32_t)(i)), CRC_8((uint32_t)(i) + 1), CRC_8((uint32_t)(i) + 2), CRC_8((uint32_t)(i) + 3)
#define CRC_R16(i) CRC_R4(i), CRC_R4((i) + 4), CRC_R4((i) + 8), CRC_R4((i) + 12)
#define CRC_R64(i) CRC_R16(i), CRC_R16((i) + 16), CRC_R16((i) + 32), CRC_R16((i) + 48)
static const uint32_t crc_table[256] = {CRC_R64(0), CRC_R64(64), CRC_R64(128), CRC_R64(192)};

uint32_t pd_runlog_crc32(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *c = p;
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *c++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static int64_t jint(json_t *o, const char *k, int64_t dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* Header busy_cpus (optional): the CPUs the agent sampled, each 0..PD_RUNLOG_MAX_CPU - 1, at most
 * PD_RUNLOG_MAX_CPU of them. Anything else is not a run log this reader trusts. */
static int read_busy_cpus(pd_runlog *r, const char *name, pd_err *e)
{
	json_t *a = json_object_get(r->hj, "busy_cpus");
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > PD_RUNLOG_MAX_CPU)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: header busy_cpus is not a list of at most %d CPUs", name,
				  PD_RUNLOG_MAX_CPU);
	r->busy_cpus = malloc((json_array_size(a) + 1) * sizeof(int));
	if (!r->busy_cpus)
		return pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *c = json_array_get(a, i);
		if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) >= PD_RUNLOG_MAX_CPU)
			return pd_err_set(e, PD_EXIT_USAGE, "%s: header busy_cpus[%zu] is not a CPU id 0..%d", name, i,
					  PD_RUNLOG_MAX_CPU - 1);
		r->busy_cpus[r->n_busy_cpus++] = (int)json_integer_value(c);
	}
	return 0;
}

static int parse_header(pd_runlog *r, pd_err *e, const char *name)
{
	json_error_t je;
	r->hj = json_loads(r->header, 0, &je);
	if (!r->hj || !json_is_object(r->hj))
		return pd_err_set(e, PD_EXIT_USAGE, "%s: not a run log (header: %s)", name, r->hj ? "not an object" : je.text);
	if (strcmp(jstr(r->hj, "format"), PD_RUNLOG_FORMAT) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: not a run log (format is not '%s')", name, PD_RUNLOG_FORMAT);
	r->version = (int)jint(r->hj, "version", 0);
	if (r->version < 1 || r->version > PD_RUNLOG_VERSION)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: run log version %d not supported (this reader knows %d)", name,
				  r->version, PD_RUNLOG_VERSION);
	r->plan_hash = strtoull(jstr(r->hj, "plan_hash"), NULL, 16);
	r->sample_hz = jint(r->hj, "sample_hz", 0);
	r->steal_period_ns = jint(r->hj, "steal_period_ns", 0); /* absent before the STEAL record */
	if (r->steal_period_ns < 0)
		r->steal_period_ns = 0;
	r->busy_period_ns = jint(r->hj, "busy_period_ns", 0); /* absent before the BUSY record */
	if (r->busy_period_ns < 0)
		r->busy_period_ns = 0;
	r->foreign_period_ns = jint(r->hj, "foreign_period_ns", 0); /* absent before the FOREIGN record */
	if (r->foreign_period_ns < 0 || r->foreign_period_ns > PD_RUNLOG_MAX_ABS_NS)
		r->foreign_period_ns = 0;
	if (read_busy_cpus(r, name, e))
		return e->code;
	json_t *a = json_object_get(r->hj, "tasks");
	r->n_tasks = json_array_size(a);
	r->tasks = calloc(r->n_tasks + 1, sizeof(*r->tasks));
	if (!r->tasks)
		return pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
	for (size_t i = 0; i < r->n_tasks; i++) {
		json_t *t = json_array_get(a, i);
		r->tasks[i] = (struct pd_runlog_task_info){jstr(t, "name"), jstr(t, "dag"), jstr(t, "work"),
						       (int)jint(t, "cpu", -1),   jint(t, "runtime_ns", 0),
						       jint(t, "deadline_ns", 0), jint(t, "period_ns", 0),
						       jint(t, "wcet_ns", 0), json_array_size(json_object_get(t, "preds"))};
	}
	a = json_object_get(r->hj, "dags");
	r->n_dags = json_array_size(a);
	r->dags = calloc(r->n_dags + 1, sizeof(*r->dags));
	if (!r->dags)
		return pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
	for (size_t i = 0; i < r->n_dags; i++) {
		json_t *d = json_array_get(a, i);
		r->dags[i] = (struct pd_runlog_dag_info){jstr(d, "name"), jint(d, "period_ns", 0), jint(d, "deadline_ns", 0)};
	}
	a = json_object_get(r->hj, "rails");
	r->n_rails = json_array_size(a);
	if (r->n_rails > PD_RUNLOG_MAX_RAILS) /* keeps a sum over the rails of one tick within int64_t */
		return pd_err_set(e, PD_EXIT_USAGE, "%s: the header lists %zu rails (at most %d)", name, r->n_rails,
				  PD_RUNLOG_MAX_RAILS);
	r->rails = calloc(r->n_rails + 1, sizeof(*r->rails));
	if (!r->rails)
		return pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
	for (size_t i = 0; i < r->n_rails; i++) {
		json_t *d = json_array_get(a, i);
		r->rails[i] = (struct pd_runlog_rail_info){jstr(d, "name"), jstr(d, "measures")};
	}
	return 0;
}

static bool t_ok(int64_t t) { return t >= -PD_RUNLOG_MAX_ABS_NS && t <= PD_RUNLOG_MAX_ABS_NS; }
static bool uw_ok(int64_t v) { return v == PD_RUNLOG_NO_VALUE || (v >= -PD_RUNLOG_MAX_ABS_UW && v <= PD_RUNLOG_MAX_ABS_UW); }

/* The checks behind the reader's invariant (top of file), one per record type. */
static bool instance_ok(const pd_runlog *r, const struct pd_runlog_instance_rec *x)
{
	return x->dag < r->n_dags && t_ok(x->release_ns) && t_ok(x->finish_ns) && t_ok(x->response_ns);
}
static bool job_ok(const pd_runlog *r, const struct pd_runlog_job_rec *x)
{
	return x->task < r->n_tasks && t_ok(x->release_ns) && t_ok(x->start_ns) && t_ok(x->end_ns) && t_ok(x->cpu_ns) &&
	       t_ok(x->demand_ns);
}
static bool gap_ok(const pd_runlog *r, const struct pd_runlog_gap_rec *x)
{
	return x->rail < r->n_rails && t_ok(x->start_ns) && t_ok(x->end_ns);
}
static bool opp_ok(const pd_runlog *r, const struct pd_runlog_opp_rec *x)
{
	return t_ok(x->t_ns) && x->freq_khz >= -1; /* the index is checked against the header by its reader */
}
static bool starve_ok(const pd_runlog *r, const struct pd_runlog_starve_rec *x)
{
	return t_ok(x->t_ns) && t_ok(x->waited_ns) && t_ok(x->boost_runtime_ns) && t_ok(x->boost_period_ns);
}
/* A positive delta over a forward interval (a sum of many is the reader's to saturate). */
static bool steal_ok(const pd_runlog *r, const struct pd_runlog_steal_rec *x)
{
	return t_ok(x->from_ns) && t_ok(x->t_ns) && x->from_ns <= x->t_ns && x->steal_ns > 0 && t_ok(x->steal_ns) &&
	       x->cpu >= 0;
}
/* The same limits as steal: a positive delta over a forward interval, a CPU id. */
static bool busy_ok(const pd_runlog *r, const struct pd_runlog_busy_rec *x)
{
	return t_ok(x->from_ns) && t_ok(x->t_ns) && x->from_ns <= x->t_ns && x->busy_ns > 0 && t_ok(x->busy_ns) &&
	       x->cpu >= 0;
}
/* A forward interval, a thread id, a CPU id and a reservation the kernel could hold
 * (0 < runtime <= deadline <= period). */
static bool foreign_ok(const pd_runlog *r, const struct pd_runlog_foreign_rec *x)
{
	return t_ok(x->from_ns) && t_ok(x->t_ns) && x->from_ns <= x->t_ns && x->tid > 0 && x->cpu >= 0 &&
	       x->cpu < PD_RUNLOG_MAX_CPU && x->runtime_ns > 0 && x->runtime_ns <= x->deadline_ns &&
	       x->deadline_ns <= x->period_ns && t_ok(x->period_ns);
}
static bool end_ok(const pd_runlog *r, const struct pd_runlog_end_rec *x)
{
	return t_ok(x->t_ns) && t_ok(x->sampler_cpu_ns) && t_ok(x->writer_cpu_ns) && t_ok(x->process_cpu_ns);
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* One record; returns -1 only on out-of-memory. Short payloads of known types count as unknown,
 * records that break the invariant (top of file) as invalid. */
static int decode(pd_runlog *r, uint16_t type, const unsigned char *p, uint32_t len)
{
#define TAKE(T, vec, ok)                           \
	do {                                       \
		T x;                               \
		if (len < sizeof(x))               \
			goto unknown;              \
		memcpy(&x, p, sizeof(x));          \
		if (!ok(r, &x))                    \
			goto invalid;              \
		if (PUSH(vec, x))                  \
			return -1;                 \
	} while (0)
	switch (type) {
	case PD_RUNLOG_INSTANCE:
		TAKE(struct pd_runlog_instance_rec, r->inst, instance_ok);
		return 0;
	case PD_RUNLOG_JOB:
		TAKE(struct pd_runlog_job_rec, r->jobs, job_ok);
		return 0;
	case PD_RUNLOG_GAP:
		TAKE(struct pd_runlog_gap_rec, r->gaps, gap_ok);
		return 0;
	case PD_RUNLOG_OPP:
		TAKE(struct pd_runlog_opp_rec, r->opps, opp_ok);
		return 0;
	case PD_RUNLOG_STARVE:
		TAKE(struct pd_runlog_starve_rec, r->starve, starve_ok);
		return 0;
	case PD_RUNLOG_STEAL:
		TAKE(struct pd_runlog_steal_rec, r->steal, steal_ok);
		return 0;
	case PD_RUNLOG_BUSY:
		TAKE(struct pd_runlog_busy_rec, r->busy, busy_ok);
		return 0;
	case PD_RUNLOG_FOREIGN:
		TAKE(struct pd_runlog_foreign_rec, r->foreign, foreign_ok);
		return 0;
	case PD_RUNLOG_END: {
		struct pd_runlog_end_rec x;
		if (len < sizeof(x))
			goto unknown;
		memcpy(&x, p, sizeof(x));
		if (!end_ok(r, &x))
			goto invalid;
		r->end = x;
		r->has_end = true;
		return 0;
	}
	case PD_RUNLOG_DROP: {
		struct pd_runlog_drop_rec d;
		if (len < sizeof(d))
			goto unknown;
		memcpy(&d, p, sizeof(d));
		r->ring_drops = add_sat(r->ring_drops, d.count);
		return 0;
	}
	case PD_RUNLOG_POWER: {
		struct pd_runlog_power_rec h;
		if (len < sizeof(h))
			goto unknown;
		memcpy(&h, p, sizeof(h));
		if ((uint64_t)h.n * 8 + sizeof(h) > len)
			goto unknown;
		if (h.n == 0 || (uint64_t)h.first_rail + h.n > r->n_rails || !t_ok(h.t_ns))
			goto invalid;
		for (uint32_t k = 0; k < h.n; k++) {
			int64_t v;
			memcpy(&v, p + sizeof(h) + (size_t)k * 8, 8);
			if (!uw_ok(v))
				goto invalid;
		}
		/* a sample tick starts with rail 0; later records of the same tick continue the row */
		if (h.first_rail == 0 || r->pt.n == 0) {
			if (PUSH(r->pt, h.t_ns))
				return -1;
			for (size_t k = 0; k < r->n_rails; k++)
				if (PUSH(r->pv, (int64_t)PD_RUNLOG_NO_VALUE))
					return -1;
		}
		int64_t *row = r->pv.v + (r->pt.n - 1) * r->n_rails;
		memcpy(row + h.first_rail, p + sizeof(h), (size_t)h.n * 8);
		return 0;
	}
	default:
		break;
	}
unknown:
	r->unknown++;
	return 0;
invalid:
	r->invalid++;
	return 0;
#undef TAKE
}

pd_runlog *pd_runlog_from_bytes(const void *data, size_t len, const char *name, pd_err *e)
{
	const unsigned char *b = data;
	const unsigned char *nl = memchr(b, '\n', len);
	if (!nl) {
		pd_err_set(e, PD_EXIT_USAGE, "%s: not a run log (no header line)", name);
		return NULL;
	}
	pd_runlog *r = calloc(1, sizeof(*r));
	if (!r) {
		pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
		return NULL;
	}
	size_t hl = (size_t)(nl - b);
	r->header = malloc(hl + 1);
	if (!r->header) {
		pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
		pd_runlog_free(r);
		return NULL;
	}
	memcpy(r->header, b, hl);
	r->header[hl] = '\0';
	if (parse_header(r, e, name)) {
		pd_runlog_free(r);
		return NULL;
	}
	size_t off = hl + 1;
	while (off < len) {
		uint32_t plen;
		uint16_t type;
		if (len - off < 12)
			break;
		memcpy(&plen, b + off, 4);
		memcpy(&type, b + off + 4, 2);
		if (plen > PD_RUNLOG_MAX_PAYLOAD || len - off - 12 < plen)
			break;
		uint32_t crc;
		memcpy(&crc, b + off + 8 + plen, 4);
		if (pd_runlog_crc32(0, b + off, 8 + plen) != crc)
			break;
		if (decode(r, type, b + off + 8, plen)) {
			pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
			pd_runlog_free(r);
			return NULL;
		}
		r->records++;
		off += 12 + plen;
	}
	r->dropped_bytes = len - off;
	return r;
}

pd_runlog *pd_runlog_open(const char *path, pd_err *e)
{
	char *data;
	size_t len;
	if (pd_read_file(path, &data, &len, (size_t)4 << 30, e))
		return NULL;
	pd_runlog *r = pd_runlog_from_bytes(data, len, path, e);
	free(data);
	return r;
}

void pd_runlog_free(pd_runlog *r)
{
	if (!r)
		return;
	free(r->inst.v);
	free(r->jobs.v);
	free(r->pt.v);
	free(r->pv.v);
	free(r->gaps.v);
	free(r->opps.v);
	free(r->starve.v);
	free(r->steal.v);
	free(r->busy.v);
	free(r->foreign.v);
	free(r->busy_cpus);
	free(r->tasks);
	free(r->dags);
	free(r->rails);
	json_decref(r->hj);
	free(r->header);
	free(r);
}

const char *pd_runlog_header_json(const pd_runlog *r) { return r->header; }
int pd_runlog_version(const pd_runlog *r) { return r->version; }
uint64_t pd_runlog_plan_hash(const pd_runlog *r) { return r->plan_hash; }
int64_t pd_runlog_sample_hz(const pd_runlog *r) { return r->sample_hz; }
const char *pd_runlog_meta(const pd_runlog *r, const char *key)
{
	return json_string_value(json_object_get(r->hj, key));
}
size_t pd_runlog_task_count(const pd_runlog *r) { return r->n_tasks; }
const struct pd_runlog_task_info *pd_runlog_task(const pd_runlog *r, size_t i) { return &r->tasks[i]; }
size_t pd_runlog_dag_count(const pd_runlog *r) { return r->n_dags; }
const struct pd_runlog_dag_info *pd_runlog_dag(const pd_runlog *r, size_t i) { return &r->dags[i]; }
size_t pd_runlog_rail_count(const pd_runlog *r) { return r->n_rails; }
const struct pd_runlog_rail_info *pd_runlog_rail(const pd_runlog *r, size_t i) { return &r->rails[i]; }
size_t pd_runlog_instance_count(const pd_runlog *r) { return r->inst.n; }
const struct pd_runlog_instance_rec *pd_runlog_instance(const pd_runlog *r, size_t i) { return &r->inst.v[i]; }
size_t pd_runlog_job_count(const pd_runlog *r) { return r->jobs.n; }
const struct pd_runlog_job_rec *pd_runlog_job(const pd_runlog *r, size_t i) { return &r->jobs.v[i]; }
size_t pd_runlog_power_count(const pd_runlog *r) { return r->pt.n; }
int64_t pd_runlog_power_t(const pd_runlog *r, size_t i) { return r->pt.v[i]; }
int64_t pd_runlog_power_uw(const pd_runlog *r, size_t i, size_t rail) { return r->pv.v[i * r->n_rails + rail]; }
size_t pd_runlog_gap_count(const pd_runlog *r) { return r->gaps.n; }
const struct pd_runlog_gap_rec *pd_runlog_gap(const pd_runlog *r, size_t i) { return &r->gaps.v[i]; }
size_t pd_runlog_opp_count(const pd_runlog *r) { return r->opps.n; }
const struct pd_runlog_opp_rec *pd_runlog_opp(const pd_runlog *r, size_t i) { return &r->opps.v[i]; }
size_t pd_runlog_starve_count(const pd_runlog *r) { return r->starve.n; }
const struct pd_runlog_starve_rec *pd_runlog_starve(const pd_runlog *r, size_t i) { return &r->starve.v[i]; }
size_t pd_runlog_steal_count(const pd_runlog *r) { return r->steal.n; }
const struct pd_runlog_steal_rec *pd_runlog_steal(const pd_runlog *r, size_t i) { return &r->steal.v[i]; }
int64_t pd_runlog_steal_period_ns(const pd_runlog *r) { return r->steal_period_ns; }
size_t pd_runlog_busy_count(const pd_runlog *r) { return r->busy.n; }
const struct pd_runlog_busy_rec *pd_runlog_busy(const pd_runlog *r, size_t i) { return &r->busy.v[i]; }
int64_t pd_runlog_busy_period_ns(const pd_runlog *r) { return r->busy_period_ns; }
size_t pd_runlog_foreign_count(const pd_runlog *r) { return r->foreign.n; }
const struct pd_runlog_foreign_rec *pd_runlog_foreign(const pd_runlog *r, size_t i) { return &r->foreign.v[i]; }
int64_t pd_runlog_foreign_period_ns(const pd_runlog *r) { return r->foreign_period_ns; }
const int *pd_runlog_busy_cpus(const pd_runlog *r, size_t *n)
{
	*n = r->n_busy_cpus;
	return r->busy_cpus;
}
const struct pd_runlog_end_rec *pd_runlog_end(const pd_runlog *r) { return r->has_end ? &r->end : NULL; }
uint64_t pd_runlog_ring_drops(const pd_runlog *r) { return r->ring_drops; }
size_t pd_runlog_records(const pd_runlog *r) { return r->records; }
size_t pd_runlog_dropped_bytes(const pd_runlog *r) { return r->dropped_bytes; }
size_t pd_runlog_unknown_records(const pd_runlog *r) { return r->unknown; }
size_t pd_runlog_invalid_records(const pd_runlog *r) { return r->invalid; }
