/* cmd_devices.c - `hetfarm devices`: what hwloc, CUDA and OpenBLAS see
 * (drivers/topo.c and drivers/blas_env.c describe it).
 */
#include "cli.h"

int hf__cmd_devices(void)
{
    hf_topo_describe(stdout);
    printf("BLAS:       %s\n", hf_blas_describe());
    return 0;
}
