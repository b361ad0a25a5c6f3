// Progress of a long run (bench over a suite, check --fuzz, check --soak):
// on a terminal, one line on stderr rewritten in place, at most 10 times a
// second,
//
//   bench: 37/210 (18%), 12.4/s, 14 s left  1x4096x14336 bf16 NT
//
// and erased when the run ends, so the results printed after it stand alone.
// Not on a terminal (a pipe, a file, a CI log), or when the caller asks for
// quiet (--json), it prints nothing: logs stay line-oriented. advance() may
// be called from several threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace tcgemm::cli {

// Whether stderr is a terminal (and TERM is not "dumb").
bool stderr_is_terminal();

class Progress {
 public:
  Progress(std::string what, int64_t total, bool shown = stderr_is_terminal());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` more items are finished; `item` (optional) names the next one.
  void advance(int64_t done = 1, const std::string& item = {});
  // Erases the line so that the caller can print a line of its own (a
  // failure); the next advance() draws it again.
  void interrupt();
  // Erases the line for good (the destructor does it too).
  void finish();
  bool shown() const { return shown_; }

  // The line for `done` of `total` after `seconds` (no terminal codes):
  // count, percentage, rate, and the time left at that rate.
  static std::string line(const std::string& what, int64_t done, int64_t total, double seconds,
                          const std::string& item);

 private:
  void draw(const std::string& text);

  std::string what_;
  int64_t total_;
  std::atomic<bool> shown_;
  std::atomic<int64_t> done_{0};
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  std::mutex mutex_;
  bool drawn_ = false;
};

}  // namespace tcgemm::cli
