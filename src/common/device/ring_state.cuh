// Where a role is in a ring of NUM_SLOTS buffers (operand stages, tensor-
// memory accumulators, CLC response slots), each guarded by a full/empty pair
// of mbarriers: the slot index and the parity of the slot's current phase.
//
// mbarrier waits are by phase parity. A consumer of the ring waits on
// full[index] with `phase`; a producer waits on empty[index] with `phase ^ 1`,
// which lets its first pass over the ring through (a freshly initialized
// barrier counts as having completed the phase before phase 0). Every pass
// over the ring flips the phase.
#pragma once

#include <cstdint>

namespace tcgemm::detail {

template <int NUM_SLOTS>
struct RingState {
  static_assert(NUM_SLOTS >= 1, "a ring has at least one slot");

  int index = 0;
  uint32_t phase = 0;

  // The state after `count` advances from the start: where the count-th use
  // of the ring lands, for a role that does not visit every use.
  __device__ __forceinline__ static RingState at(int64_t count) {
    return RingState{static_cast<int>(count % NUM_SLOTS), static_cast<uint32_t>((count / NUM_SLOTS) & 1)};
  }

  // On to the next slot; past the last, back to slot 0 in the next phase.
  __device__ __forceinline__ void advance() {
    if (++index == NUM_SLOTS) {
      index = 0;
      phase ^= 1;
    }
  }
};

}  // namespace tcgemm::detail
