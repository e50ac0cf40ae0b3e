#include "genhost/validate/json_body.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <string>

namespace genhost::validate {
namespace {

// NumberOutOfRange is thrown by ToNlohmann for a number JSON cannot represent (1e400): Boost.JSON
// reads it as infinity, nlohmann (and genhost) refuse it.
struct NumberOutOfRange {};

// ToNlohmann converts a parsed Boost.JSON value (depth already bounded) into the nlohmann value
// nlohmann's own parser would have made: non-negative integers are unsigned, as nlohmann reads
// them.
nlohmann::json ToNlohmann(const boost::json::value& v) {
    switch (v.kind()) {
        case boost::json::kind::null:
            return nullptr;
        case boost::json::kind::bool_:
            return v.get_bool();
        case boost::json::kind::int64: {
            const std::int64_t i = v.get_int64();
            if (i >= 0) return static_cast<std::uint64_t>(i);
            return i;
        }
        case boost::json::kind::uint64:
            return v.get_uint64();
        case boost::json::kind::double_:
            if (!std::isfinite(v.get_double())) throw NumberOutOfRange{};
            return v.get_double();
        case boost::json::kind::string: {
            const auto& s = v.get_string();
            return std::string(s.data(), s.size());
        }
        case boost::json::kind::array: {
            nlohmann::json out = nlohmann::json::array();
            auto& items = out.get_ref<nlohmann::json::array_t&>();
            items.reserve(v.get_array().size());
            for (const auto& item : v.get_array()) items.push_back(ToNlohmann(item));
            return out;
        }
        case boost::json::kind::object: {
            nlohmann::json out = nlohmann::json::object();
            for (const auto& [key, value] : v.get_object()) {
                out[std::string(key.data(), key.size())] = ToNlohmann(value);
            }
            return out;
        }
    }
    return nullptr;
}

}  // namespace

Result<nlohmann::json> ParseRequestJson(std::string_view body, std::size_t max_depth) {
    // Boost.JSON parses large bodies far faster than nlohmann (a 7 MB data URI: a few ms against
    // ~70 ms) and bounds the nesting depth without recursing (max_depth), so neither the parser
    // nor the conversion below nor the destructor of the result ever recurses deeply. The result
    // is converted into the nlohmann value the validator reads.
    if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // a UTF-8 BOM, as nlohmann
    boost::json::parse_options options;
    options.max_depth = max_depth;
    options.allow_comments = false;
    options.allow_trailing_commas = false;
    options.allow_invalid_utf8 = false;
    boost::json::stream_parser parser({}, options);
    boost::system::error_code ec;
    const std::size_t consumed = parser.write(body.data(), body.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec == boost::json::error::too_deep) {
        return ApiError::InvalidRequest(
            "Invalid JSON body",
            {Issue{"custom",
                   {},
                   "JSON nesting is deeper than " + std::to_string(max_depth) + " levels"}});
    }
    if (ec) {
        return ApiError::InvalidRequest(
            "Invalid JSON body",
            {Issue{"custom",
                   {},
                   "The request body is not valid JSON: " + ec.message() + " at byte " +
                       std::to_string(std::min(consumed, body.size()) + 1)}});
    }
    try {
        return Result<nlohmann::json>(boost::system::in_place_value, ToNlohmann(parser.release()));
    } catch (const NumberOutOfRange&) {
        return ApiError::InvalidRequest(
            "Invalid JSON body",
            {Issue{"custom", {}, "The request body is not valid JSON: a number is out of range"}});
    }
}

}  // namespace genhost::validate
