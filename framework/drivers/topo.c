/* topo.c - the machine's topology through hwloc: cores, NUMA nodes, pinning, GPU locality.
 *
 * DESIGN
 * ------
 * One hwloc topology is loaded once per process (pthread_once) and shared
 * read-only by every thread afterwards: loading it takes milliseconds and the
 * CPU team, every GPU host thread and `hetfarm devices` all need it. I/O
 * objects are kept (HWLOC_TYPE_FILTER_KEEP_IMPORTANT) so that a GPU's PCI bus
 * id leads to the cores of its NUMA node, where its host thread belongs.
 * hwloc's OpenCL and GL components are left out: they list OpenCL devices
 * and X displays, which nothing here uses, and the OpenCL one starts the
 * OpenCL runtime (on an H100 host: a topology load of 35-43 ms against
 * 10-18 without them, and 0.15-0.17 s against 0.11-0.13 for a small run
 * on the CPU alone).
 *
 * "Cores" are physical cores of the cpuset this process may use (a container
 * or `taskset` may allow fewer than the machine has), numbered 0..n-1 in
 * hwloc's logical order; the CPU team and the GPU host threads divide that
 * range between them, so pinning by core index never oversubscribes a core.
 * A GPU host thread must start its next launch within microseconds of being
 * woken, so its core is its own: hf_topo_confine_threads moves every other
 * thread of the process (the main thread, OpenMP pools, OpenBLAS's workers,
 * which spin for milliseconds after each parallel region) off those cores
 * while a run lasts. On the 2x H200 node, threads spinning there delayed a
 * GPU's first bundle of a round by 2-8 ms, a whole round at n = 2048.
 * Without a usable topology every query degrades gracefully: the core count
 * falls back to the online CPUs and pinning reports HF_ENOTSUP, which callers
 * treat as "run unpinned".
 */
#include "device.h"

#include <dirent.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>


static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topo;     /* NULL when hwloc failed */
static hwloc_const_cpuset_t allowed;
static char cpu_model[256];

/* Reads "model name" from /proc/cpuinfo (hwloc's CPUModel info is the
 * fallback, e.g. on machines whose cpuinfo lacks the field). */
static void read_cpu_model(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(cpu_model, sizeof cpu_model, "%s", v);
        cpu_model[strcspn(cpu_model, "\n")] = '\0';
        break;
    }
    if (f)
        fclose(f);
    if (cpu_model[0] == '\0' && topo) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
        const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
        if (m)
            snprintf(cpu_model, sizeof cpu_model, "%s", m);
    }
    if (cpu_model[0] == '\0')
        snprintf(cpu_model, sizeof cpu_model, "unknown CPU");
}

static void topo_init(void)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) == 0) {
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        (void)hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
        (void)hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
        if (hwloc_topology_load(t) == 0) {
            topo = t;
            allowed = hwloc_topology_get_allowed_cpuset(t);
        } else {
            hwloc_topology_destroy(t);
        }
    }
    read_cpu_model();
}

static hwloc_topology_t get_topo(void)
{
    pthread_once(&topo_once, topo_init);
    return topo;
}

/* The i-th allowed physical core (logical order), or NULL. */
static hwloc_obj_t nth_core(int i)
{
    hwloc_topology_t t = get_topo();
    if (!t || i < 0)
        return NULL;
    return hwloc_get_obj_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_CORE, (unsigned)i);
}

/* Physical cores, not hardware threads: the CPU team runs one compute thread
 * per core, as hyperthreads share the FMA units GEMM saturates. */
int hf_topo_cores(void)
{
    hwloc_topology_t t = get_topo();
    int n = t ? hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_CORE) : 0;
    if (n <= 0) {
        /* Some VMs expose PUs without cores; count what may run then. */
        n = t ? hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU) : 0;
        if (n <= 0)
            n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    }
    return n > 0 ? n : 1;
}

int hf_topo_numa_nodes(void)
{
    hwloc_topology_t t = get_topo();
    int n = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) : 0;
    return n > 0 ? n : 1;
}

/* Binds the calling thread to the PUs of cores [first, first + count). */
int hf_topo_pin_cores(int first, int count)
{
    hwloc_topology_t t = get_topo();
    if (!t)
        return hf_fail(HF_ENOTSUP, "pinning: hwloc could not load the topology");
    int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_CORE);
    if (first < 0 || count <= 0 || first + count > ncores)
        return hf_fail(HF_ERANGE, "pinning: cores %d..%d asked for, %d available", first,
                       first + count - 1, ncores);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return hf_fail(HF_ENOMEM, "pinning: out of memory");
    for (int i = first; i < first + count; i++) {
        hwloc_obj_t core = nth_core(i);
        if (core)
            hwloc_bitmap_or(set, set, core->cpuset);
    }
    /* All PUs of each core: the OS may use either hyperthread; never ones
     * outside the allowed cpuset, which would make the binding fail. */
    hwloc_bitmap_and(set, set, allowed);
    int rc = hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    if (rc != 0)
        return hf_fail(HF_ENOTSUP, "pinning to cores %d..%d failed", first, first + count - 1);
    return 0;
}

/* The logical index of the first allowed core inside `set` that `taken`
 * (NULL: none) does not mark, or -1. */
static int first_free_core_in(hwloc_const_cpuset_t set, const unsigned char *taken)
{
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = nth_core(i);
        if (core && hwloc_bitmap_intersects(core->cpuset, set) && !(taken && taken[i]))
            return i;
    }
    return -1;
}

/* The GPU's nearest non-I/O ancestor (usually its NUMA node or package)
 * gives the cores whose memory traffic to the GPU crosses no socket link. */
int hf_topo_core_near_pci(const char *busid, const unsigned char *taken)
{
    hwloc_topology_t t = get_topo();
    if (!t || !busid)
        return -1;
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(t, busid);
    if (!pci)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, pci);
    if (!anc || !anc->cpuset)
        return -1;
    return first_free_core_in(anc->cpuset, taken);
}

struct hf_topo_confinement {
    int cpus;                /* logical CPUs left to them */
    int n;
    pid_t *tid;              /* threads moved, with ... */
    hwloc_bitmap_t *before;  /* ... the binding each had */
};

/* Appends thread `tid` and its current binding to c; 0 or -1. */
static int remember(struct hf_topo_confinement *c, pid_t tid)
{
    pid_t *t = realloc(c->tid, (size_t)(c->n + 1) * sizeof *t);
    if (t)
        c->tid = t;
    hwloc_bitmap_t *b = realloc(c->before, (size_t)(c->n + 1) * sizeof *b);
    if (b)
        c->before = b;
    hwloc_bitmap_t mask = t && b ? hwloc_bitmap_alloc() : NULL;
    if (!mask || hwloc_get_proc_cpubind(topo, tid, mask, HWLOC_CPUBIND_THREAD) != 0) {
        hwloc_bitmap_free(mask);
        return -1;
    }
    c->tid[c->n] = tid;
    c->before[c->n++] = mask;
    return 0;
}

int hf_topo_confine_threads(const unsigned char *reserved, int ncores,
                            hf_topo_confinement_t *out)
{
    *out = NULL;
    hwloc_topology_t t = get_topo();
    if (!t)
        return 0;
    hwloc_bitmap_t keep = hwloc_bitmap_dup(allowed);
    if (!keep)
        return hf_fail(HF_ENOMEM, "confining threads: out of memory");
    int any = 0;
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t core = reserved[i] ? nth_core(i) : NULL;
        if (core) {
            hwloc_bitmap_andnot(keep, keep, core->cpuset);
            any = 1;
        }
    }
    /* Nothing reserved, or nothing left for the others: leave every binding. */
    if (!any || hwloc_bitmap_iszero(keep)) {
        hwloc_bitmap_free(keep);
        return 0;
    }
    struct hf_topo_confinement *c = calloc(1, sizeof *c);
    DIR *dir = c ? opendir("/proc/self/task") : NULL;
    if (!dir) {
        free(c);
        hwloc_bitmap_free(keep);
        return 0; /* no /proc: best effort, like pinning itself */
    }
    struct dirent *ent;
    while ((ent = readdir(dir))) {
        pid_t tid = (pid_t)atol(ent->d_name);
        /* A thread that ended meanwhile, or refuses, keeps what it had. */
        if (tid > 0 && remember(c, tid) == 0 &&
            hwloc_set_proc_cpubind(t, tid, keep, HWLOC_CPUBIND_THREAD) != 0)
            hwloc_bitmap_free(c->before[--c->n]);
    }
    closedir(dir);
    c->cpus = hwloc_bitmap_weight(keep);
    hwloc_bitmap_free(keep);
    *out = c;
    return 0;
}

int hf_topo_confined_cpus(hf_topo_confinement_t c)
{
    return c && c->cpus > 0 ? c->cpus : 0;
}

void hf_topo_release_threads(hf_topo_confinement_t c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++) {
        hwloc_set_proc_cpubind(topo, c->tid[i], c->before[i], HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(c->before[i]);
    }
    free(c->tid);
    free(c->before);
    free(c);
}

const char *hf_topo_cpu_model(void)
{
    get_topo();
    return cpu_model;
}

/* Prints the GPUs the CUDA driver sees, with the core nearest to each. */
static void describe_gpus(FILE *f)
{
#ifdef HF_HAVE_CUDA
    int n = hf_cuda_device_count();
    if (n <= 0) {
        fprintf(f, "GPUs:       no CUDA device found\n");
        return;
    }
    fprintf(f, "GPUs:       %d CUDA device%s\n", n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        char name[128] = "?", busid[64] = "";
        size_t mem = 0;
        if (hf_cuda_describe(i, name, sizeof name, busid, sizeof busid, &mem) != 0) {
            fprintf(f, "  cuda%d      (cannot query: %s)\n", i, hf_last_error());
            continue;
        }
        int core = busid[0] ? hf_topo_core_near_pci(busid, NULL) : -1;
        fprintf(f, "  cuda%-2d     %s, %.1f GiB, PCI %s", i, name, (double)mem / (1 << 30),
                busid[0] ? busid : "?");
        if (core >= 0)
            fprintf(f, ", nearest core %d", core);
        fputc('\n', f);
    }
#else
    fprintf(f, "GPUs:       CUDA: not built (no nvcc at build time)\n");
#endif
}

/* `hetfarm devices`: what a run on this machine can use, in plain words. */
void hf_topo_describe(void *file)
{
    FILE *f = file;
    hwloc_topology_t t = get_topo();
    fprintf(f, "CPU:        %s\n", hf_topo_cpu_model());
    if (!t) {
        fprintf(f, "Cores:      %d (hwloc could not load the topology)\n", hf_topo_cores());
    } else {
        int pus = hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU);
        int pkgs = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
        fprintf(f, "Cores:      %d physical, %d hardware threads, %d package%s (allowed to "
                   "this process)\n",
                hf_topo_cores(), pus, pkgs, pkgs == 1 ? "" : "s");
        int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
        fprintf(f, "NUMA nodes: %d\n", nn > 0 ? nn : 1);
        for (int i = 0; i < nn; i++) {
            hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
            char cpus[256] = "";
            if (node->cpuset)
                hwloc_bitmap_list_snprintf(cpus, sizeof cpus, node->cpuset);
            fprintf(f, "  node %u    %.1f GiB, PUs %s\n", node->os_index,
                    (double)node->attr->numanode.local_memory / (1 << 30), cpus);
        }
    }
    describe_gpus(f);
}
