// genhost/media/log.hpp
//
// Provides RouteLibavLog: FFmpeg's libraries (libav*) write their diagnostics through genhost's
// logger, as a logger named "ffmpeg", instead of as plain text on stderr, so a `json` log stays
// JSON Lines whatever media a client sends (a PNG that claims 100000x100000 pixels, say).
//
// libav's levels map onto genhost's: panic and fatal are errors; error is info (what libav calls
// an error is almost always a client's broken media, which the request already answers with a
// 400 or the task with a failure); warning is debug; info, verbose and debug are trace. A message
// libav writes in pieces is logged once its line is complete.
#pragma once

namespace genhost::media {

// RouteLibavLog installs the route; call it once the logging is set up (SetupLogging). It takes
// the default logger's sinks and level as they are then.
void RouteLibavLog();

}  // namespace genhost::media
