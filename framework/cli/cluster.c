/* cluster.c - the command's side of a run across nodes (mpirun).
 *
 * DESIGN
 * ------
 * Started by mpirun, every rank runs the same command on the same config.
 * The transport (framework/mpi) is opened once, when the plan is read, and
 * only when the process was started by an MPI launcher: `hetfarm run` started
 * plainly never touches MPI, even in a build that has it. Rank 0 makes the
 * runs as always, with the other ranks as node devices (core/nodes.c); every
 * other rank serves each real-engine run of the same plan and writes nothing
 * (runs.c, cmd_run.c). The command's end closes the transport, or, when any
 * rank failed, ends the whole job at once (MPI_Abort): a rank that stopped
 * cannot take part in MPI_Finalize, and the others must not wait for it.
 * A SIGTERM or SIGINT makes every wait on another rank give up at once
 * (mpirun sends SIGTERM to every rank when one dies, and SIGKILL a second
 * later), so that rank 0 can still write the rounds that finished
 * (partial.c) before the job ends.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#ifdef HF_HAVE_MPI
#include "mpi/transport.h"

static hf_mpi_t cluster;

/* Whether an MPI launcher started this process (Open MPI sets these). */
static int launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

struct hf_mpi *hf__cli_cluster(double timeout_s)
{
    if (!cluster && launched_by_mpirun()) {
        hf_clear_error();
        if (hf_mpi_init(&cluster, NULL, NULL, timeout_s)) {
            fprintf(stderr, "hetfarm: started by mpirun, but MPI would not start: %s\n",
                    hf_last_error());
            exit(1);
        }
    }
    if (cluster)
        hf_mpi_set_timeout(cluster, timeout_s);
    return cluster;
}

int hf__cli_rank(void)
{
    return cluster ? hf_mpi_rank(cluster) : 0;
}

int hf__cli_ranks(void)
{
    return cluster ? hf_mpi_size(cluster) : 1;
}

int hf__cli_cluster_failed_rank(void)
{
    return cluster ? hf_mpi_failed_rank(cluster) : -1;
}

void hf__cli_cluster_interrupt(int sig)
{
    hf_mpi_interrupt(sig); /* async-signal-safe: one atomic store */
}

int hf__cli_cluster_end(int status)
{
    if (!cluster)
        return status;
    if (status != 0) {
        fprintf(stderr, "hetfarm: rank %d failed (exit %d): ending every rank of the job\n",
                hf_mpi_rank(cluster), status);
        hf_mpi_abort(cluster, status);
    }
    hf_mpi_destroy(cluster);
    cluster = NULL;
    return 0;
}

#else /* built without MPI: always this process alone */

struct hf_mpi *hf__cli_cluster(double timeout_s)
{
    (void)timeout_s;
    return NULL;
}

int hf__cli_rank(void)
{
    return 0;
}

int hf__cli_cluster_end(int status)
{
    return status;
}

int hf__cli_ranks(void)
{
    return 1;
}

int hf__cli_cluster_failed_rank(void)
{
    return -1;
}

void hf__cli_cluster_interrupt(int sig)
{
    (void)sig;
}
#endif
