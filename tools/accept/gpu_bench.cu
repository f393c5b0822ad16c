// gpurent-gpu-bench: the GPU stage of an acceptance run (docs/acceptance.md). For every visible
// GPU it times, with CUDA events, after untimed warm-up calls (20 per GEMM, 2 per copy; GEMM inputs
// are pseudo-random values in [-1, 1), not zeros, which can read faster than real work):
//   dense GEMM on cuBLAS, m = n = k = 8192 (--size), FP16 and BF16 (cublasGemmEx, FP32
//   accumulation) and FP8 E4M3 (cublasLtMatmul, BF16 output) on compute capability 8.9 and above;
//   a device-to-device copy of 1 GiB (HBM bandwidth; the parser counts its bytes twice, read and
//   written, as CUDA's bandwidthTest does); host-to-device and device-to-host copies of 256 MiB
//   from pinned memory (PCIe).
// It prints one JSON object per line with the sizes and the measured seconds, never a derived
// figure: the server derives TFLOPS and GB/s from them (src/meter/acceptance.h). A test that cannot
// run prints a line starting "warning:" and is left out. Exit 0 when at least one line was printed.
// Built only where nvcc is found (CMakeLists.txt); needs an NVIDIA driver to run.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int g_lines = 0;
constexpr int kWarmup = 20;  // untimed GEMMs first: the clocks rise from idle

std::string uuid_text(const cudaUUID_t& u) {
  char buf[64];
  const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

std::string json_escape(const char* s) {
  std::string out;
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') out += '\\';
    if (static_cast<unsigned char>(*s) >= 0x20) out += *s;
  }
  return out;
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("warning: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}
bool check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::printf("warning: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

struct Gpu {
  int index = 0;
  std::string uuid, name;
  int major = 0, minor = 0;
};

void print_gemm(const Gpu& g, const char* dtype, int n, int iterations, double seconds) {
  std::printf(
      "{\"test\":\"gemm\",\"gpu\":%d,\"uuid\":\"%s\",\"name\":\"%s\",\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
      "\"iterations\":%d,\"seconds\":%.9f}\n",
      g.index, g.uuid.c_str(), json_escape(g.name.c_str()).c_str(), dtype, n, n, n, iterations, seconds);
  ++g_lines;
}

void print_copy(const Gpu& g, const char* dir, size_t bytes, int iterations, double seconds) {
  std::printf(
      "{\"test\":\"copy\",\"gpu\":%d,\"uuid\":\"%s\",\"name\":\"%s\",\"direction\":\"%s\",\"bytes\":%zu,"
      "\"iterations\":%d,\"seconds\":%.9f}\n",
      g.index, g.uuid.c_str(), json_escape(g.name.c_str()).c_str(), dir, bytes, iterations, seconds);
  ++g_lines;
}

// Fills p[0..n) with values in [-1, 1) from a hash of the index: a GEMM on zeros reads as faster
// than one on real data (fewer bits toggle, so the card draws less power and holds a higher clock).
template <class T>
__global__ void fill_random(T* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = T(static_cast<float>(x & 0xffffu) / 32768.0f - 1.0f);
  }
}

template <class T>
bool fill(void* p, size_t n, unsigned seed, const char* what) {
  fill_random<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  return check(cudaGetLastError(), what) && check(cudaDeviceSynchronize(), what);
}

// Times `iterations` calls of fn after `warmup` untimed ones; seconds, or a negative on error.
template <class Fn>
double timed(int warmup, int iterations, Fn fn) {
  for (int i = 0; i < warmup; ++i)
    if (!fn()) return -1;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int i = 0; i < iterations; ++i)
    if (!fn()) return -1;
  cudaEventRecord(b);
  if (!check(cudaEventSynchronize(b), "synchronize")) return -1;
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / 1000.0;
}

void gemm(const Gpu& g, cublasHandle_t h, cudaDataType t, const char* dtype, int n, int iterations) {
  const size_t elems = static_cast<size_t>(n) * n;
  void *A = nullptr, *B = nullptr, *C = nullptr;
  if (!check(cudaMalloc(&A, elems * 2), "cudaMalloc A") || !check(cudaMalloc(&B, elems * 2), "cudaMalloc B") ||
      !check(cudaMalloc(&C, elems * 2), "cudaMalloc C")) {
    cudaFree(A);
    cudaFree(B);
    return;
  }
  const bool filled = t == CUDA_R_16F ? fill<__half>(A, elems, 1, "fill A") && fill<__half>(B, elems, 2, "fill B")
                                      : fill<__nv_bfloat16>(A, elems, 1, "fill A") && fill<__nv_bfloat16>(B, elems, 2, "fill B");
  const float alpha = 1.0f, beta = 0.0f;
  const double s = !filled ? -1 : timed(kWarmup, iterations, [&] {
    return check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, t, n, B, t, n, &beta, C, t, n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 dtype);
  });
  if (s > 0) print_gemm(g, dtype, n, iterations, s);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
}

// FP8 (E4M3 inputs, BF16 output, FP32 accumulation) through cuBLASLt: A transposed ("TN"), as
// cuBLASLt requires for FP8.
void gemm_fp8(const Gpu& g, int n, int iterations) {
  cublasLtHandle_t lt = nullptr;
  if (!check(cublasLtCreate(&lt), "cublasLtCreate")) return;
  const size_t elems = static_cast<size_t>(n) * n;
  void *A = nullptr, *B = nullptr, *D = nullptr, *work = nullptr;
  const size_t work_bytes = 32u << 20;
  bool ok = check(cudaMalloc(&A, elems), "cudaMalloc A") && check(cudaMalloc(&B, elems), "cudaMalloc B") &&
            check(cudaMalloc(&D, elems * 2), "cudaMalloc D") && check(cudaMalloc(&work, work_bytes), "cudaMalloc work");
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  if (ok) {
    ok = fill<__nv_fp8_e4m3>(A, elems, 1, "fill A") && fill<__nv_fp8_e4m3>(B, elems, 2, "fill B");
  }
  if (ok) {
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    ok = check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "fp8 desc") &&
         check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "fp8 transa") &&
         check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "fp8 transb") &&
         check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n), "fp8 layout A") &&
         check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n), "fp8 layout B") &&
         check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n), "fp8 layout D") &&
         check(cublasLtMatmulPreferenceCreate(&pref), "fp8 preference") &&
         check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &work_bytes,
                                                    sizeof work_bytes),
               "fp8 workspace") &&
         check(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found), "fp8 heuristic");
    if (ok && found == 0) {
      std::printf("warning: fp8: cuBLASLt has no algorithm for this GPU\n");
      ok = false;
    }
  }
  if (ok) {
    const float alpha = 1.0f, beta = 0.0f;
    const double s = timed(kWarmup, iterations, [&] {
      return check(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, work, work_bytes, 0),
                   "fp8 matmul");
    });
    if (s > 0) print_gemm(g, "fp8", n, iterations, s);
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (ld) cublasLtMatrixLayoutDestroy(ld);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (op) cublasLtMatmulDescDestroy(op);
  cudaFree(A);
  cudaFree(B);
  cudaFree(D);
  cudaFree(work);
  cublasLtDestroy(lt);
}

void copies(const Gpu& g) {
  const size_t dev_bytes = size_t{1} << 30, host_bytes = size_t{256} << 20;
  void *a = nullptr, *b = nullptr, *host = nullptr;
  if (check(cudaMalloc(&a, dev_bytes), "cudaMalloc copy") && check(cudaMalloc(&b, dev_bytes), "cudaMalloc copy")) {
    cudaMemset(a, 1, dev_bytes);
    const double s = timed(2, 20, [&] { return check(cudaMemcpyAsync(b, a, dev_bytes, cudaMemcpyDeviceToDevice), "d2d"); });
    if (s > 0) print_copy(g, "d2d", dev_bytes, 20, s);
  }
  if (a && check(cudaMallocHost(&host, host_bytes), "cudaMallocHost")) {
    std::memset(host, 1, host_bytes);
    const double up = timed(2, 10, [&] { return check(cudaMemcpyAsync(a, host, host_bytes, cudaMemcpyHostToDevice), "h2d"); });
    if (up > 0) print_copy(g, "h2d", host_bytes, 10, up);
    const double down = timed(2, 10, [&] { return check(cudaMemcpyAsync(host, a, host_bytes, cudaMemcpyDeviceToHost), "d2h"); });
    if (down > 0) print_copy(g, "d2h", host_bytes, 10, down);
    cudaFreeHost(host);
  }
  cudaFree(a);
  cudaFree(b);
}

}  // namespace

int main(int argc, char** argv) {
  int n = 8192, iterations = 50;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gpurent-gpu-bench [--size N (256..32768)] [--iterations N (1..10000)]\n");
      return 2;
    }
  }
  if (n < 256 || n > 32768 || iterations < 1 || iterations > 10000) {
    std::fprintf(stderr, "gpurent-gpu-bench: --size must be 256..32768 and --iterations 1..10000\n");
    return 2;
  }
  int count = 0, runtime = 0;
  if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount") || count == 0) {
    std::printf("warning: no CUDA device is visible\n");
    return 1;
  }
  cudaRuntimeGetVersion(&runtime);
  std::printf("gpurent-gpu-bench 1 (CUDA runtime %d, cuBLAS %d): %d GPUs\n", runtime, CUBLAS_VERSION, count);
  for (int d = 0; d < count; ++d) {
    if (!check(cudaSetDevice(d), "cudaSetDevice")) continue;
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, d);
    Gpu g{d, uuid_text(p.uuid), p.name, p.major, p.minor};
    cublasHandle_t h = nullptr;
    if (check(cublasCreate(&h), "cublasCreate")) {
      gemm(g, h, CUDA_R_16F, "fp16", n, iterations);
      gemm(g, h, CUDA_R_16BF, "bf16", n, iterations);
      cublasDestroy(h);
    }
    if (g.major * 10 + g.minor >= 89) gemm_fp8(g, n, iterations);
    copies(g);
    std::fflush(stdout);
  }
  return g_lines > 0 ? 0 : 1;
}
