// The one-time initialization behind the device facts and each kernel's
// setup: a failed fill is run again by the next call, a successful one never.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/host/once_on_success.hpp"

namespace tcgemm::detail {
namespace {

TEST(OnceOnSuccess, AFailureIsTriedAgainASuccessIsKept) {
  OnceOnSuccess once;
  int runs = 0;
  int value = 0;
  const auto fill = [&](bool ok) {
    return [&, ok] {
      ++runs;
      value = runs;
      return ok;
    };
  };
  EXPECT_FALSE(once.run(fill(false)));
  EXPECT_FALSE(once.run(fill(false)));
  EXPECT_TRUE(once.run(fill(true)));
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(once.run(fill(false)));  // kept: not run again, even by a fill that would fail
  EXPECT_TRUE(once.run(fill(true)));
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(value, 3);
}

// Threads calling at once: the fills run one at a time, failures each by one
// caller, and after the first success no fill runs.
TEST(OnceOnSuccess, ThreadsRunFillsOneAtATimeUntilOneSucceeds) {
  constexpr int kThreads = 8;
  constexpr int kFailures = 3;
  OnceOnSuccess once;
  std::atomic<int> runs{0};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::atomic<int> ready{0};
  std::vector<int> answers(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      answers[t] = once.run([&] {
        if (inside.fetch_add(1) != 0) overlapped = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const int run = runs.fetch_add(1);
        inside.fetch_sub(1);
        return run >= kFailures;
      });
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlapped) << "two fills ran at once";
  EXPECT_EQ(runs.load(), kFailures + 1);
  int failed = 0;
  for (int a : answers) failed += a == 0;
  EXPECT_EQ(failed, kFailures);
}

}  // namespace
}  // namespace tcgemm::detail
