#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tcgemm::cli {

bool stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

Progress::Progress(std::string what, int64_t total, bool shown)
    : what_(std::move(what)), total_(total), shown_(shown && total > 0) {}

Progress::~Progress() { finish(); }

std::string Progress::line(const std::string& what, int64_t done, int64_t total, double seconds,
                           const std::string& item) {
  char buf[160];
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0;
  int n = std::snprintf(buf, sizeof buf, "%s: %lld/%lld (%.0f%%)", what.c_str(), static_cast<long long>(done),
                        static_cast<long long>(total), pct);
  if (done > 0 && seconds > 0.0) {
    const double rate = static_cast<double>(done) / seconds;
    const double left = static_cast<double>(total - done) / rate;
    const char* unit = left >= 90.0 ? "min" : "s";
    n += std::snprintf(buf + n, sizeof buf - n, ", %.*f/s, %.0f %s left", rate < 10.0 ? 1 : 0, rate,
                       left >= 90.0 ? left / 60.0 : left, unit);
  }
  std::string out(buf, static_cast<size_t>(n < static_cast<int>(sizeof buf) ? n : sizeof buf - 1));
  if (!item.empty()) out += "  " + item;
  return out;
}

void Progress::advance(int64_t done, const std::string& item) {
  const int64_t now_done = done_ += done;
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is drawing: this update can wait
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && now_done < total_) return;
  last_draw_ = now;
  draw(line(what_, now_done, total_, std::chrono::duration<double>(now - start_).count(), item));
}

void Progress::draw(const std::string& text) {
  // \r: to the line's start; \033[K: erase to its end.
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::interrupt() {
  if (!shown_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

void Progress::finish() {
  interrupt();
  shown_ = false;
}

}  // namespace tcgemm::cli
