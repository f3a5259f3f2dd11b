/* fuzz_results.c - libFuzzer harness: the results.json loader of `hetfarm report`.
 * seeds: tests/fuzz/seeds/results
 *
 * DESIGN
 * ------
 * Any bytes are handed to the loader that `hetfarm report` uses
 * (hf__report_parse: JSON, then every field the charts need), and every
 * document it accepts is drawn into a page in memory (hf__report_render), so
 * that what validation lets through cannot crash the drawing either. A
 * refusal must come with a message naming the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetfarm.h"
#include "report/report_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hf__rp_doc doc;
    hf_clear_error();
    int rc = hf__report_parse("fuzz.json", (const char *)data, size, &doc);
    if (rc == 0) {
        char *html = NULL;
        size_t len = 0;
        if (hf__report_render(&doc, &html, &len) == 0 && (!html || len == 0))
            abort();
        free(html);
    } else if (!strstr(hf_last_error(), "fuzz.json")) {
        fprintf(stderr, "refusal without the file in its message: '%s'\n", hf_last_error());
        abort();
    }
    hf__report_free(&doc);
    return 0;
}
