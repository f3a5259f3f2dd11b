/* fuzz_config.c - libFuzzer harness: the INI loader, the validation and the typed getters.
 * seeds: configs bench/configs tests/fuzz/seeds/config
 *
 * DESIGN
 * ------
 * Any bytes are parsed as a config (hf_config_parse: the same path as a file
 * once read), then validated against every table there is (the devices', each
 * app's [load], each scheduler's; [run] from a copy of the CLI's keys, which
 * live outside the library), then every key of those tables is read with the
 * getter of its type and as a list, in the sections the fuzzer may have made
 * ([sim.gpu], [sim.host], [sim.x]). A refusal must come with a message naming
 * the file; the getters must agree with the validation: a file the validation
 * accepted must not fail a getter with the table's own range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "sched.h"

static const struct hf_config_key run_keys[] = {
    {"run", "app", HF_KEY_STR, 0, 0, 0, NULL, NULL, NULL},
    {"run", "rounds", HF_KEY_INT, 1, 1000000, 0, NULL, NULL, NULL},
    {"run", "seed", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, NULL, NULL},
    {"run", "grain", HF_KEY_SIZE, 1, 281474976710656.0, 0, NULL, NULL, NULL},
    {"run", "verify", HF_KEY_BOOL, 0, 0, 0, NULL, NULL, NULL},
    {"compare", "engines", HF_KEY_LIST, 0, 0, 0, "real|sim", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static void must_name_file(void)
{
    if (!strstr(hf_last_error(), "fuzz.ini")) {
        fprintf(stderr, "refusal without the file in its message: '%s'\n", hf_last_error());
        abort();
    }
}

/* Reads one key with the getter of its type; `valid` = the file passed validation. */
static void read_key(hf_config_t cfg, const char *section, const struct hf_config_key *k,
                     int valid)
{
    long l;
    double d;
    size_t z;
    int b, rc = 0;
    const char *s;
    hf_clear_error();
    switch (k->type) {
    case HF_KEY_INT:
        if (!(k->choices && hf_config_get(cfg, section, k->key)))
            rc = hf_config_long(cfg, section, k->key, 0, (long)k->min,
                                k->max >= 9.2e18 ? __LONG_MAX__ : (long)k->max, &l);
        break;
    case HF_KEY_NUM:
        rc = hf_config_double(cfg, section, k->key, 0, k->min, k->max, &d);
        break;
    case HF_KEY_SIZE:
        rc = hf_config_size(cfg, section, k->key, 0, (size_t)k->min, (size_t)k->max, &z);
        break;
    case HF_KEY_BOOL:
        rc = hf_config_bool(cfg, section, k->key, 0, &b);
        break;
    default:
        rc = hf_config_str(cfg, section, k->key, NULL, &s);
    }
    if (rc && valid) {
        fprintf(stderr, "validation passed but the getter failed: %s\n", hf_last_error());
        abort();
    }
    if (rc)
        must_name_file();
    char **items = NULL;
    int n = hf_config_list(cfg, section, k->key, &items);
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
    (void)hf_config_where(cfg, section, k->key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    hf_config_t cfg = NULL;
    hf_clear_error();
    int rc = hf_config_parse(&cfg, "fuzz.ini", text);
    free(text);
    if (rc) {
        must_name_file();
        return 0;
    }
    struct hf_config_rules rules[64];
    size_t n = 0;
    rules[n++] = (struct hf_config_rules){NULL, run_keys, NULL};
    rules[n++] = (struct hf_config_rules){NULL, hf_device_keys, NULL};
    const struct hf_app *app = hf_app_find(hf_config_get(cfg, "run", "app") ? hf_config_get(cfg, "run", "app") : "noop");
    rules[n++] = (struct hf_config_rules){"load", app ? app->keys : NULL, NULL};
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s && n < 64; s++)
        rules[n++] = (struct hf_config_rules){(*s)->name, (*s)->keys, NULL};
    hf_clear_error();
    int valid = hf_config_validate(cfg, rules, n) == 0;
    if (!valid)
        must_name_file();
    static const char *const sims[] = {"sim.gpu", "sim.host", "sim.x"};
    for (size_t i = 0; i < n; i++)
        for (const struct hf_config_key *k = rules[i].keys; k && k->key; k++) {
            const char *sec = k->section ? k->section : rules[i].section;
            if (strcmp(sec, "sim.*") != 0)
                read_key(cfg, sec, k, valid);
            else
                for (size_t j = 0; j < 3; j++)
                    read_key(cfg, sims[j], k, valid);
        }
    static const char *const all[] = {"run", "load", "devices", "compare", NULL};
    hf_clear_error();
    if (hf_config_check_unused(cfg, all))
        must_name_file();
    (void)hf_config_has_section(cfg, "sim.gpu");
    hf_config_destroy(cfg);
    return 0;
}
