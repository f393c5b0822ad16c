// Cancelling a job inside a caller's transaction, with the same state change, allocation close,
// event and audit entry as POST /api/v1/jobs/{id}/cancel: the cancel route, an instance's stop
// and release (api/instances.cc), and its idle auto-stop (services/instance_idle.h) all use it.
#pragma once

#include <string>

#include "core/message.h"
#include "store/store.h"

namespace gpurent {

// Cancels job `job_id` at `now` for `reason`, by `user_id`; 409 when it has already finished.
Result<Record> cancel_job_in(StoreTx& tx, const std::string& job_id, const Message& reason, const std::string& user_id,
                             TimeMs now);

}  // namespace gpurent
