/* config_internal.h - the parsed INI file as io/config.c holds it, shared
 * with io/config_check.c (the table-driven validation). Private to io/.
 */
#ifndef HF_CONFIG_INTERNAL_H
#define HF_CONFIG_INTERNAL_H

#include <stddef.h>

/* One "key = value" line. `where` is built once at parse time because every
 * error message about the key needs it and getters must not allocate. */
struct hf_config_entry {
    char *section, *key, *value;
    char *where; /* "file:line", built once for messages */
    int line;
    int read;    /* set (atomically) by any getter */
};

/* A "[section]" header, kept separately because a section may be empty
 * (e.g. "[hass]" meaning "hass with its defaults"), and inih reports no
 * section that holds no key. */
struct hf_config_section {
    char *name;
    int line;
};

struct hf_config {
    char *path;
    struct hf_config_entry *e;
    size_t n, cap;
    struct hf_config_section *sec;
    size_t nsec, capsec;
};

/* The value parsers behind the typed getters, shared with the validation so
 * that a value means the same to both. 0 when well-formed; see config.c. */
int hf__config_parse_long(const char *s, long *out);
int hf__config_parse_double(const char *s, double *out);
int hf__config_parse_size(const char *s, double *out);
int hf__config_parse_bool(const char *s);

#endif
