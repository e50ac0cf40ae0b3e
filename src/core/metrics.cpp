#include "genhost/core/metrics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace genhost::metrics {

std::string EscapeLabel(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string FormatValue(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", value);
}

Family::Series& Family::Find(std::initializer_list<std::string_view> labels) {
    std::vector<std::string> key;
    key.reserve(label_names_.size());
    auto it = labels.begin();
    for (std::size_t i = 0; i < label_names_.size(); ++i) {
        key.emplace_back(it != labels.end() ? *it++ : std::string_view());
    }
    auto found = series_.find(key);
    if (found != series_.end()) return found->second;
    if (series_.size() >= kMaxSeries) {
        for (auto& value : key) value = "other";
        found = series_.find(key);
        if (found != series_.end()) return found->second;
    }
    Series fresh;
    if (histogram_) fresh.bucket.assign(bounds_.size(), 0);
    return series_.emplace(std::move(key), std::move(fresh)).first->second;
}

void Family::Inc(std::initializer_list<std::string_view> labels, double by) {
    std::lock_guard lock(mu_);
    Find(labels).value += by;
}

void Family::Observe(std::initializer_list<std::string_view> labels, double value) {
    std::lock_guard lock(mu_);
    auto& s = Find(labels);
    s.value += value;
    ++s.count;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
        if (value <= bounds_[i]) ++s.bucket[i];
    }
}

void Family::Render(std::string& out) const {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, help_, name_,
                       histogram_ ? "histogram" : "counter");
    std::lock_guard lock(mu_);
    for (const auto& [values, s] : series_) {
        std::string labels;
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i > 0) labels += ',';
            labels += fmt::format("{}=\"{}\"", label_names_[i], EscapeLabel(values[i]));
        }
        if (!histogram_) {
            out += labels.empty()
                       ? fmt::format("{} {}\n", name_, FormatValue(s.value))
                       : fmt::format("{}{{{}}} {}\n", name_, labels, FormatValue(s.value));
            continue;
        }
        const std::string sep = labels.empty() ? "" : ",";
        for (std::size_t i = 0; i < bounds_.size(); ++i) {
            out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name_, labels, sep,
                               FormatValue(bounds_[i]), s.bucket[i]);
        }
        out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name_, labels, sep, s.count);
        const std::string braces = labels.empty() ? "" : "{" + labels + "}";
        out += fmt::format("{}_sum{} {}\n", name_, braces, FormatValue(s.value));
        out += fmt::format("{}_count{} {}\n", name_, braces, s.count);
    }
}

Family& Registry::Declare(std::string name, std::string help, std::vector<std::string> label_names,
                          bool histogram, std::vector<double> bounds) {
    std::lock_guard lock(mu_);
    for (auto& family : families_) {
        if (family->name_ != name) continue;
        // One family per name: declaring it again with another shape is a bug found at start.
        if (family->histogram_ != histogram || family->label_names_ != label_names ||
            family->bounds_ != bounds) {
            throw std::logic_error("metric " + name + " declared twice with different shapes");
        }
        return *family;
    }
    if (!histogram && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0)) {
        throw std::logic_error("counter " + name + " must end in _total");
    }
    auto family = std::make_unique<Family>();
    family->name_ = std::move(name);
    family->help_ = std::move(help);
    family->histogram_ = histogram;
    family->label_names_ = std::move(label_names);
    family->bounds_ = std::move(bounds);
    families_.push_back(std::move(family));
    return *families_.back();
}

Family& Registry::Counter(std::string name, std::string help,
                          std::vector<std::string> label_names) {
    return Declare(std::move(name), std::move(help), std::move(label_names), false, {});
}

Family& Registry::Histogram(std::string name, std::string help,
                            std::vector<std::string> label_names, std::vector<double> bounds) {
    return Declare(std::move(name), std::move(help), std::move(label_names), true,
                   std::move(bounds));
}

void Registry::Render(std::string& out) const {
    std::lock_guard lock(mu_);
    for (const auto& family : families_) family->Render(out);
}

}  // namespace genhost::metrics
