/* partition_cuda_check.cu - the partitioner's GPU kernels (apps/graph/partition/
 * partition_cuda.cu) checked against its CPU code (partition_coarsen.c),
 * outside hetfarm: `make partition-cuda-check` builds
 * build/bench/partition_cuda_check, which needs a GPU to run.
 *
 * DESIGN
 * ------
 * A full hetfarm build needs libraries a bare GPU machine may lack (cmocka,
 * inih, cJSON, METIS, Hyperscan); this check needs only nvcc and gcc, so it
 * runs where tests/test_graph_partition_cuda cannot be built. It stands in
 * for the CUDA driver (framework/drivers/device_cuda.c) the way the driver
 * behaves: three streams chained by events as hf_cuda_phase() chains them,
 * two slots each with its own pinned staging buffer and arena half, pieces
 * alternating between the slots and pipelined, a piece that does not fit
 * drained and halved. On a 300x200 grid with edge weights (and again with
 * a 64 KiB arena half) and on a 40000-vertex graph with hubs and isolated
 * vertices it coarsens four levels, each level's MATCH and RESOLVE on the
 * GPU in pieces, and checks: the matching is valid (mutual, adjacent,
 * within maxvwgt), the GPU's unmatched count is the host's, the GPU matched
 * at least 70% as many vertices as the CPU code on the same level, and
 * every coarse list the GPU's CONTRACT built holds exactly the neighbours
 * and summed weights the CPU's CONTRACT builds from the same coarse map.
 * Each coarse level the MATCH round makes resident must come from the
 * contraction's pinned slots (the offsets' scan of cdeg and the compaction
 * kernel; with the 64 KiB arena the slots do not fit and it must come from
 * the packed arrays), and be
 * byte-equal to the host's packed level and to the same level uploaded the
 * old way, from the packed arrays, by the RESOLVE round after a release
 * with the slots marked as holding no level.
 * Then eight REFINE passes from a random partition into 8 parts, once by
 * the CPU code and once on the GPU: the part weights must match the parts
 * and the bound, and the GPU's cut must fall below the random one and stay
 * within 1.15x of the CPU code's.
 * Prints one line per level and "ALL OK", or the first failure (exit 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <algorithm>
#include <vector>
#include "hf_cuda.h"
#include "graph/partition/partition_internal.h"
#include "graph/partition/partition_gpu.cuh"
/* A stand-in for the CUDA driver (framework/drivers/device_cuda.c): three
 * streams chained by events as hf_cuda_phase() chains them, two slots each
 * with its own pinned staging buffer and arena half, pieces alternating
 * between the slots and pipelined (a slot waits only for its own previous
 * piece), an HF_EDEVOOM piece drained and halved. */
struct hf_cuda { cudaStream_t st[3]; cudaEvent_t ev[3]; int phase, slot; char *arena[2]; size_t used, cap; void *stage[2]; cudaEvent_t done[2][3]; };
static char msg[1024];
extern "C" int hf_fail(int err, const char *fmt, ...) { va_list a; va_start(a, fmt); vsnprintf(msg, sizeof msg, fmt, a); va_end(a); return err; }
extern "C" void hf_clear_error(void) { msg[0] = 0; }
extern "C" cudaStream_t hf_cuda_phase(struct hf_cuda *g, enum hf_cuda_phase p) {
  while (g->phase < (int)p) { cudaEventRecord(g->ev[g->phase], g->st[g->phase]); cudaStreamWaitEvent(g->st[g->phase + 1], g->ev[g->phase], 0); g->phase++; }
  return g->st[g->phase]; }
extern "C" cudaStream_t hf_cuda_copy_in_stream(struct hf_cuda *g) { return g->st[0]; }
extern "C" cudaStream_t hf_cuda_copy_out_stream(struct hf_cuda *g) { return g->st[2]; }
extern "C" void *hf_cuda_arena_alloc(struct hf_cuda *g, size_t b) { b = (b + 255) & ~(size_t)255; if (g->used + b > g->cap) return NULL; void *p = g->arena[g->slot] + g->used; g->used += b; return p; }
extern "C" size_t hf_cuda_arena_free(const struct hf_cuda *g) { return g->cap - g->used; }
/* As host_mem_cuda.c answers: 1 for page-locked host memory (here cudaMallocHost's). */
extern "C" int hf_host_pinned(const void *p) { cudaPointerAttributes a; if (cudaPointerGetAttributes(&a, p) != cudaSuccess) { cudaGetLastError(); return 0; } return a.type == cudaMemoryTypeHost; }
extern "C" void *hf_cuda_staging(struct hf_cuda *g, size_t b) { return b <= (64u << 20) ? g->stage[g->slot] : NULL; }
extern "C" const char *hf_cuda_name(const struct hf_cuda *) { return "cuda0"; }
extern "C" int hf_cuda_device_index(const struct hf_cuda *) { return 0; }
extern "C" int hf_cuda_ordinal(const struct hf_cuda *) { return 0; }
extern "C" int hf_cuda_check(struct hf_cuda *, cudaError_t e, const char *w) { if (e == cudaSuccess) return 0; snprintf(msg, sizeof msg, "%s: %s", w, cudaGetErrorString(e)); return e == cudaErrorMemoryAllocation ? HF_EDEVOOM : HF_EDEVICE; }
#define CK(x) do { int rc_ = (x); if (rc_) { printf("FAIL %s: rc %d %s\n", #x, rc_, msg); exit(1); } } while (0)
#define REQ(x) do { if (!(x)) { printf("FAIL line %d: %s\n", __LINE__, #x); exit(1); } } while (0)
static hf_cuda G;
static void drain() { for (int k = 0; k < 3; k++) REQ(cudaStreamSynchronize(G.st[k]) == cudaSuccess); }
/* Runs the current phase on the GPU in `np` pipelined pieces, halving a piece that does not fit. */
static void gpu_round(hf_partition *c, uint64_t units, int np) {
  c->round_id++;
  uint64_t per = (units + np - 1) / np, u = 0;
  int i = 0;
  while (u < units) {
    uint64_t e = u + per < units ? u + per : units;
    G.slot = i & 1;
    for (int k = 0; k < 3; k++) REQ(cudaEventSynchronize(G.done[G.slot][k]) == cudaSuccess);
    hf_bundle p; memset(&p, 0, sizeof p); p.begin = u; p.end = e;
    G.used = 0; G.phase = 0;
    int rc = hf__part_cuda(c, &p, &G);
    if (rc == HF_EDEVOOM && e - u > 1) { drain(); per = (e - u) / 2; continue; }
    CK(rc);
    hf_cuda_phase(&G, HF_CUDA_COPY_OUT);
    for (int k = 0; k < 3; k++) REQ(cudaEventRecord(G.done[G.slot][k], G.st[k]) == cudaSuccess);
    u = e; i++;
  }
  drain();
  REQ(cudaGetLastError() == cudaSuccess);
}
static void check_matching(const hf_plevel *l, int64_t maxv, uint64_t *matched) {
  uint64_t m = 0;
  for (uint64_t u = 0; u < l->nv; u++) {
    uint32_t v = l->match[u];
    if (v == HF_PART_NONE) continue;
    REQ(v < l->nv && l->match[v] == u && v != u);
    REQ(hf__pl_vw(l, u) + hf__pl_vw(l, v) <= maxv);
    bool adj = false;
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++) adj |= l->adj[j] == v;
    REQ(adj);
    m++;
  }
  *matched = m;
}
/* Level c->cur's CSR as the GPU holds it, downloaded after the streams drained. */
struct held { std::vector<char> off, adj, ew, vw; };
static void fetch(std::vector<char> &h, const void *d, size_t bytes) {
  h.resize(bytes); if (bytes) REQ(d && cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
}
static held download(const hf_partition *c) {
  const hf_plevel *l = &c->lv[c->cur]; const part_gpu_csr *k = &((part_gpu *)c->gpu[0])->csr[c->cur]; held h;
  REQ(k->made == l->made);
  fetch(h.off, k->d_offsets, (l->nv + 1) * 8); fetch(h.adj, k->d_adj, l->ne * 4);
  fetch(h.ew, k->d_ew, l->ew ? l->ne * 8 : 0); fetch(h.vw, k->d_vw, l->vw ? l->nv * 8 : 0);
  return h;
}
static bool same(const std::vector<char> &d, const void *h) { return d.empty() || memcmp(d.data(), h, d.size()) == 0; }
static unsigned long from_slots(const hf_partition *c) { return c->gpu[0] ? ((part_gpu *)c->gpu[0])->from_slots : 0; }
/* The level the MATCH round just made resident (from the contraction's slots
 * on a coarse level, unless the arena is too small) against the same level
 * uploaded the old way, from the packed arrays: the GPU is released, the slots
 * are marked as holding no level, and the RESOLVE round uploads it again. Both
 * copies must be byte-equal, and equal to the host's packed level. */
static void resolve_both_ways(hf_partition *c, int lev, int tiny, unsigned long slots_before) {
  const hf_plevel *l = &c->lv[c->cur];
  bool slotted = from_slots(c) > slots_before;
  REQ(slotted == (lev > 0 && !tiny)); /* the tiny arena leaves no room: the old path */
  held a = download(c);
  REQ(same(a.off, l->offsets) && same(a.adj, l->adj) && same(a.ew, l->ew) && same(a.vw, l->vw));
  hf__part_cuda_release(c);
  int kept = c->slots_level; c->slots_level = -1;
  c->phase = HF_PP_RESOLVE; c->unmatched = 0; gpu_round(c, l->nv, 3);
  c->slots_level = kept;
  REQ(from_slots(c) == 0);
  held b = download(c);
  REQ(a.off == b.off && a.adj == b.adj && a.ew == b.ew && a.vw == b.vw);
  if (lev > 0) printf("  level %d resident %s: byte-equal to the packed upload\n", lev, slotted ? "from the slots" : "from the packed arrays (no arena room)");
}
static void sorted_list(const uint32_t *id, const int64_t *w, uint32_t n, std::vector<std::pair<uint32_t, int64_t>> &out) {
  out.clear(); for (uint32_t i = 0; i < n; i++) out.push_back({id[i], w[i]}); std::sort(out.begin(), out.end());
}
static void run_graph(const char *name, uint64_t nv, std::vector<std::vector<std::pair<uint32_t,int>>> &nb, int weighted, int tiny) {
  hf_partition *c = (hf_partition *)calloc(1, sizeof *c);
  c->seed = 7; c->maxvwgt = 40; c->ndev = 1; c->ngpu = 1;
  c->gpu = (void **)calloc(1, sizeof(void *)); c->dev_gpu = (unsigned char *)calloc(1, 1);
  hf_plevel *l = &c->lv[0];
  l->nv = nv; l->offsets = (uint64_t *)malloc((nv + 1) * 8);
  uint64_t ne = 0; for (auto &v : nb) ne += v.size();
  l->ne = ne; l->adj = (uint32_t *)malloc(ne * 4 + 4); if (weighted) l->ew = (int64_t *)malloc(ne * 8 + 8);
  ne = 0; for (uint64_t u = 0; u < nv; u++) { l->offsets[u] = ne; for (auto &p : nb[u]) { l->adj[ne] = p.first; if (weighted) l->ew[ne] = p.second; ne++; } }
  l->offsets[nv] = ne;
  l->match = (uint32_t *)malloc(nv * 4); l->cmap = (uint32_t *)malloc(nv * 4);
  c->wait = (uint32_t *)malloc((nv + 1) * 4);
  c->tcap = ne; c->slots_level = -1; /* as setup: pinned slots, slot starts and list lengths */
  REQ(cudaMallocHost(&c->tadj, ne * 4 + 4) == cudaSuccess && cudaMallocHost(&c->tew, ne * 8 + 8) == cudaSuccess);
  REQ(cudaMallocHost(&c->ub_pinned, (nv + 1) * 8) == cudaSuccess && cudaMallocHost(&c->cdeg_pinned, nv * 4 + 4) == cudaSuccess);
  c->claims_cap = nv + 2 * HF_PART_CLAIM_REGIONS; /* as setup: the MATCH pieces' claims room */
  REQ(cudaMallocHost(&c->claims, c->claims_cap * 8) == cudaSuccess);
  G.cap = tiny ? (64 << 10) : (256u << 20);
  c->nlev = 1;
  for (int lev = 0; lev < 4; lev++) {
    l = &c->lv[c->cur];
    c->level_gen++;
    /* CPU reference matching quality on a copy */
    std::vector<uint32_t> save(l->nv);
    for (uint64_t v = 0; v < l->nv; v++) l->match[v] = HF_PART_NONE;
    c->phase = HF_PP_MATCH; hf__part_match(c, 0, l->nv, 2);
    c->phase = HF_PP_RESOLVE; c->unmatched = 0; hf__part_resolve(c, 0, l->nv, 2);
    uint64_t cpu_matched; check_matching(l, c->maxvwgt, &cpu_matched);
    /* GPU */
    for (uint64_t v = 0; v < l->nv; v++) l->match[v] = HF_PART_NONE;
    unsigned long slots_before = from_slots(c);
    c->phase = HF_PP_MATCH; gpu_round(c, l->nv, 5);
    REQ(c->nclaim_regions > 0); /* the pieces left their claims in the room ... */
    hf__part_apply_claims(c);   /* ... which next_load applies */
    resolve_both_ways(c, lev, tiny, slots_before); /* the RESOLVE round */
    uint64_t gm; check_matching(l, c->maxvwgt, &gm);
    REQ(c->unmatched == l->nv - gm);
    printf("%s level %d: nv %llu ne %llu matched cpu %llu gpu %llu (unmatched %llu)\n", name, lev, (unsigned long long)l->nv, (unsigned long long)l->ne, (unsigned long long)cpu_matched, (unsigned long long)gm, (unsigned long long)c->unmatched);
    REQ(gm * 10 >= cpu_matched * 7);
    CK(hf__part_build_cmap(c));
    c->phase = HF_PP_CONTRACT; gpu_round(c, c->nc, 4);
    uint64_t slots = c->ub[c->nc];
    std::vector<uint32_t> gadj(c->tadj, c->tadj + slots), gdeg(c->cdeg, c->cdeg + c->nc);
    std::vector<int64_t> gew(c->tew, c->tew + slots), gvw(c->cvw, c->cvw + c->nc);
    CK(hf__part_contract(c, 0, c->nc, 2));
    std::vector<std::pair<uint32_t, int64_t>> a, b;
    for (uint64_t v = 0; v < c->nc; v++) {
      REQ(gdeg[v] == c->cdeg[v]); REQ(gvw[v] == c->cvw[v]);
      sorted_list(gadj.data() + c->ub[v], gew.data() + c->ub[v], gdeg[v], a);
      sorted_list(c->tadj + c->ub[v], c->tew + c->ub[v], c->cdeg[v], b);
      REQ(a == b);
    }
    /* pack the GPU's lists (copy them back in) */
    memcpy(c->tadj, gadj.data(), slots * 4); memcpy(c->tew, gew.data(), slots * 8);
    CK(hf__part_pack(c));
    c->lv[c->cur + 1].made = ++c->levels_made; /* as next_load numbers it */
    c->nlev++; c->cur++;
    REQ(c->slots_level == c->cur);
    printf("  -> coarse nv %llu ne %llu: lists equal the CPU's\n", (unsigned long long)c->lv[c->cur].nv, (unsigned long long)c->lv[c->cur].ne);
  }
  hf__part_cuda_release(c);
  REQ(c->gpu[0] == NULL);
}
static double cut_of(const hf_plevel *l) {
  double twice = 0;
  for (uint64_t u = 0; u < l->nv; u++)
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
      if (l->part[l->adj[j]] != l->part[u]) twice += (double)hf__pl_ew(l, j);
  return twice / 2;
}
/* REFINE passes from a random partition into 8 parts, on the CPU code and on the GPU. */
static void refine_graph(const char *name, uint64_t nv, std::vector<std::vector<std::pair<uint32_t,int>>> &nb, int weighted) {
  double cut[2], first = 0;
  for (int side = 0; side < 2; side++) {
    hf_partition *c = (hf_partition *)calloc(1, sizeof *c);
    c->ndev = 1; c->ngpu = 1; c->k = 8;
    c->gpu = (void **)calloc(1, sizeof(void *)); c->dev_gpu = (unsigned char *)calloc(1, 1);
    hf_plevel *l = &c->lv[0];
    l->nv = nv; l->offsets = (uint64_t *)malloc((nv + 1) * 8);
    uint64_t ne = 0; for (auto &v : nb) ne += v.size();
    l->ne = ne; l->adj = (uint32_t *)malloc(ne * 4 + 4); if (weighted) l->ew = (int64_t *)malloc(ne * 8 + 8);
    ne = 0; for (uint64_t u = 0; u < nv; u++) { l->offsets[u] = ne; for (auto &q : nb[u]) { l->adj[ne] = q.first; if (weighted) l->ew[ne] = q.second; ne++; } }
    l->offsets[nv] = ne;
    l->part = (uint32_t *)malloc(nv * 4);
    c->pw = (int64_t *)calloc(8, 8);
    for (uint64_t v = 0; v < nv; v++) { l->part[v] = (uint32_t)(hf__part_mix(v + 99) % 8); c->pw[l->part[v]]++; }
    c->maxpw = (int64_t)(1.10 * (double)nv / 8);
    for (int p = 0; p < 8; p++) REQ(c->pw[p] <= c->maxpw);
    first = cut_of(l);
    c->phase = HF_PP_REFINE; c->level_gen = 1; G.cap = 256u << 20;
    uint64_t moves = 0;
    for (c->pass = 0; c->pass < 8; c->pass++) {
      c->moves = 0;
      if (side == 0) CK(hf__part_refine(c, 0, nv, 2)); else gpu_round(c, nv, 5);
      moves += c->moves;
    }
    int64_t w[8] = {0};
    for (uint64_t v = 0; v < nv; v++) { REQ(l->part[v] < 8); w[l->part[v]]++; }
    for (int p = 0; p < 8; p++) { REQ(w[p] == c->pw[p]); REQ(w[p] <= c->maxpw); }
    REQ(moves > 0);
    cut[side] = cut_of(l);
    printf("%s refine on the %s: cut %.0f -> %.0f, %llu moves\n", name, side ? "GPU" : "CPU", first, cut[side], (unsigned long long)moves);
    if (side) { hf__part_cuda_release(c); REQ(c->gpu[0] == NULL); }
  }
  REQ(cut[1] < first);
  REQ(cut[1] <= 1.15 * cut[0]);
}
int main() {
  for (int k = 0; k < 3; k++) { REQ(cudaStreamCreateWithFlags(&G.st[k], cudaStreamNonBlocking) == cudaSuccess); REQ(cudaEventCreateWithFlags(&G.ev[k], cudaEventDisableTiming) == cudaSuccess); }
  for (int s = 0; s < 2; s++) { REQ(cudaMalloc(&G.arena[s], 256u << 20) == cudaSuccess); REQ(cudaMallocHost(&G.stage[s], 64u << 20) == cudaSuccess);
    for (int k = 0; k < 3; k++) REQ(cudaEventCreateWithFlags(&G.done[s][k], cudaEventDisableTiming) == cudaSuccess); }
  /* a grid 300 x 200, weights 1..3 */
  { uint64_t R = 300, C = 200, nv = R * C; std::vector<std::vector<std::pair<uint32_t,int>>> nb(nv); uint64_t x = 1;
    for (uint64_t r = 0; r < R; r++) for (uint64_t q = 0; q < C; q++) { uint64_t u = r * C + q;
      if (q + 1 < C) { x = x * 6364136223846793005ull + 1; int w = 1 + (x >> 60) % 3; nb[u].push_back({(uint32_t)(u + 1), w}); nb[u + 1].push_back({(uint32_t)u, w}); }
      if (r + 1 < R) { nb[u].push_back({(uint32_t)(u + C), 1}); nb[u + C].push_back({(uint32_t)u, 1}); } }
    run_graph("grid", nv, nb, 1, 0); run_graph("grid-tiny-arena", nv, nb, 0, 1); refine_graph("grid", nv, nb, 1); }
  /* hubs: 40000 vertices, skewed endpoints, some isolated */
  { uint64_t nv = 40000; std::vector<std::vector<std::pair<uint32_t,int>>> nb(nv); uint64_t x = 5;
    for (int i = 0; i < 400000; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; uint64_t a = (x >> 20) % nv, b = (x >> 40) % nv;
      a = a * a / nv * ((x >> 10) & 1) + a * (1 - ((x >> 10) & 1)); b = b * b / nv; if (a == b || a % 17 == 3 || b % 17 == 3) continue;
      nb[a].push_back({(uint32_t)b, 1}); nb[b].push_back({(uint32_t)a, 1}); }
    for (auto &v : nb) { std::sort(v.begin(), v.end()); v.erase(std::unique(v.begin(), v.end(), [](auto &p, auto &q){ return p.first == q.first; }), v.end()); }
    run_graph("hubs", nv, nb, 0, 0); refine_graph("hubs", nv, nb, 0); }
  printf("ALL OK\n");
  return 0;
}
