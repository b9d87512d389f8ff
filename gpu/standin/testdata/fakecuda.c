/*
 * A stand-in libcuda.so.1 for tests: the CUDA driver calls tetris-hil makes, by the names R535
 * exports and with cuda.h's prototypes, on standin_cuda_gpus (default 8) made-up GPUs whose PCI
 * bus ids are those of the stand-in NVML (0000:1<i>:00.0). Device memory is host memory: each
 * cuMemAlloc is a POSIX shared-memory object, so that an IPC handle (which carries its name) opens
 * in another process and copies there land in the exporter's buffer.
 *
 * Streams are queues run when something waits for them, as a GPU runs them later than the host
 * enqueues: cuStreamSynchronize of a non-blocking stream runs that stream only; the legacy NULL
 * stream (stream 0, what cuMemsetD8 and the synchronous cuMemcpyDtoH use) runs, with the blocking
 * streams, only when it is waited for (cuStreamSynchronize(0), cuCtxSynchronize, cuMemcpyDtoH).
 * A non-blocking stream does not wait for the NULL stream (cuda.h: CU_STREAM_NON_BLOCKING).
 * Events carry a simulated GPU clock that a copy of n bytes advances by 2000 + n/50 ns.
 *
 * Where cuda.h leaves a misuse undefined the stand-in is strict: cuMemFree with another context
 * current answers CUDA_ERROR_INVALID_CONTEXT; a copy_sm kernel writing to another GPU's memory
 * without peer access enabled faults (CUDA_ERROR_ILLEGAL_ADDRESS, sticky).
 *
 * Streams that hold a stream memory operation (cuStreamWaitValue32) or a kernel of the compiled
 * replay (delay, stamp, sdelay, sstamp of gpu/program/cudaprog's program.ptx) become live: a
 * device thread runs them as a GPU does, concurrently with the host and with each other, an
 * operation at a time per stream: a wait until its word holds the value, a copy for
 * 2000 + n/50 ns of CLOCK_MONOTONIC, a delay kernel spinning on the GPU's %globaltimer (and
 * giving up once its abort word is set while more than 100 us remain). The
 * kernels do what program.ptx says they do (the stand-in cannot run PTX; the PTX itself is
 * checked on a GPU). GPU d's %globaltimer is CLOCK_MONOTONIC + (d + 1) * clock_skew + 777 ns
 * (knob clock_skew, default 1000 s), so that a harness that forgets a clock offset is off by
 * seconds. Host memory registered with cuMemHostRegister has a device address of its own (its
 * host address + 2^45): a kernel or wait given the host address faults, as it would on a GPU
 * without unified addressing; after cuMemHostUnregister the device address faults too.
 *
 * Every call is logged, one line each (pid, tid, call, arguments, result), to the file named by
 * STANDIN_CUDA_LOG. Knobs (environment STANDIN_CUDA_<KNOB> at load, or standin_cuda_set): gpus,
 * no_jit (module loads fail with CUDA_ERROR_JIT_COMPILER_NOT_FOUND and a JIT log, as without
 * libnvidia-ptxjitcompiler.so.1), ipc_open_fail (cuIpcOpenMemHandle answers that code),
 * peer_enable_fail (that many cuCtxEnablePeerAccess calls fail with CUDA_ERROR_TOO_MANY_PEERS).
 *
 * Built with -DSTANDIN_REAL_HEADERS it includes NVIDIA's cuda.h, so that the compiler checks every
 * prototype here against it (scripts/gpu-abi-check.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef STANDIN_REAL_HEADERS
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef struct CUipcMemHandle_st { char reserved[64]; } CUipcMemHandle;
typedef uint32_t cuuint32_t;
#endif
#include <time.h>

enum {
	OK = 0, E_INVALID_VALUE = 1, E_NOT_INITIALIZED = 3, E_INVALID_DEVICE = 101,
	E_INVALID_IMAGE = 200, E_INVALID_CONTEXT = 201, E_JIT_NOT_FOUND = 221,
	E_INVALID_HANDLE = 400, E_NOT_FOUND = 500, E_NOT_READY = 600, E_ILLEGAL_ADDRESS = 700,
	E_PEER_ENABLED = 704, E_TOO_MANY_PEERS = 711, E_ALREADY_REGISTERED = 712, E_NOT_REGISTERED = 713,
};

#define MAXGPUS 64
#define MAXALLOC 4096

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* one lock for all state */
static int logfd = -1, ngpus = 8, no_jit, ipc_open_fail, peer_enable_fail, inited;
static long long clock_skew = 1000000000000LL; /* ns per GPU index */
static unsigned long long simclock; /* ns */

struct op;
struct CUstream_st { struct CUctx_st *ctx; unsigned flags; int live, dead; struct op *head, *tail; };
struct CUctx_st {
	int dev, refs, fault;
	int peer[MAXGPUS]; /* peer access enabled to GPU j's primary context */
	struct CUstream_st legacy;
};
static struct CUctx_st ctxs[MAXGPUS];
static __thread struct CUctx_st *cur;
struct CUevent_st { int recorded, done; unsigned long long t; };
struct CUmod_st { int loaded; char *ptx; };
enum { OP_MEMSET, OP_COPY, OP_SPIN, OP_KCOPY, OP_EVENT, OP_WAIT, OP_DELAY, OP_STAMP, OP_SDELAY, OP_SSTAMP };
struct CUfunc_st { const char *name; int nparams, op; };
/* The kernels the stand-in can simulate, with their parameter counts (kernels.ptx, program.ptx). */
static struct CUfunc_st kernels[] = {
	{"spin", 3, OP_SPIN}, {"copy_sm", 3, OP_KCOPY}, {"delay", 6, OP_DELAY}, {"stamp", 2, OP_STAMP},
	{"sdelay", 7, OP_SDELAY}, {"sstamp", 5, OP_SSTAMP},
};

enum { MEM_DEVICE = 1, MEM_IPC, MEM_HOST, MEM_REG };
#define REG_ALIAS (1ULL << 45) /* registered host memory's device address: host address + this */
struct alloc { int kind; void *p; size_t n; struct CUctx_st *ctx; char name[48]; unsigned flags; };
static struct alloc allocs[MAXALLOC];
static unsigned seq;

struct op {
	int kind;
	unsigned long long a, b, c; /* dst/src/n, flag/status/timeout, value */
	unsigned long long p[8];    /* a kernel's parameters (at most 8) */
	int started;                /* a live copy or delay under way, until tend */
	long long tend;
	struct CUevent_st *ev;
	unsigned long order;
	struct op *next;
};
static unsigned long norder;

static void logf_(const char *fmt, ...)
{
	char line[640];
	int n = snprintf(line, sizeof line, "pid=%d tid=%ld ", getpid(), (long)syscall(SYS_gettid));
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	if (logfd >= 0 && write(logfd, line, n) < 0) {
		/* a test reading the log misses the line */
	}
}

void standin_cuda_set_log(const char *path)
{
	pthread_mutex_lock(&mu);
	if (logfd >= 0)
		close(logfd);
	logfd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	pthread_mutex_unlock(&mu);
}

int standin_cuda_set(const char *knob, long v)
{
	if (!strcmp(knob, "gpus") && v >= 1 && v <= MAXGPUS) ngpus = (int)v;
	else if (!strcmp(knob, "no_jit")) no_jit = (int)v;
	else if (!strcmp(knob, "ipc_open_fail")) ipc_open_fail = (int)v;
	else if (!strcmp(knob, "peer_enable_fail")) peer_enable_fail = (int)v;
	else if (!strcmp(knob, "clock_skew")) clock_skew = v;
	else return -1;
	return 0;
}

static long envl(const char *name, long def)
{
	const char *s = getenv(name);
	return s && *s ? strtol(s, NULL, 0) : def;
}

__attribute__((constructor)) static void load(void)
{
	standin_cuda_set_log(getenv("STANDIN_CUDA_LOG"));
	standin_cuda_set("gpus", envl("STANDIN_CUDA_GPUS", 8));
	no_jit = (int)envl("STANDIN_CUDA_NO_JIT", 0);
	ipc_open_fail = (int)envl("STANDIN_CUDA_IPC_OPEN_FAIL", 0);
	peer_enable_fail = (int)envl("STANDIN_CUDA_PEER_ENABLE_FAIL", 0);
	clock_skew = envl("STANDIN_CUDA_CLOCK_SKEW", clock_skew);
	for (int i = 0; i < MAXGPUS; i++) {
		ctxs[i].dev = i;
		ctxs[i].legacy.ctx = &ctxs[i];
	}
}

#define LOCK pthread_mutex_lock(&mu)
#define RET(r, ...) do { logf_(__VA_ARGS__); pthread_mutex_unlock(&mu); return (r); } while (0)

static struct alloc *find(unsigned long long p, int kind)
{
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].kind && (kind ? allocs[i].kind == kind : allocs[i].kind != MEM_REG) && p >= (uintptr_t)allocs[i].p &&
		    p < (uintptr_t)allocs[i].p + allocs[i].n)
			return &allocs[i];
	return NULL;
}

static struct alloc *slot(void)
{
	for (int i = 0; i < MAXALLOC; i++)
		if (!allocs[i].kind)
			return &allocs[i];
	return NULL;
}

/* ---- streams ---- */

static struct CUstream_st *stream_of(CUstream s)
{
	if ((uintptr_t)s == 0 || (uintptr_t)s == 1 || (uintptr_t)s == 2) /* NULL, LEGACY, PER_THREAD */
		return cur ? &cur->legacy : NULL;
	return (struct CUstream_st *)s;
}

static void enqueue(struct CUstream_st *s, int kind, unsigned long long a, unsigned long long b,
		    unsigned long long c, struct CUevent_st *ev)
{
	struct op *o = calloc(1, sizeof *o);
	o->kind = kind, o->a = a, o->b = b, o->c = c, o->ev = ev, o->order = ++norder;
	if (s->tail) s->tail->next = o; else s->head = o;
	s->tail = o;
}

/* writable: may a kernel of ctx store to p? Its own memory, memory opened by IPC in it, mapped
 * host memory, or memory of a GPU it has peer access to. */
static int writable(struct CUctx_st *ctx, unsigned long long p, size_t n)
{
	struct alloc *a = find(p, 0);
	if (!a || p + n > (uintptr_t)a->p + a->n) return 0;
	if (a->kind == MEM_HOST || a->ctx == ctx) return 1;
	return ctx->peer[a->ctx->dev];
}

static void run(struct CUctx_st *ctx, struct op *o)
{
	switch (o->kind) {
	case OP_MEMSET:
		memset((void *)(uintptr_t)o->a, (int)o->c, o->b);
		simclock += 1000 + o->b / 100;
		break;
	case OP_COPY:
		memmove((void *)(uintptr_t)o->a, (void *)(uintptr_t)o->b, o->c);
		simclock += 2000 + o->c / 50;
		break;
	case OP_KCOPY:
		if (!writable(ctx, o->a, o->c)) {
			logf_("copy_sm kernel: store to %#llx (%llu bytes) not accessible from GPU %d's context -> ILLEGAL_ADDRESS", o->a, o->c, ctx->dev);
			ctx->fault = E_ILLEGAL_ADDRESS;
			break;
		}
		memmove((void *)(uintptr_t)o->a, (void *)(uintptr_t)o->b, o->c);
		simclock += 3000 + o->c / 40;
		break;
	case OP_SPIN: {
		/* The host releases before it waits, so by the time a queue runs the flag is set; a
		 * flag still 0 is the timeout case (status 2). */
		volatile unsigned *flag = (unsigned *)(uintptr_t)o->a, *status = (unsigned *)(uintptr_t)o->b;
		*status = *flag ? 1 : 2;
		break;
	}
	case OP_EVENT:
		o->ev->t = simclock;
		o->ev->done = 1;
		break;
	}
}

static void drain(struct CUctx_st *ctx, struct CUstream_st *s)
{
	while (s->head) {
		struct op *o = s->head;
		s->head = o->next;
		if (!s->head) s->tail = NULL;
		run(ctx, o);
		free(o);
	}
}

static struct CUstream_st *streams[1024];

/* sync_legacy runs the NULL stream and every blocking stream of ctx, oldest operation first. */
static void sync_legacy(struct CUctx_st *ctx)
{
	for (;;) {
		struct CUstream_st *best = ctx->legacy.head ? &ctx->legacy : NULL;
		for (int i = 0; i < 1024; i++) {
			struct CUstream_st *s = streams[i];
			if (s && s->ctx == ctx && !(s->flags & 1) && s->head && (!best || s->head->order < best->head->order))
				best = s;
		}
		if (!best) return;
		struct op *o = best->head;
		best->head = o->next;
		if (!best->head) best->tail = NULL;
		run(ctx, o);
		free(o);
	}
}

/* ---- live streams: the device thread ---- */

static long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* globaltimer is GPU dev's %globaltimer. */
static long long globaltimer(int dev) { return mono() + (dev + 1) * clock_skew + 777; }

/* hostp is the host address behind device address p (n bytes), or NULL where a GPU could not
 * address it: device memory, IPC-opened memory and cuMemHostAlloc memory are at their own
 * addresses, registered host memory at its alias only. */
static void *hostp(unsigned long long p, size_t n)
{
	for (int i = 0; i < MAXALLOC; i++) {
		struct alloc *a = &allocs[i];
		if (!a->kind)
			continue;
		unsigned long long lo = (uintptr_t)a->p + (a->kind == MEM_REG ? REG_ALIAS : 0);
		if (p >= lo && p + n <= lo + a->n)
			return (char *)a->p + (p - lo);
	}
	return NULL;
}

static pthread_t device_thread;
static int device_started;

static void *device_main(void *);

/* go_live makes s a live stream, run by the device thread (started once). */
static void go_live(struct CUstream_st *s)
{
	s->live = 1;
	if (!device_started) {
		device_started = 1;
		pthread_create(&device_thread, NULL, device_main, NULL);
		pthread_detach(device_thread);
	}
}

static void fault(struct CUctx_st *ctx, const char *what, unsigned long long p)
{
	logf_("%s: address %#llx not accessible from GPU %d -> ILLEGAL_ADDRESS", what, p, ctx->dev);
	ctx->fault = E_ILLEGAL_ADDRESS;
}

/* sdelay and delay: the target over the dependency words, then a spin until the GPU's clock
 * (plus the offset, for sdelay) reaches it. Returns 0 while the spin is not over. */
static int step_delay(struct CUctx_st *ctx, struct op *o)
{
	int sh = o->kind == OP_SDELAY;
	unsigned long long *rec = hostp(o->p[3], 16);
	long long off = sh ? (long long)o->p[5] : 0, now = globaltimer(ctx->dev) + off;
	if (!o->started) {
		unsigned *idx = hostp(o->p[1], 4 * (o->p[2] ? o->p[2] : 1));
		unsigned long long *base = hostp(o->p[0], 8);
		if (!rec || !idx || !base) {
			fault(ctx, o->kind == OP_SDELAY ? "sdelay kernel" : "delay kernel", !rec ? o->p[3] : !idx ? o->p[1] : o->p[0]);
			return 1;
		}
		long long t = sh ? 0 : (long long)*(volatile unsigned long long *)base;
		for (unsigned long long i = 0; i < o->p[2]; i++) {
			unsigned long long *w = hostp(o->p[0] + 8ULL * idx[i], 8);
			if (!w) {
				fault(ctx, "delay kernel", o->p[0] + 8ULL * idx[i]);
				return 1;
			}
			long long v = (long long)*(volatile unsigned long long *)w;
			t = sh ? (v > t ? v : t) : ((unsigned long long)v > (unsigned long long)t ? v : t);
		}
		o->tend = t, o->started = 1;
		if ((sh && t > now + (long long)o->p[4]) || (!sh && (unsigned long long)t > (unsigned long long)now + o->p[4])) {
			rec[0] = (unsigned long long)t, rec[1] = 0;
			return 1;
		}
	}
	if (sh ? o->tend - now > 100000 : (unsigned long long)o->tend - (unsigned long long)now > 100000 &&
		(unsigned long long)now < (unsigned long long)o->tend) {
		/* both read the abort word (sdelay's 7th argument, delay's 6th) while more than 100 us
		 * remain, and give up once it is set */
		unsigned long long abp = sh ? o->p[6] : o->p[5];
		volatile unsigned *ab = hostp(abp, 4);
		if (!ab) {
			fault(ctx, sh ? "sdelay kernel" : "delay kernel", abp);
			return 1;
		}
		if (*ab && rec) {
			rec[0] = (unsigned long long)o->tend, rec[1] = 0;
			return 1;
		}
	}
	if (sh ? now < o->tend : (unsigned long long)now < (unsigned long long)o->tend)
		return 0;
	if (!rec) {
		fault(ctx, sh ? "sdelay kernel" : "delay kernel", o->p[3]);
		return 1;
	}
	((volatile unsigned long long *)rec)[0] = (unsigned long long)o->tend;
	((volatile unsigned long long *)rec)[1] = (unsigned long long)now;
	return 1;
}

/* sstamp and stamp: the end stamp, then the flag (then the endpoint's word). */
static void step_stamp(struct CUctx_st *ctx, struct op *o)
{
	int sh = o->kind == OP_SSTAMP;
	volatile unsigned long long *slot = hostp(o->p[0], 8);
	volatile unsigned *flag = hostp(o->p[1], 4), *word = sh ? hostp(o->p[3], 4) : NULL;
	if (!slot || !flag || (sh && !word)) {
		fault(ctx, sh ? "sstamp kernel" : "stamp kernel", !slot ? o->p[0] : !flag ? o->p[1] : o->p[3]);
		return;
	}
	*slot = (unsigned long long)(globaltimer(ctx->dev) + (sh ? (long long)o->p[2] : 0));
	__sync_synchronize();
	*flag = 1;
	if (sh) {
		__sync_synchronize();
		*word = (unsigned)o->p[4];
	}
}

/* step_live runs the head operation of live stream s; 0 while it cannot finish yet. */
static int step_live(struct CUstream_st *s)
{
	struct op *o = s->head;
	struct CUctx_st *ctx = s->ctx;
	if (ctx->fault)
		return 1; /* a faulted context runs nothing more */
	switch (o->kind) {
	case OP_WAIT: {
		volatile unsigned *w = hostp(o->a, 4);
		if (!w) {
			fault(ctx, "cuStreamWaitValue32", o->a);
			return 1;
		}
		unsigned v = *w;
		return o->b == 1 ? v == (unsigned)o->c : (int)(v - (unsigned)o->c) >= 0;
	}
	case OP_COPY:
	case OP_KCOPY:
		if (!o->started) {
			o->started = 1;
			o->tend = mono() + 2000 + (long long)(o->c / 50);
			return 0;
		}
		if (mono() < o->tend)
			return 0;
		run(ctx, o);
		return 1;
	case OP_DELAY:
	case OP_SDELAY:
		return step_delay(ctx, o);
	case OP_STAMP:
	case OP_SSTAMP:
		step_stamp(ctx, o);
		return 1;
	case OP_EVENT:
		o->ev->t = (unsigned long long)globaltimer(ctx->dev);
		o->ev->done = 1;
		return 1;
	default:
		run(ctx, o);
		return 1;
	}
}

static void *device_main(void *unused)
{
	(void)unused;
	for (;;) {
		int pending = 0;
		pthread_mutex_lock(&mu);
		for (int i = 0; i < 1024; i++) {
			struct CUstream_st *s = streams[i];
			if (!s || !s->live)
				continue;
			while (s->head && step_live(s)) {
				struct op *o = s->head;
				s->head = o->next;
				if (!s->head) s->tail = NULL;
				free(o);
			}
			if (s->head)
				pending = 1;
			else if (s->dead) {
				free(s);
				streams[i] = NULL;
			}
		}
		pthread_mutex_unlock(&mu);
		struct timespec ts = {0, pending ? 2000 : 200000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* await_live waits, without the lock, until live stream s has run out (or its context faulted). */
static void await_live(struct CUstream_st *s)
{
	while (s->head && !s->ctx->fault) {
		pthread_mutex_unlock(&mu);
		struct timespec ts = {0, 5000};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&mu);
	}
}

/* ---- initialisation, devices, contexts ---- */

CUresult cuInit(unsigned int flags)
{
	LOCK;
	inited = 1;
	RET(OK, "cuInit(%u) -> 0", flags);
}

CUresult cuDriverGetVersion(int *v)
{
	LOCK;
	if (!v) RET(E_INVALID_VALUE, "cuDriverGetVersion(NULL) -> 1");
	*v = 12020;
	RET(OK, "cuDriverGetVersion(%p) -> %d", (void *)v, *v);
}

CUresult cuDeviceGetCount(int *n)
{
	LOCK;
	if (!inited) RET(E_NOT_INITIALIZED, "cuDeviceGetCount -> NOT_INITIALIZED");
	*n = ngpus;
	RET(OK, "cuDeviceGetCount(%p) -> %d", (void *)n, *n);
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	LOCK;
	if (ordinal < 0 || ordinal >= ngpus) RET(E_INVALID_DEVICE, "cuDeviceGet(%d) -> INVALID_DEVICE", ordinal);
	*d = ordinal;
	RET(OK, "cuDeviceGet(%p, %d) -> %d", (void *)d, ordinal, *d);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	LOCK;
	if (d < 0 || d >= ngpus) RET(E_INVALID_DEVICE, "cuDeviceGetName(%d) -> INVALID_DEVICE", d);
	snprintf(name, len, "Stand-in GPU %d", d);
	RET(OK, "cuDeviceGetName(%p, %d, %d) -> \"%s\"", (void *)name, len, d, name);
}

CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	LOCK;
	if (d < 0 || d >= ngpus) RET(E_INVALID_DEVICE, "cuDeviceGetPCIBusId(%d) -> INVALID_DEVICE", d);
	snprintf(id, len, "0000:%02X:00.0", (0x10 + d) & 0xff);
	RET(OK, "cuDeviceGetPCIBusId(%p, %d, %d) -> \"%s\"", (void *)id, len, d, id);
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
	LOCK;
	if (d < 0 || d >= ngpus) RET(E_INVALID_DEVICE, "cuDeviceGetAttribute(%d) -> INVALID_DEVICE", d);
	*v = attr == 16 ? 132 : 0; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: an H100's 132 */
	RET(OK, "cuDeviceGetAttribute(%p, %d, %d) -> %d", (void *)v, (int)attr, d, *v);
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer)
{
	LOCK;
	*can = d != peer && d >= 0 && peer >= 0 && d < ngpus && peer < ngpus;
	RET(OK, "cuDeviceCanAccessPeer(%p, %d, %d) -> %d", (void *)can, d, peer, *can);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	LOCK;
	if (d < 0 || d >= ngpus) RET(E_INVALID_DEVICE, "cuDevicePrimaryCtxRetain(%d) -> INVALID_DEVICE", d);
	ctxs[d].refs++;
	*c = &ctxs[d];
	RET(OK, "cuDevicePrimaryCtxRetain(%p, %d) -> ctx %d (refs %d)", (void *)c, d, d, ctxs[d].refs);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	LOCK;
	if (d < 0 || d >= ngpus || ctxs[d].refs == 0) RET(E_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease_v2(%d) -> INVALID_CONTEXT", d);
	ctxs[d].refs--;
	/* The last release destroys the primary context (cuda.h), and with it the peer access it had
	 * enabled: a later retain starts without it, as a process that reopens a GPU does. */
	if (ctxs[d].refs == 0) memset(ctxs[d].peer, 0, sizeof ctxs[d].peer);
	RET(OK, "cuDevicePrimaryCtxRelease_v2(%d) -> refs %d", d, ctxs[d].refs);
}

CUresult cuCtxSetCurrent(CUcontext c)
{
	LOCK;
	cur = c;
	RET(OK, "cuCtxSetCurrent(ctx %d) -> 0", c ? c->dev : -1);
}

CUresult cuCtxSynchronize(void)
{
	LOCK;
	if (!cur) RET(E_INVALID_CONTEXT, "cuCtxSynchronize -> INVALID_CONTEXT");
	sync_legacy(cur);
	for (int i = 0; i < 1024; i++)
		if (streams[i] && streams[i]->ctx == cur && !streams[i]->live)
			drain(cur, streams[i]);
	for (int i = 0; i < 1024; i++)
		if (streams[i] && streams[i]->ctx == cur && streams[i]->live && !streams[i]->dead)
			await_live(streams[i]);
	RET(cur->fault, "cuCtxSynchronize() ctx %d -> %d", cur->dev, cur->fault);
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
	LOCK;
	if (!cur || !peer) RET(E_INVALID_CONTEXT, "cuCtxEnablePeerAccess -> INVALID_CONTEXT");
	if (peer_enable_fail > 0) {
		peer_enable_fail--;
		RET(E_TOO_MANY_PEERS, "cuCtxEnablePeerAccess(ctx %d, %u) from ctx %d -> TOO_MANY_PEERS", peer->dev, flags, cur->dev);
	}
	if (cur->peer[peer->dev]) RET(E_PEER_ENABLED, "cuCtxEnablePeerAccess(ctx %d) from ctx %d -> PEER_ACCESS_ALREADY_ENABLED", peer->dev, cur->dev);
	cur->peer[peer->dev] = 1;
	RET(OK, "cuCtxEnablePeerAccess(ctx %d, %u) from ctx %d -> 0", peer->dev, flags, cur->dev);
}

/* ---- memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	LOCK;
	if (!cur) RET(E_INVALID_CONTEXT, "cuMemAlloc_v2(%zu) -> INVALID_CONTEXT", n);
	struct alloc *a = slot();
	if (!a || n == 0) RET(E_INVALID_VALUE, "cuMemAlloc_v2(%zu) -> INVALID_VALUE", n);
	snprintf(a->name, sizeof a->name, "/standin-cuda-%d-%u", getpid(), ++seq);
	int fd = shm_open(a->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)n) < 0) RET(2, "cuMemAlloc_v2(%zu): shm %s: %s -> OUT_OF_MEMORY", n, a->name, strerror(errno));
	a->p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (a->p == MAP_FAILED) RET(2, "cuMemAlloc_v2(%zu): mmap: %s -> OUT_OF_MEMORY", n, strerror(errno));
	a->kind = MEM_DEVICE, a->n = n, a->ctx = cur;
	*p = (uintptr_t)a->p;
	RET(OK, "cuMemAlloc_v2(%p, %zu) ctx %d -> %#llx %s", (void *)p, n, cur->dev, *p, a->name);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	LOCK;
	struct alloc *a = find(p, MEM_DEVICE);
	if (!a || (uintptr_t)a->p != p) RET(E_INVALID_VALUE, "cuMemFree_v2(%#llx) -> INVALID_VALUE (not allocated)", p);
	if (cur != a->ctx) RET(E_INVALID_CONTEXT, "cuMemFree_v2(%#llx) %s of ctx %d with ctx %d current -> INVALID_CONTEXT", p, a->name, a->ctx->dev, cur ? cur->dev : -1);
	munmap(a->p, a->n);
	shm_unlink(a->name);
	a->kind = 0;
	RET(OK, "cuMemFree_v2(%#llx) %s ctx %d -> 0", p, a->name, a->ctx->dev);
}

CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n)
{
	LOCK;
	if (!cur || !find(p, 0)) RET(E_INVALID_VALUE, "cuMemsetD8_v2(%#llx) -> INVALID_VALUE", p);
	enqueue(&cur->legacy, OP_MEMSET, p, n, v, NULL);
	RET(OK, "cuMemsetD8_v2(%#llx, %#x, %zu) -> 0 (queued on the NULL stream of ctx %d)", p, v, n, cur->dev);
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream hs)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s || !find(p, 0)) RET(E_INVALID_VALUE, "cuMemsetD8Async(%#llx) -> INVALID_VALUE", p);
	enqueue(s, OP_MEMSET, p, n, v, NULL);
	RET(OK, "cuMemsetD8Async(%#llx, %#x, %zu, %p) -> 0", p, v, n, (void *)hs);
}

CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	LOCK;
	struct alloc *a = slot();
	if (!a || posix_memalign(&a->p, 4096, n)) RET(2, "cuMemHostAlloc(%zu) -> OUT_OF_MEMORY", n);
	memset(a->p, 0, n);
	a->kind = MEM_HOST, a->n = n, a->ctx = cur;
	*p = a->p;
	RET(OK, "cuMemHostAlloc(%p, %zu, %#x) -> %p", (void *)p, n, flags, *p);
}

CUresult cuMemFreeHost(void *p)
{
	LOCK;
	struct alloc *a = find((uintptr_t)p, MEM_HOST);
	if (!a) RET(E_INVALID_VALUE, "cuMemFreeHost(%p) -> INVALID_VALUE", p);
	free(a->p);
	a->kind = 0;
	RET(OK, "cuMemFreeHost(%p) -> 0", p);
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
	LOCK;
	struct alloc *r = find((uintptr_t)p, MEM_REG);
	if (r) {
		if (!(r->flags & 2)) RET(E_INVALID_VALUE, "cuMemHostGetDevicePointer_v2(%p) -> INVALID_VALUE (registered without DEVICEMAP)", p);
		*d = (uintptr_t)p + REG_ALIAS;
		RET(OK, "cuMemHostGetDevicePointer_v2(%p, %p, %u) -> %#llx (registered)", (void *)d, p, flags, *d);
	}
	if (!find((uintptr_t)p, MEM_HOST)) RET(E_INVALID_VALUE, "cuMemHostGetDevicePointer_v2(%p) -> INVALID_VALUE", p);
	*d = (uintptr_t)p;
	RET(OK, "cuMemHostGetDevicePointer_v2(%p, %p, %u) -> %#llx", (void *)d, p, flags, *d);
}

CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
	LOCK;
	if (!p || !n) RET(E_INVALID_VALUE, "cuMemHostRegister_v2(%p, %zu, %#x) -> INVALID_VALUE", p, n, flags);
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].kind == MEM_REG && (uintptr_t)p < (uintptr_t)allocs[i].p + allocs[i].n &&
		    (uintptr_t)allocs[i].p < (uintptr_t)p + n)
			RET(E_ALREADY_REGISTERED, "cuMemHostRegister_v2(%p, %zu, %#x) -> HOST_MEMORY_ALREADY_REGISTERED", p, n, flags);
	struct alloc *a = slot();
	if (!a) RET(2, "cuMemHostRegister_v2(%zu) -> OUT_OF_MEMORY", n);
	a->kind = MEM_REG, a->p = p, a->n = n, a->ctx = cur, a->flags = flags;
	RET(OK, "cuMemHostRegister_v2(%p, %zu, %#x) -> 0", p, n, flags);
}

CUresult cuMemHostUnregister(void *p)
{
	LOCK;
	struct alloc *a = find((uintptr_t)p, MEM_REG);
	if (!a || a->p != p) RET(E_NOT_REGISTERED, "cuMemHostUnregister(%p) -> HOST_MEMORY_NOT_REGISTERED", p);
	int pending = 0;
	for (int i = 0; i < 1024; i++)
		if (streams[i] && streams[i]->live && streams[i]->head)
			pending++;
	a->kind = 0;
	RET(OK, "cuMemHostUnregister(%p) -> 0 (%d live streams with work queued)", p, pending);
}

/* ---- streams and events ---- */

CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
	LOCK;
	if (!cur) RET(E_INVALID_CONTEXT, "cuStreamCreate -> INVALID_CONTEXT");
	struct CUstream_st *s = calloc(1, sizeof *s);
	s->ctx = cur, s->flags = flags;
	for (int i = 0; i < 1024; i++)
		if (!streams[i]) { streams[i] = s; break; }
	*ps = s;
	RET(OK, "cuStreamCreate(%p, %#x) ctx %d -> %p", (void *)ps, flags, cur->dev, (void *)s);
}

CUresult cuStreamDestroy_v2(CUstream hs)
{
	LOCK;
	struct CUstream_st *s = (struct CUstream_st *)hs;
	if (s->live) {
		/* As cuda.h says: the call returns at once, the work already queued still runs and
		 * the stream goes once it is done (the device thread frees it). */
		int pending = s->head != NULL;
		s->dead = 1;
		RET(OK, "cuStreamDestroy_v2(%p) -> 0 (live, %s)", (void *)hs, pending ? "work still queued" : "idle");
	}
	for (int i = 0; i < 1024; i++)
		if (streams[i] == s) streams[i] = NULL;
	drain(s->ctx, s);
	free(s);
	RET(OK, "cuStreamDestroy_v2(%p) -> 0", (void *)hs);
}

CUresult cuStreamSynchronize(CUstream hs)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s) RET(E_INVALID_CONTEXT, "cuStreamSynchronize(%p) -> INVALID_CONTEXT", (void *)hs);
	if (s->live) {
		await_live(s);
		RET(s->ctx->fault, "cuStreamSynchronize(%p) ctx %d (live) -> %d", (void *)hs, s->ctx->dev, s->ctx->fault);
	}
	if (s == &s->ctx->legacy || !(s->flags & 1))
		sync_legacy(s->ctx);
	drain(s->ctx, s);
	RET(s->ctx->fault, "cuStreamSynchronize(%p) ctx %d -> %d", (void *)hs, s->ctx->dev, s->ctx->fault);
}

CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	LOCK;
	*e = calloc(1, sizeof(struct CUevent_st));
	RET(OK, "cuEventCreate(%p, %u) -> %p", (void *)e, flags, (void *)*e);
}

CUresult cuEventDestroy_v2(CUevent e)
{
	LOCK;
	logf_("cuEventDestroy_v2(%p) -> 0", (void *)e);
	free(e);
	pthread_mutex_unlock(&mu);
	return OK;
}

CUresult cuEventRecord(CUevent e, CUstream hs)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s || !e) RET(E_INVALID_VALUE, "cuEventRecord -> INVALID_VALUE");
	e->recorded = 1, e->done = 0;
	enqueue(s, OP_EVENT, 0, 0, 0, e);
	RET(OK, "cuEventRecord(%p, %p) -> 0", (void *)e, (void *)hs);
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	LOCK;
	if (!a->recorded || !b->recorded) RET(E_INVALID_HANDLE, "cuEventElapsedTime -> INVALID_HANDLE (not recorded)");
	if (!a->done || !b->done) RET(E_NOT_READY, "cuEventElapsedTime -> NOT_READY");
	*ms = (float)((double)(b->t - a->t) / 1e6);
	RET(OK, "cuEventElapsedTime(%p, %p, %p) -> %.6f ms", (void *)ms, (void *)a, (void *)b, *ms);
}

CUresult cuStreamWaitValue32_v2(CUstream hs, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s || flags > 1 || !hostp(addr, 4))
		RET(E_INVALID_VALUE, "cuStreamWaitValue32_v2(%p, %#llx, %u, %u) -> INVALID_VALUE", (void *)hs, addr, value, flags);
	enqueue(s, OP_WAIT, addr, flags, value, NULL);
	go_live(s);
	RET(OK, "cuStreamWaitValue32_v2(%p, %#llx, %u, %u) -> 0", (void *)hs, addr, value, flags);
}

/* ---- copies ---- */

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s || !find(dst, 0) || !find(src, 0)) RET(E_INVALID_VALUE, "cuMemcpyDtoDAsync_v2(%#llx, %#llx, %zu) -> INVALID_VALUE", dst, src, n);
	enqueue(s, OP_COPY, dst, src, n, NULL);
	RET(OK, "cuMemcpyDtoDAsync_v2(%#llx, %#llx, %zu, %p) -> 0", dst, src, n, (void *)hs);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hs)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	struct alloc *d = find(dst, 0), *sa = find(src, 0);
	if (!s || !d || !sa || d->ctx != dctx || sa->ctx != sctx)
		RET(E_INVALID_VALUE, "cuMemcpyPeerAsync(%#llx ctx %d, %#llx ctx %d, %zu) -> INVALID_VALUE", dst, dctx ? dctx->dev : -1, src, sctx ? sctx->dev : -1, n);
	enqueue(s, OP_COPY, dst, src, n, NULL);
	RET(OK, "cuMemcpyPeerAsync(%#llx, ctx %d, %#llx, ctx %d, %zu, %p) -> 0", dst, dctx->dev, src, sctx->dev, n, (void *)hs);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	LOCK;
	if (!cur || !find(src, 0)) RET(E_INVALID_VALUE, "cuMemcpyDtoH_v2(%#llx) -> INVALID_VALUE", src);
	sync_legacy(cur); /* synchronous: after the NULL stream's (and blocking streams') work */
	memcpy(dst, (void *)(uintptr_t)src, n);
	RET(cur->fault, "cuMemcpyDtoH_v2(%p, %#llx, %zu) -> %d", dst, src, n, cur->fault);
}

/* ---- IPC ---- */

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
	LOCK;
	struct alloc *a = find(p, MEM_DEVICE);
	if (!a || (uintptr_t)a->p != p) RET(E_INVALID_VALUE, "cuIpcGetMemHandle(%#llx) -> INVALID_VALUE", p);
	memset(h, 0, sizeof *h);
	snprintf(h->reserved, sizeof h->reserved, "%s %zu %d", a->name, a->n, a->ctx->dev);
	RET(OK, "cuIpcGetMemHandle(%p, %#llx) -> %s", (void *)h, p, a->name);
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
	LOCK;
	char name[48];
	size_t n;
	int dev;
	if (!cur) RET(E_INVALID_CONTEXT, "cuIpcOpenMemHandle_v2 -> INVALID_CONTEXT");
	if (sscanf(h.reserved, "%47s %zu %d", name, &n, &dev) != 3) RET(E_INVALID_HANDLE, "cuIpcOpenMemHandle_v2 -> INVALID_HANDLE");
	if (ipc_open_fail) RET(ipc_open_fail, "cuIpcOpenMemHandle_v2(%p, %s, %u) ctx %d -> %d (knob)", (void *)p, name, flags, cur->dev, ipc_open_fail);
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) RET(E_INVALID_HANDLE, "cuIpcOpenMemHandle_v2(%s): %s -> INVALID_HANDLE", name, strerror(errno));
	struct alloc *a = slot();
	a->p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	a->kind = MEM_IPC, a->n = n, a->ctx = cur;
	snprintf(a->name, sizeof a->name, "%s", name);
	*p = (uintptr_t)a->p;
	RET(OK, "cuIpcOpenMemHandle_v2(%p, %s, %u) ctx %d -> %#llx", (void *)p, name, flags, cur->dev, *p);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
	LOCK;
	struct alloc *a = find(p, MEM_IPC);
	if (!a) RET(E_INVALID_VALUE, "cuIpcCloseMemHandle(%#llx) -> INVALID_VALUE", p);
	munmap(a->p, a->n);
	a->kind = 0;
	RET(OK, "cuIpcCloseMemHandle(%#llx) %s -> 0", p, a->name);
}

/* ---- modules and kernels ---- */

static CUresult load_module(const char *call, CUmodule *m, const void *image, char *errlog, size_t errlen)
{
	if (!cur) RET(E_INVALID_CONTEXT, "%s -> INVALID_CONTEXT", call);
	const char *ptx = image;
	if (no_jit) {
		if (errlog && errlen)
			snprintf(errlog, errlen, "stand-in: PTX JIT compiler library not found (libnvidia-ptxjitcompiler.so.1)");
		RET(E_JIT_NOT_FOUND, "%s -> JIT_COMPILER_NOT_FOUND", call);
	}
	if (!strstr(ptx, ".version") || !strstr(ptx, ".entry ")) {
		if (errlog && errlen)
			snprintf(errlog, errlen, "stand-in: PTX without .version or an .entry");
		RET(E_INVALID_IMAGE, "%s -> INVALID_IMAGE", call);
	}
	*m = calloc(1, sizeof(struct CUmod_st));
	(*m)->loaded = 1;
	(*m)->ptx = strdup(ptx);
	RET(OK, "%s(%p, %zu bytes of PTX) ctx %d -> %p", call, (void *)m, strlen(ptx), cur->dev, (void *)*m);
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	LOCK;
	return load_module("cuModuleLoadData", m, image, NULL, 0);
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *opts, void **vals)
{
	LOCK;
	char *errlog = NULL;
	size_t errlen = 0;
	for (unsigned i = 0; i < n; i++) {
		if (opts[i] == 5) errlog = vals[i];                    /* CU_JIT_ERROR_LOG_BUFFER */
		if (opts[i] == 6) errlen = (size_t)(uintptr_t)vals[i]; /* ..._SIZE_BYTES */
	}
	CUresult r = load_module("cuModuleLoadDataEx", m, image, errlog, errlen);
	for (unsigned i = 0; i < n; i++)
		if (opts[i] == 6) vals[i] = (void *)(uintptr_t)(errlog ? strlen(errlog) + 1 : 0);
	return r;
}

CUresult cuModuleUnload(CUmodule m)
{
	LOCK;
	logf_("cuModuleUnload(%p) -> 0", (void *)m);
	if (m)
		free(m->ptx);
	free(m);
	pthread_mutex_unlock(&mu);
	return OK;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	LOCK;
	if (!m || !m->loaded) RET(E_INVALID_HANDLE, "cuModuleGetFunction(%s) -> INVALID_HANDLE", name);
	/* A kernel the module's PTX defines and the stand-in knows how to run. */
	char entry[80];
	snprintf(entry, sizeof entry, ".entry %s(", name);
	*f = NULL;
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (!strcmp(name, kernels[i].name) && strstr(m->ptx, entry))
			*f = &kernels[i];
	if (!*f) RET(E_NOT_FOUND, "cuModuleGetFunction(%s) -> NOT_FOUND", name);
	RET(OK, "cuModuleGetFunction(%p, %p, \"%s\") -> %p", (void *)f, (void *)m, name, (void *)*f);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
			unsigned int by, unsigned int bz, unsigned int shmem, CUstream hs, void **params, void **extra)
{
	LOCK;
	struct CUstream_st *s = stream_of(hs);
	if (!s || !f || !params) RET(E_INVALID_VALUE, "cuLaunchKernel -> INVALID_VALUE");
	unsigned long long p[8] = {0};
	for (int i = 0; i < f->nparams; i++)
		p[i] = *(unsigned long long *)params[i];
	unsigned long long a = p[0], b = p[1], c = p[2];
	enqueue(s, f->op, a, b, c, NULL);
	memcpy(s->tail->p, p, sizeof p);
	if (f->op != OP_SPIN && f->op != OP_KCOPY)
		go_live(s);
	RET(OK, "cuLaunchKernel(%s, grid %u,%u,%u, block %u,%u,%u, shmem %u, %p, args %#llx %#llx %llu, extra %p) -> 0",
	    f->name, gx, gy, gz, bx, by, bz, shmem, (void *)hs, a, b, c, (void *)extra);
}

/* ---- errors ---- */

static const char *names[][3] = {
	{"0", "CUDA_SUCCESS", "no error"},
	{"1", "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{"3", "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{"100", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{"101", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{"200", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{"201", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{"205", "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
	{"221", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
	{"304", "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
	{"400", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{"600", "CUDA_ERROR_NOT_READY", "device not ready"},
	{"700", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	{"704", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
	{"711", "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"},
	{"712", "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
	{"713", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
	{"801", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

static CUresult err(CUresult r, const char **s, int which)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (atoi(names[i][0]) == (int)r) { *s = names[i][which]; return OK; }
	*s = NULL;
	return E_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult r, const char **s) { return err(r, s, 1); }
CUresult cuGetErrorString(CUresult r, const char **s) { return err(r, s, 2); }
