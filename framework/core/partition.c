/* partition.c - the default partitioner and bundler plug-ins.
 *
 * DESIGN
 * ------
 * The design is simple: a load is a range of `units` [0, units) and the default
 * partitioner cuts it into equal ranges of `grain` units, the last one short when
 * grain does not divide units. Work and bytes are spread in proportion to units,
 * computed from cumulative boundaries (total * end / units minus total * begin /
 * units) so the chunks' shares add back up to the load's totals without drift.
 *
 * The default bundler merges a run of contiguous chunks into one bundle covering
 * their union: a GPU then gets one transfer and one kernel launch. It refuses
 * chunks that are not contiguous (an engine or scheduler bug) instead of quietly
 * covering a gap, since a bundle that spans a gap would run units twice.
 *
 * Both are plain functions with the app callbacks' signatures, so an app can
 * name them in its table or call them from its own plug-in (matmul does, after
 * choosing its grain).
 */
#include "hetfarm.h"

/* Cuts the load into ranges of `grain` units. With out == NULL, or when cap is
 * too small, it still returns the number of chunks the load makes; it writes at
 * most `cap` of them. grain == 0 is a programmer error. */
size_t hf_partition_even(void *ctx, const struct hf_load *load, size_t grain,
                         struct hf_chunk *out, size_t cap)
{
    (void)ctx;
    HF_ASSERT_MSG(load != NULL, "hf_partition_even: load is NULL");
    HF_ASSERT_MSG(grain > 0, "hf_partition_even: grain must be at least 1");

    size_t units = load->units;
    /* Written without units + grain - 1 so that a huge units cannot overflow. */
    size_t count = units / grain + (units % grain != 0);
    if (out == NULL)
        return count;

    size_t n = count < cap ? count : cap;
    for (size_t i = 0; i < n; i++) {
        size_t begin = i * grain;
        size_t end = units - begin > grain ? begin + grain : units;
        double fb = (double)begin / (double)units, fe = (double)end / (double)units;
        out[i].index = i;
        out[i].begin = begin;
        out[i].end = end;
        out[i].work = load->work * fe - load->work * fb;
        out[i].bytes = load->bytes * fe - load->bytes * fb;
    }
    return count;
}

/* Merges chunks c[0..n-1] into one bundle covering [c[0].begin, c[n-1].end).
 * Sets the span, work and bytes; `load` and `device` are the caller's to set. */
int hf_bundle_merge(void *ctx, const struct hf_chunk *c, size_t n, struct hf_bundle *out)
{
    (void)ctx;
    if (c == NULL || out == NULL || n == 0)
        return hf_fail(HF_EINVAL, "hf_bundle_merge: no chunks to bundle");

    double work = c[0].work, bytes = c[0].bytes;
    for (size_t i = 1; i < n; i++) {
        if (c[i].index != c[i - 1].index + 1 || c[i].begin != c[i - 1].end)
            return hf_fail(HF_EINVAL,
                           "hf_bundle_merge: chunk %zu [%zu, %zu) does not follow chunk %zu "
                           "[%zu, %zu)",
                           c[i].index, c[i].begin, c[i].end, c[i - 1].index, c[i - 1].begin,
                           c[i - 1].end);
        work += c[i].work;
        bytes += c[i].bytes;
    }
    out->first = c[0].index;
    out->count = n;
    out->begin = c[0].begin;
    out->end = c[n - 1].end;
    out->work = work;
    out->bytes = bytes;
    return 0;
}
