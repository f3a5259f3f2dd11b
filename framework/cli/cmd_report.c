/* cmd_report.c - `hetfarm report RESULTS [-o FILE]`: the HTML report of a
 * results file.
 *
 * DESIGN
 * ------
 * The report is drawn from results.json alone (report/report.c), never from a
 * live run, so a report can be redrawn from any committed results file. The
 * default output is report.html next to it, the same place `compare` writes.
 */
#include "cli.h"
#include "report/report.h"

int hf__cmd_report(const struct hf__cli *c)
{
    char def[4096];
    const char *out = c->out;
    int rc = 0;
    hf_clear_error();
    if (!out && (rc = hf_report_default_path(c->config, def, sizeof def)) == 0)
        out = def;
    if (!rc)
        rc = hf_report_write(c->config, out);
    if (rc)
        return hf__cli_fail(rc);
    printf("report: %s\n", out);
    return 0;
}
