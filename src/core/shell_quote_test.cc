#include "core/shell_quote.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TEST(ShellQuote, MakesOneWordOfAnything) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("plain"), "'plain'");
  EXPECT_EQ(shell_quote("it's $HOME; rm -rf /"), "'it'\\''s $HOME; rm -rf /'");
  EXPECT_EQ(shell_quote("''"), "''\\'''\\'''");
  EXPECT_EQ(shell_quote("a\nb"), "'a\nb'");
}

}  // namespace
}  // namespace gpurent
