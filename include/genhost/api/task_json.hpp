// genhost/api/task_json.hpp
//
// Provides TaskJson: the body of GET /v1/tasks/{id} (CLIENTS.md 3.1), shaped by status, written
// straight into a string. It is the most frequent response of all (clients poll), so it builds
// no JSON tree; its bytes are those nlohmann's dump gives for the tree GetTask built before
// (keys in alphabetical order; invalid UTF-8 replaced), which the unit test checks.
#pragma once

#include "genhost/store/tasks_repo.hpp"

#include <string>
#include <vector>

namespace genhost::api {

// TaskJson renders `task`; `output_urls` are the signed URLs of a SUCCEEDED task's outputs.
std::string TaskJson(const store::TaskRecord& task, const std::vector<std::string>& output_urls);

}  // namespace genhost::api
