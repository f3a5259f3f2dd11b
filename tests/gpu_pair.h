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

/* The value of [devices] cuda for the multi-GPU cases. */
static inline const char *hf_test_gpus(void)
{
    return hf_cuda_device_count() >= 2 ? "all" : "0,0";
}

/* The name of the first GPU device of hf_test_gpus()'s list. */
static inline const char *hf_test_gpu_first(void)
{
    return hf_cuda_device_count() >= 2 ? "cuda0" : "cuda0#1";
}

#endif
