#include "media_fields.hpp"

#include "walker.hpp"

#include <algorithm>

namespace genhost::validate::detail {
namespace {

// PointerOf writes `path` as a JSON pointer (RFC 6901: '~' -> "~0", '/' -> "~1").
std::string PointerOf(const std::vector<std::string>& path) {
    std::string out;
    for (const std::string& segment : path) {
        out.push_back('/');
        for (char c : segment) {
            if (c == '~') {
                out += "~0";
            } else if (c == '/') {
                out += "~1";
            } else {
                out.push_back(c);
            }
        }
    }
    return out;
}

}  // namespace

void CollectMediaFields(const Node& start, const Json& value, std::vector<std::string>& path,
                        std::vector<MediaField>& out) {
    const Node& node = Target(start);
    if (node.discriminator) {
        if (!value.is_object()) return;
        const auto it = value.find(node.discriminator->property);
        if (it == value.end() || !it->is_string()) return;
        for (const auto& [name, branch] : node.discriminator->branches) {
            if (name == it->get_ref<const std::string&>()) {
                CollectMediaFields(*branch, value, path, out);
                return;
            }
        }
        return;
    }
    if (!node.branches.empty()) {
        // The first branch that accepts the value, as validation and ApplyDefaults choose it.
        for (const Node* branch : node.branches) {
            if (CollectIssues(*branch, value, 1).empty()) {
                CollectMediaFields(*branch, value, path, out);
                return;
            }
        }
        return;
    }
    if (value.is_string()) {
        if (node.format == Format::kMedia) {
            out.push_back(MediaField{path, PointerOf(path), MediaKindName(node.media_kind)});
        }
        return;
    }
    if (value.is_object()) {
        for (const Property& property : node.properties) {
            const auto it = value.find(property.name);
            if (it == value.end()) continue;
            path.push_back(property.name);
            CollectMediaFields(*property.schema, *it, path, out);
            path.pop_back();
        }
        if (node.additional == Additional::kSchema && node.additional_schema != nullptr) {
            for (const auto& entry : value.items()) {
                const bool declared =
                    std::any_of(node.properties.begin(), node.properties.end(),
                                [&entry](const Property& p) { return p.name == entry.key(); });
                if (declared) continue;
                path.push_back(entry.key());
                CollectMediaFields(*node.additional_schema, entry.value(), path, out);
                path.pop_back();
            }
        }
        return;
    }
    if (value.is_array() && node.items != nullptr) {
        const std::size_t walk =
            node.max_items ? std::min(value.size(), *node.max_items) : value.size();
        for (std::size_t i = 0; i < walk; ++i) {
            path.push_back(std::to_string(i));
            CollectMediaFields(*node.items, value[i], path, out);
            path.pop_back();
        }
    }
}

}  // namespace genhost::validate::detail
