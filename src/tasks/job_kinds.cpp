#include "genhost/tasks/job_kinds.hpp"

#include <set>

namespace genhost::tasks {

JobKindReport CheckJobKinds(const std::vector<EngineKinds>& engines,
                            const std::map<std::string, long>& in_database) {
    JobKindReport report;
    std::map<std::string, std::string> declared;  // kind -> its engine
    for (const auto& spec : kJobKinds) declared[spec.kind] = spec.engine;
    std::map<std::string, std::vector<std::string>> served;  // kind -> the engines serving it
    for (const auto& e : engines) {
        for (const auto& [kind, handled] : e.kinds) {
            served[kind].push_back(e.engine);
            const auto d = declared.find(kind);
            if (d == declared.end()) {
                report.errors.push_back("engine " + e.engine + " serves job kind '" + kind +
                                        "', which tasks/job_kinds.hpp does not declare");
            } else if (d->second != e.engine) {
                report.errors.push_back("job kind '" + kind + "' is declared for engine " +
                                        d->second + " but engine " + e.engine + " serves it");
            }
            if (!handled) {
                report.errors.push_back("engine " + e.engine + " serves job kind '" + kind +
                                        "' without a handler");
            }
        }
    }
    for (const auto& [kind, engine] : declared) {
        const auto s = served.find(kind);
        if (s == served.end()) {
            report.errors.push_back("no engine serves job kind '" + kind + "' (declared for " +
                                    engine + ")");
        } else if (s->second.size() > 1) {
            report.errors.push_back("job kind '" + kind + "' is served by " +
                                    std::to_string(s->second.size()) + " engines");
        }
    }
    for (const auto& [kind, rows] : in_database) {
        if (declared.count(kind) == 0) {
            report.warnings.push_back(std::to_string(rows) + " job(s) of kind '" + kind +
                                      "' are in the database, and no engine of this version "
                                      "serves that kind: they stay queued");
        }
    }
    return report;
}

}  // namespace genhost::tasks
