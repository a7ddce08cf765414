// The cuRAND device API's outputs, for comparing warpmc's cuRAND-compatible stream rules with
// cuRAND itself. Built and run by the device bundle's run.sh on a machine with nvcc:
//
//   nvcc -O2 -o curand_check curand_check.cu
//   ./curand_check GENERATOR SEED SUBSEQUENCE OFFSET COUNT
//
// GENERATOR is xorwow, philox4x32-10 or mrg32k3a. One thread calls
// curand_init(SEED, SUBSEQUENCE, OFFSET, &state) and then curand(&state) COUNT times; the words
// are printed in decimal, one per line, as `warpmc generate` prints them.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <curand_kernel.h>

template <typename State>
__global__ void draw(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                     unsigned int *out, int count) {
    State state;
    curand_init(seed, subsequence, offset, &state);
    for (int i = 0; i < count; i++) {
        out[i] = curand(&state);
    }
}

template <typename State>
static int run(unsigned long long seed, unsigned long long subsequence, unsigned long long offset, int count) {
    unsigned int *dev = nullptr;
    if (cudaMalloc(&dev, sizeof(unsigned int) * count) != cudaSuccess) {
        fprintf(stderr, "curand_check: cudaMalloc failed\n");
        return 1;
    }
    draw<State><<<1, 1>>>(seed, subsequence, offset, dev, count);
    unsigned int *host = (unsigned int *)malloc(sizeof(unsigned int) * count);
    cudaError_t e = cudaMemcpy(host, dev, sizeof(unsigned int) * count, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        fprintf(stderr, "curand_check: %s\n", cudaGetErrorString(e));
        return 1;
    }
    for (int i = 0; i < count; i++) {
        printf("%u\n", host[i]);
    }
    free(host);
    cudaFree(dev);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: curand_check GENERATOR SEED SUBSEQUENCE OFFSET COUNT\n");
        return 2;
    }
    const char *g = argv[1];
    unsigned long long seed = strtoull(argv[2], nullptr, 10);
    unsigned long long subsequence = strtoull(argv[3], nullptr, 10);
    unsigned long long offset = strtoull(argv[4], nullptr, 10);
    int count = atoi(argv[5]);
    if (strcmp(g, "xorwow") == 0) return run<curandStateXORWOW_t>(seed, subsequence, offset, count);
    if (strcmp(g, "philox4x32-10") == 0) return run<curandStatePhilox4_32_10_t>(seed, subsequence, offset, count);
    if (strcmp(g, "mrg32k3a") == 0) return run<curandStateMRG32k3a_t>(seed, subsequence, offset, count);
    fprintf(stderr, "curand_check: unknown generator %s\n", g);
    return 2;
}
