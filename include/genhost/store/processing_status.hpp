// genhost/store/processing_status.hpp
//
// Provides ProcessingStatus, the life of a resource that a background job makes (an avatar's
// picture, a custom voice): PROCESSING, then READY or FAILED. Stored and answered as those
// words; code compares the enum, and only the repositories (SQL) and the API (JSON) see the text.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace genhost::store {

enum class ProcessingStatus { kProcessing, kReady, kFailed };

// ProcessingStatusName is the stored and answered word: PROCESSING, READY or FAILED.
constexpr std::string_view ProcessingStatusName(ProcessingStatus status) {
    switch (status) {
        case ProcessingStatus::kProcessing:
            return "PROCESSING";
        case ProcessingStatus::kReady:
            return "READY";
        case ProcessingStatus::kFailed:
            return "FAILED";
    }
    return "PROCESSING";
}

// ParseProcessingStatus reads a stored word; throws std::runtime_error for any other.
inline ProcessingStatus ParseProcessingStatus(std::string_view text) {
    if (text == "PROCESSING") return ProcessingStatus::kProcessing;
    if (text == "READY") return ProcessingStatus::kReady;
    if (text == "FAILED") return ProcessingStatus::kFailed;
    throw std::runtime_error("unknown status " + std::string(text));
}

}  // namespace genhost::store
