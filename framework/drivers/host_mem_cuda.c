/* host_mem_cuda.c - host memory an app gives to GPUs, pinned when the run has one.
 *
 * DESIGN
 * ------
 * Copies between a GPU and pageable memory do not overlap anything: the CUDA
 * runtime stages them through its own pinned buffer synchronously. An app
 * gets overlapping copies by pinning its arrays, and gets stale output by
 * freeing a pinned array without unregistering it (the next run of a
 * comparison may be given the same addresses, still registered). So the
 * framework pins for the app: hf_host_alloc takes whole pages
 * (host_mem.c) and, when the run lists a real GPU, registers them with
 * cudaHostRegister (portable: usable from every GPU's context, registered on
 * the first GPU of the list so that no context is made on a GPU the run does
 * not use). Each registration is remembered in a list, and hf_host_free
 * unregisters exactly what was registered before it frees: registrations come
 * and go in pairs. If the system refuses to pin (locked-memory limits), the
 * memory stays plain: correct, only slower, and hf_host_pinned says so.
 *
 * The list is short (an app pins a few arrays) and guarded by one mutex; it
 * is touched only when memory is allocated, freed or asked about.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "hetfarm.h"
#include "host_mem.h"

/* One pinned allocation. */
struct pinned {
    char *p;
    size_t len;
    int ordinal; /* the GPU current when it was registered */
    struct pinned *next;
};

static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pinned *pinned_list;

/* The CUDA ordinal of the first real GPU in devs, or -1. */
static int first_gpu(const struct hf_devices *devs)
{
    for (int i = 0; devs && devs->dev && i < devs->count; i++)
        if (devs->dev[i].kind == HF_DEV_CUDA && devs->dev[i].cuda_ordinal >= 0)
            return devs->dev[i].cuda_ordinal;
    return -1;
}

/* Runs cudaHostRegister or cudaHostUnregister with `ordinal` current, then
 * puts the calling thread's current device back. */
static cudaError_t on_gpu(int ordinal, int reg, void *p, size_t len)
{
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = -1;
    cudaError_t e = cudaSetDevice(ordinal);
    if (e == cudaSuccess)
        e = reg ? cudaHostRegister(p, len, cudaHostRegisterPortable) : cudaHostUnregister(p);
    if (prev >= 0 && prev != ordinal)
        (void)cudaSetDevice(prev);
    (void)cudaGetLastError(); /* a refusal is not sticky: later calls must not see it */
    return e;
}

void *hf_host_alloc(const struct hf_devices *devs, size_t bytes)
{
    size_t len;
    void *p = hf__host_pages(bytes, &len);
    int ordinal = first_gpu(devs);
    if (!p || ordinal < 0)
        return p;
    struct pinned *pin = malloc(sizeof *pin);
    if (!pin || on_gpu(ordinal, 1, p, len) != cudaSuccess) {
        free(pin);
        return p; /* plain memory: copies from it are synchronous, but right */
    }
    *pin = (struct pinned){.p = p, .len = len, .ordinal = ordinal};
    pthread_mutex_lock(&pinned_lock);
    pin->next = pinned_list;
    pinned_list = pin;
    pthread_mutex_unlock(&pinned_lock);
    return p;
}

void hf_host_free(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&pinned_lock);
    struct pinned **at = &pinned_list, *pin = NULL;
    while (*at && (*at)->p != (char *)p)
        at = &(*at)->next;
    if (*at) {
        pin = *at;
        *at = pin->next;
    }
    pthread_mutex_unlock(&pinned_lock);
    if (pin) {
        (void)on_gpu(pin->ordinal, 0, p, pin->len);
        free(pin);
    }
    free(p);
}

int hf_host_pinned(const void *p)
{
    int found = 0;
    pthread_mutex_lock(&pinned_lock);
    for (const struct pinned *pin = pinned_list; pin && !found; pin = pin->next)
        found = (uintptr_t)p >= (uintptr_t)pin->p && (uintptr_t)p < (uintptr_t)pin->p + pin->len;
    pthread_mutex_unlock(&pinned_lock);
    return found;
}
