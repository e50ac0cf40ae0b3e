#include "genhost/validate/schema_set.hpp"

#include "compiler.hpp"
#include "media_fields.hpp"
#include "walker.hpp"

#include <algorithm>
#include <stdexcept>

namespace genhost::validate {

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
    return detail::CollectIssues(*impl_->Endpoint(name).root, body, kMaxIssues);
}

nlohmann::json SchemaSet::ApplyDefaults(std::string_view name, const nlohmann::json& body) const {
    nlohmann::json out = body;
    detail::FillDefaults(*impl_->Endpoint(name).root, out);
    return out;
}

std::vector<MediaField> SchemaSet::MediaFields(std::string_view name,
                                               const nlohmann::json& body) const {
    std::vector<MediaField> out;
    std::vector<std::string> path;
    detail::CollectMediaFields(*impl_->Endpoint(name).root, body, path, out);
    return out;
}

const nlohmann::json* SchemaSet::Document(std::string_view path) const {
    const auto it = impl_->compiled.documents.find(path);
    return it == impl_->compiled.documents.end() ? nullptr : &it->second;
}

}  // namespace genhost::validate
