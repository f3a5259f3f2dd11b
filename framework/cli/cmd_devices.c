/* cmd_devices.c - `hetfarm devices`: what hwloc, CUDA and OpenBLAS see.
 *
 * DESIGN
 * ------
 * The command only prints: the machine is described by the drivers that own
 * each part of it (drivers/topo.c for the CPU, cores, NUMA nodes and GPUs,
 * drivers/blas_env.c for the BLAS kernel in use), through device.h, so that
 * `hetfarm devices` and results.json's "machine" never disagree.
 */
#include "cli.h"

int hf__cmd_devices(void)
{
    hf_topo_describe(stdout);
    printf("BLAS:       %s\n", hf_blas_describe());
    printf("OpenMP:     %s\n", hf_openmp_describe());
    return 0;
}
