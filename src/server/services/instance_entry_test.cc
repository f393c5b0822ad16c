// An instance's entry into its container (services/instance_entry.h): the ports it publishes, the
// login user, and a command that starts its servers before the instance's own command, which it
// keeps with its arguments as they were.
#include "server/services/instance_entry.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TEST(InstanceEntry, PublishesItsPortsAndWrapsTheCommand) {
  InstanceEntry e;
  e.ssh_keys = {"ssh-ed25519 AAAA it's mine"};
  e.ssh_port = 30000;
  e.notebook_port = 30001;
  e.notebook_token = std::string(64, 'f');
  e.bind = "127.0.0.1";
  e.data_dir = "/data";
  ContainerRun run;
  run.command = {"python3", "-c", "print('a b')"};
  apply_instance_entry(run, e);
  ASSERT_EQ(run.ports.size(), 2u);
  EXPECT_EQ(run.ports[0].host_ip, "127.0.0.1");
  EXPECT_EQ(run.ports[0].host_port, 30000);
  EXPECT_EQ(run.ports[0].container_port, kInstanceSshPort);
  EXPECT_EQ(run.ports[1].host_port, 30001);
  EXPECT_EQ(run.ports[1].container_port, kInstanceNotebookPort);
  EXPECT_EQ(run.login, kInstanceLogin);
  EXPECT_EQ(run.home, "/data") << "dotfiles stay on the data volume";
  EXPECT_EQ(run.tmpfs, std::vector<std::string>{"/.gpurent"}) << "the entry's files are never in a saved image";
  ASSERT_EQ(run.command.size(), 7u);
  EXPECT_EQ(run.command[0], "/bin/sh");
  EXPECT_EQ(run.command[3], "gpurent-instance");
  EXPECT_EQ(std::vector<std::string>(run.command.begin() + 4, run.command.end()),
            (std::vector<std::string>{"python3", "-c", "print('a b')"}));
  const std::string& script = run.command[2];
  EXPECT_NE(script.find("'ssh-ed25519 AAAA it'\\''s mine\n'"), std::string::npos) << script;
  EXPECT_NE(script.find("'/data/.gpurent'"), std::string::npos) << "the host key kept on the volume";
  EXPECT_NE(script.find("jupyter notebook"), std::string::npos);
  EXPECT_EQ(script.find(e.notebook_token), std::string::npos) << "the token reaches the container as a secret";
  EXPECT_NE(script.find("sleep infinity & wait"), std::string::npos);
  EXPECT_TRUE(check_container_run({}, [&] {
                ContainerRun c = run;
                c.job_id = "job_1", c.tenant_id = "ten_1", c.image = "img";
                return c;
              }()))
      << "ports and login pass the container's checks";
}

TEST(InstanceEntry, SshOnlyWithoutAVolumeKeepsItsKeyInTheContainer) {
  InstanceEntry e;
  e.ssh_keys = {"ssh-ed25519 AAAA"};
  e.ssh_port = 31000;
  e.bind = "0.0.0.0";
  ContainerRun run;
  apply_instance_entry(run, e);
  ASSERT_EQ(run.ports.size(), 1u);
  EXPECT_EQ(run.home, "/tmp");
  ASSERT_EQ(run.command.size(), 4u) << "no command of its own: it waits";
  EXPECT_EQ(run.command[2].find("jupyter"), std::string::npos);
  EXPECT_NE(run.command[2].find("d=/.gpurent/run;"), std::string::npos) << "the host key in the container's tmpfs";
  EXPECT_EQ(run.tmpfs, std::vector<std::string>{"/.gpurent"});
  ContainerRun bad = run;
  bad.job_id = "job_1", bad.tenant_id = "ten_1", bad.image = "img";
  bad.ports[0].host_ip = "0.0.0.0; rm -rf /";
  EXPECT_FALSE(check_container_run({}, bad));
  for (const char* path : {"tmp", "/tmp/../etc", "/tmp/a,exec", "/tmp/a:b"}) {
    ContainerRun t = run;
    t.job_id = "job_1", t.tenant_id = "ten_1", t.image = "img";
    t.tmpfs = {path};
    auto st = check_container_run({}, t);
    ASSERT_FALSE(st) << path;
    EXPECT_EQ(st.error().fields.at(0).field, "tmpfs[0]") << path;
  }
}

}  // namespace
}  // namespace gpurent
