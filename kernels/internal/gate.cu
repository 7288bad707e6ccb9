// Holds a stream until the host has enqueued a whole rep, so that the timed region excludes host issue cost
// (nvbench's blocking kernel). It spins on a flag in host-mapped memory; after `timeout_ns` it gives up and
// records that it did, so a host that never releases it cannot hang the GPU.
extern "C" __global__ void cuda_pipe_gate(volatile unsigned int* flags, unsigned long long timeout_ns)
{
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
        if (flags[0] != 0) return;
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            flags[1] = 1;
            return;
        }
    }
}

// A launch with no work: back to back on one stream behind the gate, its GPU time is a launch's fixed cost on the
// device, which the overlap model charges for every kernel a layout launches.
extern "C" __global__ void cuda_pipe_empty()
{
}
