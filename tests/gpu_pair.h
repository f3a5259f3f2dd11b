/* gpu_pair.h - the GPUs of the GPU tests' multi-GPU cases.
 *
 * Every GPU where the machine has two or more (`cuda = all`, as these cases
 * always ran), else GPU 0 twice (`cuda = 0,0`: one GPU serving as two
 * devices, cuda0#1 and cuda0#2, drivers/devices.c), so that what happens
 * between GPUs (merges of shared data, replicas on two devices, steals from
 * one GPU by another, the fused search handing over) runs where only one GPU
 * is lent. Include after hf_cuda.h or device.h (hf_cuda_device_count).
 */
#ifndef HF_TEST_GPU_PAIR_H
#define HF_TEST_GPU_PAIR_H

#include <stdlib.h>

/* The value of [devices] cuda for the multi-GPU cases. GPU 0 twice is a
 * correctness mode that a benchmark refuses (HF_BENCH); a test is no
 * benchmark, even when a bench script's shell exported HF_BENCH=1 before it
 * (session 35's device call lost every such case to that). */
static inline const char *hf_test_gpus(void)
{
    if (hf_cuda_device_count() >= 2)
        return "all";
    unsetenv("HF_BENCH");
    return "0,0";
}

/* The name of the first GPU device of hf_test_gpus()'s list. */
static inline const char *hf_test_gpu_first(void)
{
    return hf_cuda_device_count() >= 2 ? "cuda0" : "cuda0#1";
}

#endif
