/* SPDX-License-Identifier: MIT */
/*
 * twin_impl.h - internals of the board twin shared by its files (and its unit tests).
 *
 * The model (model.c, tree.c) is the emulated board's state: per cpufreq policy the governor and the
 * limits, per GPU the devfreq state, per FPGA manager the state and the loaded bitstreams, the fair
 * server parameters, and the power rails computed from the platform power model. It is addressed
 * like a filesystem (paths relative to the FUSE root, e.g. "/cpufreq/policy0/scaling_setspeed") so
 * that the FUSE layer (fuse.c) is a thin shell and the validation is unit-testable without root.
 */
#ifndef PD_TWIN_IMPL_H
#define PD_TWIN_IMPL_H

#include "twin/pd_twin.h"

#include <jansson.h>
#include <pthread.h>
#include <sys/types.h>

/* seconds the twin's sshd and iiod have to start listening (a loaded CI host needs more than 10) */
#define PD_TWIN_START_S 30

typedef struct twin_model twin_model;

/* Sampling: the rails average CPU busy time and accelerator activity over a sliding window of
 * TWIN_WINDOW ticks of TWIN_TICK_NS (like a sensor's averaging time). */
#define TWIN_TICK_NS (50 * PD_NS_PER_MS)
#define TWIN_WINDOW 5
#define TWIN_MAX_CPUS 64
#define TWIN_BUS_MV 5000 /* every rail is measured on a 5 V supply line (ACME-probe style) */

/* fw_dir: the directory served as /lib/firmware (bitstreams are looked up there). */
twin_model *twin_model_new(const pd_platform *p, const char *fw_dir, pd_err *e);
void twin_model_free(twin_model *m);

enum twin_node_kind { TWIN_DIR, TWIN_FILE };
struct twin_stat {
	enum twin_node_kind kind;
	unsigned mode; /* permission bits: 0444, 0644, 0200 */
};
/* 0 or -ENOENT. */
int twin_model_stat(twin_model *m, const char *path, struct twin_stat *st);
/* Calls fn(name, arg) for each child of a directory; 0 or -ENOENT / -ENOTDIR. */
int twin_model_list(twin_model *m, const char *dir, void (*fn)(const char *name, void *arg), void *arg);
/* The file's current content (always newline-terminated); 0 or -errno. */
int twin_model_read(twin_model *m, const char *path, pd_buf *out);
/* A store into the file, validated as the kernel would; 0 or -errno (EINVAL, EBUSY, ENOENT, EACCES).
 * May block: FPGA firmware loads take the reconfiguration time, accelerator runs their latency. */
int twin_model_write(twin_model *m, const char *path, const char *data, size_t len);

/* One sampling tick: cumulative busy and total jiffies per host CPU (from /proc/stat). */
void twin_model_tick(twin_model *m, int64_t now_ns, const uint64_t *busy, const uint64_t *total, size_t n);

/* Rails: one per island, per accelerator, and the board (base power), in that order. */
size_t twin_model_rail_count(const twin_model *m);
const char *twin_model_rail_name(const twin_model *m, size_t r); /* island/accel name or "board" */
double twin_model_rail_w(twin_model *m, size_t r);
/* Frequency of island k now (kHz). */
int64_t twin_model_island_khz(twin_model *m, size_t k);

/* Reads cumulative busy/total jiffies of cpu0..n-1 from a /proc/stat-format file; -1 on error. */
int twin_read_proc_stat(const char *path, uint64_t *busy, uint64_t *total, size_t n);

/* The board's CPU time: everything started through the board's sshd (SSH sessions, the agent) lives
 * in one cpuacct cgroup (cgroup v1) so that the rails count the board's own work, not whatever else
 * runs on the host CPUs (other users, the twin's own iiod and FUSE daemon). Without a v1 cpuacct
 * hierarchy the twin falls back to /proc/stat (all host activity counts as busy). */
#define TWIN_CPUACCT_ROOT "/sys/fs/cgroup/cpuacct"
/* The cgroup directory for a twin netns; -1 when there is no v1 cpuacct hierarchy. */
int twin_acct_dir(const char *netns, char *buf, size_t n);
/* Creates dir when needed and moves pid (and so all its future children) into it; 0 or -1. */
int twin_acct_join(const char *dir, pid_t pid);
/* Cumulative CPU ns per CPU in busy[], now_ns in total[] (the twin_model_tick units are free). */
int twin_acct_read(const char *dir, int64_t now_ns, uint64_t *busy, uint64_t *total, size_t n);
/* Removes the cgroup of a twin netns (after its processes ended). */
void twin_acct_remove(const char *netns);
/* Reads a cpuacct per-CPU file (FILE in dir, e.g. "cpuacct.usage_percpu": ns per CPU id) into
 * v[0..n-1], 0 past the CPUs it lists; 0 or -1 when it cannot be read. */
int twin_acct_read_ns(const char *dir, const char *file, uint64_t *v, size_t n);

/* ---------------------------------------------------------------- the board's /proc/stat (procstat.c) */
/* What the board's /proc/stat is computed from. */
struct twin_procstat_in {
	const char *host; /* the host's /proc/stat text */
	size_t host_len;
	bool core[TWIN_MAX_CPUS];        /* the twin's cores (host CPU ids) */
	const uint64_t *user_ns, *sys_ns; /* the board cgroup's CPU time per CPU id, n_acct of each */
	size_t n_acct;
	long hz;         /* USER_HZ: sysconf(_SC_CLK_TCK) */
	uint64_t now_ns; /* CLOCK_MONOTONIC at the read: the time each CPU has counted since boot */
};
/* The largest value each counter of each CPU id has shown: no counter goes back between reads. */
struct twin_procstat_mono {
	uint64_t user[TWIN_MAX_CPUS], sys[TWIN_MAX_CPUS], idle[TWIN_MAX_CPUS], steal[TWIN_MAX_CPUS];
};
/* The board's /proc/stat (twin/procstat.c says what each field is) appended to out; raises mono.
 * 0, -EIO (no cpu line in the host text, hz <= 0) or -ENOMEM. Pure: no file is read. */
int twin_procstat_render(const struct twin_procstat_in *in, struct twin_procstat_mono *mono, pd_buf *out);
/* Splits usage_ns in the ratio user_part : sys_part (cpuacct's usage_percpu_user/_sys); all user when
 * both are 0. */
void twin_procstat_split(uint64_t usage_ns, uint64_t user_part, uint64_t sys_part, uint64_t *user_ns,
			 uint64_t *sys_ns);
/* The daemon's sources for the model's /proc/stat file: host_fd = the host's /proc/stat, opened before
 * anything was bound over it (read with pread from 0: its seq_file regenerates), acct_dir = the
 * board's cpuacct cgroup. Until this is called, reading the file gives ENODEV. */
void twin_model_serve_proc_stat(twin_model *m, int host_fd, const char *acct_dir);
/* The file's content now (twin_procstat_render from the sources); 0 or -errno. */
int twin_model_read_proc_stat(twin_model *m, pd_buf *out);

/* INA226 (ina2xx-adc) view of a power on a 5 V line with shunt_uohm. */
struct twin_ina226 {
	long shunt_raw, bus_raw, power_raw, current_raw;
	double power_scale, current_scale; /* mW/LSB, mA/LSB */
};
void twin_ina226_from_w(double watts, int64_t shunt_uohm, struct twin_ina226 *out);
/* The largest standard shunt that keeps max_w on 5 V within the INA226's shunt range with margin. */
int64_t twin_shunt_for(double max_w);

/* Monotonic clock in ns. */
int64_t twin_now_ns(void);

/* ---------------------------------------------------------------- processes and namespaces */
/* Runs argv (no shell), waits; returns the exit status, or -1 (message in e). Output discarded
 * unless out != NULL. */
int twin_run(char *const argv[], pd_buf *out, pd_err *e);
/* Starts argv detached from our stdio: stdin /dev/null, stdout+stderr appended to log. */
pid_t twin_spawn(char *const argv[], const char *log, pd_err *e);
/* Inode of a process' mount namespace (0 when unknown). */
unsigned long twin_mntns_of(pid_t pid);
/* Sends sig to every process whose mount namespace inode is mntns (never to ourselves); returns the
 * count signalled. */
int twin_kill_mntns(unsigned long mntns, int sig);
/* Start time of a pid (field 22 of /proc/PID/stat), 0 when the process does not exist or is a zombie. */
unsigned long long twin_starttime(pid_t pid);
bool twin_file_exists(const char *path);

/* Inside the daemon: replaces dir by a read-only tmpfs holding bind mounts of all its original
 * entries except those named in over[], which bind the given sources instead. */
struct twin_overlay {
	const char *name;
	const char *source;
};
int twin_shadow_dir(const char *dir, const struct twin_overlay *over, size_t n_over, pd_err *e);
int twin_bind(const char *src, const char *dst, pd_err *e);

/* FUSE server: mounts at mountpoint and serves m from a thread. */
typedef struct twin_fs twin_fs;
twin_fs *twin_fs_start(twin_model *m, const char *mountpoint, pd_err *e);
void twin_fs_stop(twin_fs *fs);

/* The host state a deploy to a namespace twin changes (hostguard.c): taken at `up`, kept in twin.json,
 * put back by `down` after removing a deploy cpuset left by a deploy killed with the twin. */
struct twin_host {
	bool taken, has_balance, has_grp_rt;
	long long rt_runtime, balance, grp_rt_runtime;
};
void twin_host_take(struct twin_host *h);
json_t *twin_host_json(const struct twin_host *h);
void twin_host_from_json(const json_t *j, struct twin_host *h);
/* Removes the twin's deploy cpuset directory cgname (under the cpuset root) when no task is in it
 * and then puts the host values back. Says what it did in said; -1 when a left-over cpuset could not
 * be removed. */
int twin_host_clean(const struct twin_host *h, const char *cgname, pd_buf *said);

/* Paths inside a state directory. */
struct twin_paths {
	char dir[256];
	char json[300], platform[300], identity[300], known_hosts[300], ssh_dir[300], sshd_config[300],
		host_key[300], authorized[300], firmware[300], fsroot[300], empty[300], daemon_log[300],
		sshd_log[300], iiod_log[300], vm_dir[300];
};
int twin_paths_init(struct twin_paths *tp, const char *dir, pd_err *e);

/* ---------------------------------------------------------------- the VM twin (vm.c) */
#define PD_TWIN_VM_DEFAULT_CACHE "/var/cache/powerdag/vm"
/* PD_TWIN_VM_IMAGE_FORMAT, the image layout this binary boots, is VM_IMAGE_FORMAT of
 * scripts/vm-image-lib.sh, read from there by twin/CMakeLists.txt: one number for script and C. */
#define TWIN_VM_BRIDGE "pdvmbr"
#define TWIN_VM_TAP "pdvmtap"

/* A guest architecture `twin up --vm --arch` boots: its image, its qemu, where its powerdag is. */
struct twin_vm_guest {
	const char *arch;        /* the guest's uname -m: twin.json's "arch" */
	const char *image_arch;  /* image.json's "arch"; "" for the x86-64 image (vm-image.sh writes none) */
	const char *cache_env;   /* the image cache: $cache_env, else cache_default */
	const char *cache_default;
	const char *script_env;  /* the image build script: $script_env, else script */
	const char *script;
	const char *qemu;        /* qemu-system-<arch> */
	const char *qemu_pkg;    /* the Debian package that has it */
	bool kvm;                /* KVM may run it (the host's own architecture); else TCG only */
	int boot_timeout_s;      /* to sshd and iiod answering, under TCG */
	int default_cpus;        /* twin cores without --cpus; 0: the host's online CPUs */
};
/* The guest for --arch (NULL or "": x86-64; x86_64|amd64|aarch64|arm64), NULL when unknown. */
const struct twin_vm_guest *twin_vm_guest(const char *arch);
/* The powerdag binary the guest runs as its twin daemon: self (this binary) when its machine is the
 * guest's, else a cross-built one ($POWERDAG_VM_EXE_<ARCH>, build-<arch>-full/ next to self's build
 * tree, PREFIX/libexec/powerdag/<arch>/). PD_EXIT_ENV naming the build command when none is there. */
int twin_vm_exe(const struct twin_vm_guest *g, const char *self, char *out, size_t n, pd_err *e); /* out != self */

struct twin_vm_boot {
	const struct twin_vm_guest *guest;
	const struct twin_paths *tp;
	const char *image;  /* the cached image directory */
	const char *vm_dir; /* STATE/vm: initrd, console.log, qemu.log */
	const char *initrd; /* STATE/vm/initrd */
	const char *exe;    /* the powerdag binary copied into the guest */
	const char *netns, *addr;
	int port, n_cpus;
};
/* The guest's image cache directory ($POWERDAG_VM_CACHE or PD_TWIN_VM_DEFAULT_CACHE for x86-64). */
const char *twin_vm_cache_dir(const struct twin_vm_guest *g, char *buf, size_t n);
/* The image directory (built by the guest's script when incomplete) and its kernel release. */
int twin_vm_image(const struct twin_vm_guest *g, char *dir, size_t n, char *kernel, size_t kn, pd_err *e);
/* STATE/vm/initrd: the image's rootfs + the per-boot archive (state, binary, boot script). */
int twin_vm_initrd(const struct twin_vm_boot *b, pd_err *e);
/* In the netns: a bridge joining veth_board and the tap qemu uses. */
int twin_vm_network(const char *netns, const char *veth_board, pd_err *e);
/* Starts qemu (accel "kvm" or "tcg") in the netns; its pid or -1. */
pid_t twin_vm_start(const struct twin_vm_boot *b, const char *accel, pd_err *e);
/* Waits until sshd and iiod answer at addr, qemu dies, or timeout_s pass. */
int twin_vm_wait(pid_t qemu, const char *vm_dir, const char *addr, int port, int timeout_s, pd_err *e);
bool twin_vm_reachable(const char *addr, int port);
void twin_vm_kill(pid_t qemu);
/* The accelerator to use (NULL when KVM was never probed here) and the probe's outcome. */
const char *twin_vm_accel_cached(const struct twin_vm_guest *g, const char *image, char *buf, size_t n);
void twin_vm_accel_store(const char *image, const char *accel);

#endif /* PD_TWIN_IMPL_H */
