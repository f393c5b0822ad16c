#include "server/services/instance_entry.h"

#include "core/shell_quote.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<std::optional<InstanceEntry>> instance_entry(StoreTx& tx, const Record& r, const Job& j, const std::string& bind) {
  auto label = j.labels.find(kInstanceLabel);
  if (label == j.labels.end()) return std::optional<InstanceEntry>();
  auto found = tx.list({"instances", {{"tenant_id", r.tenant_id}, {"name", label->second}}, "", 1});
  if (!found) return found.error();
  if (found->items.empty()) return std::optional<InstanceEntry>();
  auto i = decode_record(found->items.front(), decode_instance, "its start gets no SSH or notebook");
  if (!i) return i.error();
  if (i->job_ids.empty() || i->job_ids.back() != r.id) return std::optional<InstanceEntry>();
  InstanceEntry e;
  if (!i->ssh_keys.empty() && i->ssh_port > 0) {
    e.ssh_keys = i->ssh_keys;
    e.ssh_port = i->ssh_port;
  }
  if (i->notebook && i->notebook_port > 0 && !i->notebook_token.empty()) {
    e.notebook_port = i->notebook_port;
    e.notebook_token = i->notebook_token;
  }
  if (!e.ssh_port && !e.notebook_port) return std::optional<InstanceEntry>();
  e.bind = bind;
  if (i->volume) e.data_dir = i->volume->mount;
  return std::optional<InstanceEntry>(std::move(e));
}

std::string instance_entry_script(const InstanceEntry& e) {
  // Lines joined by newlines; the script is one argument of `sh -c`.
  std::string s =
      "set -u\n"
      // /.gpurent is the container's tmpfs (apply_instance_entry; no volume may mount there): never in
      // a saved image.
      "d=/.gpurent/run; mkdir -p \"$d\" && chmod 700 \"$d\" || exit 126\n";
  if (e.ssh_port) {
    std::string keys;
    for (const std::string& k : e.ssh_keys) keys += k + "\n";
    // The host key stays on the data volume (the same key after a restart or a move), else here.
    const std::string keydir = e.data_dir.empty() ? "$d" : e.data_dir + "/.gpurent";
    s += "printf '%s' " + shell_quote(keys) + " > \"$d/authorized_keys\"\n"
         "k=" + shell_quote(keydir) + "\n"
         "if [ \"$k\" != \"$d\" ]; then mkdir -p \"$k\" && chmod 700 \"$k\" || k=\"$d\"; fi\n"
         "[ -s \"$k/ssh_host_ed25519_key\" ] || ssh-keygen -q -t ed25519 -N '' -f \"$k/ssh_host_ed25519_key\" </dev/null >/dev/null "
         "|| { echo 'gpurent: cannot make an SSH host key (is openssh-server in the image?)' >&2; exit 126; }\n"
         "/usr/sbin/sshd -e -f /dev/null -o Port=" + std::to_string(kInstanceSshPort) +
         " -o HostKey=\"$k/ssh_host_ed25519_key\" -o PidFile=\"$d/sshd.pid\" -o AuthorizedKeysFile=\"$d/authorized_keys\""
         " -o StrictModes=no -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o UsePAM=no"
         " -o PermitUserEnvironment=no -o AllowTcpForwarding=yes -o X11Forwarding=no"
         " -o Subsystem='sftp internal-sftp' "
         "|| { echo 'gpurent: sshd did not start (is openssh-server in the image?)' >&2; exit 126; }\n"
         "echo \"gpurent: sshd listens on port " + std::to_string(kInstanceSshPort) + "\" >&2\n";
  }
  if (e.notebook_port) {
    s += "command -v jupyter >/dev/null || { echo 'gpurent: jupyter is not in the image (Debian: jupyter-notebook)' >&2; exit 126; }\n"
         "( cd " + shell_quote(e.data_dir.empty() ? "/tmp" : e.data_dir) +
         " && JUPYTER_RUNTIME_DIR=\"$d/jupyter\" exec jupyter notebook --no-browser --ip=0.0.0.0 --port=" +
         std::to_string(kInstanceNotebookPort) + " --NotebookApp.open_browser=False ) &\n"
         "echo \"gpurent: the notebook listens on port " + std::to_string(kInstanceNotebookPort) + "\" >&2\n";
  }
  s += "if [ \"$#\" -gt 0 ]; then exec \"$@\"; fi\n"
       // PID 1 ignores a signal it has no handler for: without this trap a stop waits for the kill.
       "trap 'exit 0' TERM INT\n"
       "sleep infinity & wait\n";
  return s;
}

void apply_instance_entry(ContainerRun& run, const InstanceEntry& e) {
  if (e.ssh_port) run.ports.push_back({e.bind, e.ssh_port, kInstanceSshPort});
  if (e.notebook_port) run.ports.push_back({e.bind, e.notebook_port, kInstanceNotebookPort});
  run.tmpfs.push_back("/.gpurent");
  run.login = kInstanceLogin;
  run.home = e.data_dir.empty() ? "/tmp" : e.data_dir;
  std::vector<std::string> cmd = {"/bin/sh", "-c", instance_entry_script(e), "gpurent-instance"};
  cmd.insert(cmd.end(), run.command.begin(), run.command.end());
  run.command = std::move(cmd);
}

}  // namespace gpurent
