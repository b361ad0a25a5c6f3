// The command line tool's progress line (tools/progress.hpp): what it says,
// that it is erased at the end, and that it stays silent where it must (not
// shown, nothing to count).
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "progress.hpp"

namespace tcgemm::cli {
namespace {

TEST(Progress, LineSaysCountRateAndTimeLeft) {
  EXPECT_EQ(Progress::line("bench", 37, 210, 3.0, "1x4096x14336 bf16 NT"),
            "bench: 37/210 (18%), 12/s, 14 s left  1x4096x14336 bf16 NT");
  // Slow rates keep a decimal; long waits are told in minutes.
  EXPECT_EQ(Progress::line("fuzz", 10, 1000, 4.0, ""), "fuzz: 10/1000 (1%), 2.5/s, 7 min left");
  // Nothing done yet: no rate to extrapolate from.
  EXPECT_EQ(Progress::line("soak", 0, 100, 0.0, ""), "soak: 0/100 (0%)");
  EXPECT_EQ(Progress::line("soak", 100, 100, 2.0, ""), "soak: 100/100 (100%), 50/s, 0 s left");
}

// What `body` writes to stderr (file descriptor 2, sent to a temporary file).
template <typename Body>
std::string stderr_of(Body body) {
  std::fflush(stderr);
  std::FILE* file = std::tmpfile();
  const int saved = dup(STDERR_FILENO);
  dup2(fileno(file), STDERR_FILENO);
  body();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(file);
  std::string out;
  for (int c; (c = std::fgetc(file)) != EOF;) out += static_cast<char>(c);
  std::fclose(file);
  return out;
}

TEST(Progress, DrawsInPlaceAndErasesAtTheEnd) {
  const std::string out = stderr_of([] {
    Progress p("bench", 2, true);
    p.advance(1, "first");
    p.advance(1, "second");  // the last item is always drawn
  });
  EXPECT_EQ(out.rfind("\r\033[K"), out.size() - 4) << "erased when it ends";
  EXPECT_NE(out.find("\rbench: 1/2 (50%)"), std::string::npos) << out;
  EXPECT_NE(out.find("\rbench: 2/2 (100%)"), std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), std::string::npos) << "never a new line: the line is rewritten";
}

TEST(Progress, SilentWhenNotShownOrNothingToCount) {
  EXPECT_EQ(stderr_of([] {
              Progress p("bench", 10, false);  // not a terminal, or --json
              for (int i = 0; i < 10; ++i) p.advance(1, "x");
            }),
            "");
  EXPECT_EQ(stderr_of([] {
              Progress p("bench", 0, true);
              p.advance(1);
            }),
            "");
  // An interruption (a failure printed) erases the line; the next advance draws it again.
  const std::string out = stderr_of([] {
    Progress p("fuzz", 3, true);
    p.advance(1);
    p.interrupt();
    p.advance(1);
    p.finish();
  });
  EXPECT_NE(out.find("\rfuzz: 1/3"), std::string::npos) << out;
  EXPECT_NE(out.find("\rfuzz: 2/3"), std::string::npos) << out;
}

}  // namespace
}  // namespace tcgemm::cli
