/* profile.c - the profile store: named vectors of doubles per device, kept as text.
 *
 * DESIGN
 * ------
 * A profile is what a run measured about the devices for one app and one load
 * signature on one host (standalone rates, HASS's last rates, Qilin's fits). It
 * lives in <dir>/<host>-<cores>c-<cpu hash>/<app>.<signature>.prof, with the
 * signature reduced to [A-Za-z0-9=._-] so that it is a safe file name, e.g.
 *
 *     # hetfarm profile
 *     # host: node17
 *     # date: 2025-01-31T12:00:00Z
 *     # app: matmul
 *     # signature: n=4096 dtype=float32
 *     cpu<TAB>standalone_rate<TAB>1.2345e+11
 *     sim:h200#1<TAB>qilin.fit<TAB>0.001 2.5e-12
 *
 * One line per (device, key), values printed with %.17g so that a saved and
 * reloaded profile gives the very same doubles; tabs separate the fields
 * because device names may contain spaces and '#'. The header records where
 * and when the numbers were measured, so that a profile copied from another
 * machine is recognisable, and the files diff well under version control.
 *
 * The store is small (tens of entries), so it is a flat array searched
 * linearly. A mutex guards it because schedulers and the engine may touch it
 * from different threads. Saving is atomic (temporary file + rename) and
 * skipped when nothing changed. dir == NULL gives a memory-only store for
 * tests and simulated runs that must not touch disk.
 */
#include "profile.h"

#include "io/files.h"
#include "device.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct profile_entry {
    char *device, *key;
    double *vals;
    int n;
};

struct hf_profile {
    pthread_mutex_t lock;
    char *dir;     /* "<dir>/<host>", NULL for memory-only */
    char *path;    /* the file, "" for memory-only */
    char *app, *signature, *host;
    struct profile_entry *e;
    size_t n, cap;
    int dirty;
};

/* Keeps [A-Za-z0-9=._-] and turns everything else into '_', squeezing runs. */
static void sanitise(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < cap; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '=' || c == '.' || c == '_' || c == '-';
        if (!ok)
            c = '_';
        if (c == '_' && o > 0 && out[o - 1] == '_')
            continue;
        out[o++] = c;
    }
    out[o] = '\0';
    if (o == 0)
        snprintf(out, cap, "default");
}

/* Linear search over a few dozen entries; caller holds the lock. */
static struct profile_entry *find(hf_profile_t p, const char *device, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->e[i].device, device) == 0 && strcmp(p->e[i].key, key) == 0)
            return &p->e[i];
    return NULL;
}

/* Stores (device, key) = vals, replacing an older entry; caller holds the lock. */
static int set_locked(hf_profile_t p, const char *device, const char *key, const double *vals,
                      int n)
{
    struct profile_entry *e = find(p, device, key);
    double *copy = malloc((n > 0 ? (size_t)n : 1) * sizeof *copy);
    if (!copy)
        return hf_fail(HF_ENOMEM, "out of memory storing profile entry");
    if (n > 0)
        memcpy(copy, vals, (size_t)n * sizeof *copy);
    if (e) {
        /* Storing the same numbers again must not make the file dirty, or
         * every run would rewrite every profile and churn version control. */
        int same = e->n == n && (n == 0 || memcmp(e->vals, copy, (size_t)n * sizeof *copy) == 0);
        free(e->vals);
        e->vals = copy;
        e->n = n;
        p->dirty |= !same;
        return 0;
    }
    if (p->n == p->cap) {
        size_t ncap = p->cap ? 2 * p->cap : 16;
        void *q = realloc(p->e, ncap * sizeof *p->e);
        if (!q) {
            free(copy);
            return hf_fail(HF_ENOMEM, "out of memory storing profile entry");
        }
        p->e = q;
        p->cap = ncap;
    }
    e = &p->e[p->n];
    e->device = strdup(device);
    e->key = strdup(key);
    if (!e->device || !e->key) {
        free(e->device);
        free(e->key);
        free(copy);
        return hf_fail(HF_ENOMEM, "out of memory storing profile entry");
    }
    e->vals = copy;
    e->n = n;
    p->n++;
    p->dirty = 1;
    return 0;
}

/* Parses one "device<TAB>key<TAB>v1 v2 ..." line into the store. */
static int parse_line(hf_profile_t p, char *line, int lineno)
{
    char *tab1 = strchr(line, '\t');
    char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab1 || !tab2 || tab1 == line || tab2 == tab1 + 1)
        return hf_fail(HF_ECONFIG,
                       "%s:%d: malformed profile line (expected DEVICE<TAB>KEY<TAB>VALUES)",
                       p->path, lineno);
    *tab1 = *tab2 = '\0';
    double vals[64];
    int n = 0;
    char *s = tab2 + 1;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || (*end != '\0' && *end != ' ' && *end != '\t') || errno == ERANGE)
            return hf_fail(HF_ECONFIG, "%s:%d: malformed profile value '%.*s' (expected a number)",
                           p->path, lineno, (int)strcspn(s, " \t"), s);
        if (n == 64)
            return hf_fail(HF_ECONFIG, "%s:%d: more than 64 values on one profile line",
                           p->path, lineno);
        vals[n++] = v;
        s = end;
    }
    return set_locked(p, line, tab1 + 1, vals, n);
}

/* Reads the file if it exists; a missing file is an empty profile. */
static int load(hf_profile_t p)
{
    FILE *f = fopen(p->path, "r");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* no profile yet; saving will say why it cannot create one */
        return hf_fail(HF_EIO, "cannot read profile %s: %s", p->path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        rc = parse_line(p, line, lineno);
    }
    free(line);
    fclose(f);
    p->dirty = 0;
    return rc;
}

int hf_profile_open(hf_profile_t *out, const char *dir, const char *app, const char *signature)
{
    *out = NULL;
    hf_profile_t p = calloc(1, sizeof *p);
    if (!p)
        return hf_fail(HF_ENOMEM, "out of memory opening profile");
    pthread_mutex_init(&p->lock, NULL);
    /* Profiles are per host: rates measured on one machine mean nothing on
     * another, and a shared profiles/ directory may serve a whole cluster. */
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    /* Host names repeat across virtual machines ("vm", "localhost"), so the
     * directory also carries the core count and a hash of the CPU model. */
    char machine[320];
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (const char *c = hf_topo_cpu_model(); *c; c++)
        hash = (hash ^ (unsigned char)*c) * 16777619u;
    snprintf(machine, sizeof machine, "%s-%dc-%08x", host, hf_topo_cores(), (unsigned)hash);
    char shost[320], sapp[128], ssig[256];
    sanitise(machine, shost, sizeof shost);
    sanitise(app ? app : "app", sapp, sizeof sapp);
    sanitise(signature ? signature : "", ssig, sizeof ssig);
    p->app = strdup(app ? app : "app");
    p->signature = strdup(signature ? signature : "");
    p->host = strdup(host);
    int ok = p->app && p->signature && p->host;
    if (ok && dir) {
        ok = asprintf(&p->dir, "%s/%s", dir, shost) >= 0 &&
             asprintf(&p->path, "%s/%s.%s.prof", p->dir, sapp, ssig) >= 0;
    } else if (ok) {
        ok = (p->path = strdup("")) != NULL;
    }
    if (!ok) {
        hf_profile_destroy(p);
        return hf_fail(HF_ENOMEM, "out of memory opening profile");
    }
    if (dir) {
        int rc = load(p);
        if (rc != 0) {
            hf_profile_destroy(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

void hf_profile_destroy(hf_profile_t p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->e[i].device);
        free(p->e[i].key);
        free(p->e[i].vals);
    }
    free(p->e);
    free(p->dir);
    free(p->path);
    free(p->app);
    free(p->signature);
    free(p->host);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int hf_profile_get(hf_profile_t p, const char *device, const char *key, double *vals, int cap)
{
    if (!p || !device || !key)
        return 0;
    pthread_mutex_lock(&p->lock);
    struct profile_entry *e = find(p, device, key);
    int n = e ? e->n : 0;
    for (int i = 0; i < n && i < cap; i++)
        vals[i] = e->vals[i];
    pthread_mutex_unlock(&p->lock);
    return n;
}

int hf_profile_set(hf_profile_t p, const char *device, const char *key, const double *vals,
                   int n)
{
    HF_ASSERT_MSG(p && device && key && n >= 0 && (n == 0 || vals), "bad hf_profile_set call");
    /* The file format separates fields with tabs and entries with newlines. */
    if (device[0] == '\0' || key[0] == '\0' || strpbrk(device, "\t\n") || strpbrk(key, "\t\n") ||
        device[0] == '#')
        return hf_fail(HF_EINVAL, "profile: device '%s' / key '%s' cannot be stored", device,
                       key);
    if (n > 64)
        return hf_fail(HF_ERANGE, "profile: %d values for %s %s (at most 64)", n, device, key);
    pthread_mutex_lock(&p->lock);
    int rc = set_locked(p, device, key, vals, n);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* Formats the whole store as the file's text; caller holds the lock. */
static char *format_locked(hf_profile_t p, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    if (!m)
        return NULL;
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(m, "# hetfarm profile\n# host: %s\n# date: %s\n# app: %s\n# signature: %s\n", p->host,
            date, p->app, p->signature);
    for (size_t i = 0; i < p->n; i++) {
        fprintf(m, "%s\t%s\t", p->e[i].device, p->e[i].key);
        for (int k = 0; k < p->e[i].n; k++)
            fprintf(m, "%s%.17g", k ? " " : "", p->e[i].vals[k]);
        fputc('\n', m);
    }
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Formats under the lock, then writes atomically, so a concurrent reader of
 * the file (another hetfarm process) sees the old or the new profile. */
int hf_profile_save(hf_profile_t p)
{
    if (!p || !p->dir)
        return 0;
    pthread_mutex_lock(&p->lock);
    int rc = 0;
    if (p->dirty) {
        size_t len = 0;
        char *text = format_locked(p, &len);
        if (!text)
            rc = hf_fail(HF_ENOMEM, "out of memory formatting profile %s", p->path);
        if (rc == 0)
            rc = hf__mkdir_p(p->dir);
        if (rc == 0)
            rc = hf__write_atomic(p->path, text, len, "profile");
        if (rc == 0)
            p->dirty = 0;
        free(text);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

const char *hf_profile_path(hf_profile_t p)
{
    return p ? p->path : "";
}
