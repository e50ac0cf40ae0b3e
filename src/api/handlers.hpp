// The handlers of each resource, one file each; routes.cpp puts them in the route table.
#pragma once

#include "common.hpp"

namespace genhost::api {

// tasks.cpp
boost::asio::awaitable<http::Response> GetTask(App& app, http::Request& req,
                                               const auth::Principal& who);
boost::asio::awaitable<http::Response> DeleteTask(App& app, http::Request& req,
                                                  const auth::Principal& who);

// generation.cpp: every task-creating endpoint of schemas/ (endpoint name bound per route).
boost::asio::awaitable<http::Response> CreateGeneration(App& app, const std::string& endpoint,
                                                        http::Request& req,
                                                        const auth::Principal& who);

// health.cpp
boost::asio::awaitable<http::Response> Healthz(App& app, http::Request& req);
boost::asio::awaitable<http::Response> Readyz(App& app, http::Request& req);
boost::asio::awaitable<http::Response> MetricsText(App& app, http::Request& req);
boost::asio::awaitable<http::Response> ErrorsDoc(App& app, http::Request& req);

// outputs.cpp
boost::asio::awaitable<http::Response> GetOutput(App& app, http::Request& req);

// uploads.cpp: ephemeral uploads (docs/uploads.md).
boost::asio::awaitable<http::Response> CreateUpload(App& app, http::Request& req,
                                                    const auth::Principal& who);
boost::asio::awaitable<http::Response> ReceiveUpload(App& app, http::Request& req,
                                                     http::BodyReader& body);
// UploadRouteBodyLimit is the body limit of POST /uploads/{id}: the file cap plus room for the
// form's other parts and the multipart framing.
std::size_t UploadRouteBodyLimit(const App& app);

// avatars.cpp: custom avatars (docs/avatars.md).
boost::asio::awaitable<http::Response> CreateAvatar(App& app, http::Request& req,
                                                    const auth::Principal& who);
boost::asio::awaitable<http::Response> ListAvatars(App& app, http::Request& req,
                                                   const auth::Principal& who);
boost::asio::awaitable<http::Response> GetAvatar(App& app, http::Request& req,
                                                 const auth::Principal& who);
boost::asio::awaitable<http::Response> UpdateAvatar(App& app, http::Request& req,
                                                    const auth::Principal& who);
boost::asio::awaitable<http::Response> DeleteAvatar(App& app, http::Request& req,
                                                    const auth::Principal& who);

// openapi.cpp: GET /v1/openapi.json, the OpenAPI 3.1 document (include/genhost/api/openapi.hpp).
boost::asio::awaitable<http::Response> OpenApiDocument(App& app, http::Request& req);

}  // namespace genhost::api
