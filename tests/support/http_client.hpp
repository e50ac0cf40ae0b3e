// A small blocking HTTP/1.1 client for tests: one connection, keep-alive, raw access when a test
// needs to send something malformed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace genhost::testing {

struct HttpResponse {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lower case
    std::string body;

    nlohmann::json Json() const { return nlohmann::json::parse(body); }
    std::string Header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpClient {
  public:
    HttpClient(std::string host, unsigned short port);
    ~HttpClient();

    // Send one request; reconnects when the server closed the connection.
    HttpResponse Send(const std::string& method, const std::string& target,
                      const Headers& headers = {}, const std::string& body = "");

    // SendRaw writes `bytes` on a fresh connection and reads one response (status 0 if the server
    // closed without one).
    HttpResponse SendRaw(const std::string& bytes);

  private:
    struct Impl;
    Impl* impl_;
};

}  // namespace genhost::testing
