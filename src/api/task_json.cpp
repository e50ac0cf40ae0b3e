#include "genhost/api/task_json.hpp"

#include "common.hpp"
#include "genhost/core/clock.hpp"

#include <nlohmann/json.hpp>

namespace genhost::api {

namespace {

// AppendString writes `s` as a JSON string: as it is when it is printable ASCII without a quote
// or backslash (ids, statuses, timestamps, signed URLs), else through nlohmann's escaping.
void AppendString(std::string& out, std::string_view s) {
    bool plain = true;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            plain = false;
            break;
        }
    }
    if (plain) {
        out += '"';
        out += s;
        out += '"';
        return;
    }
    out += nlohmann::json(std::string(s))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string TaskJson(const store::TaskRecord& task, const std::vector<std::string>& output_urls) {
    std::string out;
    out.reserve(160);
    out += '{';
    if (task.cost_credits) {
        out += "\"cost\":{\"credits\":";
        out += std::to_string(*task.cost_credits);
        out += "},";
    }
    out += "\"createdAt\":";
    AppendString(out, FormatTimestamp(task.created_at));
    out += ",\"estimatedCost\":{\"credits\":";
    AppendCreditsJson(out, task.estimated_credits);
    out += '}';
    if (task.status == store::TaskStatus::kFailed) {
        out += ",\"failure\":";
        AppendString(out, task.failure.value_or("The task failed."));
        out += ",\"failureCode\":";
        AppendString(out, task.failure_code.value_or("INTERNAL"));
    }
    out += ",\"id\":";
    AppendString(out, task.id);
    if (task.status == store::TaskStatus::kSucceeded) {
        out += ",\"output\":[";
        for (std::size_t i = 0; i < output_urls.size(); ++i) {
            if (i > 0) out += ',';
            AppendString(out, output_urls[i]);
        }
        out += ']';
    } else if (task.status == store::TaskStatus::kRunning) {
        out += ",\"progress\":";
        out += nlohmann::json(task.progress.value_or(0.0)).dump();
    }
    out += ",\"status\":";
    AppendString(out, store::TaskStatusName(task.status));
    out += '}';
    return out;
}

}  // namespace genhost::api
