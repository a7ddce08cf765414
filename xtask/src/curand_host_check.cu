// curand_host_check: what cuRAND's HOST API writes into device memory for one generator, seed,
// offset and ordering, printed in decimal, one value per line, or with CURAND_CHECK_BINARY=1 in
// the environment as the raw little-endian values, to compare with warpmc's reimplementation
// (`warpmc generate --ordering curand-legacy --format binary`, host/src/curand_host.rs).
//
// Build: nvcc -O2 -o curand_host_check curand_host_check.cu -lcurand
//
// Usage: curand_host_check GENERATOR SEED OFFSET COUNT [ORDERING] [OUTPUT] [SPLIT]
//   GENERATOR  xorwow | mrg32k3a | philox4x32-10
//   SEED       curandSetPseudoRandomGeneratorSeed (unsigned 64-bit, decimal or 0x hex)
//   OFFSET     curandSetGeneratorOffset (unsigned 64-bit)
//   COUNT      how many values in all (one generation call, or two with SPLIT)
//   ORDERING   legacy (default: CURAND_ORDERING_PSEUDO_LEGACY) | default (CURAND_ORDERING_PSEUDO_DEFAULT)
//   OUTPUT     u32 (default): curandGenerate, the 32-bit words;
//              f32: curandGenerateUniform, each float's IEEE bits as an unsigned 32-bit integer;
//              f64: curandGenerateUniformDouble, each double's IEEE bits as an unsigned 64-bit integer
//   SPLIT      optional, N or N:KIND with 0 < N < COUNT and KIND u32|f32|f64: two generation
//              calls on the same generator, N values of KIND (default: OUTPUT) then COUNT - N
//              values of OUTPUT, printed one after the other, each in its own kind's format
//              (cuRAND documents that successive calls continue the sequence; this checks it)
// `curand_host_check version` prints curandGetVersion's number.
//
// Exit status: 0 on success, 1 for a usage error, 2 for a CUDA or cuRAND error (the message names
// the call and the status code on stderr).

#include <cuda_runtime.h>
#include <curand.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorString(err_));                                               \
            std::exit(2);                                                                         \
        }                                                                                         \
    } while (0)

#define CHECK_CURAND(call)                                                                        \
    do {                                                                                          \
        curandStatus_t st_ = (call);                                                              \
        if (st_ != CURAND_STATUS_SUCCESS) {                                                       \
            std::fprintf(stderr, "%s:%d: %s failed: curandStatus_t %d\n", __FILE__, __LINE__,      \
                         #call, static_cast<int>(st_));                                           \
            std::exit(2);                                                                         \
        }                                                                                         \
    } while (0)

[[noreturn]] static void usage(const char *why) {
    std::fprintf(stderr,
                 "curand_host_check: %s\n"
                 "usage: curand_host_check GENERATOR SEED OFFSET COUNT [ORDERING] [OUTPUT] [SPLIT]\n"
                 "  GENERATOR xorwow|mrg32k3a|philox4x32-10, ORDERING legacy|default (legacy),\n"
                 "  OUTPUT u32|f32|f64 (u32), SPLIT N or N:KIND, 0 < N < COUNT (one call if absent)\n"
                 "       curand_host_check version\n",
                 why);
    std::exit(1);
}

// A whole unsigned 64-bit number (decimal, or hex with 0x), or a usage error naming `what`.
static unsigned long long parse_u64(const char *text, const char *what) {
    if (text[0] == '\0' || text[0] == '-' || text[0] == '+') {
        std::fprintf(stderr, "curand_host_check: %s '%s' is not an unsigned integer\n", what, text);
        usage("bad number");
    }
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0') {
        std::fprintf(stderr, "curand_host_check: %s '%s' is not an unsigned 64-bit integer\n", what, text);
        usage("bad number");
    }
    return v;
}

enum Output { OUT_U32, OUT_F32, OUT_F64 };

// u32 | f32 | f64, or a usage error.
static Output parse_output(const char *text) {
    if (std::strcmp(text, "u32") == 0) return OUT_U32;
    if (std::strcmp(text, "f32") == 0) return OUT_F32;
    if (std::strcmp(text, "f64") == 0) return OUT_F64;
    usage("OUTPUT and a SPLIT's KIND must be u32, f32 or f64");
}

static size_t width_of(Output kind) { return kind == OUT_F64 ? sizeof(double) : sizeof(unsigned int); }

// Copies `n` values of `kind` back from `dev` and prints them: 32-bit words (the bits of a float)
// with %u, the bits of a double with %llu.
static void print_values(Output kind, const void *dev, size_t n) {
    if (n == 0) return;
    const char *binary = std::getenv("CURAND_CHECK_BINARY");
    if (binary != nullptr && std::strcmp(binary, "1") == 0) {
        std::vector<unsigned char> host(n * width_of(kind));
        CHECK_CUDA(cudaMemcpy(host.data(), dev, host.size(), cudaMemcpyDeviceToHost));
        if (std::fwrite(host.data(), 1, host.size(), stdout) != host.size()) {
            std::perror("curand_host_check: writing the output");
            std::exit(2);
        }
        return;
    }
    if (kind == OUT_F64) {
        std::vector<unsigned long long> host(n);
        CHECK_CUDA(cudaMemcpy(host.data(), dev, n * sizeof(double), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) std::printf("%llu\n", host[i]);
    } else {
        std::vector<unsigned int> host(n);
        CHECK_CUDA(cudaMemcpy(host.data(), dev, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) std::printf("%u\n", host[i]);
    }
}

// One generation call of `n` values of the chosen kind into `dst` (device memory).
static void generate(curandGenerator_t gen, Output kind, void *dst, size_t n) {
    switch (kind) {
    case OUT_U32:
        CHECK_CURAND(curandGenerate(gen, static_cast<unsigned int *>(dst), n));
        break;
    case OUT_F32:
        CHECK_CURAND(curandGenerateUniform(gen, static_cast<float *>(dst), n));
        break;
    case OUT_F64:
        CHECK_CURAND(curandGenerateUniformDouble(gen, static_cast<double *>(dst), n));
        break;
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "version") == 0) {
        int version = 0;
        CHECK_CURAND(curandGetVersion(&version));
        std::printf("%d\n", version);
        return 0;
    }
    if (argc < 5 || argc > 8) usage("wrong number of arguments");

    curandRngType_t type;
    if (std::strcmp(argv[1], "xorwow") == 0) {
        type = CURAND_RNG_PSEUDO_XORWOW;
    } else if (std::strcmp(argv[1], "mrg32k3a") == 0) {
        type = CURAND_RNG_PSEUDO_MRG32K3A;
    } else if (std::strcmp(argv[1], "philox4x32-10") == 0) {
        type = CURAND_RNG_PSEUDO_PHILOX4_32_10;
    } else {
        usage("GENERATOR must be xorwow, mrg32k3a or philox4x32-10");
    }
    const unsigned long long seed = parse_u64(argv[2], "SEED");
    const unsigned long long offset = parse_u64(argv[3], "OFFSET");
    const unsigned long long count = parse_u64(argv[4], "COUNT");

    curandOrdering_t ordering = CURAND_ORDERING_PSEUDO_LEGACY;
    if (argc > 5) {
        if (std::strcmp(argv[5], "legacy") == 0) {
            ordering = CURAND_ORDERING_PSEUDO_LEGACY;
        } else if (std::strcmp(argv[5], "default") == 0) {
            ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
        } else {
            usage("ORDERING must be legacy or default");
        }
    }
    const Output kind = (argc > 6) ? parse_output(argv[6]) : OUT_U32;
    unsigned long long split = 0;
    Output first_kind = kind;
    if (argc > 7) {
        // N or N:KIND.
        char number[32];
        const char *colon = std::strchr(argv[7], ':');
        const size_t len = colon ? static_cast<size_t>(colon - argv[7]) : std::strlen(argv[7]);
        if (len == 0 || len >= sizeof(number)) usage("SPLIT must be N or N:KIND");
        std::memcpy(number, argv[7], len);
        number[len] = '\0';
        split = parse_u64(number, "SPLIT");
        if (colon) first_kind = parse_output(colon + 1);
        if (split == 0 || split >= count) usage("SPLIT must satisfy 0 < N < COUNT");
    }
    if (count > static_cast<unsigned long long>(static_cast<size_t>(-1) / sizeof(double))) {
        usage("COUNT is too large");
    }
    const size_t n = static_cast<size_t>(count);

    curandGenerator_t gen;
    CHECK_CURAND(curandCreateGenerator(&gen, type));
    CHECK_CURAND(curandSetPseudoRandomGeneratorSeed(gen, seed));
    CHECK_CURAND(curandSetGeneratorOffset(gen, offset));
    CHECK_CURAND(curandSetGeneratorOrdering(gen, ordering));

    if (n > 0) {
        // Two buffers when split, so that each call's output is aligned for its type.
        const size_t first = static_cast<size_t>(split);  // 0: one call
        void *dev_first = nullptr;
        void *dev_second = nullptr;
        if (first > 0) CHECK_CUDA(cudaMalloc(&dev_first, first * width_of(first_kind)));
        CHECK_CUDA(cudaMalloc(&dev_second, (n - first) * width_of(kind)));
        if (first > 0) generate(gen, first_kind, dev_first, first);
        generate(gen, kind, dev_second, n - first);
        CHECK_CUDA(cudaDeviceSynchronize());
        print_values(first_kind, dev_first, first);
        print_values(kind, dev_second, n - first);
        if (first > 0) CHECK_CUDA(cudaFree(dev_first));
        CHECK_CUDA(cudaFree(dev_second));
    }
    CHECK_CURAND(curandDestroyGenerator(gen));
    if (std::fflush(stdout) != 0) {
        std::perror("curand_host_check: writing the output");
        return 2;
    }
    return 0;
}
