/* SPDX-License-Identifier: MIT */
/*
 * pd_core.h - the foundation every powerdag module stands on:
 *
 *   - pd_err:    an error as a value (code, message, file:line:col where input is involved);
 *   - pd_diags:  a list of diagnostics, so that a validator reports *all* problems, not only the first;
 *   - pd_arena:  a bump allocator that owns every string and array of one model (dag set, platform,
 *                plan), so that a model is freed with one call on every path;
 *   - units:     durations (ns), power (uW) and frequency (kHz) with their units (docs/FORMATS.md section 1.1), exact decimal
 *                parsing with overflow checks, and the canonical textual form used when writing;
 *   - pd_yaml:   a libyaml document loaded into a tree of nodes that remember their line and column,
 *                typed getters that record diagnostics, and a deterministic emitter.
 *
 * Units are part of every name: _ns (int64 nanoseconds), _uw (int64 microwatts), _khz (int64 kHz).
 * No global mutable state lives here.
 */
#ifndef PD_CORE_H
#define PD_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- exit codes (README "Exit codes everywhere", docs/powerdag.1) */
enum pd_exit {
	PD_EXIT_OK = 0,
	PD_EXIT_FAIL = 1,  /* the checked property does not hold */
	PD_EXIT_USAGE = 2, /* bad usage or bad input; nothing written */
	PD_EXIT_ENV = 3,   /* environment: board, permission, kernel feature, admission */
};

/* ---------------------------------------------------------------- source locations */
struct pd_loc {
	const char *file; /* borrowed: lives as long as the document / model that holds it */
	int line;         /* 1-based; 0 = unknown */
	int col;          /* 1-based; 0 = unknown */
};

/* ---------------------------------------------------------------- errors as values */
#define PD_ERR_MSG 512
typedef struct pd_err {
	int code; /* 0 = ok; otherwise a PD_EXIT_* value describing the class */
	char msg[PD_ERR_MSG];
} pd_err;

/* Set *e (when non-NULL) and return code; "where" may be NULL. */
int pd_err_set(pd_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pd_err_setloc(pd_err *e, int code, struct pd_loc where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------- diagnostics */
struct pd_diag {
	struct pd_loc loc;
	char *msg;
};

typedef struct pd_diags {
	struct pd_diag *v;
	size_t n, cap;
	size_t limit; /* stop recording after this many (0 = 1000); counting continues */
	size_t dropped;
} pd_diags;

void pd_diags_init(pd_diags *d);
void pd_diags_free(pd_diags *d);
void pd_diags_add(pd_diags *d, struct pd_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pd_diags_vadd(pd_diags *d, struct pd_loc loc, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* Prints "file:line:col: error: msg" per diagnostic, in the order recorded. */
void pd_diags_print(const pd_diags *d, FILE *out);
/* Diagnostics made while a document was loaded name the document's copy of its file name, which
 * dies with the document: points those from index `from` on (the ones whose file is old_file, when
 * not NULL) at new_file, a string the caller keeps as long as the diagnostics. */
void pd_diags_rebase(pd_diags *d, size_t from, const char *old_file, const char *new_file);
/* Copies the first diagnostic into e (code PD_EXIT_USAGE) and returns it; returns 0 when empty. */
int pd_diags_to_err(const pd_diags *d, pd_err *e);

/* ---------------------------------------------------------------- arena */
typedef struct pd_arena pd_arena;

pd_arena *pd_arena_new(void);
void pd_arena_free(pd_arena *a);
/* Zeroed memory, aligned for any type; aborts never: returns NULL only when malloc does. */
void *pd_arena_alloc(pd_arena *a, size_t size);
/* Zeroed array of n elements of size sz; NULL on overflow. */
void *pd_arena_calloc(pd_arena *a, size_t n, size_t sz);
char *pd_arena_strdup(pd_arena *a, const char *s);
char *pd_arena_printf(pd_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- growable byte buffer */
typedef struct pd_buf {
	char *data; /* NUL-terminated */
	size_t len, cap;
} pd_buf;

void pd_buf_init(pd_buf *b);
void pd_buf_free(pd_buf *b);
int pd_buf_append(pd_buf *b, const void *p, size_t n);
int pd_buf_printf(pd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes data to path atomically (temp file in the same directory, fsync, rename), so that a
 * failure never leaves a half-written output. "-" writes to stdout; a character device or pipe
 * (/dev/null) is written into, never replaced; a directory, block device, socket or a link to
 * anything but a file is refused (PD_EXIT_USAGE). */
int pd_write_file_atomic(const char *path, const void *data, size_t len, pd_err *e);
/* Reads a whole file (max_bytes cap; 0 = 64 MiB); "-" reads stdin. Caller frees *out. */
int pd_read_file(const char *path, char **out, size_t *len, size_t max_bytes, pd_err *e);
/* The machine a file's ELF header names, as uname -m spells it ("x86_64", "aarch64", "arm", "i386",
 * "riscv64", "unknown"), NULL when path is no ELF file: the deployer picks the board's agent by it,
 * the VM twin its guest's powerdag. */
const char *pd_elf_arch(const char *path);

/* Output directories a privileged run writes into (deploy RUNDIR). A directory that someone else can
 * write to lets them plant a symlink where we are about to create a file, so: path is created (0755)
 * when missing; an existing one must be a real directory (not a link), owned by this user, not
 * writable by group or others, and empty unless allow_nonempty. Returns an O_DIRECTORY fd in *dirfd
 * (close it); every file is then created relative to it. Refusals are PD_EXIT_USAGE, nothing written;
 * *created tells whether this call made the directory (so a caller can remove it again). */
int pd_dir_open_private(const char *path, bool allow_nonempty, int *dirfd, bool *created, pd_err *e);
/* Creates name (one path component) in dirfd: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644. Returns the fd
 * open for writing, or -1 with e set (PD_EXIT_ENV; an existing file or link is EEXIST). */
int pd_open_new_at(int dirfd, const char *name, pd_err *e);
/* pd_write_file_atomic relative to dirfd: a temp file created there with O_EXCL, then renameat() over
 * name, which replaces a link planted at name instead of following it. */
int pd_write_file_at(int dirfd, const char *name, const void *data, size_t len, pd_err *e);

/* ---------------------------------------------------------------- terminal-safe text */
/* Appends s to out with everything a terminal could interpret escaped: C0 controls and DEL as \n,
 * \t, \r, \e or \xNN, C1 controls (U+0080..U+009F) as \u{NN}, bytes that are not valid UTF-8 as
 * \xNN, and a backslash as \\ (so the escaped text reads back unambiguously). Valid printable UTF-8
 * is kept. n = (size_t)-1 means strlen(s). The one escaping path for text that came from files,
 * boards or the command line and goes to a terminal or a text report. */
int pd_esc_append(pd_buf *out, const char *s, size_t n);
/* The same, keeping line feeds: for multi-line messages whose lines are ours (each value in them
 * still cannot move the cursor, change colours or retitle the terminal). */
int pd_esc_append_lines(pd_buf *out, const char *s, size_t n);
/* The escaped text in a caller buffer (truncated to fit, never in the middle of an escape). */
const char *pd_esc(const char *s, char *buf, size_t n);
/* fputs of the text escaped with pd_esc_append_lines (messages, logs). */
int pd_esc_fputs(const char *s, FILE *f);

/* ---------------------------------------------------------------- units */
#define PD_NS_PER_US 1000LL
#define PD_NS_PER_MS 1000000LL
#define PD_NS_PER_S 1000000000LL

/* Parse "250us", "2.5ms", "40ms", "1s", "100ns". Exact decimal arithmetic: a value that is not a
 * whole number of ns, lacks a unit, overflows int64 ns, or is negative is rejected with a message
 * in why (static string). Zero is accepted here; callers decide whether zero is allowed. */
int pd_parse_duration_ns(const char *s, int64_t *out, const char **why);
/* "350mW", "1.2W", "500uW" -> microwatts, at most PD_MAX_POWER_UW. */
int pd_parse_power_uw(const char *s, int64_t *out, const char **why);
/* Largest power any file or option may state (1 MW, docs/FORMATS.md §1.1): far above any board, small
 * enough that sums over every component of a platform and their products with utilisations stay exact
 * in int64 uW and in doubles. A plan whose model power would exceed it is not written (optimizer). */
#define PD_MAX_POWER_UW (1000000LL * 1000000LL)
/* Longest run `deploy --duration`, `simulate --duration` and `powerdag-agent run --duration` accept
 * (30 days): keeps every "start + duration" and "duration x rate" of a run far inside int64 ns. */
#define PD_MAX_RUN_NS (30LL * 24 * 3600 * PD_NS_PER_S)
/* A run length: a duration ("10s", "500ms") or, when bare_seconds, also a plain number of seconds
 * ("10", "2.5"); must be > 0 and at most PD_MAX_RUN_NS, else -1 with a static reason in why. */
int pd_parse_run_ns(const char *s, bool bare_seconds, int64_t *out, const char **why);
/* "1400MHz", "1.4GHz", "200000kHz", "114750000Hz" -> kHz (must be whole kHz). */
int pd_parse_freq_khz(const char *s, int64_t *out, const char **why);
/* A Linux CPU list ("0-3,6", as sysfs and cpuset files write it, ending at the first blank or
 * newline) into set[0..n): set[c] = 1 for each CPU named. -1 when malformed, a range runs backwards
 * or a CPU is n or more (never silently dropped); "" is the empty set. */
int pd_parse_cpulist(const char *s, unsigned char *set, size_t n);
/* The same syntax read as a sequence, in the order written ("4-7,0-3" -> 4 5 6 7 0 1 2 3; `deploy
 * --cpu-map`): at most max ids, each < 4096, none twice, the whole string (no blanks). Stores
 * them in out and their number in *n; -1 otherwise, with a static reason in why. */
int pd_parse_cpuseq(const char *s, int *out, size_t max, size_t *n, const char **why);
/* A name that goes unquoted into paths, argument vectors and config files: non-empty, only
 * [A-Za-z0-9._-] (and '/' when slash). Callers add their own rules (length, first character). */
bool pd_name_chars_ok(const char *s, bool slash);

/* Canonical forms, written with the largest unit that keeps the value >= 1 and exact:
 * 2500000 ns -> "2.5ms", 1200000 uW -> "1.2W", 1400000 kHz -> "1.4GHz". buf >= 32 bytes. */
const char *pd_fmt_duration(int64_t ns, char *buf, size_t n);
const char *pd_fmt_power(int64_t uw, char *buf, size_t n);
const char *pd_fmt_freq(int64_t khz, char *buf, size_t n);
/* Shortest "%.Ng" that reads back to the same double. */
const char *pd_fmt_double(double v, char *buf, size_t n);

/* ---------------------------------------------------------------- YAML tree */
enum pd_yaml_kind { PD_Y_SCALAR, PD_Y_SEQ, PD_Y_MAP };

typedef struct pd_ynode pd_ynode;
struct pd_ynode {
	enum pd_yaml_kind kind;
	struct pd_loc loc;
	char *str;      /* scalar value (NUL-terminated; may contain no NUL) */
	bool quoted;    /* scalar was quoted: never a number */
	size_t n;       /* items (seq) or pairs (map) */
	pd_ynode **items; /* seq: n items; map: 2n entries, key then value */
};

typedef struct pd_ydoc {
	pd_arena *arena;
	const char *file; /* owned by arena */
	pd_ynode *root;   /* NULL for an empty document */
} pd_ydoc;

/* Keys one mapping may hold (docs/FORMATS.md §1): far above any powerdag file's needs (a mapping's keys
 * are field names; long lists are sequences), low enough that a hostile mapping is refused early. */
#define PD_YAML_MAX_KEYS 10000

/* Loads the first document of a YAML text. Anchors/aliases and tags are refused (a DAG file has
 * no use for them and aliases allow billion-laughs expansion); nesting is limited to 64 levels, a
 * mapping to PD_YAML_MAX_KEYS keys (duplicates found with a hash: linear time).
 * On a syntax error records a diagnostic with the parser's position and returns -1. */
int pd_yaml_load(pd_ydoc *doc, const char *file, const char *text, size_t len, pd_diags *d);
int pd_yaml_load_file(pd_ydoc *doc, const char *path, pd_diags *d);
void pd_yaml_free(pd_ydoc *doc);

/* Map lookup (NULL when absent). */
const pd_ynode *pd_ymap_get(const pd_ynode *map, const char *key);
/* Reports every key of map not in the NULL-terminated list "allowed" as "unknown key 'k' in what". */
int pd_ymap_check_keys(const pd_ynode *map, const char *const *allowed, const char *what, pd_diags *d);
/* Requires node to be of kind k; records "'what' must be a mapping/sequence/scalar" otherwise. */
bool pd_ynode_expect(const pd_ynode *node, enum pd_yaml_kind k, const char *what, pd_diags *d);

/*
 * Typed field getters for a map. Each returns 1 when the key was present and valid (value stored),
 * 0 when absent (and records "missing required key" when required), -1 when present but invalid
 * (diagnostic recorded at the value's position).
 */
int pd_yget_str(const pd_ynode *map, const char *key, bool required, const char **out, pd_diags *d);
int pd_yget_duration(const pd_ynode *map, const char *key, bool required, bool allow_zero, int64_t *out_ns,
		     pd_diags *d);
int pd_yget_power(const pd_ynode *map, const char *key, bool required, int64_t *out_uw, pd_diags *d);
int pd_yget_freq(const pd_ynode *map, const char *key, bool required, int64_t *out_khz, pd_diags *d);
/* Plain number (no unit), finite, within [lo, hi]. */
int pd_yget_double(const pd_ynode *map, const char *key, bool required, double lo, double hi, double *out,
		   pd_diags *d);
int pd_yget_int(const pd_ynode *map, const char *key, bool required, int64_t lo, int64_t hi, int64_t *out,
		pd_diags *d);
int pd_yget_bool(const pd_ynode *map, const char *key, bool required, bool *out, pd_diags *d);
/* The same conversions on a bare scalar node (e.g. a sequence item). */
int pd_ynode_int(const pd_ynode *n, const char *what, int64_t lo, int64_t hi, int64_t *out, pd_diags *d);
int pd_ynode_double(const pd_ynode *n, const char *what, double lo, double hi, double *out, pd_diags *d);

/* ---------------------------------------------------------------- YAML emitter */
/*
 * A small deterministic writer on top of libyaml's emitter: block style for mappings and
 * sequences, flow style when asked (short records such as OPPs), plain scalars where libyaml
 * allows them. The same model always gives the same bytes (round-trip invariant of the plan).
 */
typedef struct pd_yemit pd_yemit;

pd_yemit *pd_yemit_new(pd_buf *out);
/* Finishes the document; returns 0 or -1 (message in e). Frees the emitter in both cases. */
int pd_yemit_finish(pd_yemit *y, pd_err *e);
void pd_yemit_map_begin(pd_yemit *y, bool flow);
void pd_yemit_map_end(pd_yemit *y);
void pd_yemit_seq_begin(pd_yemit *y, bool flow);
void pd_yemit_seq_end(pd_yemit *y);
void pd_yemit_str(pd_yemit *y, const char *s); /* quoted when a plain scalar would change meaning */
void pd_yemit_key(pd_yemit *y, const char *k);  /* alias of pd_yemit_str for readability */
void pd_yemit_int(pd_yemit *y, int64_t v);
void pd_yemit_double(pd_yemit *y, double v);
void pd_yemit_bool(pd_yemit *y, bool v);
void pd_yemit_duration(pd_yemit *y, int64_t ns);
void pd_yemit_power(pd_yemit *y, int64_t uw);
void pd_yemit_freq(pd_yemit *y, int64_t khz);
/* key: value shorthands */
void pd_yemit_kv_str(pd_yemit *y, const char *k, const char *v);
void pd_yemit_kv_int(pd_yemit *y, const char *k, int64_t v);
void pd_yemit_kv_double(pd_yemit *y, const char *k, double v);
void pd_yemit_kv_bool(pd_yemit *y, const char *k, bool v);
void pd_yemit_kv_duration(pd_yemit *y, const char *k, int64_t ns);
void pd_yemit_kv_power(pd_yemit *y, const char *k, int64_t uw);
void pd_yemit_kv_freq(pd_yemit *y, const char *k, int64_t khz);

/* ---------------------------------------------------------------- exact arithmetic */
/* ceil(a * b * c / (d1 * d2)) computed exactly (no floating point), saturated at INT64_MAX (also when
 * a denominator is 0). Portable to 32-bit targets without 128-bit integers. */
int64_t pd_muldiv_ceil(uint64_t a, uint64_t b, uint64_t c, uint64_t d1, uint64_t d2);

/* ---------------------------------------------------------------- misc */
/* 64-bit FNV-1a, for plan hashes in run logs. */
uint64_t pd_hash64(const void *p, size_t n);
/* Deterministic PRNG (xoshiro256**), seeded by splitmix64. Passed explicitly; no global state. */
typedef struct pd_rng {
	uint64_t s[4];
} pd_rng;
void pd_rng_seed(pd_rng *r, uint64_t seed);
uint64_t pd_rng_next(pd_rng *r);
double pd_rng_uniform(pd_rng *r);                   /* [0, 1) */
int64_t pd_rng_range(pd_rng *r, int64_t lo, int64_t hi); /* [lo, hi] inclusive */

#endif /* PD_CORE_H */
