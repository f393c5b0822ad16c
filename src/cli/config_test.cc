#include "cli/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace gpurent {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpurent_cli_config_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  EnvLookup env() const {
    return [this](const std::string& k) -> std::optional<std::string> {
      auto it = env_.find(k);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
  }

  fs::path dir_;
  std::map<std::string, std::string> env_;
};

TEST_F(ConfigTest, DefaultsWhenNothingIsConfigured) {
  env_["HOME"] = (dir_ / "home").string();  // no config file there
  auto c = resolve_connection({}, env());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
  EXPECT_EQ(c->server_source, "default");
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->config_path, (dir_ / "home/.config/gpurent/config.yaml").string());
}

TEST_F(ConfigTest, ServerPrecedenceIsFlagThenEnvThenConfigThenDefault) {
  env_["XDG_CONFIG_HOME"] = (dir_ / "xdg").string();
  write("xdg/gpurent/config.yaml", "server: http://from-config:1\ntoken: cfg-token\n");

  auto c = resolve_connection({}, env());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "http://from-config:1");
  EXPECT_EQ(c->server_source, "config " + (dir_ / "xdg/gpurent/config.yaml").string());

  env_["GPURENT_SERVER"] = "http://from-env:2";
  c = resolve_connection({}, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server, "http://from-env:2");
  EXPECT_EQ(c->server_source, "GPURENT_SERVER");

  ConnectionFlags f;
  f.server = "http://from-flag:3";
  c = resolve_connection(f, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server, "http://from-flag:3");
  EXPECT_EQ(c->server_source, "--server");
}

TEST_F(ConfigTest, TokenPrecedenceIsFlagThenFileThenEnvThenConfig) {
  env_["XDG_CONFIG_HOME"] = (dir_ / "xdg").string();
  write("xdg/gpurent/config.yaml", "token: cfg-token\n");
  auto c = resolve_connection({}, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->token, "cfg-token");

  env_["GPURENT_TOKEN"] = "env-token";
  c = resolve_connection({}, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->token, "env-token");
  EXPECT_EQ(c->token_source, "GPURENT_TOKEN");

  ConnectionFlags f;
  f.token_file = write("admin-token", "  file-token \n");
  c = resolve_connection(f, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->token, "file-token");
  EXPECT_EQ(c->token_source, "--token-file " + f.token_file);

  f.token = "flag-token";
  c = resolve_connection(f, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->token, "flag-token");
  EXPECT_EQ(c->token_source, "--token");
}

TEST_F(ConfigTest, ExplicitConfigFileIsUsedAndMustExist) {
  env_["XDG_CONFIG_HOME"] = (dir_ / "xdg").string();
  write("xdg/gpurent/config.yaml", "server: http://default-file:1\n");
  ConnectionFlags f;
  f.config_path = write("other.yaml", "server: http://other-file:2\n");
  auto c = resolve_connection(f, env());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server, "http://other-file:2");

  f.config_path = (dir_ / "missing.yaml").string();
  c = resolve_connection(f, env());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("missing.yaml"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("No such file"), std::string::npos) << c.error().message;
}

TEST_F(ConfigTest, TokenFileInConfigIsRelativeToTheConfigFolder) {
  write("conf/secrets/admin", "gpr_abc\n");
  ConnectionFlags f;
  f.config_path = write("conf/config.yaml", "token_file: secrets/admin\n");
  auto c = resolve_connection(f, env());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->token, "gpr_abc");
}

TEST_F(ConfigTest, ConfigErrorsNameTheFileAndTheField) {
  auto r = parse_config("server: http://x:1\nsever: typo\n", "/etc/gpurent.yaml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/etc/gpurent.yaml"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("sever"), std::string::npos) << r.error().message;

  r = parse_config("server: [1, 2]\n", "c.yaml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("server"), std::string::npos);

  r = parse_config("token: a\ntoken_file: b\n", "c.yaml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("token_file"), std::string::npos);

  r = parse_config("server: [unclosed\n", "c.yaml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("line"), std::string::npos) << r.error().message;
}

TEST_F(ConfigTest, EmptyConfigFileIsAllowed) {
  auto r = parse_config("", "c.yaml");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->server);
  r = parse_config("# only a comment\n", "c.yaml");
  ASSERT_TRUE(r);
}

TEST_F(ConfigTest, TokenFileProblems) {
  auto r = read_token_file((dir_ / "nope").string());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nope"), std::string::npos);

  r = read_token_file(write("empty", "\n\n"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("empty"), std::string::npos);

  r = read_token_file(write("two-words", "gpr_a gpr_b\n"));
  ASSERT_FALSE(r);

  r = read_token_file(write("crlf", "gpr_x\r\nsecond line ignored\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "gpr_x");

  r = read_token_file(dir_.string());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("directory"), std::string::npos);

  r = read_token_file(write("huge", std::string((1 << 20) + 1, 'x')));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("larger than 1 MiB"), std::string::npos);

  // A control character would reach the Authorization header: refused, naming where it came from.
  env_["GPURENT_TOKEN"] = "gpr_x\rX-Evil: 1";
  auto c = resolve_connection({}, env());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("GPURENT_TOKEN"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("control character"), std::string::npos) << c.error().message;
}

TEST_F(ConfigTest, DefaultConfigPathPrefersXdg) {
  env_["HOME"] = "/home/u";
  EXPECT_EQ(default_config_path(env()), "/home/u/.config/gpurent/config.yaml");
  env_["XDG_CONFIG_HOME"] = "/x";
  EXPECT_EQ(default_config_path(env()), "/x/gpurent/config.yaml");
  env_.clear();
  EXPECT_EQ(default_config_path(env()), "");
}

}  // namespace
}  // namespace gpurent
