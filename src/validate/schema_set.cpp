#include "genhost/validate/schema_set.hpp"

#include "compiler.hpp"
#include "field_place.hpp"
#include "media_fields.hpp"
#include "walker.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace genhost::validate {
namespace {

// HasNul says whether any string value or member name under `value` holds U+0000: a walk that
// builds no paths, so a large valid body costs no allocations.
bool HasNul(const nlohmann::json& value) {
    if (value.is_string()) {
        return value.get_ref<const std::string&>().find('\0') != std::string::npos;
    }
    if (value.is_array()) {
        return std::any_of(value.begin(), value.end(), HasNul);
    }
    if (value.is_object()) {
        for (const auto& [key, item] : value.items()) {
            if (key.find('\0') != std::string::npos || HasNul(item)) return true;
        }
    }
    return false;
}

// CollectNulIssues appends an issue for every string value or member name under `value` that
// holds U+0000, unless that path has an issue already, until `out` holds `max` issues.
void CollectNulIssues(const nlohmann::json& value, std::vector<std::string>& path,
                      std::vector<Issue>& out, std::size_t max) {
    const auto add = [&](const char* what) {
        if (out.size() >= max) return;
        for (const Issue& issue : out) {
            if (issue.path == path) return;
        }
        out.push_back(
            Issue{"invalid_string", path, std::string(what) + " must not contain U+0000"});
    };
    if (value.is_string()) {
        if (value.get_ref<const std::string&>().find('\0') != std::string::npos) add("String");
    } else if (value.is_array()) {
        std::size_t index = 0;
        for (const auto& item : value) {
            path.push_back(std::to_string(index++));
            CollectNulIssues(item, path, out, max);
            path.pop_back();
        }
    } else if (value.is_object()) {
        for (const auto& [key, item] : value.items()) {
            path.push_back(key);
            if (key.find('\0') != std::string::npos) add("Property name");
            CollectNulIssues(item, path, out, max);
            path.pop_back();
        }
    }
}

}  // namespace

struct SchemaSet::Impl {
    detail::CompiledSet compiled;
    std::vector<EndpointInfo> endpoints;

    const detail::CompiledEndpoint& Endpoint(std::string_view name) const {
        const auto it = std::lower_bound(
            compiled.endpoints.begin(), compiled.endpoints.end(), name,
            [](const detail::CompiledEndpoint& e, std::string_view n) { return e.info.name < n; });
        if (it == compiled.endpoints.end() || it->info.name != name) {
            // A caller bug (the routes are built from Endpoints()), never a client's doing.
            throw std::out_of_range("genhost::validate: no schema for endpoint " +
                                    std::string(name));
        }
        return *it;
    }
};

SchemaSet::SchemaSet() : impl_(std::make_unique<Impl>()) {}
SchemaSet::~SchemaSet() = default;

std::shared_ptr<const SchemaSet> SchemaSet::Compile(const std::vector<SchemaDocument>& documents) {
    std::shared_ptr<SchemaSet> set(new SchemaSet());
    set->impl_->compiled = detail::CompileDocuments(documents);
    for (const detail::CompiledEndpoint& endpoint : set->impl_->compiled.endpoints) {
        set->impl_->endpoints.push_back(endpoint.info);
    }
    return set;
}

const std::vector<EndpointInfo>& SchemaSet::Endpoints() const { return impl_->endpoints; }

const EndpointInfo* SchemaSet::FindEndpoint(std::string_view name) const {
    for (const EndpointInfo& info : impl_->endpoints) {
        if (info.name == name) return &info;
    }
    return nullptr;
}

std::vector<Issue> SchemaSet::Validate(std::string_view name, const nlohmann::json& body) const {
    std::vector<Issue> issues =
        detail::CollectIssues(*impl_->Endpoint(name).root, body, kMaxIssues);
    if (HasNul(body)) {
        std::vector<std::string> path;
        CollectNulIssues(body, path, issues, kMaxIssues);
    }
    return issues;
}

nlohmann::json SchemaSet::ApplyDefaults(std::string_view name, const nlohmann::json& body) const {
    nlohmann::json out = body;
    detail::FillDefaults(*impl_->Endpoint(name).root, out);
    return out;
}

void SchemaSet::FillDefaults(std::string_view name, nlohmann::json& body) const {
    detail::FillDefaults(*impl_->Endpoint(name).root, body);
}

std::vector<MediaField> SchemaSet::MediaFields(std::string_view name,
                                               const nlohmann::json& body) const {
    std::vector<MediaField> out;
    std::vector<std::string> path;
    detail::CollectMediaFields(*impl_->Endpoint(name).root, body, path, out);
    return out;
}

std::optional<std::string> SchemaSet::FieldPlace(std::string_view name, const nlohmann::json& body,
                                                 const std::vector<std::string>& path) const {
    return detail::FieldPlaceProblem(*impl_->Endpoint(name).root, &body, path);
}

const nlohmann::json* SchemaSet::Document(std::string_view path) const {
    const auto it = impl_->compiled.documents.find(path);
    return it == impl_->compiled.documents.end() ? nullptr : &it->second;
}

}  // namespace genhost::validate
