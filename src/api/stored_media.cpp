#include "stored_media.hpp"

#include "genhost/assets/resolver.hpp"
#include "genhost/core/ids.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <iterator>

namespace genhost::api {

namespace asio = boost::asio;

asio::awaitable<Result<StoredMedia>> StoreMedia(App& app, const std::string& org_id,
                                                const std::string& folder, const std::string& media,
                                                MediaKind kind, std::vector<std::string> path,
                                                const std::string& prefix) {
    StoredMedia out;
    if (app.inputs == nullptr || app.input_files == nullptr) {
        out.uri = media;  // no asset reader here: the job reads it
        co_return out;
    }
    std::string pointer;
    for (const auto& part : path) pointer += "/" + part;
    // The input is read into a folder of its own (not the resource's id: a concurrent request
    // for the same resource must not share it), removed again below.
    const std::string scratch_id = NewUuid();
    assets::PrepareRequest prepare;
    prepare.task_id = scratch_id;
    prepare.org_id = org_id;
    prepare.input = nlohmann::json::object();
    prepare.input[nlohmann::json::json_pointer(pointer)] = media;
    prepare.media.push_back({std::move(path), pointer, kind});
    assets::Prepared prepared = co_await app.inputs->Prepare(std::move(prepare));
    if (!prepared.issues.empty()) {
        co_return ApiError::InvalidRequest("Invalid asset", std::move(prepared.issues));
    }
    const std::string value =
        prepared.input.at(nlohmann::json::json_pointer(pointer)).get<std::string>();
    if (value.rfind(assets::kInputReferenceScheme, 0) != 0) {
        out.uri = value;  // offline fetching: the job fetches the URL
        co_return out;
    }
    out.name = prefix + "-" + NewUuid().substr(0, 8);
    std::exception_ptr failure;
    co_await OnBlocking(app, [&] {
        try {
            const std::string file = app.input_files->Resolve(value, kind, {});
            std::ifstream in(file, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
            if (!in.good() && !in.eof()) throw std::runtime_error("cannot read " + file);
            app.outputs.Put(folder, out.name, bytes);
        } catch (...) {
            failure = std::current_exception();
        }
    });
    app.inputs->Discard(scratch_id);
    if (failure) std::rethrow_exception(failure);
    co_return out;
}

asio::awaitable<void> RemoveStored(App& app, std::string folder, std::vector<std::string> names) {
    co_await OnBlocking(app, [&] {
        try {
            if (names.empty()) app.outputs.DeleteTask(folder);
            for (const auto& name : names) app.outputs.DeleteObject(folder, name);
        } catch (const std::exception& e) {
            spdlog::warn("{}: removing stored objects failed: {}", folder, e.what());
        }
    });
}

}  // namespace genhost::api
