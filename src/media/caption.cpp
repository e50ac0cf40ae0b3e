#include "genhost/media/caption.hpp"

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cstdio>

#include "av_handles.hpp"

namespace genhost::media {

void DrawCaption(RgbImage& image, const CaptionSpec& spec) {
    if (image.width < 2 || image.height < 2) throw MediaError("caption: picture too small");
    const AVFilter* drawtext = avfilter_get_by_name("drawtext");
    if (drawtext == nullptr) throw MediaError("caption: this libavfilter has no drawtext");
    std::unique_ptr<AVFilterGraph, FilterGraphDeleter> graph(avfilter_graph_alloc());
    if (!graph) throw MediaError("avfilter_graph_alloc: out of memory");
    graph->nb_threads = 1;

    char args[160];
    std::snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=1/24:pixel_aspect=1/1",
                  image.width, image.height, static_cast<int>(AV_PIX_FMT_RGB24));
    AVFilterContext* source = nullptr;
    AVFilterContext* sink = nullptr;
    CheckAv(avfilter_graph_create_filter(&source, avfilter_get_by_name("buffer"), "in", args,
                                         nullptr, graph.get()),
            "creating the caption's source");
    CheckAv(avfilter_graph_create_filter(&sink, avfilter_get_by_name("buffersink"), "out", nullptr,
                                         nullptr, graph.get()),
            "creating the caption's sink");
    const AVPixelFormat formats[] = {AV_PIX_FMT_RGB24, AV_PIX_FMT_NONE};
    CheckAv(av_opt_set_int_list(sink, "pix_fmts", formats, AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN),
            "setting the caption's format");

    // Options are set one by one, so the text needs no filter-graph escaping.
    AVFilterContext* text = avfilter_graph_alloc_filter(graph.get(), drawtext, "caption");
    if (text == nullptr) throw MediaError("caption: cannot allocate drawtext");
    char colour[48];
    std::snprintf(colour, sizeof colour, "black@%.2f", std::clamp(spec.band_opacity, 0.0, 1.0));
    char y[64];
    std::snprintf(y, sizeof y, "h-text_h-%d",
                  static_cast<int>(image.height * std::clamp(spec.bottom_fraction, 0.0, 0.9)));
    const std::string font = spec.language.empty() ? "Sans" : "Sans:lang=" + spec.language;
    const std::pair<const char*, std::string> options[] = {
        {"text", spec.text},    {"expansion", "none"},
        {"font", font},         {"fontsize", std::to_string(std::max(4, spec.font_size))},
        {"fontcolor", "white"}, {"box", "1"},
        {"boxcolor", colour},   {"boxborderw", std::to_string(std::max(2, spec.font_size / 2))},
        {"x", "(w-text_w)/2"},  {"y", y},
        {"fix_bounds", "1"},
    };
    for (const auto& [name, value] : options) {
        CheckAv(av_opt_set(text, name, value.c_str(), AV_OPT_SEARCH_CHILDREN),
                std::string("setting the caption's ") + name);
    }
    CheckAv(avfilter_init_str(text, nullptr), "starting drawtext (is a font installed?)");
    CheckAv(avfilter_link(source, 0, text, 0), "linking the caption's filters");
    CheckAv(avfilter_link(text, 0, sink, 0), "linking the caption's filters");
    CheckAv(avfilter_graph_config(graph.get(), nullptr), "configuring the caption's filters");

    FramePtr frame(av_frame_alloc());
    if (!frame) throw MediaError("av_frame_alloc: out of memory");
    frame->width = image.width;
    frame->height = image.height;
    frame->format = AV_PIX_FMT_RGB24;
    frame->pts = 0;
    CheckAv(av_frame_get_buffer(frame.get(), 0), "allocating the caption's frame");
    for (int row = 0; row < image.height; ++row) {
        std::copy_n(image.Row(row), 3 * image.width, frame->data[0] + row * frame->linesize[0]);
    }
    CheckAv(av_buffersrc_add_frame_flags(source, frame.get(), 0), "drawing the caption");
    CheckAv(av_buffersrc_add_frame_flags(source, nullptr, 0), "drawing the caption");
    FramePtr out(av_frame_alloc());
    if (!out) throw MediaError("av_frame_alloc: out of memory");
    CheckAv(av_buffersink_get_frame(sink, out.get()), "reading the captioned picture");
    if (out->width != image.width || out->height != image.height ||
        out->format != AV_PIX_FMT_RGB24) {
        throw MediaError("caption: the filter changed the picture's size or format");
    }
    for (int row = 0; row < image.height; ++row) {
        std::copy_n(out->data[0] + row * out->linesize[0], 3 * image.width, image.Row(row));
    }
}

}  // namespace genhost::media
