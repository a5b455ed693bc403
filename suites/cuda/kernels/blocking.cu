// pitwall: the blocking kernel of warm mode (as nvbench's hot mode). One thread spins on a
// flag in mapped page-locked host memory, so the stream stays held while the host queues the
// whole timed region behind it; the host sets flags[0] once the last launch is queued. It gives
// up after `timeout_ns` (the GPU's global nanosecond timer), saying so in flags[1], so a host
// that never releases it cannot hang the stream; that sample is then discarded.
extern "C" __global__ void block_stream(volatile unsigned int* flags,
                                        unsigned long long timeout_ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (flags[0] == 0) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start >= timeout_ns) {
            flags[1] = 1;
            break;
        }
    }
}
