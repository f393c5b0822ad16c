// An instance's way in, on the container side (docs/resources/instances.md#access): the job an
// instance's start submitted gets, in its container, an sshd that lets in the instance's SSH keys
// and a Jupyter notebook server behind the instance's token, each published on the node port the
// instance holds, before the instance's own command (or, without one, a wait that keeps the
// container up). The servers run as the container's user (never root), so the image needs only
// openssh-server and jupyter-notebook (Debian's packages); the SSH host key lives on the data
// volume when there is one, so a restarted or moved instance keeps it.
// Pure but for one store read; called by the executor inside its transaction.
#pragma once

#include <optional>
#include <string>

#include "exec/container.h"
#include "model/instance.h"
#include "store/store.h"

namespace gpurent {

struct InstanceEntry {
  std::vector<std::string> ssh_keys;
  int64_t ssh_port = 0, notebook_port = 0;  // node ports (0: that server is off)
  std::string notebook_token;               // given to the container as a secret, never on a command line
  std::string token_env = "JUPYTER_TOKEN";  // the variable the notebook server reads it from
  std::string bind;                         // the node address the ports are published on
  std::string data_dir;                     // the data volume's mount ("" without one)
};

// The entry of the job `r` when it is the latest start of an instance of its tenant that has SSH
// keys or a notebook (the label gpurent.io/instance names it, and the instance lists the job as
// its latest); nothing otherwise (a user's job carrying the label gets nothing).
Result<std::optional<InstanceEntry>> instance_entry(StoreTx& tx, const Record& r, const Job& j, const std::string& bind);

// Publishes the entry's ports, names the container's user for logins (kInstanceLogin, its home
// the data volume or /tmp) and wraps the run's command in the entry script (instance_entry_script).
void apply_instance_entry(ContainerRun& run, const InstanceEntry& e);

// The POSIX sh the container runs first: `sh -c SCRIPT gpurent-instance [command...]`.
std::string instance_entry_script(const InstanceEntry& e);

}  // namespace gpurent
