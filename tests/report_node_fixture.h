/* report_node_fixture.h - a hand-written results.json of a run across nodes
 * for the report tests (test_report.c, test_report_browser.c), in the shape
 * rank 0 writes it (framework/report/results.c): the run's own devices cpu,
 * node1 and node2 (kind node), the devices inside the nodes ("node_devices":
 * node1:cpu, node1:cuda0, node2:cpu), what they did per round
 * (rounds[].node_devices, share_of_node) and their bundles ("node_events",
 * "device" indexing node_devices; node1:cuda0's with copy times).
 *
 * Two rounds; 6 bundles of the run's own devices (node1's with the hand-off
 * as copy times, as the node device reports it) and 6 inside the nodes.
 * One %s: the config path. Include after report_fixture.h (fix_write).
 */
#ifndef HF_REPORT_NODE_FIXTURE_H
#define HF_REPORT_NODE_FIXTURE_H

#define NODE_FIX_DEVICES 3       /* cpu, node1, node2 */
#define NODE_FIX_INNER 3         /* node1:cpu, node1:cuda0, node2:cpu */
#define NODE_FIX_EVENTS 6        /* of the run's own devices */
#define NODE_FIX_INNER_EVENTS 6  /* of the devices inside the nodes */

/* One round's devices: cpu 10 chunks, node1 30 (node1:cpu 10, node1:cuda0
 * 20), node2 20 (node2:cpu all). */
#define NODE_FIX_ROUND(R, PLAN)                                                                    \
    "    {\"round\":" #R ",\"makespan_s\":1.0,\"bound_s\":0.9,\"ideal_s\":0.9,"                    \
    "\"efficiency\":0.9,\"plan\":" PLAN ",\"devices\":["                                           \
    "{\"name\":\"cpu\",\"chunks\":10,\"bundles\":1,\"stolen\":0,\"work\":10,\"share\":0.2,"        \
    "\"busy_s\":1},"                                                                               \
    "{\"name\":\"node1\",\"chunks\":30,\"bundles\":1,\"stolen\":0,\"work\":30,\"share\":0.5,"      \
    "\"busy_s\":1},"                                                                               \
    "{\"name\":\"node2\",\"chunks\":20,\"bundles\":1,\"stolen\":0,\"work\":20,\"share\":0.3,"      \
    "\"busy_s\":1}],\"node_devices\":["                                                            \
    "{\"name\":\"node1:cpu\",\"chunks\":10,\"bundles\":1,\"work\":10,\"share_of_node\":0.4,"       \
    "\"busy_s\":0.8},"                                                                             \
    "{\"name\":\"node1:cuda0\",\"chunks\":20,\"bundles\":1,\"work\":20,\"share_of_node\":0.6,"     \
    "\"busy_s\":0.85},"                                                                            \
    "{\"name\":\"node2:cpu\",\"chunks\":20,\"bundles\":1,\"work\":20,\"share_of_node\":1,"         \
    "\"busy_s\":0.9}]}"

/* One bundle: round, device, first chunk, chunks (= work), start, end, copy times. */
#define NODE_FIX_EV(R, D, F, C, S, E, CIN, K, COUT)                                                \
    "{\"round\":" #R ",\"device\":" #D ",\"first\":" #F ",\"count\":" #C ",\"work\":" #C           \
    ",\"start_s\":" #S ",\"end_s\":" #E ",\"copy_in_s\":" #CIN ",\"kernel_s\":" #K                 \
    ",\"copy_out_s\":" #COUT ",\"stolen\":false}"

static const char node_fixture_fmt[] =
    "{\"hetfarm\":\"0.1\",\n"
    " \"machine\":{\"host\":\"rank0\",\"cpu_model\":\"Test CPU\",\"cores\":2,\"numa_nodes\":1,"
    "\"blas\":\"OpenBLAS\"},\n"
    " \"config\":\"%s\",\n"
    " \"runs\":[\n"
    "  {\"scheduler\":\"hass\",\"app\":\"noop\",\"engine\":\"real\",\"signature\":\"chunks=60\","
    "\"simulated\":false,\"total_work\":60,\"wall_s\":2.5,\"fault\":\"\",\n"
    "   \"devices\":[{\"name\":\"cpu\",\"kind\":\"cpu\",\"is_gpu\":false,\"nthreads\":1},"
    "{\"name\":\"node1\",\"kind\":\"node\",\"is_gpu\":true},"
    "{\"name\":\"node2\",\"kind\":\"node\",\"is_gpu\":true}],\n"
    "   \"node_devices\":[{\"name\":\"node1:cpu\",\"node\":\"node1\"},"
    "{\"name\":\"node1:cuda0\",\"node\":\"node1\"},{\"name\":\"node2:cpu\",\"node\":\"node2\"}],\n"
    "   \"rounds\":[\n" NODE_FIX_ROUND(0, "[0.2,0.5,0.3]") ",\n" NODE_FIX_ROUND(1, "[0.2,0.5,0.3]")
    "],\n"
    "   \"events\":[\n    "
    NODE_FIX_EV(0, 0, 0, 10, 0, 1, 0, 0, 0) ",\n    "
    NODE_FIX_EV(0, 1, 10, 30, 0, 1, 0.05, 0.9, 0.05) ",\n    "
    NODE_FIX_EV(0, 2, 40, 20, 0, 1, 0.04, 0.92, 0.04) ",\n    "
    NODE_FIX_EV(1, 0, 0, 10, 1.2, 2.2, 0, 0, 0) ",\n    "
    NODE_FIX_EV(1, 1, 10, 30, 1.2, 2.2, 0.05, 0.9, 0.05) ",\n    "
    NODE_FIX_EV(1, 2, 40, 20, 1.2, 2.2, 0.04, 0.92, 0.04) "],\n"
    "   \"node_events\":[\n    "
    NODE_FIX_EV(0, 0, 10, 10, 0.05, 0.85, 0, 0, 0) ",\n    "
    NODE_FIX_EV(0, 1, 20, 20, 0.05, 0.9, 0.1, 0.7, 0.05) ",\n    "
    NODE_FIX_EV(0, 2, 40, 20, 0.04, 0.94, 0, 0, 0) ",\n    "
    NODE_FIX_EV(1, 0, 10, 10, 1.25, 2.05, 0, 0, 0) ",\n    "
    NODE_FIX_EV(1, 1, 20, 20, 1.25, 2.1, 0.1, 0.7, 0.05) ",\n    "
    NODE_FIX_EV(1, 2, 40, 20, 1.24, 2.14, 0, 0, 0) "]}\n"
    " ]}\n";

/* Writes the node fixture to `path`, naming `config_path`; 0 or -1. */
static int node_fix_write_results(const char *path, const char *config_path)
{
    return fix_write_format(path, node_fixture_fmt, config_path);
}

#endif
