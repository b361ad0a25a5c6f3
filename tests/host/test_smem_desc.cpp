// wgmma shared-memory descriptors and the 128-byte swizzle, checked against
// the PTX ISA's bit layout ("Matrix Descriptor Format") and CUTLASS's
// Swizzle<3,4,3>, written out here independently of the library's formulas.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "sm100/umma_desc.hpp"
#include "sm90/smem_desc.hpp"

namespace tcgemm::sm90 {
namespace {

uint64_t field(uint64_t desc, int lo, int hi) { return (desc >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }

TEST(SmemDesc, BitFields) {
  // A realistic address near the top of the 227 KiB window, and offsets that
  // use many bits of their fields.
  const uint32_t addr = 0x38F80, lbo = 0x2A30, sbo = 0x1C40;
  const uint64_t d = make_smem_desc(addr, lbo, sbo);
  EXPECT_EQ(field(d, 0, 13), addr >> 4) << "start address >> 4 in bits 0-13";
  EXPECT_EQ(field(d, 14, 15), 0u);
  EXPECT_EQ(field(d, 16, 29), lbo >> 4) << "leading byte offset >> 4 in bits 16-29";
  EXPECT_EQ(field(d, 30, 31), 0u);
  EXPECT_EQ(field(d, 32, 45), sbo >> 4) << "stride byte offset >> 4 in bits 32-45";
  EXPECT_EQ(field(d, 46, 48), 0u);
  EXPECT_EQ(field(d, 49, 51), 0u) << "base offset 0: tiles are 1024-byte aligned";
  EXPECT_EQ(field(d, 52, 61), 0u);
  EXPECT_EQ(field(d, 62, 63), 1u) << "swizzle mode 1 = 128-byte swizzle (bit 62)";
}

TEST(SmemDesc, ExactValue) {
  // Written out by hand: (0x400 >> 4) | (16 >> 4) << 16 | (1024 >> 4) << 32 | 1 << 62.
  EXPECT_EQ(make_smem_desc(0x400, 16, 1024), 0x4000004000010040ull);
  EXPECT_EQ(make_smem_desc(0, 0, 0), 0x4000000000000000ull);
}

TEST(SmemDesc, KMajorOperand) {
  for (uint32_t addr : {0x0u, 0x400u, 0x8000u, 0x30000u}) {
    const uint64_t d = operand_desc(Major::K, addr, 64);
    EXPECT_EQ(field(d, 0, 13), addr >> 4);
    EXPECT_EQ(field(d, 16, 29), 1u) << "LBO is unused with 128B swizzle; 1 by convention";
    EXPECT_EQ(field(d, 32, 45), 1024u >> 4) << "SBO: 8 rows of 128 bytes";
    EXPECT_EQ(field(d, 62, 63), 1u);
  }
}

// The decode tile's A (sm90/mma.cuh): one K-major 8-row group read as all
// eight groups of an m64, by a stride-dimension byte offset of 0; the rest as
// the K-major operand's.
TEST(SmemDesc, RepeatedRowsOperand) {
  for (uint32_t addr : {0x0u, 0x400u, 0x8000u, 0x37C00u}) {
    const uint64_t d = repeated_rows_desc(addr);
    EXPECT_EQ(field(d, 0, 13), addr >> 4);
    EXPECT_EQ(field(d, 16, 29), 1u) << "LBO: unused with 128B swizzle; 1 as for any K-major operand";
    EXPECT_EQ(field(d, 32, 45), 0u) << "SBO 0: every 8-row group of the m64 at the same 1 KiB";
    EXPECT_EQ(field(d, 46, 61), 0u) << "base offset 0 (1 KiB aligned), nothing else set";
    EXPECT_EQ(field(d, 62, 63), 1u) << "128-byte swizzle, as TMA wrote the rows";
    // Exactly the K-major descriptor with its SBO field cleared.
    EXPECT_EQ(d, operand_desc(Major::K, addr, 64) & ~(uint64_t{0x3FFF} << 32));
  }
  // Written out by hand: (0x400 >> 4) | (16 >> 4) << 16 | 1 << 62.
  EXPECT_EQ(repeated_rows_desc(0x400), 0x4000000000010040ull);
  // The k-loop moves it by its low word like any other (desc_lo_moved): the
  // high word, SBO included, never changes.
  EXPECT_EQ(desc_hi(repeated_rows_desc(0x400)), desc_hi(repeated_rows_desc(0x37C00)));
  EXPECT_EQ(desc_from_words(desc_hi(repeated_rows_desc(0)), desc_lo_moved(desc_lo(repeated_rows_desc(0x400)), 3 * 1024 + 96)),
            repeated_rows_desc(0x400 + 3 * 1024 + 96));
}

TEST(SmemDesc, MNMajorOperand) {
  for (uint32_t block_k : {64u, 32u}) {
    const uint64_t d = operand_desc(Major::MN, 0x8000, block_k);
    EXPECT_EQ(field(d, 0, 13), 0x8000u >> 4);
    EXPECT_EQ(field(d, 16, 29), (block_k * 128) >> 4) << "LBO: distance between 64-element panels, block_k=" << block_k;
    EXPECT_EQ(field(d, 32, 45), 1024u >> 4) << "SBO: next 8 lines of K";
    EXPECT_EQ(field(d, 62, 63), 1u);
  }
  EXPECT_EQ(field(operand_desc(Major::MN, 0, 64), 16, 29), 8192u >> 4);
}

// The narrow panels of an MN-major B: a 64- or 32-byte swizzle (modes 2 and
// 3), panels BLOCK_K lines of S bytes apart (LBO), 8 lines of S bytes to the
// next 8 of K (SBO), a k16 step of 16 lines.
TEST(SmemDesc, NarrowMNMajorPanels) {
  struct Want {
    int cols;
    uint32_t swizzle, mode;
  };
  for (const Want w : {Want{16, 32, 3}, Want{48, 32, 3}, Want{32, 64, 2}, Want{96, 64, 2}, Want{128, 128, 1}}) {
    SCOPED_TRACE("cols=" + std::to_string(w.cols));
    const uint32_t s = detail::operand_swizzle_bytes(Major::MN, w.cols);
    ASSERT_EQ(s, w.swizzle);
    EXPECT_EQ(detail::operand_swizzle_bytes(Major::K, w.cols), 128u) << "K-major: one 128-byte line per k-block row";
    const uint64_t d = operand_desc(Major::MN, 0x9000, 64, s);
    EXPECT_EQ(field(d, 0, 13), 0x9000u >> 4);
    EXPECT_EQ(field(d, 16, 29), (64 * w.swizzle) >> 4) << "LBO: next panel, 64 lines on";
    EXPECT_EQ(field(d, 32, 45), (8 * w.swizzle) >> 4) << "SBO: next 8 lines of K";
    EXPECT_EQ(field(d, 62, 63), w.mode) << "swizzle mode: 1 = 128, 2 = 64, 3 = 32 bytes";
    EXPECT_EQ(k_step_bytes(Major::MN, s), 16 * w.swizzle);
  }
  EXPECT_EQ(detail::mn_panel_cols(8), 0u) << "not built MN-major";
  EXPECT_EQ(detail::mn_panel_cols(40), 0u);
}

TEST(SmemDesc, KStepBytes) {
  EXPECT_EQ(k_step_bytes(Major::K), 32u) << "16 elements of 2 bytes along the 128-byte line";
  EXPECT_EQ(k_step_bytes(Major::MN), 2048u) << "16 lines of 128 bytes";
}

// The kernel advances a descriptor by adding (k_step_bytes >> 4) to its low
// word; that must equal building a fresh descriptor at the advanced address
// for every k16 step of a 64-wide BLOCK_K.
TEST(SmemDesc, AdvancingTheStartAddressIsAddition) {
  for (Major major : {Major::K, Major::MN}) {
    const uint32_t base = 0x10400;
    const uint64_t d0 = operand_desc(major, base, 64);
    for (uint32_t step = 0; step < 4; ++step) {
      const uint32_t offset = step * k_step_bytes(major);
      EXPECT_EQ(operand_desc(major, base + offset, 64), d0 + (offset >> 4))
          << "major=" << static_cast<int>(major) << " step=" << step;
    }
  }
}

// The k-loops (the sm90 consumers', the sm100 MMA issuer's) keep the high
// word of a descriptor constant and move the low word (desc_lo_moved): for
// both architectures' descriptors, every 1 KiB-aligned ring base in the
// 227 KiB window (with a CTA's bits above bit 24, as a shared::cluster-style
// address carries them) and every 16-byte offset that stays in the window,
// the result must be the descriptor built afresh at the moved address.
TEST(SmemDesc, MovingTheLowWordIsExactOverTheWindow) {
  constexpr uint32_t kWindow = 227 * 1024;
  static_assert(kWindow <= detail::kDescAddressLimit);
  using Build = uint64_t (*)(Major, uint32_t, uint32_t);
  const struct {
    const char* arch;
    Build build;
  } builders[] = {{"sm90", [](Major m, uint32_t a, uint32_t k) { return operand_desc(m, a, k); }},
                  {"sm90 32-byte", [](Major m, uint32_t a, uint32_t k) { return operand_desc(m, a, k, 32); }},
                  {"sm100", &sm100::operand_desc}};
  for (const auto& b : builders)
    for (Major major : {Major::K, Major::MN})
      for (uint32_t cta_bits : {0u, 3u << 24})
        for (uint32_t base = 0; base < kWindow; base += 1024) {
          const uint64_t d0 = b.build(major, cta_bits | base, 64);
          for (uint32_t offset = 0; base + offset < kWindow; offset += 16)
            ASSERT_EQ(desc_from_words(desc_hi(d0), desc_lo_moved(desc_lo(d0), offset)),
                      b.build(major, cta_bits | (base + offset), 64))
                << b.arch << " major=" << static_cast<int>(major) << " base=" << base << " offset=" << offset;
        }
}

// CUTLASS Swizzle<3,4,3> on byte offsets: bits 4-6 ^= bits 7-9.
uint32_t swizzle_343(uint32_t byte_offset) { return byte_offset ^ (((byte_offset >> 7) & 7) << 4); }

TEST(Swizzle, MatchesSwizzle343) {
  for (uint32_t row = 0; row < 256; ++row)
    for (uint32_t col = 0; col < 64; ++col)
      ASSERT_EQ(swizzled_offset(row, col), swizzle_343(row * 128 + col * 2)) << "row=" << row << " col=" << col;
}

// The epilogue's 16-column steps: an XOR of the first group's offset, also
// on an address whose base is a multiple of 128 (the panels are 1 KiB aligned).
TEST(Swizzle, SixteenColumnStepIsAnXor) {
  for (uint32_t base : {0u, 128u, 1024u, 0x30000u, 0x37f80u})
    for (uint32_t row = 0; row < 64; ++row)
      for (uint32_t col = 0; col < 16; ++col)
        for (uint32_t j = 0; j < 4; ++j)
          ASSERT_EQ(detail::swizzled_step16(base + swizzled_offset(row, col), j),
                    base + swizzled_offset(row, col + 16 * j))
              << "base=" << base << " row=" << row << " col=" << col << " j=" << j;
}

// The paired layout (sm90's paired stores): two 64-column panels side by
// side, 256 bytes a row, swizzled by the address as TMA does (Swizzle<3,4,3>
// of the byte offset within the 64 x 128 box); the right half from the left
// by one XOR; every byte of the 16 KiB box used once.
TEST(Swizzle, PairedLayoutIsTheBoxSwizzledByAddress) {
  std::set<uint32_t> seen;
  for (uint32_t row = 0; row < 64; ++row)
    for (uint32_t col = 0; col < 128; ++col) {
      const uint32_t off = detail::paired_swizzled_offset(row, col);
      ASSERT_EQ(off, swizzle_343(row * 256 + col * 2)) << "row=" << row << " col=" << col;
      ASSERT_TRUE(seen.insert(off).second) << "row=" << row << " col=" << col;
      if (col < 64) {
        ASSERT_EQ(off ^ detail::kPairedRightHalf, detail::paired_swizzled_offset(row, col + 64))
            << "row=" << row << " col=" << col;
        for (uint32_t j = 0; j < 4 && col < 16; ++j)
          ASSERT_EQ(detail::swizzled_step16(1024 + off, j), 1024 + detail::paired_swizzled_offset(row, col + 16 * j))
              << "row=" << row << " col=" << col << " j=" << j;
      }
    }
  EXPECT_EQ(seen.size(), 64u * 128u);
  EXPECT_EQ(*seen.rbegin(), 64u * 256u - 2u);
}

TEST(Swizzle, KnownValues) {
  EXPECT_EQ(swizzled_offset(0, 0), 0u);
  EXPECT_EQ(swizzled_offset(0, 8), 16u);                  // chunk 1 of line 0 stays
  EXPECT_EQ(swizzled_offset(1, 0), 128u + 16u);           // chunk 0 of line 1 -> chunk 1
  EXPECT_EQ(swizzled_offset(1, 8), 128u);                 // chunk 1 of line 1 -> chunk 0
  EXPECT_EQ(swizzled_offset(7, 63), 7 * 128u + 14u);      // chunk 7 ^ 7 = 0, last element
  EXPECT_EQ(swizzled_offset(8, 9), 8 * 128u + 16u + 2u);  // the pattern repeats every 8 lines
}

// Each 8-line (1024-byte) pattern is a permutation of its own bytes: no two
// elements collide and nothing leaves the pattern.
TEST(Swizzle, EachPatternIsAPermutation) {
  for (uint32_t first = 0; first < 64; first += 8) {
    std::set<uint32_t> seen;
    for (uint32_t row = first; row < first + 8; ++row)
      for (uint32_t col = 0; col < 64; ++col) {
        const uint32_t off = swizzled_offset(row, col);
        ASSERT_EQ(off % 2, 0u);
        ASSERT_GE(off, first * 128);
        ASSERT_LT(off, (first + 8) * 128);
        ASSERT_TRUE(seen.insert(off).second) << "row=" << row << " col=" << col;
      }
    EXPECT_EQ(seen.size(), 512u);
  }
}

TEST(Swizzle, Constants) {
  EXPECT_EQ(kSwizzleBytes, 128u);
  EXPECT_EQ(kPatternBytes, 1024u);
}

}  // namespace
}  // namespace tcgemm::sm90
