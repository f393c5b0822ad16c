// The cap on a job run's log (serve --job-log-max-bytes): a run's standard output and error go to
// one file (exec/slurm_cli.h SlurmSubmit::output), and a job that prints without end would fill
// the disk under it — the server's own, with --executor local or a folder shared with the nodes.
// cap_log() keeps the file's last `keep_bytes` and gives the space of everything before them back
// to the file system by punching a hole (fallocate(2) FALLOC_FL_PUNCH_HOLE): the file keeps its
// size, so offsets into it stay where they were and a reader following it by offset reads on,
// while the writer (Slurm or the local runner, appending) never notices. first_kept_byte() says
// where what is kept starts: a reader skips the hole instead of reading zeros.
// Stateless functions; safe from any thread (two calls on one file at once are harmless).
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace gpurent {

// Discards all but about the last keep_bytes of the regular file at `path` (never a link, FIFO or
// device): once the space it holds passes keep_bytes by a margin (a sixteenth, at least 64 KiB),
// everything before the last keep_bytes, rounded down to the file system's block, becomes a hole.
// Returns the bytes of space given back (0: nothing to do). kNotFound when there is no such file,
// kUnavailable when it cannot be opened or the file system cannot punch holes (the message says so).
Result<int64_t> cap_log(const std::string& path, int64_t keep_bytes);

// The offset of the first byte an open file still holds data at: 0 for a file that was never
// capped; its size when it holds none (empty, or nothing but a hole).
int64_t first_kept_byte(int fd, int64_t size);

}  // namespace gpurent
