/* report_fixture.h - a hand-written results.json for the report tests
 * (test_report.c, test_report_browser.c), independent of the engine.
 *
 * Two runs: hass on the sim engine (a CPU and a GPU whose name needs HTML
 * escaping; shares settle after round 1; 10 events, 2 of them stolen, GPU
 * events with copy times) and greedy on the real engine (shares never
 * settle; 6 events, 1 stolen). One %s: the config path.
 */
#ifndef HF_REPORT_FIXTURE_H
#define HF_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_EVENTS 16
#define FIX_STOLEN_EVENTS 3
#define FIX_GPU_NAME_ESCAPED "h200 &lt;#1&gt; &amp; &quot;x&quot; &#39;y&#39;"

static const char fixture_fmt[] =
    "{\"hetfarm\":\"0.1\",\n"
    " \"machine\":{\"host\":\"node<1>\",\"cpu_model\":\"Test CPU @ 3GHz\",\"cores\":16,"
    "\"numa_nodes\":2,\"blas\":\"OpenBLAS Haswell\",\"gpus\":[{\"ordinal\":0,\"name\":\"NVIDIA "
    "H200\",\"pci_bus_id\":\"0000:01:00.0\",\"memory_bytes\":150000000000}]},\n"
    " \"config\":\"%s\",\n"
    " \"runs\":[\n"
    "  {\"scheduler\":\"hass\",\"app\":\"matmul\",\"engine\":\"sim\",\"signature\":\"n=4096\","
    "\"simulated\":true,\"total_work\":100,\"wall_s\":0.01,\"fault\":\"\",\n"
    "   \"devices\":[{\"name\":\"cpu\",\"kind\":\"cpu\",\"is_gpu\":false,\"nthreads\":16,"
    "\"standalone_rate\":10},{\"name\":\"h200 <#1> & \\\"x\\\" 'y'\",\"kind\":\"sim\","
    "\"is_gpu\":true,\"standalone_rate\":40}],\n"
    "   \"rounds\":[\n"
    "    {\"round\":0,\"makespan_s\":5,\"ideal_s\":2,\"efficiency\":0.4,\"plan\":null,"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":50,\"bundles\":2,\"stolen\":0,\"work\":50,"
    "\"share\":0.5,\"busy_s\":5},{\"name\":\"g\",\"chunks\":50,\"bundles\":2,\"stolen\":0,"
    "\"work\":50,\"share\":0.5,\"busy_s\":1.25}]},\n"
    "    {\"round\":1,\"makespan_s\":2.2,\"ideal_s\":2,\"efficiency\":0.909,\"plan\":[0.2,0.8],"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":20,\"bundles\":1,\"stolen\":5,\"work\":20,"
    "\"share\":0.2,\"busy_s\":2},{\"name\":\"g\",\"chunks\":80,\"bundles\":2,\"stolen\":0,"
    "\"work\":80,\"share\":0.8,\"busy_s\":2}]},\n"
    "    {\"round\":2,\"makespan_s\":2.05,\"ideal_s\":2,\"efficiency\":0.976,\"plan\":[0.2,0.8],"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":20,\"bundles\":1,\"stolen\":0,\"work\":20,"
    "\"share\":0.205,\"busy_s\":2},{\"name\":\"g\",\"chunks\":80,\"bundles\":2,\"stolen\":3,"
    "\"work\":80,\"share\":0.795,\"busy_s\":2}]},\n"
    "    {\"round\":3,\"makespan_s\":2.0,\"ideal_s\":2,\"efficiency\":null,\"plan\":[0.2,0.8],"
    "\"device_set\":{\"used\":[\"g\"],\"predicted_s\":1.875,\"full_predicted_s\":2.125,"
    "\"part_s\":0,\"probe\":false},"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":20,\"bundles\":1,\"stolen\":0,\"work\":20,"
    "\"share\":0.2,\"busy_s\":2,\"left_out\":true},{\"name\":\"g\",\"chunks\":80,\"bundles\":1,\"stolen\":0,"
    "\"work\":80,\"share\":0.8,\"busy_s\":2}]}],\n"
    "   \"events\":[\n"
    "    {\"round\":0,\"device\":0,\"first\":0,\"count\":25,\"work\":25,\"start_s\":0,"
    "\"end_s\":2.5,"
    "\"copy_in_s\":0,\"kernel_s\":0,\"copy_out_s\":0,\"stolen\":false},\n"
    "    {\"round\":0,\"device\":0,\"first\":25,\"count\":25,\"work\":25,\"start_s\":2.5,"
    "\"end_s\":5,\"copy_in_s\":0,\"kernel_s\":0,\"copy_out_s\":0,\"stolen\":false},\n"
    "    {\"round\":0,\"device\":1,\"first\":50,\"count\":50,\"work\":50,\"start_s\":0,"
    "\"end_s\":1.25,\"copy_in_s\":0.3,\"kernel_s\":0.8,\"copy_out_s\":0.15,\"stolen\":false},\n"
    "    {\"round\":1,\"device\":0,\"first\":0,\"count\":20,\"work\":20,\"start_s\":5.2,"
    "\"end_s\":7.2,\"copy_in_s\":0,\"kernel_s\":0,\"copy_out_s\":0,\"stolen\":true},\n"
    "    {\"round\":1,\"device\":1,\"first\":20,\"count\":40,\"work\":40,\"start_s\":5.2,"
    "\"end_s\":6.2,\"copy_in_s\":0.2,\"kernel_s\":0.7,\"copy_out_s\":0.1,\"stolen\":false},\n"
    "    {\"round\":1,\"device\":1,\"first\":60,\"count\":40,\"work\":40,\"start_s\":6.2,"
    "\"end_s\":7.2,\"copy_in_s\":0.2,\"kernel_s\":0.7,\"copy_out_s\":0.1,\"stolen\":false},\n"
    "    {\"round\":2,\"device\":0,\"first\":0,\"count\":20,\"work\":20,\"start_s\":7.4,"
    "\"end_s\":9.4,\"copy_in_s\":0,\"kernel_s\":0,\"copy_out_s\":0,\"stolen\":false},\n"
    "    {\"round\":2,\"device\":1,\"first\":20,\"count\":80,\"work\":80,\"start_s\":7.4,"
    "\"end_s\":9.45,\"copy_in_s\":0.4,\"kernel_s\":1.4,\"copy_out_s\":0.25,\"stolen\":true},\n"
    "    {\"round\":3,\"device\":0,\"first\":0,\"count\":20,\"work\":20,\"start_s\":9.6,"
    "\"end_s\":11.6,\"copy_in_s\":0,\"kernel_s\":0,\"copy_out_s\":0,\"stolen\":false},\n"
    "    {\"round\":3,\"device\":1,\"first\":20,\"count\":80,\"work\":80,\"start_s\":9.6,"
    "\"end_s\":11.6,\"copy_in_s\":0.4,\"kernel_s\":1.4,\"copy_out_s\":0.2,\"stolen\":false}]},\n"
    "  {\"scheduler\":\"greedy\",\"app\":\"matmul\",\"engine\":\"real\",\"signature\":\"n=4096\","
    "\"simulated\":false,\"total_work\":100,\"wall_s\":3.5,\"fault\":\"\",\n"
    "   \"devices\":[{\"name\":\"cpu\",\"kind\":\"cpu\",\"is_gpu\":false,\"nthreads\":2,"
    "\"standalone_rate\":80}],\n"
    "   \"rounds\":[\n"
    "    {\"round\":0,\"makespan_s\":1.3,\"ideal_s\":1.25,\"efficiency\":0.96,\"plan\":null,"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":100,\"bundles\":2,\"stolen\":0,\"work\":100,"
    "\"share\":0.5,\"busy_s\":1.3}]},\n"
    "    {\"round\":1,\"makespan_s\":1.28,\"ideal_s\":1.25,\"efficiency\":0.97,\"plan\":null,"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":100,\"bundles\":2,\"stolen\":7,\"work\":100,"
    "\"share\":0.3,\"busy_s\":1.28}]},\n"
    "    {\"round\":2,\"makespan_s\":1.27,\"ideal_s\":1.25,\"efficiency\":0.98,\"plan\":null,"
    "\"devices\":[{\"name\":\"cpu\",\"chunks\":100,\"bundles\":2,\"stolen\":0,\"work\":100,"
    "\"share\":0.5,\"busy_s\":1.27}]}],\n"
    "   \"events\":[\n"
    "    {\"round\":0,\"device\":0,\"first\":0,\"count\":50,\"work\":50,\"start_s\":0,"
    "\"end_s\":0.6,"
    "\"stolen\":false},\n"
    "    {\"round\":0,\"device\":0,\"first\":50,\"count\":50,\"work\":50,\"start_s\":0.6,"
    "\"end_s\":1.3,\"stolen\":false},\n"
    "    {\"round\":1,\"device\":0,\"first\":0,\"count\":50,\"work\":50,\"start_s\":1.4,"
    "\"end_s\":2.0,\"stolen\":false},\n"
    "    {\"round\":1,\"device\":0,\"first\":50,\"count\":50,\"work\":50,\"start_s\":2.0,"
    "\"end_s\":2.68,\"stolen\":true},\n"
    "    {\"round\":2,\"device\":0,\"first\":0,\"count\":50,\"work\":50,\"start_s\":2.8,"
    "\"end_s\":3.4,\"stolen\":false},\n"
    "    {\"round\":2,\"device\":0,\"first\":50,\"count\":50,\"work\":50,\"start_s\":3.4,"
    "\"end_s\":4.07,\"stolen\":false}]}\n"
    " ]}\n";

#define FIX_CONFIG_TEXT                                                                            \
    "[run]\napp = matmul\n# a <tag> & an \"ampersand\" must be escaped\n[devices]\ncpu = 1\n"

/* Writes `text` to `path`; returns 0 or -1. */
static int fix_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* Writes the results.json of a fixture format (its one %s: the config
 * path) to `path`, naming `config_path`; 0 or -1. */
static int fix_write_format(const char *path, const char *fmt, const char *config_path)
{
    size_t n = strlen(fmt) + strlen(config_path) + 1;
    char *buf = malloc(n);
    if (!buf)
        return -1;
    snprintf(buf, n, fmt, config_path);
    int rc = fix_write(path, buf);
    free(buf);
    return rc;
}

/* Writes the fixture results.json to `path`, naming `config_path`. */
static int fix_write_results(const char *path, const char *config_path)
{
    return fix_write_format(path, fixture_fmt, config_path);
}

/* Counts the non-overlapping occurrences of `needle` in `hay`. */
static size_t count_str(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

#endif
