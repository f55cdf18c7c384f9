/* SPDX-License-Identifier: MIT */
/* board_impl.h - pd_deploy_board internals shared by board.c, preflight.c and apply.c (private). */
#ifndef PD_BOARD_IMPL_H
#define PD_BOARD_IMPL_H

#include "deployer/pd_deployer.h"

/* One change made to the board, in the order made; restore walks the list backwards. */
enum rec_kind {
	REC_VALUE,     /* path held old; apply wrote new */
	REC_MKDIR,     /* apply created directory path (a cgroup) */
	REC_FILE_NEW,  /* apply created file path (an uploaded bitstream) */
	REC_FILE_REPL, /* apply replaced file path whose old content is old/old_len */
};

struct rec {
	enum rec_kind kind;
	char *path;
	char *old, *newv;
	size_t old_len;
};

struct pd_deploy_board {
	pd_deploy_transport *t;
	char *root; /* "" for "/" so that root + abs is abs */
	bool plain_files;
	char cgname[64];
	struct pd_deploy_board_info info;
	bool probed;
	struct rec *rec;
	size_t n_rec, cap_rec;
	/* Scratch of pd_deploy_board_path(): the 4 buffers are used in turn, so a returned path stays
	 * valid for the next 3 calls on this board and no longer. Every caller hands it straight to one
	 * transport call (one alive at a time); a path held across other board calls is copied first
	 * (restore_mkdir). */
	char pathbuf[4][1024];
	int pathrot;
	/* fault injection and interruption, set by pd_deploy (NULL otherwise) */
	struct pd_deploy_fault *fault;
	volatile sig_atomic_t *interrupted;
};

int board_probe(pd_deploy_board *b, pd_err *e);
/* Reads a board file, trimmed of trailing whitespace. */
int board_read(pd_deploy_board *b, const char *abs, pd_buf *out, pd_err *e);
int board_read_ll(pd_deploy_board *b, const char *abs, long long *v, pd_err *e);
/* The fair deadline server (mainline >= 6.12) takes runtime/period of every CPU's DL bandwidth whether
 * a platform declares it or not. Its settings: read from debugfs when readable (returns 1), else the
 * kernel's default 50 ms every 1 s on a kernel >= 6.12 whose debugfs is not readable (returns 2),
 * else 0 (no fair server). */
#define BOARD_FAIR_DEFAULT_RUNTIME_NS (50LL * 1000 * 1000)
#define BOARD_FAIR_DEFAULT_PERIOD_NS (1000LL * 1000 * 1000)
int board_fair_server(pd_deploy_board *b, int64_t *runtime_ns, int64_t *period_ns);
bool board_exists(pd_deploy_board *b, const char *abs);
/* Records the current value of abs, then writes v (skips both when it already reads v). */
int board_set(pd_deploy_board *b, const char *abs, const char *v, pd_err *e);
int board_set_ll(pd_deploy_board *b, const char *abs, long long v, pd_err *e);
int board_record(pd_deploy_board *b, enum rec_kind k, const char *path, const char *old, size_t old_len,
		 const char *newv);
/* Does value list text (whitespace separated) contain word? */
bool board_word_in(const char *list, const char *word);
/* Fault hook: at step, applies the configured fault; returns non-zero for kind "fail". */
int board_fault(pd_deploy_board *b, const char *step, pd_err *e);
int pd_deploy_fault_fire(struct pd_deploy_fault *f, const char *step, pd_deploy_transport *t, volatile sig_atomic_t *interrupted,
		  pd_err *e);

/* CPUs carrying CPU tasks in the plan, sorted, unique. */
size_t board_plan_cpus(const pd_plan *p, int *cpus, size_t max);
/* Whether accelerator a carries a task of the plan. */
bool board_plan_uses_accel(const pd_plan *p, size_t a);

#endif
