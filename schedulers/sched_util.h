/* sched_util.h - helpers shared by the schedulers (internal, not a public API).
 *
 * Every scheduler here ends up doing the same few things: turn shares into
 * whole numbers of chunks, lay those counts out as contiguous per-device
 * buffers, hand a GPU its buffer as one bundle and a CPU one chunk at a time,
 * and make sure a retired device's untouched buffer still gets run by someone.
 */
#ifndef HF_SCHED_UTIL_H
#define HF_SCHED_UTIL_H

#include "sched.h"

/* The chunks [lo, hi) of one device's buffer not yet handed out. */
struct hf__buf {
    size_t lo, hi;
};

/* Splits n chunks into counts[0..ndev-1] in proportion to `rate` (work/s or any
 * weight; devices with rate <= 0 or alive[d] == 0 get nothing). Each device first
 * gets the floor of its exact share; each chunk left over then goes to the device
 * that would finish it soonest, (counts[d] + 1) / rate[d], so that rounding never
 * lengthens the round by a whole slow chunk. alive may be NULL. Returns the
 * number of devices that got a positive weight (0: counts are all zero). */
int hf__split_counts(size_t n, const double *rate, const int *alive, int ndev, size_t *counts);

/* Lays counts out as contiguous buffers starting at chunk `base`: GPUs first in
 * index order, then CPUs, so each CPU buffer's tail (where GPUs steal) is its
 * high end and CPU buffers sit next to each other. */
void hf__layout(struct hf__buf *buf, const size_t *counts, const struct hf_device_info *dev,
                int ndev, size_t base);

/* The devices that have chunks in `counts`, in the order hf__layout lays
 * their buffers out, into order[]; returns how many (the last of them gets
 * whatever a cut leaves at the load's end). */
int hf__layout_order(const struct hf_device_info *dev, int ndev, const size_t *counts, int *order);

/* The work, and the bytes, of a buffer's chunks in round r. */
double hf__buf_work(const struct hf_round *r, const struct hf__buf *b);
double hf__buf_bytes(const struct hf_round *r, const struct hf__buf *b);

/* Hands device d `count` chunks (at least 1, at most what is left) from the
 * front of its own buffer. Returns 1, or 0 when it is empty. */
int hf__take_front(struct hf__buf *buf, int d, size_t count, struct hf_span *out);

/* Hands device d work from its own buffer: the whole buffer as one span for a
 * GPU, one chunk from the front for a CPU. Returns 1, or 0 when it is empty. */
int hf__take_own(struct hf__buf *buf, const struct hf_device_info *dev, int d,
                 struct hf_span *out);

/* Takes `count` chunks (at least 1, at most what is left) from the tail of
 * buffer `from` for another device; marks the span stolen. Returns 1 or 0. */
int hf__take_tail(struct hf__buf *buf, int from, size_t count, struct hf_span *out);

/* A retired device's buffer must still run: hands device d all of it (GPU) or
 * one chunk of it (CPU), from the first retired device that has chunks left.
 * Returns 1, or 0 when no retired device holds work. */
int hf__take_orphan(struct hf__buf *buf, const struct hf_device_info *dev, const int *alive,
                    int ndev, int d, struct hf_span *out);

/* Where the chunks [base, r->nchunks) do not cost the same (their `work`
 * differs: graph slices, irregular loads), turns counts planned with the mean
 * chunk work into a cut of the cumulative work (issue 18): in hf__layout's
 * order, each device gets the run of chunks whose work comes nearest its count
 * times the mean; rounding leftovers go to the layout's last device. Uniform
 * chunks leave counts as they are. */
void hf__cost_cut(const struct hf_round *r, size_t base, const struct hf_device_info *dev,
                  int ndev, size_t *counts);

/* hf__cost_cut for devices that do not all see a chunk's cost alike (a GPU
 * pays for its bytes, a CPU for every chunk it starts): device d's cost of
 * chunk i is coef[3d] + work_i * coef[3d + 1] + bytes_i * coef[3d + 2]
 * seconds, and counts (planned with the mean chunk) are turned into the runs,
 * in hf__layout's order, that give every device the same multiple of its
 * planned time counts[d] x its cost of the mean chunk: where the cheap chunks
 * are copy-bound on a GPU, the GPU whose run holds them gets fewer of them than
 * a cut of the work would give it. Each device's target also takes back what
 * the device before it fell short of its own (in mean chunks), as the
 * cumulative cut does, so that one dear chunk at a boundary does not push
 * every later run along the load. The multiple is found by bisection;
 * rounding leftovers go to the layout's last device. Chunks alike in work and
 * bytes leave counts as they are; so does a device in the cut with no cost
 * per unit of work (no model). */
void hf__cost_cut_models(const struct hf_round *r, size_t base, const struct hf_device_info *dev,
                         int ndev, size_t *counts, const double *coef);

/* Normalises v[0..n-1] to sum 1 (all zero: equal shares). */
void hf__normalise(double *v, int n);

/* The largest absolute change between two share vectors (0.004 = 0.4% of the
 * work moved to or from some device). */
double hf__max_share_change(const double *a, const double *b, int n);

/* Number of GPUs (is_gpu) among the devices. */
int hf__count_gpus(const struct hf_device_info *dev, int ndev);

/* Numbers the distinct shared links of the devices (hf_device_info.link > 0)
 * in order of first appearance: link_of[d] = d's link's index, -1 for none.
 * Returns how many links there are. */
int hf__link_index(const struct hf_device_info *dev, int ndev, int *link_of);

/* Mean work of one chunk of the round (0 for an empty round). */
double hf__mean_chunk_work(const struct hf_round *r);

/* Mean bytes of one chunk of the round (0 for an empty round); O(chunks). */
double hf__mean_chunk_bytes(const struct hf_round *r);

/* The median of v[0..n-1] (n > 0); sorts v. */
double hf__median(double *v, int n);

/* Whole chunk counts for n chunks of work w from a continuous split x (work
 * per device) under the lines lat[d] + work * inv[d]: the floors, then each
 * leftover chunk to the device in use[] that would finish it first. Returns
 * 0 when no device in use can take one. */
int hf__whole_counts(const double *lat, const double *inv, const int *use, int ndev,
                     const double *x, size_t n, double w, size_t *counts);

/* The largest power of two not above k (1 for k <= 1). */
size_t hf__pow2_floor(size_t k);

/* The work of the last k chunks (at most all) of a buffer in round r. */
double hf__buf_tail_work(const struct hf_round *r, const struct hf__buf *b, size_t k);

#endif
