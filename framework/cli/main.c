/* main.c - the `hetfarm` command: devices, run, compare, profile, report.
 *
 * DESIGN
 * ------
 * main() only dispatches: each command lives in its own cmd_*.c, the options
 * they share in options.c, the config-to-runs plan in plan.c, the help text
 * in help.c. The environment the libraries read when they load (OpenBLAS's
 * core, OpenMP's wait policy: drivers/runtime_env.c) is fixed before main(),
 * from the executable's .preinit_array, since that re-executes the program
 * and should do so before the libraries' constructors ran.
 */
#include <string.h>

#include "cli.h"
#include "drivers/runtime_env.h"

/* Before any library's constructor: may re-execute the program. */
__attribute__((section(".preinit_array"), used)) static void (*const preinit)(int, char **,
                                                                             char **) =
    hf_runtime_env;

/* Dispatches `hetfarm COMMAND ...` and `hetfarm help COMMAND`. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        hf__cli_usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        hf__cli_usage(stdout);
        return 0;
    }
    static const struct {
        const char *name;
        enum hf__cmd cmd;
    } cmds[] = {{"devices", CMD_DEVICES},
                {"run", CMD_RUN},
                {"compare", CMD_COMPARE},
                {"profile", CMD_PROFILE},
                {"report", CMD_REPORT}};
    int help = strcmp(name, "help") == 0;
    if (help) {
        if (argc == 2) {
            hf__cli_usage(stdout);
            return 0;
        }
        name = argv[2];
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(name, cmds[i].name) != 0)
            continue;
        if (help) {
            hf__cli_help(stdout, cmds[i].cmd);
            return 0;
        }
        struct hf__cli c = {.cmd = cmds[i].cmd, .cmdname = name, .rounds = -1, .seed = -1};
        int r = hf__cli_parse(&c, argc - 1, argv + 1);
        if (r == 1) {
            hf__cli_help(stdout, c.cmd);
            return 0;
        }
        if (r < 0)
            return EXIT_USAGE;
        switch (c.cmd) {
        case CMD_DEVICES:
            return hf__cmd_devices();
        case CMD_REPORT:
            return hf__cmd_report(&c);
        case CMD_PROFILE:
            return hf__cli_cluster_end(hf__cmd_profile(&c));
        default:
            return hf__cli_cluster_end(hf__cmd_run(&c));
        }
    }
    fprintf(stderr, "hetfarm: unknown command '%s'\n\n", name);
    hf__cli_usage(stderr);
    return EXIT_USAGE;
}
