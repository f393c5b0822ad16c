// The cap on a job run's log (serve --job-log-max-mib): a run's standard output and error go to
// one file (exec/slurm_cli.h SlurmSubmit::output), and a job that prints without end would fill
// the disk under it — the server's own, with --executor local or a folder shared with the nodes.
// cap_log() keeps the file's last `keep_bytes` and gives the space of everything before them back
// to the file system by punching a hole (fallocate(2) FALLOC_FL_PUNCH_HOLE): the file keeps its
// size, so offsets into it stay where they were and a reader following it by offset reads on,
// while the writer (Slurm or the local runner, appending) never notices. first_kept_byte() says
// where what is kept starts (lseek SEEK_DATA): a reader skips the hole instead of reading zeros.
// A file system must do both for the cap to be used: probe_hole_punching() checks a folder's.
// Stateless functions; safe from any thread (two calls on one file at once are harmless).
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace gpurent {

// The margin past keep_bytes a log may grow to before it is capped again: a sixteenth of the
// cap, at least 64 KiB (a log is not punched a block at a time on every pass).
int64_t log_cap_margin(int64_t keep_bytes);

// Discards all but about the last keep_bytes of the regular file at `path` (never a link, a FIFO,
// a device or a file with other hard links): once what it keeps — its size less the hole at its
// start — passes keep_bytes by the margin, everything before its last keep_bytes, rounded down to
// the file system's block, becomes a hole. A log under that is only looked at (lstat), not opened.
// Returns the bytes of space given back (0: nothing to do). kNotFound when there is no such file,
// kUnavailable when it cannot be opened or punched (the message says why).
Result<int64_t> cap_log(const std::string& path, int64_t keep_bytes);

// The offset of the first byte an open file still holds data at: 0 for a file that was never
// capped; its size when it holds none (empty, or nothing but a hole).
int64_t first_kept_byte(int fd, int64_t size);

// Whether logs in folder `dir` can be capped: a new scratch file there gets a hole punched over
// its first block, and lseek(SEEK_DATA) must then find its data right after that block (some file
// systems punch but report every byte as data, and readers would serve the hole as zeros).
// kInvalid when the file system cannot (for good); kNotFound when the folder does not exist (yet);
// kUnavailable when the probe itself failed (a full disk, a permission): worth asking again.
Status probe_hole_punching(const std::string& dir);

// Logs this small are never capped (the smallest cap, 1 MiB, and its margin): a reader need not
// look for a hole in them.
inline constexpr int64_t kNeverCappedBytes = (int64_t{1} << 20) + 64 * 1024;

}  // namespace gpurent
