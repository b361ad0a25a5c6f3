// The sm90 kernel's configurations and the host-side choice between them.
// Pure host code: "which config?" never leaks into kernel code.
#pragma once

#include <cstdint>
#include <string>

namespace tcgemm::sm90 {

// One CTA = 1 producer warpgroup + 2 consumer warpgroups. Each consumer owns
// 64 rows of the BLOCK_M = 128 tile and all BLOCK_N columns.
inline constexpr int kBlockM = 128;
inline constexpr int kBlockK = 64;              // one 128-byte swizzle row of fp16/bf16
inline constexpr int kNumConsumers = 2;
inline constexpr int kThreads = 128 * (1 + kNumConsumers);
inline constexpr int kEpiPanel = 64;            // C is stored in 64 x 64 panels
inline constexpr int kEpiBuffers = 2;           // panel buffers per consumer
inline constexpr int kSmemLimit = 227 * 1024;   // per-block opt-in maximum on sm_90

// Shared memory the kernel uses for a given BLOCK_N and stage count: the
// operand ring, the epilogue panels, barriers, and 1 KiB to align the base.
constexpr int stage_bytes(int block_n) { return (kBlockM + block_n) * kBlockK * 2; }
constexpr int epilogue_bytes() { return kNumConsumers * kEpiBuffers * kEpiPanel * kEpiPanel * 2; }
constexpr int barrier_bytes(int stages) { return (2 * stages + kNumConsumers * kEpiBuffers) * 8; }
constexpr int smem_bytes(int block_n, int stages) {
  return 1024 + stages * stage_bytes(block_n) + epilogue_bytes() + barrier_bytes(stages);
}
// The deepest ring that fits.
constexpr int max_stages(int block_n) {
  int s = 1;
  while (smem_bytes(block_n, s + 1) <= kSmemLimit) ++s;
  return s;
}

struct Config {
  int block_n;   // 128 or 256
  int stages;    // operand ring depth
  int group_m;   // raster group (block-rows)
  int num_ctas;  // persistent grid size
};

// Picks BLOCK_N (unless `block_n_override` is 128 or 256) by the expected
// efficiency of the last wave: tiles / (waves * num_sms), weighted by how
// well each tile width keeps the tensor cores fed (a 128-wide tile moves 33%
// more operand bytes per FLOP than a 256-wide one).
Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override = 0);

// "128x256x64, 4 stages": for plans and tables.
std::string describe(const Config& config);

}  // namespace tcgemm::sm90
