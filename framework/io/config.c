/* config.c - INI configuration with typed getters that name file:line on bad values.
 *
 * DESIGN
 * ------
 * The file is parsed once with libinih into a flat array of entries; configs hold
 * a few dozen keys, so lookups are linear scans and nothing cleverer is needed.
 * Every entry remembers the line it came from and whether anything read it:
 * the first makes every message point at "file:line", the second lets
 * hf_config_check_unused() catch a misspelt key, which would otherwise silently
 * fall back to its default.
 *
 * Debian's libinih is built without INI_HANDLER_LINENO, so its handler is not
 * told the line number. We parse through ini_parse_stream() with our own reader
 * that hands out one line per call and counts them: when the handler runs, the
 * last line handed out is the line being parsed. The reader also
 *   - strips leading whitespace, so that an indented "key = value" is a key and
 *     not a continuation of the previous value (inih's multi-line mode, which
 *     surprises everyone who indents a config);
 *   - records every "[section]" header, since inih reports no empty sections;
 *   - rejects lines longer than inih's line buffer instead of letting inih
 *     silently split them into two lines.
 * Inline comments ("rounds = 10   # ten loads") are stripped in the handler for
 * both '#' and ';' when preceded by whitespace, as in Python's configparser.
 */
#include "hetfarm.h"
#include "io/config_internal.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* State shared by the reader and the handler during one parse. */
struct parse_state {
    struct hf_config *cfg;
    const char *text; /* remaining input */
    int line;         /* last line handed to inih */
    int err;          /* first error we detected ourselves */
    int err_line;
    char msg[512];
};

/* Remembers the first error we detect ourselves; inih keeps parsing after an
 * error, and the first one is the one a user should fix first. */
static void set_error(struct parse_state *st, int err, int line, const char *msg)
{
    if (st->err == 0) {
        st->err = err;
        st->err_line = line;
        snprintf(st->msg, sizeof st->msg, "%s", msg);
    }
}

/* Records a section header seen by the reader, with its line. */
static int add_section(struct parse_state *st, const char *name, size_t len)
{
    struct hf_config *c = st->cfg;
    if (c->nsec == c->capsec) {
        size_t ncap = c->capsec ? 2 * c->capsec : 8;
        void *p = realloc(c->sec, ncap * sizeof *c->sec);
        if (!p)
            return HF_ENOMEM;
        c->sec = p;
        c->capsec = ncap;
    }
    char *s = strndup(name, len);
    if (!s)
        return HF_ENOMEM;
    c->sec[c->nsec].name = s;
    c->sec[c->nsec].line = st->line;
    c->nsec++;
    return 0;
}

/* Hands inih one line of the text (fgets semantics), minus leading whitespace,
 * counting lines and noting section headers on the way. */
static char *reader(char *str, int num, void *stream)
{
    struct parse_state *st = stream;
    if (*st->text == '\0')
        return NULL;
    const char *eol = strchr(st->text, '\n');
    size_t len = eol ? (size_t)(eol - st->text) + 1 : strlen(st->text);
    const char *p = st->text;
    st->text += len;
    st->line++;
    if (st->line == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
        p += 3; /* a UTF-8 byte order mark, as some editors write */
        len -= 3;
    }
    while (len > 0 && (*p == ' ' || *p == '\t') && *p != '\n') {
        p++;
        len--;
    }
    /* inih needs room for '\r', '\n' and '\0' (ini.h's INI_MAX_LINE note). */
    if ((num < 4 || len + 3 > (size_t)num) && (*p == '#' || *p == ';')) {
        len = 1;
        p = "\n"; /* a long comment is still just a comment */
    } else if (num < 4 || len + 3 > (size_t)num) {
        char msg[128];
        snprintf(msg, sizeof msg, "line too long (at most %d characters)", num - 3);
        set_error(st, HF_ECONFIG, st->line, msg);
        len = 1;
        p = "\n"; /* hand inih a blank line instead */
    }
    memcpy(str, p, len);
    str[len] = '\0';
    /* inih parses the header itself; we only note that the section exists. A
     * header without ']' is left for inih to report as malformed. */
    if (p[0] == '[') {
        const char *close = memchr(p, ']', len);
        if (close && add_section(st, p + 1, (size_t)(close - p - 1)) != 0)
            set_error(st, HF_ENOMEM, st->line, "out of memory");
    }
    return str;
}

/* Cuts an inline comment ("value   # why") off a value and trims the end. */
static void strip_inline_comment(char *v)
{
    for (char *p = v; *p; p++) {
        if ((*p == '#' || *p == ';') && (p == v || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
        v[--n] = '\0';
}

/* Linear search: configs hold tens of keys, and lookups happen at setup. */
static struct hf_config_entry *find(hf_config_t cfg, const char *section, const char *key)
{
    if (!cfg || !section || !key)
        return NULL;
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->e[i].section, section) == 0 && strcmp(cfg->e[i].key, key) == 0)
            return &cfg->e[i];
    return NULL;
}

/* inih's callback: stores one key, refusing duplicates and keys outside a section. */
static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse_state *st = user;
    struct hf_config *c = st->cfg;
    char msg[512];
    /* A key before any [section] is almost always a forgotten header; with no
     * section it could never be looked up, so refuse it instead of ignoring it. */
    if (section[0] == '\0') {
        snprintf(msg, sizeof msg, "key '%s' outside any [section]", name);
        set_error(st, HF_ECONFIG, st->line, msg);
        return 0;
    }
    struct hf_config_entry *old = find(c, section, name);
    if (old) {
        snprintf(msg, sizeof msg, "[%s] %s given twice (first on line %d)", section, name,
                 old->line);
        set_error(st, HF_ECONFIG, st->line, msg);
        return 0;
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? 2 * c->cap : 32;
        void *p = realloc(c->e, ncap * sizeof *c->e);
        if (!p)
            goto oom;
        c->e = p;
        c->cap = ncap;
    }
    struct hf_config_entry *e = &c->e[c->n];
    memset(e, 0, sizeof *e);
    e->section = strdup(section);
    e->key = strdup(name);
    e->value = strdup(value ? value : "");
    e->line = st->line;
    if (asprintf(&e->where, "%s:%d", c->path, st->line) < 0)
        e->where = NULL;
    if (!e->section || !e->key || !e->value || !e->where) {
        free(e->section);
        free(e->key);
        free(e->value);
        free(e->where);
        goto oom;
    }
    strip_inline_comment(e->value);
    c->n++;
    return 1;
oom:
    set_error(st, HF_ENOMEM, st->line, "out of memory");
    return 0;
}

/* Parses `text` through our counting reader; the whole text is parsed even
 * after an error (inih's behaviour) but only the first error is reported. */
int hf_config_parse(hf_config_t *cfg, const char *name, const char *text)
{
    *cfg = NULL;
    struct hf_config *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(name ? name : "<config>"))) {
        free(c);
        return hf_fail(HF_ENOMEM, "out of memory reading %s", name ? name : "config");
    }
    struct parse_state st = {.cfg = c, .text = text ? text : ""};
    int bad = ini_parse_stream(reader, &st, handler, &st);
    /* inih reports the first line it could not parse (or where we refused a
     * key); our own message wins when it is about that line or an earlier one. */
    if (st.err != 0 && (bad <= 0 || st.err_line <= bad)) {
        int err = st.err;
        hf_config_destroy(c);
        return hf_fail(err, "%s:%d: %s", name, st.err_line, st.msg);
    }
    if (bad != 0) {
        hf_config_destroy(c);
        if (bad < 0)
            return hf_fail(HF_ENOMEM, "out of memory parsing %s", name);
        return hf_fail(HF_ECONFIG, "%s:%d: malformed line (expected [section] or key = value)",
                       name, bad);
    }
    *cfg = c;
    return 0;
}

/* Reads the whole file into memory and parses it: configs are small, and one
 * code path (hf_config_parse) serves files and the tests' literal strings. */
int hf_config_load(hf_config_t *cfg, const char *path)
{
    *cfg = NULL;
    /* The type first: a FIFO named as the config would block fopen() forever. */
    struct stat st;
    if (stat(path, &st) != 0)
        return hf_fail(errno == ENOENT ? HF_ENOENT : HF_EIO, "cannot read config %s: %s", path,
                       strerror(errno));
    if (!S_ISREG(st.st_mode))
        return hf_fail(HF_EIO, "cannot read config %s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return hf_fail(errno == ENOENT ? HF_ENOENT : HF_EIO, "cannot read config %s: %s", path,
                       strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 4096) {
            cap = cap ? 2 * cap : 8192;
            char *p = realloc(text, cap + 1);
            if (!p) {
                free(text);
                fclose(f);
                return hf_fail(HF_ENOMEM, "out of memory reading %s", path);
            }
            text = p;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int ioerr = ferror(f);
    fclose(f);
    if (ioerr) {
        free(text);
        return hf_fail(HF_EIO, "cannot read config %s: input/output error", path);
    }
    text[len] = '\0';
    /* A NUL byte would end the text early and hide the rest of the file. */
    if (strlen(text) != len) {
        free(text);
        return hf_fail(HF_ECONFIG, "%s: not a text file (contains NUL bytes)", path);
    }
    int rc = hf_config_parse(cfg, path, text);
    free(text);
    return rc;
}

void hf_config_destroy(hf_config_t cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n; i++) {
        free(cfg->e[i].section);
        free(cfg->e[i].key);
        free(cfg->e[i].value);
        free(cfg->e[i].where);
    }
    for (size_t i = 0; i < cfg->nsec; i++)
        free(cfg->sec[i].name);
    free(cfg->e);
    free(cfg->sec);
    free(cfg->path);
    free(cfg);
}

/* Finds an entry and marks it read; the flag is written atomically because
 * device threads may read their keys concurrently. */
static struct hf_config_entry *lookup(hf_config_t cfg, const char *section, const char *key)
{
    struct hf_config_entry *e = find(cfg, section, key);
    if (e)
        __atomic_store_n(&e->read, 1, __ATOMIC_RELAXED);
    return e;
}

const char *hf_config_get(hf_config_t cfg, const char *section, const char *key)
{
    struct hf_config_entry *e = lookup(cfg, section, key);
    return e ? e->value : NULL;
}

/* Every typed getter fails the same way: file:line, section, key and the
 * offending value, then what was expected. */
#define BAD(e, why, ...)                                                                           \
    hf_fail(HF_ECONFIG, "%s: [%s] %s = %s: " why, (e)->where, (e)->section, (e)->key, (e)->value,  \
            __VA_ARGS__)

int hf_config_str(hf_config_t cfg, const char *section, const char *key, const char *def,
                  const char **out)
{
    struct hf_config_entry *e = lookup(cfg, section, key);
    *out = e ? e->value : def;
    return 0;
}

/* Integers in any C notation (42, 0x2a); trailing junk ("4x") is malformed
 * rather than silently 4. 0, -1 (malformed) or -2 (overflows a long). */
int hf__config_parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (s[0] == '\0' || *end != '\0')
        return -1;
    if (errno == ERANGE)
        return -2;
    *out = v;
    return 0;
}

/* Finite numbers only: "inf" or "nan" in a rate would poison every model. A
 * number too large for a double is malformed too. */
int hf__config_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || !isfinite(v) || (errno == ERANGE && v != 0))
        return -1;
    *out = v;
    return 0;
}

int hf_config_long(hf_config_t cfg, const char *section, const char *key, long def, long min,
                   long max, long *out)
{
    *out = def;
    struct hf_config_entry *e = lookup(cfg, section, key);
    if (!e)
        return 0;
    long v = 0;
    int bad = hf__config_parse_long(e->value, &v);
    if (bad == -1)
        return BAD(e, "expected an integer%s", "");
    if (bad || v < min || v > max)
        return BAD(e, "expected an integer in [%ld, %ld]", min, max);
    *out = v;
    return 0;
}

int hf_config_double(hf_config_t cfg, const char *section, const char *key, double def,
                     double min, double max, double *out)
{
    *out = def;
    struct hf_config_entry *e = lookup(cfg, section, key);
    if (!e)
        return 0;
    double v = 0;
    if (hf__config_parse_double(e->value, &v))
        return BAD(e, "expected a number%s", "");
    if (v < min || v > max)
        return BAD(e, "expected a number in [%g, %g]", min, max);
    *out = v;
    return 0;
}

/* Reads "<number>[K|M|G|T][iB|B]" as a byte count, powers of 1024: 0, -1
 * (malformed) or -2 (not a whole number of bytes). */
int hf__config_parse_size(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (s[0] == '\0' || end == s || !isfinite(v) || v < 0)
        return -1;
    while (*end == ' ')
        end++;
    double mult = 1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, *end & ~0x20) : NULL;
    if (u) {
        for (const char *k = units; k <= u; k++)
            mult *= 1024;
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
            end += strlen(end);
    } else if (strcmp(end, "B") == 0) {
        end++;
    }
    if (*end != '\0')
        return -1;
    /* "1.5K" is 1536 bytes, but "0.3" is no whole number of bytes. */
    double bytes = v * mult;
    if (!isfinite(bytes))
        return -1;
    if (bytes != floor(bytes))
        return -2;
    *out = bytes;
    return 0;
}

int hf_config_size(hf_config_t cfg, const char *section, const char *key, size_t def,
                   size_t min, size_t max, size_t *out)
{
    *out = def;
    struct hf_config_entry *e = lookup(cfg, section, key);
    if (!e)
        return 0;
    double bytes = 0;
    int bad = hf__config_parse_size(e->value, &bytes);
    if (bad == -1)
        return BAD(e, "expected a size such as 4096, 64K, 2MiB or 1G%s", "");
    if (bad)
        return BAD(e, "expected a whole number of bytes%s", "");
    if (bytes < (double)min || bytes > (double)max)
        return BAD(e, "expected a size in [%zu, %zu]", min, max);
    *out = (size_t)bytes;
    return 0;
}

/* The spellings Python's configparser accepts, case-insensitively: 1 (yes),
 * 0 (no) or -1 (neither). */
int hf__config_parse_bool(const char *s)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

int hf_config_bool(hf_config_t cfg, const char *section, const char *key, int def, int *out)
{
    *out = def;
    struct hf_config_entry *e = lookup(cfg, section, key);
    if (!e)
        return 0;
    int v = hf__config_parse_bool(e->value);
    if (v < 0)
        return BAD(e, "expected yes or no%s", "");
    *out = v;
    return 0;
}

/* Splits "a, b ,c" into trimmed items; empty items are an error because they
 * are almost always a stray comma. */
int hf_config_list(hf_config_t cfg, const char *section, const char *key, char ***items)
{
    *items = NULL;
    struct hf_config_entry *e = lookup(cfg, section, key);
    const char *v = e ? e->value : "";
    size_t cap = 2;
    for (const char *p = v; *p; p++)
        cap += *p == ',';
    char **out = calloc(cap, sizeof *out);
    if (!out)
        return hf_fail(HF_ENOMEM, "out of memory");
    int n = 0;
    const char *p = v;
    while (*v != '\0') {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0) {
            for (int i = 0; i < n; i++)
                free(out[i]);
            free(out);
            return BAD(e, "empty item in the comma-separated list%s", "");
        }
        if (!(out[n] = strndup(p, len))) {
            for (int i = 0; i < n; i++)
                free(out[i]);
            free(out);
            return hf_fail(HF_ENOMEM, "out of memory");
        }
        n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    out[n] = NULL;
    *items = out;
    return n;
}

int hf_config_has_section(hf_config_t cfg, const char *section)
{
    if (!cfg || !section)
        return 0;
    for (size_t i = 0; i < cfg->nsec; i++)
        if (strcmp(cfg->sec[i].name, section) == 0)
            return 1;
    return 0;
}

const char *hf_config_where(hf_config_t cfg, const char *section, const char *key)
{
    if (!cfg)
        return "<config>";
    struct hf_config_entry *e = find(cfg, section, key);
    return e ? e->where : cfg->path;
}

/* Scans in file order, so the first unused key reported is the first one in
 * the file, which is where a user looks. Only the listed sections are
 * checked: other sections belong to components that may not have run. */
int hf_config_check_unused(hf_config_t cfg, const char *const *sections)
{
    if (!cfg || !sections)
        return 0;
    for (size_t i = 0; i < cfg->n; i++) {
        struct hf_config_entry *e = &cfg->e[i];
        if (__atomic_load_n(&e->read, __ATOMIC_RELAXED))
            continue;
        for (const char *const *s = sections; *s; s++)
            if (strcmp(*s, e->section) == 0)
                return hf_fail(HF_ECONFIG, "%s: [%s] %s: unknown key (misspelt, or not used by "
                                           "this app, engine or scheduler)",
                               e->where, e->section, e->key);
    }
    return 0;
}

const char *hf_config_path(hf_config_t cfg)
{
    return cfg ? cfg->path : "<config>";
}

/* ---- the digest of what a config asks for --------------------------------- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static int skipped(const struct hf_config_entry *en, const char *const *skip)
{
    size_t ls = strlen(en->section);
    for (; skip && *skip; skip++)
        if (strcmp(*skip, en->section) == 0 ||
            (strncmp(*skip, en->section, ls) == 0 && (*skip)[ls] == '.' &&
             strcmp(*skip + ls + 1, en->key) == 0))
            return 1;
    return 0;
}

uint64_t hf_config_digest(hf_config_t cfg, const char *const *skip)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; cfg && i < cfg->n; i++) {
        const struct hf_config_entry *en = &cfg->e[i];
        if (skipped(en, skip))
            continue;
        h = fnv1a(h, en->section, strlen(en->section) + 1);
        h = fnv1a(h, en->key, strlen(en->key) + 1);
        h = fnv1a(h, en->value, strlen(en->value) + 1);
        struct stat st;
        if (*en->value && stat(en->value, &st) == 0 && S_ISREG(st.st_mode)) {
            int64_t id[2] = {(int64_t)st.st_size, (int64_t)st.st_mtime};
            h = fnv1a(h, id, sizeof id);
        }
    }
    return h;
}
