/* config_check.c - one table-driven rule for every section and key of a config.
 *
 * DESIGN
 * ------
 * The typed getters (config.c) check a value when something reads it, which
 * is too late and too little: a key nobody reads (a typo in [sim.gpu], a knob
 * of a scheduler that did not run) is silently ignored, and a bad value is
 * found only after the runs before it. So every owner of keys declares them in
 * a table (struct hf_config_key, hetfarm.h): the framework's [run], [compare],
 * [devices], [sim.NAME] and [faults], each app's [load], each scheduler's own
 * section. hf_config_validate() walks the file once, in file order, before
 * anything runs, and fails on the first unknown section, unknown key, missing
 * required key, or value of the wrong type or out of range, always with
 * "file:line: [section] key = value: why" and, for unknown names, the valid
 * ones. The value parsers are the getters' own (config_internal.h), so the
 * validation and the getters cannot disagree on what "64K" or "yes" means.
 *
 * A section pattern "sim.*" stands for every [sim.NAME]. A LIST key flagged
 * HF_KEY_NAMES_SECTIONS ([devices] sim) ties names to sections both ways:
 * every name needs its [sim.NAME], and every [sim.NAME] must be named, since
 * a section no device uses is a config that does not describe what runs.
 */
#include "hetfarm.h"
#include "io/config_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The section a key belongs to: its own, or its table's. */
static const char *key_section(const struct hf_config_rules *r, const struct hf_config_key *k)
{
    return k->section ? k->section : r->section;
}

/* Loops over every key `k` of every table `r`. */
#define FOR_EACH_KEY(rules, n, r, k)                                                               \
    for (const struct hf_config_rules *r = (rules); r < (rules) + (n); r++)                        \
        for (const struct hf_config_key *k = r->keys; k && k->key; k++)

/* Whether some table declares section `name` by its own name, not by a pattern. */
static int declared(const struct hf_config_rules *rules, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].section && strcmp(rules[i].section, name) == 0)
            return 1;
    FOR_EACH_KEY(rules, n, r, k)
    if (strcmp(key_section(r, k), name) == 0)
        return 1;
    return 0;
}

/* Whether section `name` is one that `pattern` ("run", "sim.*") stands for. A
 * pattern does not stand for a section a table declares by its own name:
 * [sim.net] is the network between nodes, not a [sim.NAME] device. */
static int section_matches(const struct hf_config_rules *rules, size_t nr, const char *pattern,
                           const char *name)
{
    size_t n = strlen(pattern);
    if (n >= 2 && strcmp(pattern + n - 2, ".*") == 0)
        return strncmp(pattern, name, n - 1) == 0 && name[n - 1] != '\0' &&
               !declared(rules, nr, name);
    return strcmp(pattern, name) == 0;
}

static const struct hf_config_key *find_key(const struct hf_config_rules *rules, size_t n,
                                            const char *section, const char *key)
{
    FOR_EACH_KEY(rules, n, r, k)
    if (strcmp(k->key, key) == 0 && section_matches(rules, n, key_section(r, k), section))
        return k;
    return NULL;
}

static int section_known(const struct hf_config_rules *rules, size_t n, const char *section)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].section && section_matches(rules, n, rules[i].section, section))
            return 1;
    FOR_EACH_KEY(rules, n, r, k)
    if (section_matches(rules, n, key_section(r, k), section))
        return 1;
    return 0;
}

/* Whether `section` belongs to an owner that declared no table (keys NULL). */
static int undeclared(const struct hf_config_rules *rules, size_t n, const char *section)
{
    for (size_t i = 0; i < n; i++)
        if (!rules[i].keys && rules[i].section &&
            section_matches(rules, n, rules[i].section, section))
            return 1;
    return 0;
}

/* Appends `word` to a ", "-separated list in buf unless it is there already. */
static void add_word(char *buf, size_t cap, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = strstr(buf, word); p; p = strstr(p + 1, word))
        if ((p == buf || p[-1] == ' ') && (p[wl] == ',' || p[wl] == '\0'))
            return;
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", word);
}

/* A section pattern as people read it: "sim.*" is [sim.NAME]. */
static const char *shown(const char *section, char *buf, size_t cap)
{
    size_t n = strlen(section);
    if (n < 2 || strcmp(section + n - 2, ".*") != 0)
        return section;
    snprintf(buf, cap, "%.*s.NAME", (int)(n - 2), section);
    return buf;
}

/* The valid sections ("sim.*" shown as sim.NAME), or the valid keys of `section`. */
static void valid_names(const struct hf_config_rules *rules, size_t n, const char *section,
                        char *buf, size_t cap)
{
    char name[128];
    buf[0] = '\0';
    for (const struct hf_config_rules *r = rules; r < rules + n; r++) {
        if (!section && r->section)
            add_word(buf, cap, r->section);
        for (const struct hf_config_key *k = r->keys; k && k->key; k++) {
            const char *s = key_section(r, k);
            if (section && section_matches(rules, n, s, section))
                add_word(buf, cap, k->key);
            else if (!section)
                add_word(buf, cap, shown(s, name, sizeof name));
        }
    }
    if (!buf[0])
        snprintf(buf, cap, "none");
}

/* Whether `word` is one of the '|'-separated `choices`. */
static int is_choice(const char *choices, const char *word, size_t len)
{
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t cl = bar ? (size_t)(bar - c) : strlen(c);
        if (cl == len && strncmp(c, word, len) == 0)
            return 1;
        c = bar ? bar + 1 : c + cl;
    }
    return 0;
}

/* "[1, 1000000]", "(0, 1e+300]", "[0, 1)". */
static void range_text(const struct hf_config_key *k, char *buf, size_t cap)
{
    snprintf(buf, cap, "%c%.15g, %.15g%c", k->flags & HF_KEY_MIN_OPEN ? '(' : '[', k->min, k->max,
             k->flags & HF_KEY_MAX_OPEN ? ')' : ']');
}

static int in_range(const struct hf_config_key *k, double v)
{
    int lo = k->flags & HF_KEY_MIN_OPEN ? v > k->min : v >= k->min;
    int hi = k->flags & HF_KEY_MAX_OPEN ? v < k->max : v <= k->max;
    return lo && hi;
}

#define BAD(e, ...) bad_value(e, __VA_ARGS__)

/* Fails with the one message shape of a bad value: where, section, key, value, why. */
__attribute__((format(printf, 2, 3))) static int bad_value(const struct hf_config_entry *e,
                                                           const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return hf_fail(HF_ECONFIG, "%s: [%s] %s = %s: %s", e->where, e->section, e->key, e->value,
                   why);
}

/* The items of a LIST value: none empty, each one of the choices when given. */
static int check_list(const struct hf_config_entry *e, const struct hf_config_key *k)
{
    for (const char *p = e->value;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0 && (comma || e->value[0] != '\0'))
            return BAD(e, "empty item in the comma-separated list");
        if (len > 0 && k->choices && !(k->flags & HF_KEY_NAMES_SECTIONS) &&
            !is_choice(k->choices, p, len))
            return BAD(e, "'%.*s' is not one of %s", (int)len, p, k->choices);
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Checks one value against its key's type and range. */
static int check_value(const struct hf_config_entry *e, const struct hf_config_key *k)
{
    char range[96];
    range_text(k, range, sizeof range);
    const char *v = e->value;
    long l;
    double d;
    switch (k->type) {
    case HF_KEY_STR:
        if (k->choices && !is_choice(k->choices, v, strlen(v)))
            return BAD(e, "expected one of %s", k->choices);
        return 0;
    case HF_KEY_INT:
        if (k->choices && is_choice(k->choices, v, strlen(v)))
            return 0;
        switch (hf__config_parse_long(v, &l)) {
        case -1:
            return BAD(e, "expected an integer%s%s", k->choices ? " or one of " : "",
                       k->choices ? k->choices : "");
        case -2:
            return BAD(e, "expected an integer in %s (this one overflows)", range);
        }
        return in_range(k, (double)l) ? 0 : BAD(e, "expected an integer in %s", range);
    case HF_KEY_NUM:
        if (hf__config_parse_double(v, &d))
            return BAD(e, "expected a finite number in %s", range);
        return in_range(k, d) ? 0 : BAD(e, "expected a number in %s", range);
    case HF_KEY_SIZE:
        switch (hf__config_parse_size(v, &d)) {
        case -1:
            return BAD(e, "expected a size such as 4096, 64K, 2MiB or 1G");
        case -2:
            return BAD(e, "expected a whole number of bytes");
        }
        return in_range(k, d) ? 0 : BAD(e, "expected a size in %s bytes", range);
    case HF_KEY_BOOL:
        return hf__config_parse_bool(v) >= 0 ? 0 : BAD(e, "expected yes or no");
    case HF_KEY_LIST:
        return check_list(e, k);
    }
    return 0;
}

/* The line of section header `name`, 0 when absent. */
static int section_line(hf_config_t cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nsec; i++)
        if (strcmp(cfg->sec[i].name, name) == 0)
            return cfg->sec[i].line;
    return 0;
}

static const struct hf_config_entry *entry(hf_config_t cfg, const char *section, const char *key)
{
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->e[i].section, section) == 0 && strcmp(cfg->e[i].key, key) == 0)
            return &cfg->e[i];
    return NULL;
}

/* A LIST naming sections (`[devices] sim = a, b`): every name has its
 * [<prefix>.NAME], and every such section is named. */
static int check_names(hf_config_t cfg, const struct hf_config_rules *rules, size_t nr,
                       const char *section, const struct hf_config_key *k)
{
    const struct hf_config_entry *e = entry(cfg, section, k->key);
    char want[256];
    size_t plen = strlen(k->choices);
    for (const char *p = e ? e->value : ""; e && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        snprintf(want, sizeof want, "%s.%.*s", k->choices, (int)len, p);
        if (!section_line(cfg, want))
            return BAD(e, "'%.*s' names no [%s] section", (int)len, p, want);
        if (!comma)
            break;
        p = comma + 1;
    }
    for (size_t i = 0; i < cfg->nsec; i++) {
        const char *name = cfg->sec[i].name;
        if (strncmp(name, k->choices, plen) != 0 || name[plen] != '.' || declared(rules, nr, name))
            continue;
        const char *v = e ? e->value : "";
        const char *s = name + plen + 1;
        size_t sl = strlen(s);
        int named = 0;
        for (const char *p = strstr(v, s); p && !named; p = strstr(p + 1, s))
            named = (p == v || p[-1] == ',' || p[-1] == ' ' || p[-1] == '\t') &&
                    (p[sl] == '\0' || p[sl] == ',' || p[sl] == ' ' || p[sl] == '\t');
        if (!named)
            return hf_fail(HF_ECONFIG, "%s:%d: [%s]: not named by [%s] %s, so no device uses it "
                                       "(add %s to [%s] %s, or remove the section)",
                           cfg->path, cfg->sec[i].line, name, section, k->key, s, section, k->key);
    }
    return 0;
}

/* Fails when required key `k` is missing from section `name`. */
static int require(hf_config_t cfg, const char *name, const struct hf_config_key *k)
{
    if (entry(cfg, name, k->key))
        return 0;
    int line = section_line(cfg, name);
    char where[32] = "";
    if (line)
        snprintf(where, sizeof where, ":%d", line);
    return hf_fail(HF_ECONFIG, "%s%s: [%s] %s: missing; it is required (%s)", cfg->path, where,
                   name, k->key, k->help ? k->help : "no default");
}

/* Required keys, in every section they apply to, and the section-naming lists. */
static int check_required(hf_config_t cfg, const struct hf_config_rules *rules, size_t n)
{
    int rc = 0;
    FOR_EACH_KEY(rules, n, r, k)
    {
        const char *s = key_section(r, k);
        if ((k->flags & HF_KEY_NAMES_SECTIONS) && (rc = check_names(cfg, rules, n, s, k)))
            return rc;
        if (!(k->flags & HF_KEY_REQUIRED))
            continue;
        if (!strchr(s, '*') && (rc = require(cfg, s, k)))
            return rc;
        for (size_t i = 0; strchr(s, '*') && i < cfg->nsec; i++)
            if (section_matches(rules, n, s, cfg->sec[i].name) &&
                (rc = require(cfg, cfg->sec[i].name, k)))
                return rc;
    }
    return 0;
}

int hf_config_validate(hf_config_t cfg, const struct hf_config_rules *rules, size_t nrules)
{
    char valid[1024];
    for (size_t i = 0; i < cfg->nsec; i++) {
        if (section_known(rules, nrules, cfg->sec[i].name))
            continue;
        valid_names(rules, nrules, NULL, valid, sizeof valid);
        return hf_fail(HF_ECONFIG, "%s:%d: [%s]: unknown section; valid sections: %s", cfg->path,
                       cfg->sec[i].line, cfg->sec[i].name, valid);
    }
    for (size_t i = 0; i < cfg->n; i++) {
        const struct hf_config_entry *e = &cfg->e[i];
        const struct hf_config_key *k = find_key(rules, nrules, e->section, e->key);
        if (!k && undeclared(rules, nrules, e->section))
            continue;
        if (!k) {
            valid_names(rules, nrules, e->section, valid, sizeof valid);
            return hf_fail(HF_ECONFIG, "%s: [%s] %s: unknown key; valid keys: %s", e->where,
                           e->section, e->key, valid);
        }
        int rc = check_value(e, k);
        if (rc)
            return rc;
    }
    return check_required(cfg, rules, nrules);
}

/* What a key takes, in words: "integer in [1, 1000000] or all". */
static void type_text(const struct hf_config_key *k, char *buf, size_t cap)
{
    char range[96];
    range_text(k, range, sizeof range);
    static const char *const names[] = {"text", "integer", "number", "size", "yes|no", "list"};
    int n = snprintf(buf, cap, "%s", k->type == HF_KEY_STR && k->choices ? k->choices
                                                                          : names[k->type]);
    if ((k->type == HF_KEY_INT || k->type == HF_KEY_NUM || k->type == HF_KEY_SIZE) && n >= 0)
        n += snprintf(buf + n, cap - (size_t)n, " in %s", range);
    if (k->choices && k->type == HF_KEY_INT && n >= 0)
        n += snprintf(buf + n, cap - (size_t)n, " or %s", k->choices);
    if (k->type == HF_KEY_LIST && k->choices && !(k->flags & HF_KEY_NAMES_SECTIONS) && n >= 0)
        snprintf(buf + n, cap - (size_t)n, " of %s", k->choices);
}

void hf_config_keys_help(FILE *f, const struct hf_config_rules *rules, size_t nrules)
{
    const char *last = NULL;
    char name[128];
    FOR_EACH_KEY(rules, nrules, r, k)
    {
        const char *s = key_section(r, k);
        if (!last || strcmp(last, s) != 0 || k == r->keys)
            fprintf(f, "  [%s]%s%s%s\n", shown(s, name, sizeof name),
                    r->owner ? " (for " : "", r->owner ? r->owner : "", r->owner ? ")" : "");
        last = s;
        char type[160];
        type_text(k, type, sizeof type);
        fprintf(f, "    %-15s %s%s%s%s; %s\n", k->key, type, k->def ? ", default " : "",
                k->def ? k->def : "", k->flags & HF_KEY_REQUIRED ? ", required" : "",
                k->help ? k->help : "");
    }
}
