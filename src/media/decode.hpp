// src/media/decode.hpp (private to the media module)
//
// Provides FindVideoStream and DecodeFirstVideoFrame, which ProbeMedia uses to prove a file is
// decodable and RenderImage uses to read reference pictures. Work is bounded: a fixed number of
// packets is read and a decoder refuses pictures larger than kMaxDecodePixels, so garbage or
// hostile input fails fast instead of looping or allocating without limit. Throws MediaError.
#pragma once

#include <cstdint>

#include "av_handles.hpp"

namespace genhost::media {

// kMaxDecodePixels caps width * height of any picture decoded from untrusted input (16384^2 / 2,
// enough for 8K video and large stills).
inline constexpr std::int64_t kMaxDecodePixels = std::int64_t{16384} * 16384 / 2;

// FindVideoStream is the index of the first video stream of `format` that is not an attached
// picture (cover art), or -1 when there is none.
int FindVideoStream(const AVFormatContext* format);

// FindAudioStream is the index of the first audio stream of `format`, or -1.
int FindAudioStream(const AVFormatContext* format);

// DecodeFirstVideoFrame reads packets of stream `stream_index` from `format` (an opened demuxer
// positioned at its start) and returns the first picture the decoder produces, in the decoder's
// native pixel format. Decoding runs single-threaded. Throws MediaError when no decoder exists
// for the stream, the decoder cannot be opened, or no picture comes out within the packet budget.
FramePtr DecodeFirstVideoFrame(AVFormatContext* format, int stream_index);

// DecodeFirstAudioFrame is the same for an audio stream: the first block of samples.
FramePtr DecodeFirstAudioFrame(AVFormatContext* format, int stream_index);

}  // namespace genhost::media
