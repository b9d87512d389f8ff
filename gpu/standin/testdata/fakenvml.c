/*
 * A stand-in libnvidia-ml.so.1 for tests: the NVML calls tetris-hil makes, with nvml.h's
 * prototypes, on a made-up server of standin_nvml_gpus (default 8) GPUs whose every value is
 * recognisable (bus 0x1<i>, UUID GPU-57a4d10e-0000-4000-8000-00000000000<i>, ...). Every call is
 * logged, one line each, to the file named by the environment variable STANDIN_NVML_LOG (read
 * when the library is loaded) or set later with standin_nvml_set_log.
 *
 * Built with -DSTANDIN_REAL_HEADERS it includes NVIDIA's nvml.h instead of its own declarations,
 * so that the compiler checks every prototype here against the header (scripts/gpu-abi-check.sh).
 * -DSTANDIN_NO_TEMPERATURE_V leaves out nvmlDeviceGetTemperatureV, as drivers before it lack it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef STANDIN_REAL_HEADERS
#include <nvml.h>
#else
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlClockType_t;
typedef int nvmlTemperatureSensors_t;
typedef int nvmlEnableState_t;
typedef int nvmlGpuTopologyLevel_t;
typedef int nvmlGpuP2PCapsIndex_t;
typedef int nvmlGpuP2PStatus_t;
typedef struct nvmlPciInfo_st {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int version;
	nvmlTemperatureSensors_t sensorType;
	int temperature;
} nvmlTemperature_t;
#define nvmlTemperature_v1 ((unsigned int)(sizeof(nvmlTemperature_t) | (1 << 24U)))
#endif

/* Return values and enum values, as nvml.h has them (checked by gpu-abi-check.sh too). */
enum {
	R_SUCCESS = 0, R_UNINITIALIZED = 1, R_INVALID_ARGUMENT = 2, R_NOT_SUPPORTED = 3,
	R_NO_PERMISSION = 4, R_INSUFFICIENT_SIZE = 7, R_ARGUMENT_VERSION_MISMATCH = 25,
	R_DEPRECATED = 26,
};

#define MAXGPUS 64
#define NVLINKS 18 /* links per stand-in GPU: every one up */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int logfd = -1;
static int ngpus = 8;
static int inits;             /* nvmlInit_v2 minus nvmlShutdown */
static int deprecated_fail;   /* 1: the calls NVML 13 deprecates answer NVML_ERROR_DEPRECATED */
static int temperature_fail;  /* 1: no temperature call works (NOT_SUPPORTED) */
static int reasons_fail;      /* 1: no clocks-event-reasons call works (NOT_SUPPORTED) */
static int lock_fail = -1;    /* >= 0: nvmlDeviceSetGpuLockedClocks of that GPU: NO_PERMISSION */
static unsigned locked[MAXGPUS][2];
static cpu_set_t avail;       /* the CPUs this process could use when the library was loaded */
static struct nvmlDevice_st { int index; } devs[MAXGPUS];

static void logf_(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof line, "pid=%d tid=%ld ", getpid(), (long)syscall(SYS_gettid));
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	pthread_mutex_lock(&mu);
	if (logfd >= 0 && write(logfd, line, n) < 0) {
		/* nothing to do: a test reading the log will miss the line */
	}
	pthread_mutex_unlock(&mu);
}

void standin_nvml_set_log(const char *path)
{
	pthread_mutex_lock(&mu);
	if (logfd >= 0)
		close(logfd);
	logfd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	pthread_mutex_unlock(&mu);
}

/* standin_nvml_set changes a knob: gpus, deprecated_fail, temperature_fail, reasons_fail,
 * lock_fail. It answers 0, or -1 for an unknown knob. */
int standin_nvml_set(const char *knob, long v)
{
	if (!strcmp(knob, "gpus") && v >= 1 && v <= MAXGPUS) ngpus = (int)v;
	else if (!strcmp(knob, "deprecated_fail")) deprecated_fail = (int)v;
	else if (!strcmp(knob, "temperature_fail")) temperature_fail = (int)v;
	else if (!strcmp(knob, "reasons_fail")) reasons_fail = (int)v;
	else if (!strcmp(knob, "lock_fail")) lock_fail = (int)v;
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
	standin_nvml_set_log(getenv("STANDIN_NVML_LOG"));
	standin_nvml_set("gpus", envl("STANDIN_NVML_GPUS", 8));
	deprecated_fail = (int)envl("STANDIN_NVML_DEPRECATED_FAIL", 0);
	sched_getaffinity(0, sizeof avail, &avail);
	for (int i = 0; i < MAXGPUS; i++)
		devs[i].index = i;
}

static int idx(nvmlDevice_t d)
{
	for (int i = 0; i < ngpus; i++)
		if (d == &devs[i])
			return i;
	return -1;
}

#define DEV(d, name)                                                        \
	int i = idx(d);                                                     \
	if (!inits) { logf_("%s(%p) -> UNINITIALIZED", name, (void *)d); return R_UNINITIALIZED; } \
	if (i < 0) { logf_("%s(%p) -> INVALID_ARGUMENT", name, (void *)d); return R_INVALID_ARGUMENT; }

/* The CPU GPU i is local to: the i-th (mod count) CPU this process may use, so that pinning on a
 * small test machine lands somewhere real and GPUs land on different CPUs where there are two. */
static int cpu_of(int i)
{
	int n = CPU_COUNT(&avail), k = i % (n ? n : 1);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &avail) && k-- == 0)
			return c;
	return 0;
}

nvmlReturn_t nvmlInit_v2(void)
{
	inits++;
	logf_("nvmlInit_v2() -> SUCCESS");
	return R_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	if (!inits) { logf_("nvmlShutdown() -> UNINITIALIZED"); return R_UNINITIALIZED; }
	inits--;
	logf_("nvmlShutdown() -> SUCCESS");
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!inits) return R_UNINITIALIZED;
	if (!n) return R_INVALID_ARGUMENT;
	*n = (unsigned)ngpus;
	logf_("nvmlDeviceGetCount_v2(%p) -> %u", (void *)n, *n);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *d)
{
	if (!inits) return R_UNINITIALIZED;
	if (!d || index >= (unsigned)ngpus) return R_INVALID_ARGUMENT;
	*d = &devs[index];
	logf_("nvmlDeviceGetHandleByIndex_v2(%u, %p) -> %p", index, (void *)d, (void *)*d);
	return R_SUCCESS;
}

static nvmlReturn_t str(const char *name, char *buf, unsigned int len, const char *v)
{
	if (!buf) return R_INVALID_ARGUMENT;
	if (strlen(v) + 1 > len) { logf_("%s(len %u) -> INSUFFICIENT_SIZE", name, len); return R_INSUFFICIENT_SIZE; }
	strcpy(buf, v);
	logf_("%s(%p, %u) -> \"%s\"", name, (void *)buf, len, v);
	return R_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	if (!inits) return R_UNINITIALIZED;
	return str("nvmlSystemGetDriverVersion", v, len, "535.261.03-standin");
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len)
{
	if (!inits) return R_UNINITIALIZED;
	return str("nvmlSystemGetNVMLVersion", v, len, "12.535.261.03-standin");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	if (!inits) return R_UNINITIALIZED;
	if (!v) return R_INVALID_ARGUMENT;
	*v = 12020;
	logf_("nvmlSystemGetCudaDriverVersion_v2(%p) -> %d", (void *)v, *v);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
	DEV(d, "nvmlDeviceGetUUID");
	char v[64];
	snprintf(v, sizeof v, "GPU-57a4d10e-0000-4000-8000-%012x", i);
	return str("nvmlDeviceGetUUID", uuid, len, v);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	DEV(d, "nvmlDeviceGetName");
	char v[64];
	snprintf(v, sizeof v, "Stand-in GPU %d", i);
	return str("nvmlDeviceGetName", name, len, v);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	DEV(d, "nvmlDeviceGetPciInfo_v3");
	if (!p) return R_INVALID_ARGUMENT;
	memset(p, 0, sizeof *p);
	p->domain = 0;
	p->bus = 0x10 + (unsigned)i;
	p->device = 0;
	p->pciDeviceId = 0x233010de;
	p->pciSubSystemId = 0x17ee10de + (unsigned)i;
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus & 0xff);
	snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus & 0xff);
	logf_("nvmlDeviceGetPciInfo_v3(%d, %p) -> busId \"%s\"", i, (void *)p, p->busId);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	DEV(d, "nvmlDeviceGetMemoryInfo");
	if (!m) return R_INVALID_ARGUMENT;
	m->total = 80ULL * 1000000000 + (unsigned long long)i;
	m->used = 1000000ULL * (unsigned long long)(i + 1);
	m->free = m->total - m->used;
	logf_("nvmlDeviceGetMemoryInfo(%d, %p) -> total %llu", i, (void *)m, m->total);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	DEV(d, "nvmlDeviceGetNumaNodeId");
	if (!node) return R_INVALID_ARGUMENT;
	*node = (unsigned)(i * 2 / ngpus);
	logf_("nvmlDeviceGetNumaNodeId(%d, %p) -> %u", i, (void *)node, *node);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int cpuSetSize, unsigned long *cpuSet)
{
	DEV(d, "nvmlDeviceGetCpuAffinity");
	if (!cpuSet || cpuSetSize == 0) return R_INVALID_ARGUMENT;
	int c = cpu_of(i);
	if ((unsigned)c / 64 >= cpuSetSize) return R_INSUFFICIENT_SIZE;
	memset(cpuSet, 0, cpuSetSize * sizeof *cpuSet);
	cpuSet[c / 64] = 1UL << (c % 64);
	logf_("nvmlDeviceGetCpuAffinity(%d, %u, %p) -> cpu %d", i, cpuSetSize, (void *)cpuSet, c);
	return R_SUCCESS;
}

/* As the real call: binds the calling thread to the GPU's CPUs. */
nvmlReturn_t nvmlDeviceSetCpuAffinity(nvmlDevice_t d)
{
	DEV(d, "nvmlDeviceSetCpuAffinity");
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu_of(i), &s);
	int err = sched_setaffinity(0, sizeof s, &s);
	logf_("nvmlDeviceSetCpuAffinity(%d) -> cpu %d, errno %d", i, cpu_of(i), err ? errno : 0);
	return err ? 17 /* NVML_ERROR_OPERATING_SYSTEM */ : R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *active)
{
	DEV(d, "nvmlDeviceGetNvLinkState");
	if (!active) return R_INVALID_ARGUMENT;
	if (link >= NVLINKS) return R_INVALID_ARGUMENT;
	*active = 1;
	logf_("nvmlDeviceGetNvLinkState(%d, %u, %p) -> 1", i, link, (void *)active);
	return R_SUCCESS;
}

static unsigned clock_of(int i, int type, int max)
{
	switch (type) {
	case 0: case 1: /* graphics, SM */
		if (!max && locked[i][1])
			return locked[i][1];
		return max ? 1980 : 1400 + (unsigned)i;
	case 2: /* memory */
		return max ? 2619 : 2600 + (unsigned)i;
	default:
		return 1000;
	}
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz)
{
	DEV(d, "nvmlDeviceGetMaxClockInfo");
	if (!mhz) return R_INVALID_ARGUMENT;
	*mhz = clock_of(i, (int)type, 1);
	logf_("nvmlDeviceGetMaxClockInfo(%d, %d, %p) -> %u", i, (int)type, (void *)mhz, *mhz);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz)
{
	DEV(d, "nvmlDeviceGetClockInfo");
	if (!mhz) return R_INVALID_ARGUMENT;
	*mhz = clock_of(i, (int)type, 0);
	logf_("nvmlDeviceGetClockInfo(%d, %d, %p) -> %u", i, (int)type, (void *)mhz, *mhz);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	DEV(d, "nvmlDeviceGetCudaComputeCapability");
	if (!major || !minor) return R_INVALID_ARGUMENT;
	*major = 9;
	*minor = i % 2;
	logf_("nvmlDeviceGetCudaComputeCapability(%d, %p, %p) -> %d.%d", i, (void *)major, (void *)minor, *major, *minor);
	return R_SUCCESS;
}

static int temperature(int i) { return 40 + i; }

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int *t)
{
	DEV(d, "nvmlDeviceGetTemperature");
	if (!t || sensor != 0) return R_INVALID_ARGUMENT;
	if (deprecated_fail || temperature_fail) {
		logf_("nvmlDeviceGetTemperature(%d) -> %s", i, temperature_fail ? "NOT_SUPPORTED" : "DEPRECATED");
		return temperature_fail ? R_NOT_SUPPORTED : R_DEPRECATED;
	}
	*t = (unsigned)temperature(i);
	logf_("nvmlDeviceGetTemperature(%d, %d, %p) -> %u", i, (int)sensor, (void *)t, *t);
	return R_SUCCESS;
}

#ifndef STANDIN_NO_TEMPERATURE_V
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t d, nvmlTemperature_t *t)
{
	DEV(d, "nvmlDeviceGetTemperatureV");
	if (!t) return R_INVALID_ARGUMENT;
	if (t->version != nvmlTemperature_v1) {
		logf_("nvmlDeviceGetTemperatureV(%d, version %#x) -> ARGUMENT_VERSION_MISMATCH", i, t->version);
		return R_ARGUMENT_VERSION_MISMATCH;
	}
	if (temperature_fail) {
		logf_("nvmlDeviceGetTemperatureV(%d) -> NOT_SUPPORTED", i);
		return R_NOT_SUPPORTED;
	}
	t->temperature = temperature(i);
	logf_("nvmlDeviceGetTemperatureV(%d, %p {version %#x, sensor %d}) -> %d", i, (void *)t, t->version, (int)t->sensorType, t->temperature);
	return R_SUCCESS;
}
#endif

/* GPU i's clock event reasons: idle (0x1) on even GPUs, SW power cap (0x4) on odd ones, and
 * applications clocks setting (0x2) while its clocks are locked. */
static unsigned long long reasons(int i)
{
	return (i % 2 ? 0x4ULL : 0x1ULL) | (locked[i][1] ? 0x2ULL : 0);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	DEV(d, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!r) return R_INVALID_ARGUMENT;
	if (reasons_fail) { logf_("nvmlDeviceGetCurrentClocksEventReasons(%d) -> NOT_SUPPORTED", i); return R_NOT_SUPPORTED; }
	*r = reasons(i);
	logf_("nvmlDeviceGetCurrentClocksEventReasons(%d, %p) -> %#llx", i, (void *)r, *r);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
	DEV(d, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (!r) return R_INVALID_ARGUMENT;
	if (reasons_fail || deprecated_fail) {
		logf_("nvmlDeviceGetCurrentClocksThrottleReasons(%d) -> %s", i, reasons_fail ? "NOT_SUPPORTED" : "DEPRECATED");
		return reasons_fail ? R_NOT_SUPPORTED : R_DEPRECATED;
	}
	*r = reasons(i);
	logf_("nvmlDeviceGetCurrentClocksThrottleReasons(%d, %p) -> %#llx", i, (void *)r, *r);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t d, unsigned int lo, unsigned int hi)
{
	DEV(d, "nvmlDeviceSetGpuLockedClocks");
	if (i == lock_fail) { logf_("nvmlDeviceSetGpuLockedClocks(%d, %u, %u) -> NO_PERMISSION", i, lo, hi); return R_NO_PERMISSION; }
	if (lo > hi || hi > 1980) { logf_("nvmlDeviceSetGpuLockedClocks(%d, %u, %u) -> INVALID_ARGUMENT", i, lo, hi); return R_INVALID_ARGUMENT; }
	locked[i][0] = lo;
	locked[i][1] = hi;
	logf_("nvmlDeviceSetGpuLockedClocks(%d, %u, %u) -> SUCCESS", i, lo, hi);
	return R_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t d)
{
	DEV(d, "nvmlDeviceResetGpuLockedClocks");
	locked[i][0] = locked[i][1] = 0;
	logf_("nvmlDeviceResetGpuLockedClocks(%d) -> SUCCESS", i);
	return R_SUCCESS;
}

/* Topology: the same GPU is INTERNAL (0); GPUs of one half share a host bridge (NODE, 40); the
 * halves meet at SYSTEM (50). */
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t *lvl)
{
	int i = idx(a), j = idx(b);
	if (!inits) return R_UNINITIALIZED;
	if (i < 0 || j < 0 || !lvl) return R_INVALID_ARGUMENT;
	*lvl = i == j ? 0 : (i * 2 / ngpus == j * 2 / ngpus ? 40 : 50);
	logf_("nvmlDeviceGetTopologyCommonAncestor(%d, %d, %p) -> %d", i, j, (void *)lvl, (int)*lvl);
	return R_SUCCESS;
}

/* P2P: OK for read, write and NVLink; atomics "not supported" (5) between the halves. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t c, nvmlGpuP2PStatus_t *st)
{
	int i = idx(a), j = idx(b);
	if (!inits) return R_UNINITIALIZED;
	if (i < 0 || j < 0 || !st) return R_INVALID_ARGUMENT;
	*st = (c == 3 && i * 2 / ngpus != j * 2 / ngpus) ? 5 : 0;
	logf_("nvmlDeviceGetP2PStatus(%d, %d, %d, %p) -> %d", i, j, (int)c, (void *)st, (int)*st);
	return R_SUCCESS;
}
